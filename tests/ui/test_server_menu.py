"""ui.server_menu: the tray's server entry, and a failure told in the GUI's terms."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.settings import Settings
from model.problem import Fix, Remedy
from model.serving.launcher import ServeError
from ui.server_control import ServerControl
from ui.server_menu import ServerMenu, failure_text
from ui.task_window import TaskWindow
from ui.tray import Tray, TrayActions

LOG = Path("/tmp/holodesk-logs/vllm-8000.log")


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
