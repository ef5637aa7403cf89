"""Automations in the desktop app, offscreen: the window, the tray menu, hotkeys and triggers.

Below the bridge the parts are real (the fake vLLM over HTTP, the agent loop, the action log,
the dry-run input backend); hotkeys are played with :class:`FakeHotkeys`, which fires exactly
as pynput does (tests/e2e/test_automations_x11.py presses real keys).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.automations import Automation, load_automations, save_automations
from app.trajectory import trajectory_dir
from control.policy import ConfirmMode
from tests.support.app_rig import MakeApp
from tests.support.fake_hotkeys import FakeHotkeys
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home, isolate_home
from ui.automations_dialog import AutomationsDialog
from ui.tray import Tray, TrayActions

STOP = "ctrl+alt+shift+escape"
CLICK = {"thought": "click", "action": {"action": "click", "element": "OK", "x": 500, "y": 500}}
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}
TIMEOUT = 20000


def _a(name: str = "timesheet", task: str = "file today's hours", **values: object) -> Automation:
    return Automation.make("", name=name, task=task, **values)


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def path(home: Home) -> Path:
    return home.config / "holodesk" / "automations.toml"


# -- the Automations window ----------------------------------------------------------------------


@pytest.fixture
def make_dialog(qtbot: QtBot, path: Path) -> Callable[..., AutomationsDialog]:
    def make(**kwargs: Any) -> AutomationsDialog:
        dialog = AutomationsDialog(path=path, **kwargs)
        qtbot.addWidget(dialog)
        return dialog

    return make


def _fill(dialog: AutomationsDialog, name: str, task: str, hotkey: str = "",
          confirm: str = "risky", monitor: str = "1") -> None:
    dialog.name_edit.setText(name)
    dialog.task_edit.setPlainText(task)
    dialog.hotkey_edit.setText(hotkey)
    dialog.confirm_combo.setCurrentIndex(dialog.confirm_combo.findData(confirm))
    dialog.monitor_combo.setCurrentText(monitor)


def _save(qtbot: QtBot, dialog: AutomationsDialog) -> None:
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        dialog.save_button.click()


def test_add_edit_and_delete_in_the_window(qtbot: QtBot, path: Path,
                                           make_dialog: Callable[..., AutomationsDialog]) -> None:
    asked: list[str] = []

    def agree(_parent: object, name: str) -> bool:
        asked.append(name)
        return True

    dialog = make_dialog(monitor="2", confirm_delete=agree)
    assert dialog.list.count() == 0
    dialog.new_button.click()
    assert dialog.monitor_combo.currentText() == "2"  # the settings' monitor for a new one
    _fill(dialog, "timesheet", "file today's hours", "Ctrl+Alt+1", confirm="always")
    _save(qtbot, dialog)
    _fill(dialog, "timesheet", "file today's hours", "Ctrl+Alt+1", confirm="always")
    dialog.new_button.click()
    _fill(dialog, "mail", "send the report", "ctrl+alt+2")
    _save(qtbot, dialog)
    assert [a.name for a in load_automations(path)] == ["timesheet", "mail"]
    assert dialog.list.count() == 2
    assert "Ctrl+Alt+2" in dialog.list.item(1).text()

    assert dialog.select("TIMESHEET")
    assert dialog.task_edit.toPlainText() == "file today's hours"
    assert dialog.confirm_combo.currentData() == "always"
    dialog.name_edit.setText("hours")
    dialog.hotkey_edit.setText("")
    _save(qtbot, dialog)
    assert [(a.name, a.hotkey) for a in load_automations(path)] == [
        ("hours", None), ("mail", "ctrl+alt+2")]
    assert dialog.editing == "hours"

    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT) as saved:
        dialog.delete_button.click()
    assert asked == ["hours"]
    assert [a.name for a in saved.args[0]] == ["mail"]
    assert [a.name for a in load_automations(path)] == ["mail"]


def test_the_window_refuses_conflicts_and_saves_nothing(
        qtbot: QtBot, path: Path, make_dialog: Callable[..., AutomationsDialog]) -> None:
    save_automations([_a(hotkey="ctrl+alt+1")], path)
    before = path.read_text()
    dialog = make_dialog(stop_hotkey=STOP)
    dialog.new_button.click()
    failures = [
        (("Timesheet", "x"), "exists already"),
        (("mail", "x", "alt+ctrl+1"), "conflicts with the hotkey of 'timesheet'"),
        (("mail", "x", "ctrl+alt+escape"), "emergency stop hotkey"),
        (("mail", "x", "ctrl+alt+nope"), "unknown key 'nope'"),
        (("stop", "x"), "taken by holodesk trigger stop"),  # no backticks in a window
        (("mail", "   "), "the task is empty"),
    ]
    for values, message in failures:
        _fill(dialog, *values)
        dialog.save_button.click()
        qtbot.waitUntil(_shows(dialog, message), timeout=TIMEOUT)
        qtbot.waitUntil(dialog.save_button.isEnabled, timeout=TIMEOUT)
    assert path.read_text() == before


def _shows(dialog: AutomationsDialog, text: str) -> Callable[[], bool]:
    return lambda: text in dialog.message.text()


def test_a_broken_file_is_shown_and_never_overwritten(
        qtbot: QtBot, path: Path, make_dialog: Callable[..., AutomationsDialog]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[[automation]]\nname = 'a'\n")
    dialog = make_dialog()
    assert "task is missing" in dialog.message.text() and str(path) in dialog.message.text()
    assert not dialog.save_button.isEnabled() and not dialog.new_button.isEnabled()
    dialog.save()
    assert path.read_text() == "[[automation]]\nname = 'a'\n"
    path.write_text("[[automation]]\nname = 'a'\ntask = 't'\n")  # fixed by hand
    dialog.reload()
    assert dialog.save_button.isEnabled()
    assert [a.name for a in dialog.automations] == ["a"]
    assert dialog.editing == "a"


def test_test_run_asks_for_every_step_to_be_confirmed(
        qtbot: QtBot, make_dialog: Callable[..., AutomationsDialog]) -> None:
    dialog = make_dialog()
    _fill(dialog, "quick", "press save", confirm="never")  # unsaved: tried before saving
    with qtbot.waitSignal(dialog.test_run_requested, timeout=TIMEOUT) as asked:
        dialog.test_button.click()
    run: Automation = asked.args[0]
    assert (run.name, run.task, run.confirm) == ("quick", "press save", ConfirmMode.ALWAYS)
    _fill(dialog, "quick", "")
    dialog.test_button.click()
    assert "task is empty" in dialog.message.text()


# -- the tray ------------------------------------------------------------------------------------


def test_the_tray_lists_the_automations_and_a_click_runs_one(qtbot: QtBot) -> None:
    actions = TrayActions()
    tray = Tray(actions, use_system_tray=False)
    try:
        tray.set_automations([("timesheet", "Ctrl+Alt+1"), ("mail", "")])
        texts = [a.text() for a in tray.menu.actions()]
        at = texts.index("Automations…")
        assert texts[at - 2:at] == ["▶ timesheet\tCtrl+Alt+1", "▶ mail"]
        assert [a.text() for a in tray.run_menu.actions()] == texts[at - 2:at]
        with qtbot.waitSignal(tray.automation_chosen) as chosen:
            tray.automation_actions[1].trigger()
        assert chosen.args == ["mail"]
        tray.set_automations([])
        assert "▶ timesheet\tCtrl+Alt+1" not in [a.text() for a in tray.menu.actions()]
        assert not tray.run_menu.isEnabled()
    finally:
        assert tray.window is not None
        tray.window.close()
        tray.window.deleteLater()
        tray.menu.deleteLater()
        tray.run_menu.deleteLater()
        qtbot.wait(50)  # deleted while the Python side still holds them


# -- the app -------------------------------------------------------------------------------------


def test_a_hotkey_runs_its_automation_and_never_a_second_run(
        qtbot: QtBot, path: Path, make_app: MakeApp
) -> None:
    save_automations([_a(hotkey="ctrl+alt+1", confirm="always", monitor="mouse"),
                      _a(name="mail", task="send it", hotkey="ctrl+alt+2")], path)
    hotkeys = FakeHotkeys()
    hotkeys.register(STOP, lambda: None)
    hotkeys.start()
    with FakeVLLM(ScriptedPolicy([CLICK, ANSWER])) as server:
        app, rig = make_app(server, confirm=ConfirmMode.NEVER)
        app.hotkeys.set_listener(hotkeys, STOP)
        assert sorted(hotkeys.combos) == sorted([STOP, "ctrl+alt+1", "ctrl+alt+2"])
        assert [a.text() for a in app.tray.automation_actions] == [
            "▶ timesheet\tCtrl+Alt+1", "▶ mail\tCtrl+Alt+2"]
        assert hotkeys.fire("ctrl+alt+1")
        qtbot.waitUntil(lambda: app.controller.pending is not None, timeout=TIMEOUT)
        assert rig.started() == ["file today's hours"]
        assert (str(rig.settings[0].confirm), rig.settings[0].monitor) == ("always", "mouse")
        # While it waits for the person: the same hotkey, another one, the tray, a trigger.
        hotkeys.fire("ctrl+alt+1")
        hotkeys.fire("ctrl+alt+2")
        app.tray.automation_actions[1].trigger()
        reply = app.handle_message({"cmd": "automation", "name": "mail"})
        qtbot.wait(300)
        assert reply["ok"] is False and reply["busy"] is True
        assert rig.started() == ["file today's hours"]
        told = [e.split(" was not started")[0].split("automation ")[1]
                for e in app.teller.told if "A run is already active" in e]
        assert sorted(told) == sorted(["“timesheet” (hotkey)", "“mail” (hotkey)",
                                       "“mail” (tray)", "“mail” (trigger)"])
        app.controller.stop("test")
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=TIMEOUT)
        qtbot.waitUntil(lambda: not app.controller.running, timeout=TIMEOUT)
    assert len(rig.settings) == 1


def test_a_trigger_runs_the_named_automation(
        qtbot: QtBot, path: Path, make_app: MakeApp
) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig = make_app(server, confirm=ConfirmMode.NEVER)
        assert app.handle_message({"cmd": "automation", "name": "mail"})["ok"] is False
        # Saved after the app started (by the CLI, say): the trigger finds it at once.
        save_automations([_a(name="mail", task="send it", monitor="2")], path)
        assert app.handle_message({"cmd": "automation", "name": "MAIL"}) == {"ok": True}
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=TIMEOUT)
    assert rig.started() == ["send it"]
    assert (str(rig.settings[0].confirm), rig.settings[0].monitor) == ("risky", "2")


def test_the_app_follows_the_file_and_keeps_the_stop_hotkey_first(
        qtbot: QtBot, path: Path, make_app: MakeApp
) -> None:
    hotkeys = FakeHotkeys()
    hotkeys.register(STOP, lambda: None)
    hotkeys.start()
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, _rig = make_app(server, confirm=ConfirmMode.NEVER)
        app.hotkeys.set_listener(hotkeys, STOP)
        assert app.hotkeys.registered == []
        save_automations([_a(hotkey="ctrl+alt+1")], path)  # as the CLI would
        qtbot.waitUntil(lambda: app.hotkeys.registered == ["ctrl+alt+1"], timeout=TIMEOUT)
        assert [a.text() for a in app.tray.automation_actions] == ["▶ timesheet\tCtrl+Alt+1"]
        # A hand edit that clashes with the stop hotkey: told, left out, the stop stays.
        save_automations([_a(hotkey="ctrl+alt+escape")], path)
        qtbot.waitUntil(lambda: app.hotkeys.registered == [] and app.automations[0].hotkey
                        == "ctrl+alt+escape", timeout=TIMEOUT)
        assert STOP in hotkeys.combos and "ctrl+alt+1" not in hotkeys.combos
        assert any("emergency stop hotkey" in e for e in app.teller.told)
        # A broken file: told once; what was known stays in use.
        path.write_text("[[automation]\n")
        qtbot.waitUntil(lambda: any("cannot be read" in e for e in app.teller.told),
                        timeout=TIMEOUT)
        assert [a.name for a in app.automations] == ["timesheet"]
        assert path.read_text() == "[[automation]\n"


def test_the_window_from_the_tray_saves_and_test_runs(
        qtbot: QtBot, path: Path, make_app: MakeApp, file_keyring: object
) -> None:
    # A keyring: a mode of never is the person's choice to remember (app/approval.py).
    hotkeys = FakeHotkeys()
    hotkeys.start()
    with FakeVLLM(ScriptedPolicy([CLICK, ANSWER])) as server:
        app, rig = make_app(server, confirm=ConfirmMode.NEVER)
        app.hotkeys.set_listener(hotkeys, STOP)
        app.actions.automations.trigger()
        dialog = app.automations_dialog
        assert dialog is not None and dialog.isVisible()
        _fill(dialog, "quick", "press ok", "ctrl+alt+3", confirm="never")
        _save(qtbot, dialog)
        assert app.hotkeys.registered == ["ctrl+alt+3"]  # at once, not only via the watcher
        dialog.test_button.click()
        qtbot.waitUntil(lambda: app.controller.pending is not None, timeout=TIMEOUT)
        assert str(rig.settings[0].confirm) == "always"  # saved as never; tested watched
        app.controller.stop("test")
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=TIMEOUT)
    assert [a.name for a in load_automations(path)] == ["quick"]


# -- unsaved edits and the keyboard --------------------------------------------------------------


class _Answers:
    """Plays the person answering the unsaved-changes question."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def __call__(self, _parent: object, name: str) -> str:
        self.asked.append(name)
        return self.answer


