"""The tray's stand-in window as a newcomer meets it (issue 24), offscreen: one width whatever
it says, its buttons never moving, long status lines cut with the whole text on hover; no
Start model server where no GPU can serve (the reason instead, decided once off the GUI
thread); the demo said while it starts, not the server probe's "No model server answers…";
and Settings kept above it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QRect
from pytestqt.qtbot import QtBot

from app.serving import serving_problem
from app.settings import Settings
from app.status import ServerStatus
from model.problem import Fix, Problem
from tests.support.fake_vllm_cli import NVIDIA_SMI_H100, install_shims
from tests.support.home import isolate_home
from tests.support.keyring_backend import without_keyring
from ui.app import HolodeskApp
from ui.demo_control import DEMO_OPENING
from ui.server_control import ServerControl
from ui.server_menu import NO_GPU_TEXT, ServerMenu
from ui.settings_dialog import SettingsDialog
from ui.task_window import TaskWindow
from ui.tray import FallbackTrayWindow, Tray, TrayActions, TrayState

LONG_TASK = ("holodesk: working on 'Open the timesheet page in the browser and file today's "
             "hours: 7.5 on project Atlas, with the note that the quarterly figures were "
             "reviewed with finance and the budget for the second half was agreed' END")
DOWN = ServerStatus("down", "No model server answers at http://127.0.0.1:8000/v1.",
                    Fix("Start the model server."), endpoint="http://127.0.0.1:8000/v1")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_home(monkeypatch, tmp_path)
    without_keyring(monkeypatch)
    return tmp_path


@pytest.fixture
def parts(qtbot: QtBot) -> Iterator[tuple[TrayActions, Tray, TaskWindow]]:
    actions = TrayActions()
    tray = Tray(actions, use_system_tray=False)
    window = TaskWindow()
    yield actions, tray, window
    for widget in (window, tray.window):
        if widget is not None:
            widget.close()
            widget.deleteLater()
    tray.menu.deleteLater()
    tray.run_menu.deleteLater()


def _menu(parts: tuple[TrayActions, Tray, TaskWindow], why: Callable[[], Problem | None],
          endpoint: str = "http://127.0.0.1:8000/v1") -> tuple[ServerMenu, ServerControl]:
    actions, tray, window = parts
    server = ServerControl(lambda: Settings(endpoint=endpoint))
    menu = ServerMenu(server, actions.server, lambda: Settings(endpoint=endpoint), tray=tray,
                      task_window=window, busy=lambda: False, poll_now=lambda: None,
                      tell=lambda _text: None, serving_problem=why)
    return menu, server


def _places(window: FallbackTrayWindow) -> dict[str, QRect]:
    return {action.text(): QRect(button.geometry()) for action, button in window.buttons.items()}


def test_the_stand_in_keeps_its_width_and_its_buttons_whatever_it_says(
        qtbot: QtBot, parts: tuple[TrayActions, Tray, TaskWindow]) -> None:
    actions, tray, _window = parts
    menu, server = _menu(parts, lambda: None)
    window = tray.window
    assert window is not None
    try:
        window.show()
        qtbot.waitExposed(window)
        qtbot.waitUntil(lambda: not menu._checks.pending, timeout=10_000)
        width, places = window.width(), _places(window)
        # The messages of one demo, a long task among them (it grew from 654 to 1170 pixels).
        for text in ("holodesk: idle", LONG_TASK, "holodesk: waiting for your approval",
                     "holodesk: stopped: " + "the reason, at length; " * 12):
            tray.set_state(TrayState.WORKING, text)
            qtbot.wait(10)
            assert window.width() == width
        label = window.status_text
        assert label.full_text().endswith("at length; ")  # the last one, whole, on hover
        assert label.text().endswith("…") and label.text() != label.full_text()
        assert "the reason, at length" in label.toolTip()
        # Every text the server entry shows, and hiding it (a remote endpoint): nothing moves.
        for text in ("Stop model server (starting…)", "Server started elsewhere",
                     "Stopping model server…", NO_GPU_TEXT, "Start model server"):
            actions.server.setText(text)
            qtbot.wait(10)
            assert window.width() == width
            assert list(_places(window).values()) == list(places.values()), text
        actions.server.setVisible(False)
        qtbot.wait(10)
        assert list(_places(window).values()) == list(places.values())
        short = "holodesk: idle"
        tray.set_state(TrayState.IDLE, short)
        assert label.text() == short and label.toolTip() == ""  # whole: nothing to hover for
    finally:
        server.shutdown()


def test_no_gpu_says_why_instead_of_offering_a_start(
        qtbot: QtBot, parts: tuple[TrayActions, Tray, TaskWindow], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    actions, _tray, _window = parts
    calls: list[threading.Thread] = []
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine without the NVIDIA driver

    def why() -> Problem | None:
        calls.append(threading.current_thread())
        return serving_problem()  # the real checks

    menu, server = _menu(parts, why)
    try:
        qtbot.waitUntil(lambda: menu.cannot_serve is not None, timeout=10_000)
        action = actions.server
        assert action.isVisible() and not action.isEnabled()
        assert action.text() == NO_GPU_TEXT
        assert "no NVIDIA GPU found" in action.toolTip()
        assert "Endpoint URL" in action.toolTip()  # what to do instead: a server elsewhere
        for _ in range(3):  # the settings change, the server's state changes: asked once
            menu.update()
        qtbot.wait(20)
        assert len(calls) == 1 and calls[0] is not threading.main_thread()
    finally:
        server.shutdown()


def test_a_gpu_offers_the_start(qtbot: QtBot, parts: tuple[TrayActions, Tray, TaskWindow],
                                tmp_path: Path) -> None:
    smi = install_shims(tmp_path / "bin", gpus=NVIDIA_SMI_H100, vllm=False) / "nvidia-smi"
    menu, server = _menu(parts, lambda: serving_problem(str(smi)))
    try:
        qtbot.waitUntil(lambda: not menu._checks.pending, timeout=10_000)
        assert menu.cannot_serve is None
        assert parts[0].server.text() == "Start model server" and parts[0].server.isEnabled()
    finally:
        server.shutdown()


def test_the_stand_in_says_the_demo_is_starting_not_that_no_server_answers(
        qtbot: QtBot, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)  # the practice window cannot open here
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = HolodeskApp(Settings(), use_system_tray=False, probe=False)
    try:
        app.status_changed.emit(DOWN)
        window = app.tray.window
        assert window is not None
        assert window.status_text.full_text() == f"holodesk: {DOWN.message}"
        assert app.start_demo()
        assert window.status_text.full_text() == DEMO_OPENING
        assert "No model server" not in app.tray.tooltip
        # It cannot open here: told, and the probe's words are back.
        qtbot.waitUntil(lambda: not app.demo.starting, timeout=20_000)
        assert window.status_text.full_text() == f"holodesk: {DOWN.message}"
    finally:
        app.close()
        qtbot.wait(50)


def test_settings_opens_above_the_stand_in(qtbot: QtBot, home: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in is always on top: a dialog of its own is kept above it by the window
    manager (a parentless one was under it, Save and Cancel covered)."""
    parents: list[object] = []

    def exec_(dialog: SettingsDialog) -> int:
        parents.append(dialog.parentWidget())
        return 0

    monkeypatch.setattr(SettingsDialog, "exec", exec_)
    app = HolodeskApp(Settings(), use_system_tray=False, probe=False)
    try:
        app.show_settings()
        assert parents == [app.tray.window] and app.tray.window is not None
    finally:
        app.close()
        qtbot.wait(50)
