"""ui.server_control: start and stop the stand-in `vllm` from the GUI side, loop never blocked."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from app.settings import Settings
from model.serving.launcher import ServeError
from tests.app.test_serve import alive, free_port, http_status
from tests.support.fake_vllm_cli import install_shims, shim_path
from tests.support.home import Home, isolate_home
from tests.support.keyring_backend import without_keyring
from ui.problem_view import view
from ui.server_control import ServerControl
from ui.server_menu import failure_text


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def shims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = install_shims(tmp_path / "bin")
    monkeypatch.setenv("PATH", shim_path(folder))  # the fake nvidia-smi
    monkeypatch.setenv("FAKE_VLLM_LOAD_SECONDS", "0.5")
    monkeypatch.setenv("FAKE_VLLM_RECORD", str(tmp_path / "record.json"))
    without_keyring(monkeypatch)
    return folder


@pytest.fixture
def controls() -> Iterator[list[ServerControl]]:
    made: list[ServerControl] = []
    yield made
    for control in made:
        control.shutdown()


def make(controls: list[ServerControl], shims: Path, port: int) -> tuple[ServerControl, list[str]]:
    settings = Settings(endpoint=f"http://127.0.0.1:{port}/v1")
    control = ServerControl(lambda: settings, executable=str(shims / "vllm"), watch_interval_ms=100)
    controls.append(control)
    states: list[str] = []
    control.state_changed.connect(states.append)
    return control, states


def test_available_only_for_a_local_endpoint() -> None:
    assert ServerControl.available(Settings())
    assert ServerControl.available(Settings(endpoint="http://localhost:9000/v1"))
    assert not ServerControl.available(Settings(endpoint="https://gpu.example.com/v1"))


def test_start_then_stop(
    qtbot: QtBot, home: Home, shims: Path, tmp_path: Path, controls: list[ServerControl]
) -> None:
    port = free_port()
    control, states = make(controls, shims, port)
    progress: list[str] = []
    control.progress.connect(progress.append)
    # The event loop keeps turning while the server loads: a timer fires meanwhile.
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(50)

    control.start()
    assert states == ["starting"]
    qtbot.waitUntil(lambda: control.state in ("ready", "failed"), timeout=60_000)
    timer.stop()
    assert control.state == "ready", progress
    assert len(ticks) > 3
    assert any("loading weights" in p for p in progress)
    assert progress[-1] == f"ready at http://127.0.0.1:{port}/v1 (model holotron)"
    assert control.log_path == home.state / "holodesk" / f"vllm-{port}.log"
    assert http_status(f"http://127.0.0.1:{port}/health") == 200
    control.start()  # ignored while ready
    pid = json.loads((tmp_path / "record.json").read_text())["pid"]

    control.stop()
    qtbot.waitUntil(lambda: control.state == "stopped", timeout=60_000)
    assert states == ["starting", "ready", "stopping", "stopped"]
    assert not alive(pid)


def test_stop_while_starting(
    qtbot: QtBot, home: Home, shims: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, controls: list[ServerControl],
) -> None:  # fmt: skip
    monkeypatch.setenv("FAKE_VLLM_LOAD_SECONDS", "60")
    control, states = make(controls, shims, free_port())
    control.start()
    record = tmp_path / "record.json"
    qtbot.waitUntil(record.exists, timeout=30_000)
    qtbot.waitUntil(lambda: record.stat().st_size > 0, timeout=5_000)
    control.stop()
    qtbot.waitUntil(lambda: control.state == "stopped", timeout=60_000)
    assert states == ["starting", "stopping", "stopped"]
    assert not alive(json.loads(record.read_text())["pid"])


def test_crash_is_reported(
    qtbot: QtBot, home: Home, shims: Path, monkeypatch: pytest.MonkeyPatch,
    controls: list[ServerControl],
) -> None:  # fmt: skip
    monkeypatch.setenv("FAKE_VLLM_FAIL", "oom")
    control, states = make(controls, shims, free_port())
    with qtbot.waitSignal(control.failed, timeout=60_000) as failed:
        control.start()
    error = failed.args[0]
    assert isinstance(error, ServeError)
    assert "ran out of GPU memory" in error.message
    # The app names the setting, never `holodesk serve`'s option for it.
    assert "GPU memory share" in view(error).fix and "--" not in view(error).fix
    assert any("CUDA out of memory" in line for line in error.log_tail)
    # As the tray tells it: the fix, then the log's last lines under its path.
    text = failure_text(error, control.log_path)
    assert f"Last lines of the log ({control.log_path}):" in text
    assert "CUDA out of memory" in text
    assert states == ["starting", "failed"]


def test_missing_gpu_fails_with_the_fix(
    qtbot: QtBot, home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    controls: list[ServerControl],
) -> None:  # fmt: skip
    folder = install_shims(tmp_path / "nogpu", gpus=None)
    monkeypatch.setenv("PATH", shim_path(folder))
    without_keyring(monkeypatch)
    control, _states = make(controls, folder, free_port())
    with qtbot.waitSignal(control.failed, timeout=30_000) as failed:
        control.start()
    assert "no NVIDIA GPU" in failed.args[0].message
    assert "40 GB" in view(failed.args[0]).fix


def test_quit_stops_the_server(
    qtbot: QtBot, home: Home, shims: Path, tmp_path: Path, controls: list[ServerControl]
) -> None:
    control, _states = make(controls, shims, free_port())
    control.start()
    qtbot.waitUntil(lambda: control.state == "ready", timeout=60_000)
    pid = json.loads((tmp_path / "record.json").read_text())["pid"]
    control.shutdown()  # what aboutToQuit calls
    assert not alive(pid)
    assert control.state == "stopped"


def test_death_after_ready_is_noticed(
    qtbot: QtBot, home: Home, shims: Path, tmp_path: Path, controls: list[ServerControl]
) -> None:
    import os
    import signal

    control, states = make(controls, shims, free_port())
    control.start()
    qtbot.waitUntil(lambda: control.state == "ready", timeout=60_000)
    pid = json.loads((tmp_path / "record.json").read_text())["pid"]
    with qtbot.waitSignal(control.failed, timeout=30_000) as failed:
        os.kill(pid, signal.SIGKILL)
    assert failed.args[0].message.startswith("vLLM stopped")
    assert states[-1] == "failed"


def test_stop_during_the_checks_ends_quietly(
    qtbot: QtBot, home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    controls: list[ServerControl],
) -> None:  # fmt: skip
    """Stopped while it checks the GPU, a start that would fail there shows no failure."""
    folder = install_shims(tmp_path / "nogpu", gpus="")  # nvidia-smi lists no GPU: fatal
    monkeypatch.setenv("PATH", shim_path(folder))
    monkeypatch.setenv("FAKE_NVIDIA_SMI_DELAY", "3")  # the check is still running at the stop
    without_keyring(monkeypatch)
    control, states = make(controls, folder, free_port())
    failures: list[ServeError] = []
    control.failed.connect(failures.append)
    with qtbot.waitSignal(control.progress, timeout=30_000) as checking:
        control.start()
    assert checking.args == ["checking vLLM and the GPU"]
    control.stop()
    qtbot.waitUntil(lambda: control.state == "stopped", timeout=60_000)
    qtbot.wait(200)  # nothing more arrives
    assert states == ["starting", "stopping", "stopped"]
    assert failures == []
    control.start()  # and it can be started again (and fail visibly now, with no stop)
    qtbot.waitUntil(lambda: control.state == "failed", timeout=60_000)
    assert failures and "lists no GPU" in failures[0].message


def test_a_server_beyond_this_machine_without_a_key_is_warned_about(
    qtbot: QtBot, home: Home, shims: Path, controls: list[ServerControl]
) -> None:
    # The same warning as `holodesk serve --host 0.0.0.0` (app.serving.check gives both).
    port = free_port()
    settings = Settings(endpoint=f"http://127.0.0.1:{port}/v1")
    control = ServerControl(lambda: settings, executable=str(shims / "vllm"), host="0.0.0.0",
                            watch_interval_ms=100)
    controls.append(control)
    progress: list[str] = []
    control.progress.connect(progress.append)

    control.start()
    qtbot.waitUntil(lambda: control.state in ("ready", "failed"), timeout=60_000)
    assert control.state == "ready", progress
    warnings = [p for p in progress if p.startswith("warning: ")]
    assert warnings == ["warning: vLLM will listen on 0.0.0.0 without an API key: anyone who "
                        "can reach this machine can use the model."]
    # Said before vLLM starts, not after the minutes of loading.
    assert progress.index(warnings[0]) < next(
        i for i, p in enumerate(progress) if p.startswith("starting vLLM"))


def test_no_such_warning_on_loopback(
    qtbot: QtBot, home: Home, shims: Path, controls: list[ServerControl]
) -> None:
    control, _states = make(controls, shims, free_port())
    progress: list[str] = []
    control.progress.connect(progress.append)
    control.start()
    qtbot.waitUntil(lambda: control.state in ("ready", "failed"), timeout=60_000)
    assert control.state == "ready", progress
    assert not [p for p in progress if "without an API key" in p]