def test_unsaved_edits_are_not_lost_when_moving_to_another_entry(
        qtbot: QtBot, path: Path, make_dialog: Callable[..., AutomationsDialog]) -> None:
    save_automations([_a(hotkey="ctrl+alt+1"), _a(name="mail", task="send it")], path)
    answers = _Answers("cancel")
    dialog = make_dialog(ask_unsaved=answers)
    assert dialog.editing == "timesheet" and not dialog.is_dirty
    dialog.hotkey_edit.setText("Ctrl+Alt+1 ")  # the same hotkey, spelled otherwise
    assert not dialog.is_dirty
    dialog.task_edit.setPlainText("file the hours of the whole week")
    assert dialog.is_dirty

    dialog.list.setCurrentRow(1)  # Cancel: the form and the selection stay
    qtbot.waitUntil(lambda: dialog.list.currentRow() == 0, timeout=TIMEOUT)
    assert answers.asked == ["timesheet"]
    assert dialog.task_edit.toPlainText() == "file the hours of the whole week"

    answers.answer = "save"  # Save: saved first, then on to the other entry
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        dialog.list.setCurrentRow(1)
    qtbot.waitUntil(lambda: dialog.editing == "mail", timeout=TIMEOUT)
    assert dialog.task_edit.toPlainText() == "send it"
    assert load_automations(path)[0].task == "file the hours of the whole week"

    answers.answer = "discard"  # Discard: New empties the form, the file is as it was
    dialog.task_edit.setPlainText("never mind")
    before = path.read_text()
    dialog.new_button.click()
    assert dialog.editing is None and dialog.task_edit.toPlainText() == ""
    assert path.read_text() == before
    assert len(answers.asked) == 3


