"""The tray starts and stops the local model server (the stand-in `vllm`, a real process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QToolButton
from pytestqt.qtbot import QtBot

from app.settings import Settings
from tests.app.test_serve import alive, free_port
from tests.support.fake_vllm_cli import install_shims, shim_path
from tests.support.home import isolate_home
from tests.support.keyring_backend import without_keyring
from ui.app import HolodeskApp


@pytest.fixture
def shims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_home(monkeypatch, tmp_path)
    folder = install_shims(tmp_path / "bin")
    # The shims first on PATH: ServerControl finds `vllm` (and `nvidia-smi`) there, as a real
    # install would; nothing named vllm sits next to the test interpreter.
    monkeypatch.setenv("PATH", shim_path(folder))
    monkeypatch.setenv("FAKE_VLLM_LOAD_SECONDS", "0.5")
    monkeypatch.setenv("FAKE_VLLM_RECORD", str(tmp_path / "record.json"))
    without_keyring(monkeypatch)
    return folder


def test_the_tray_starts_and_stops_the_local_server(qtbot: QtBot, shims: Path) -> None:
    port = free_port()
    app = HolodeskApp(Settings(endpoint=f"http://127.0.0.1:{port}/v1"), use_system_tray=False,
                      probe=True)
    action = app.actions.server
    try:
        assert action.isVisible() and action.text() == "Start model server"
        qtbot.waitUntil(lambda: app.status is not None, timeout=20_000)
        assert app.status is not None and app.status.state == "down"

        action.trigger()
        assert action.text().startswith("Stop model server")
        qtbot.waitUntil(lambda: app.server.state in ("ready", "failed"), timeout=60_000)
        assert app.server.state == "ready", app.teller.told
        assert action.text() == "Stop model server"
        pid = app.server.pid
        assert pid is not None and alive(pid)
        # Ready means the probe is asked at once: Start in the task window becomes possible.
        qtbot.waitUntil(lambda: app.status is not None and app.status.state == "ok",
                        timeout=20_000)

        action.trigger()
        qtbot.waitUntil(lambda: app.server.state == "stopped", timeout=60_000)
        assert not alive(pid)
        assert action.text() == "Start model server" and action.isEnabled()
    finally:
        app.close()
        qtbot.wait(50)


def test_no_server_entry_for_a_remote_endpoint(qtbot: QtBot, shims: Path) -> None:
    app = HolodeskApp(Settings(endpoint="https://gpu.example.com/v1"), use_system_tray=False,
                      probe=False)
    try:
        assert not app.actions.server.isVisible()
        assert app.tray.window is not None
        button = next(b for b in app.tray.window.findChildren(QToolButton)
                      if b.defaultAction() is app.actions.server)
        assert button.isHidden()  # the stand-in window hides it too
        app.settings = Settings()  # as the Settings dialog does: now this machine
        app.server_menu.update()
        assert app.actions.server.isVisible() and not button.isHidden()
    finally:
        app.close()
        qtbot.wait(50)


def test_quitting_stops_the_server_started_here(qtbot: QtBot, shims: Path) -> None:
    port = free_port()
    app = HolodeskApp(Settings(endpoint=f"http://127.0.0.1:{port}/v1"), use_system_tray=False,
                      probe=False)
    app.server_menu.toggle()
    qtbot.waitUntil(lambda: app.server.state in ("ready", "failed"), timeout=60_000)
    pid = app.server.pid
    assert app.server.state == "ready" and pid is not None
    app.close()
    qtbot.wait(50)
    assert not alive(pid)
