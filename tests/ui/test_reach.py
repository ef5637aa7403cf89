"""Never stranded, never blind, in the app as wired (offscreen): the confirmation panel keeps
clear of its target, the stand-in tray window cannot be lost, a second launch brings it back,
the task window's menu reaches everything the tray does, every window shows holodesk's icon."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMenu, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from control.policy import ConfirmMode
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home
from ui.about_dialog import AboutDialog
from ui.app import HolodeskApp
from ui.app_icon import app_icon
from ui.overlay import logical_to_qt
from ui.panel_place import KEEP_OUT
from ui.settings_dialog import SettingsDialog
from ui.tray import TrayActions, TrayCloseChoice, choice_of, tray_close_box
from ui.window_menu import attach_window_menu

# The click lands where the panel opens when nothing places it (the top left).
CLICK = {"thought": "delete it",
         "action": {"action": "click", "element": "Delete button", "x": 120, "y": 120}}
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def test_the_confirmation_panel_keeps_clear_of_the_point_it_asks_about(
    qtbot: QtBot, make_app: MakeApp
) -> None:
    with FakeVLLM(ScriptedPolicy([CLICK, ANSWER])) as server:
        app, _rig = make_app(server)
        assert app.start_task("delete the file", confirm=ConfirmMode.ALWAYS)
        qtbot.waitUntil(lambda: app.controller.pending is not None, timeout=20000)
        request = app.controller.pending
        assert request is not None
        panel = app.confirm_panel
        assert panel.isVisible()
        frame = panel.frameGeometry()
        for point in request.points:
            spot = logical_to_qt(point.x, point.y)
            assert not frame.adjusted(-round(KEEP_OUT), -round(KEEP_OUT), round(KEEP_OUT),
                                      round(KEEP_OUT)).contains(spot.toPoint()), \
                f"the panel {frame} covers the target {point}"
        assert app.overlay.isVisible()  # the marker is on the point the panel leaves free
        app.controller.stop("test")


def test_a_step_without_a_point_leaves_the_panel_where_it_is(qtbot: QtBot) -> None:
    from ui.panel_place import move_clear_of

    window = QWidget()
    qtbot.addWidget(window)
    window.setGeometry(30, 40, 300, 200)
    assert move_clear_of(window, []) is None
    assert window.geometry().topLeft().toTuple() == (30, 40)


# -- the tray's stand-in window cannot be lost ---------------------------------------------


def _app_with_stand_in(make_app: MakeApp, server: FakeVLLM, qtbot: QtBot,
                       choice: TrayCloseChoice) -> tuple[HolodeskApp, list[str]]:
    app, _rig = make_app(server)
    asked: list[str] = []

    def ask(_parent: QWidget | None) -> TrayCloseChoice:
        asked.append("asked")
        return choice

    app.ask_tray_close = ask
    window = app.tray.window
    assert window is not None
    window.show()
    qtbot.waitExposed(window)
    return app, asked


def test_closing_the_stand_in_and_choosing_hide_keeps_holodesk_running(
    qtbot: QtBot, make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, asked = _app_with_stand_in(make_app, server, qtbot, TrayCloseChoice.HIDE)
        quits: list[bool] = []
        monkeypatch.setattr(app, "quit", lambda: quits.append(True))
        window = app.tray.window
        assert window is not None
        window.close()  # what the window manager's close button does
        assert asked == ["asked"]
        assert window.isHidden() and quits == []
        # The way back without a tray: the task window's menu...
        menu = _menu_entries(app)
        assert menu["Show the status window"].isVisible()
        menu["Show the status window"].trigger()
        assert window.isVisible()


def test_cancel_keeps_the_stand_in_and_quit_quits(
    qtbot: QtBot, make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, asked = _app_with_stand_in(make_app, server, qtbot, TrayCloseChoice.CANCEL)
        quits: list[bool] = []
        monkeypatch.setattr(app, "quit", lambda: quits.append(True))
        window = app.tray.window
        assert window is not None
        window.close()
        assert window.isVisible() and quits == [] and asked == ["asked"]
        app.ask_tray_close = lambda _parent: TrayCloseChoice.QUIT
        window.close()
        assert quits == [True]


def test_the_question_says_how_to_get_the_window_back(qtbot: QtBot) -> None:
    for label, expected in (("Hide this window", TrayCloseChoice.HIDE),
                            ("Quit holodesk", TrayCloseChoice.QUIT),
                            ("Cancel", TrayCloseChoice.CANCEL)):
        box = tray_close_box()
        qtbot.addWidget(box)
        assert "open holodesk again" in box.informativeText()
        assert "Show the status window" in box.informativeText()
        box.show()
        button = next(b for b in box.buttons() if b.text().replace("&", "") == label)
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert choice_of(box) is expected
    unanswered = tray_close_box()
    qtbot.addWidget(unanswered)
    assert choice_of(unanswered) is TrayCloseChoice.CANCEL


def test_the_app_quitting_closes_the_stand_in_without_asking(
    qtbot: QtBot, make_app: MakeApp
) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, asked = _app_with_stand_in(make_app, server, qtbot, TrayCloseChoice.CANCEL)
        window = app.tray.window
        assert window is not None
        app.close()
        assert asked == [] and not window.isVisible()


def test_launching_again_brings_back_the_hidden_stand_in_and_the_task_window(
    qtbot: QtBot, make_app: MakeApp
) -> None:
    from app.instance import send
    from ui.instance import InstanceServer

    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, _asked = _app_with_stand_in(make_app, server, qtbot, TrayCloseChoice.HIDE)
        window = app.tray.window
        assert window is not None
        window.close()
        app.task_window.hide()
        assert window.isHidden() and app.task_window.isHidden()
        listener = InstanceServer(app.handle_message)
        assert listener.listen()
        replies: list[object] = []
        # What run_gui's second launch sends, from another thread as from another process.
        thread = threading.Thread(target=lambda: replies.append(send({"cmd": "show"},
                                                                     timeout=10)))
        thread.start()
        qtbot.waitUntil(lambda: bool(replies), timeout=15000)
        thread.join()
        listener.close()
        assert replies == [{"ok": True}]
        assert window.isVisible() and app.task_window.isVisible()


# -- the task window's menu ------------------------------------------------------------------


def _menu_entries(app: HolodeskApp) -> dict[str, QAction]:
    entries: dict[str, QAction] = {}
    for top in app.window_menu.actions():
        menu = top.menu()
        assert isinstance(menu, QMenu)
        for action in menu.actions():
            if not action.isSeparator():
                entries[action.text().replace("&", "")] = action
    return entries


def test_the_task_window_menu_has_every_tray_entry_but_new_task(
    qtbot: QtBot, make_app: MakeApp
) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, _rig = make_app(server)
        entries = _menu_entries(app)
        for wanted in ("Settings", "Action log", "Check set-up…", "Automations…",
                       "About holodesk", "Quit", "Run automation"):
            assert wanted in entries, f"{wanted!r} missing from {sorted(entries)}"
        # The same QAction objects as the tray's: one action, one behaviour, everywhere.
        shared = [a for a in app.actions.all() if a is not app.actions.new_task]
        assert all(a in entries.values() for a in shared)
        assert app.actions.new_task not in entries.values()
        assert app.task_window.layout().menuBar() is app.window_menu


def test_an_action_added_to_the_tray_list_appears_in_the_menu(qtbot: QtBot) -> None:
    class More(TrayActions):
        def __init__(self) -> None:
            super().__init__()
            self.report = QAction("Report a problem…", self)

        def all(self) -> list[QAction]:
            entries = super().all()
            entries.insert(entries.index(self.about), self.report)
            return entries

    actions = More()
    window = QWidget()
    qtbot.addWidget(window)
    QVBoxLayout(window)
    bar = attach_window_menu(window, actions)
    menu = bar.actions()[0].menu()
    assert isinstance(menu, QMenu)
    assert actions.report in menu.actions()


def test_the_menu_entries_do_what_the_tray_entries_do(
    qtbot: QtBot, make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, _rig = make_app(server)
        called: list[str] = []
        # The app's slots are connected when it is built: record what they reach.
        monkeypatch.setattr("ui.app.SettingsDialog.exec", lambda _self: called.append("settings")
                            or 0)
        monkeypatch.setattr("ui.app.DoctorWindow.show_and_run",
                            lambda _self: called.append("check"))
        entries = _menu_entries(app)
        entries["Settings"].trigger()
        entries["Check set-up…"].trigger()
        entries["Action log"].trigger()
        entries["Automations…"].trigger()
        entries["About holodesk"].trigger()
        assert called == ["settings", "check"]
        assert app.log_window is not None and app.log_window.isVisible()
        assert app.automations_dialog is not None and app.automations_dialog.isVisible()
        assert app.about_dialog is not None and app.about_dialog.isVisible()


def test_the_about_window_says_version_paths_and_licence(qtbot: QtBot) -> None:
    from app import paths
    from app.version import version

    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    assert dialog.values["Version"].text() == version()
    assert dialog.values["Log file"].text() == str(paths.log_path())
    assert dialog.values["Settings"].text() == str(paths.settings_path())
    assert dialog.values["Licence"].text() == "Apache-2.0"


# -- holodesk's icon on every window ---------------------------------------------------------


def test_every_top_level_window_shows_holodesks_icon(
    qtbot: QtBot, make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = app_icon().pixmap(32, 32).toImage()
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, _rig = make_app(server)
        monkeypatch.setattr("ui.app.DoctorWindow.show_and_run", lambda self: self.show())
        app.show_log()
        app.show_automations()
        app.show_about()
        app.show_doctor()
        windows = [w for w in QApplication.topLevelWidgets() if w.isWindow()]
        assert app.task_window in windows and app.confirm_panel in windows
        for window in (app.task_window, app.confirm_panel, app.tray.window, app.log_window,
                       app.automations_dialog, app.about_dialog, app.doctor_window,
                       tray_close_box(), SettingsDialog()):
            assert window is not None
            got = window.windowIcon().pixmap(32, 32).toImage()
            assert got == expected, f"{window.windowTitle()!r} shows another icon"