def test_a_change_to_the_file_elsewhere_keeps_what_is_being_typed(
        qtbot: QtBot, path: Path, make_dialog: Callable[..., AutomationsDialog]) -> None:
    save_automations([_a(), _a(name="mail", task="send it")], path)
    dialog = make_dialog(ask_unsaved=_Answers("cancel"))
    dialog.task_edit.setPlainText("my new words")
    save_automations([_a(task="changed by the CLI"), _a(name="mail", task="send it")], path)
    dialog.reload()
    assert dialog.task_edit.toPlainText() == "my new words"
    assert "changed elsewhere" in dialog.message.text()
    _save(qtbot, dialog)
    assert load_automations(path)[0].task == "my new words"

    dialog.task_edit.setPlainText("again")
    save_automations([_a(name="mail", task="send it")], path)  # deleted elsewhere
    dialog.reload()
    assert dialog.task_edit.toPlainText() == "again" and dialog.editing is None
    assert "Save adds them" in dialog.message.text()
    _save(qtbot, dialog)
    assert [a.name for a in load_automations(path)] == ["mail", "timesheet"]

    dialog.select("mail")  # a clean form follows the file
    save_automations([_a(name="mail", task="send it today")], path)
    dialog.reload()
    assert dialog.task_edit.toPlainText() == "send it today"


