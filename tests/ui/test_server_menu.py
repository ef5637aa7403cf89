"""ui.server_menu: the tray's server entry, and a failure told in the GUI's terms; where no GPU
can serve, the reason instead of a start (decided once, off the GUI thread); and the tray's
stand-in window keeping its width and its buttons whatever the entry and the status say
(issue 24)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QRect
from pytestqt.qtbot import QtBot

from app.serving import serving_problem
from app.settings import Settings
from model.problem import Fix, Problem, Remedy
from model.serving.launcher import ServeError
from tests.support.fake_vllm_cli import NVIDIA_SMI_H100, install_shims
from ui.server_control import ServerControl
from ui.server_menu import NO_GPU_TEXT, ServerMenu, failure_text
from ui.task_window import TaskWindow
from ui.tray import FallbackTrayWindow, Tray, TrayActions, TrayState

LOG = Path("/tmp/holodesk-logs/vllm-8000.log")
LONG_TASK = ("holodesk: working on 'Open the timesheet page in the browser and file today's "
             "hours: 7.5 on project Atlas, with the note that the quarterly figures were "
             "reviewed with finance and the budget for the second half was agreed' END")


def test_a_failure_names_the_settings_place_not_an_option() -> None:
    error = ServeError("the endpoint is not this machine",
                       Fix("set the endpoint to this machine", setting="endpoint"))
    assert failure_text(error, None) == (
        "Model server: the endpoint is not this machine. set the endpoint to this machine. "
        "Change Settings > Model server > Endpoint URL.")


def test_a_failure_points_at_the_log_or_quotes_its_last_lines() -> None:
    plain = ServeError("vLLM stopped: it crashed.", Fix("look at its log", remedy=None))
    assert failure_text(plain, LOG) == (
        f"Model server: vLLM stopped: it crashed. look at its log (its log: {LOG})")
    tail = ServeError("vLLM exited", "read the last lines", log_tail=[f"l{i}" for i in range(12)])
    text = failure_text(tail, LOG)
    assert text.startswith("Model server: vLLM exited. read the last lines\n"
                           f"Last lines of the log ({LOG}):\nl4\n")
    assert text.endswith("l11") and "l3" not in text and "(its log:" not in text
    keyed = ServeError("no key", Fix("store one", remedy=Remedy.SET_API_KEY))
    assert failure_text(keyed, None) == (
        "Model server: no key. store one. Use Settings > Model server > API key.")


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


def test_the_entry_follows_the_endpoint_and_a_refused_start_is_told(
    parts: tuple[TrayActions, Tray, TaskWindow],
) -> None:
    actions, tray, window = parts
    settings = [Settings(endpoint="https://gpu.example.com/v1")]
    server = ServerControl(lambda: settings[0])
    told: list[str] = []
    menu = ServerMenu(server, actions.server, lambda: settings[0], tray=tray, task_window=window,
                      busy=lambda: False, poll_now=lambda: None, tell=told.append)
    try:
        assert not actions.server.isVisible()
        menu.toggle()  # as if the entry were there: refused at once, in the GUI's words
        assert server.state == "failed"
        assert told == [
            "Model server: the endpoint https://gpu.example.com/v1 is not this machine. start "
            "the server where it runs, or set the endpoint to http://127.0.0.1:8000/v1. "
            "Change Settings > Model server > Endpoint URL."]
        settings[0] = Settings()
        menu.update()
        assert actions.server.isVisible() and actions.server.text() == "Start model server"
    finally:
        server.shutdown()


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
