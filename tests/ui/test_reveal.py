"""Every way of showing a window brings it back un-minimised (a desktop without a taskbar has
no other way back to a minimised window): the tray's entries, a second launch, and a run's
end for the windows it collapsed. tests/e2e/test_out_of_the_way_x11.py checks a minimised
task window under a real window manager."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home
from ui.app import HolodeskApp
from ui.reveal import reveal

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def _minimise(window: QWidget) -> None:
    window.show()
    window.setWindowState(window.windowState() | Qt.WindowState.WindowMinimized)
    assert window.isMinimized()


def test_reveal_keeps_a_maximised_window_maximised(qtbot: QtBot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    window.setWindowState(Qt.WindowState.WindowMaximized | Qt.WindowState.WindowMinimized)
    reveal(window)
    assert not window.isMinimized() and window.isMaximized() and window.isVisible()


SHOWS: dict[str, tuple[Callable[[HolodeskApp], QWidget | None], Callable[[HolodeskApp], None]]] = {
    "new task": (lambda app: app.task_window, lambda app: app.actions.new_task.trigger()),
    "second launch": (lambda app: app.task_window,
                      lambda app: app.handle_message({"cmd": "show"}) and None),
    "action log": (lambda app: app.log_window, lambda app: app.actions.action_log.trigger()),
    "automations": (lambda app: app.automations_dialog,
                    lambda app: app.actions.automations.trigger()),
    "about": (lambda app: app.about_dialog, lambda app: app.actions.about.trigger()),
    "check set-up": (lambda app: app.doctor_window, lambda app: app.actions.check.trigger()),
    "report": (lambda app: app.report_dialog, lambda app: app.actions.report.trigger()),
    "status window": (lambda app: app.tray.window, lambda app: app.show_tray_window()),
}


@pytest.mark.parametrize("way", list(SHOWS))
def test_every_way_of_showing_a_window_unminimises_it(
        way: str, make_app: MakeApp, qtbot: QtBot) -> None:
    which, show = SHOWS[way]
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, _rig = make_app(server)
        show(app)  # made and shown once
        window = which(app)
        assert window is not None
        _minimise(window)
        show(app)
        assert not window.isMinimized() and window.isVisible(), way