def test_the_window_works_from_the_keyboard(
        qtbot: QtBot, path: Path, make_dialog: Callable[..., AutomationsDialog]) -> None:
    dialog = make_dialog(confirm_delete=lambda _p, _n: True)
    with qtbot.waitActive(dialog, timeout=TIMEOUT):  # shortcuts work in the active window
        dialog.show()
        dialog.activateWindow()
    _fill(dialog, "timesheet", "file today's hours", "ctrl+alt+1")
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        QTest.keyClick(dialog.name_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert [a.name for a in load_automations(path)] == ["timesheet"]
    QTest.keyClick(dialog.name_edit, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert dialog.editing is None and dialog.name_edit.text() == ""
    dialog.select("timesheet")
    dialog.list.setFocus()
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        QTest.keyClick(dialog.list, Qt.Key.Key_Delete)
    assert load_automations(path) == []


def test_saved_stays_shown_when_the_app_reloads_the_window(
        qtbot: QtBot, make_dialog: Callable[..., AutomationsDialog]) -> None:
    dialog = make_dialog()
    dialog.saved.connect(lambda _items: dialog.reload())  # as the app does on every save
    _fill(dialog, "timesheet", "file today's hours", "ctrl+alt+1")
    _save(qtbot, dialog)
    assert dialog.message.text() == "Saved."


def test_closing_the_window_during_a_save_leaves_it_usable_next_time(
        qtbot: QtBot, path: Path, make_dialog: Callable[..., AutomationsDialog]) -> None:
    dialog = make_dialog()
    dialog.show()
    _fill(dialog, "timesheet", "file today's hours", "ctrl+alt+1")
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        dialog.save_button.click()
        dialog.close()  # before the write is delivered
    dialog.reload()  # as the app does when it shows the window again
    dialog.show()
    assert dialog.save_button.isEnabled() and dialog.list.isEnabled()
    assert [a.name for a in load_automations(path)] == ["timesheet"]


def _steps_of(key: str) -> Path:
    """Saved steps for automation ``key``, as far as the window looks (their file)."""
    folder = trajectory_dir(key)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trajectory.json").write_text('{"format": 2, "automation": "x"}', encoding="utf-8")
    return folder


def test_the_window_shows_and_forgets_saved_steps_and_they_follow_the_automation(
        qtbot: QtBot, path: Path, make_dialog: Callable[..., AutomationsDialog]) -> None:
    save_automations([_a("timesheet"), _a("mail", "send the report")], path=path)
    folder = _steps_of("timesheet")
    dialog = make_dialog(confirm_delete=lambda _parent, _name: True)
    assert dialog.select("mail")
    assert dialog.steps_status.text().startswith("None")
    assert not dialog.forget_steps_button.isEnabled()
    assert dialog.select("timesheet")
    assert "replay them without the model" in dialog.steps_status.text()
    assert dialog.forget_steps_button.isEnabled()

    # Renamed: the steps go with it (the task is the same).
    dialog.name_edit.setText("Hours")
    _save(qtbot, dialog)
    assert not folder.exists() and trajectory_dir("hours").is_dir()
    assert "go with the new name" in dialog.message.text()
    assert dialog.forget_steps_button.isEnabled()

    # Forget saved steps.
    dialog.forget_steps_button.click()
    qtbot.waitUntil(lambda: not trajectory_dir("hours").exists(), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: "forgotten" in dialog.message.text(), timeout=TIMEOUT)
    assert dialog.steps_status.text().startswith("None")
    assert not dialog.forget_steps_button.isEnabled()

    # A changed task: the steps were of the old one.
    _steps_of("hours")
    dialog.reload()
    dialog.task_edit.setPlainText("file this week's hours")
    _save(qtbot, dialog)
    assert not trajectory_dir("hours").exists()
    assert "old task" in dialog.message.text()

    # Deleted: nothing of it is kept.
    assert dialog.select("mail")
    mail = _steps_of("mail")
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        dialog.delete_button.click()
    assert not mail.exists()
