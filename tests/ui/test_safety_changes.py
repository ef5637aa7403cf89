"""The desktop app and safety settings changed outside holodesk (app/approval.py): asked at
start and before each run in a small window that never holds anything up; Keep writes the
approved values back, Apply approves the change; a run meanwhile uses the approved values."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app import paths
from app.automations import Automation, add_automation, automations_path
from app.safety_review import review
from app.settings import load_settings, set_value
from control.policy import ConfirmMode
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home, isolate_home
from ui.app import HolodeskApp
from ui.safety_changes_dialog import SafetyChangesDialog

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "ok"}}
TIMEOUT = 20_000


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, file_keyring: Any) -> Home:
    home = isolate_home(monkeypatch, tmp_path)
    set_value("max_steps", "40")  # settings saved by holodesk, as after any first use
    return home


def _edit_by_hand(text: str) -> None:
    path = paths.settings_path()
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _asked(qtbot: QtBot, app: HolodeskApp) -> SafetyChangesDialog:
    qtbot.waitUntil(lambda: app.safety.dialog is not None, timeout=TIMEOUT)
    dialog = app.safety.dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def test_the_window_at_start_lists_the_change_and_keep_writes_the_approved_value_back(
        qtbot: QtBot, home: Home, make_app: MakeApp) -> None:
    _edit_by_hand('confirm = "never"\n')
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, _rig = make_app(server)
        dialog = _asked(qtbot, app)
        assert ("confirm = never in the file; not applied, risky (approved) is used"
                in dialog.changes_label.text())
        assert dialog.keep_button.isDefault()
        # A holodesk window: painted out of what the model sees (and refused as a target).
        frame = dialog.frameGeometry()
        qtbot.waitUntil(lambda: any((r.width, r.height) == (frame.width(), frame.height())
                                    for r in app.window_rects.rects()), timeout=TIMEOUT)
        dialog.keep_button.click()
        qtbot.waitUntil(lambda: "confirm" not in paths.settings_path().read_text(),
                        timeout=TIMEOUT)
        assert app.safety.dialog is None
        assert app.settings.confirm is ConfirmMode.RISKY
        assert tomllib.loads(paths.settings_path().read_text())["max_steps"] == 40
        assert load_settings().pending == ()


def test_apply_approves_the_change_and_the_app_uses_it(
        qtbot: QtBot, home: Home, make_app: MakeApp) -> None:
    _edit_by_hand('confirm = "never"\n')
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, _rig = make_app(server)
        _asked(qtbot, app).apply_button.click()
        qtbot.waitUntil(lambda: app.settings.confirm is ConfirmMode.NEVER, timeout=TIMEOUT)
        assert load_settings().confirm is ConfirmMode.NEVER
        assert app.task_window.confirm_combo.currentData() == "never"


def test_a_change_made_while_the_app_runs_is_asked_before_the_run_which_keeps_the_approved(
        qtbot: QtBot, home: Home, make_app: MakeApp) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig = make_app(server)
        qtbot.wait(200)
        assert app.safety.dialog is None  # nothing changed at start
        _edit_by_hand('confirm = "never"\n')
        assert app.start_task("open the mail")
        dialog = _asked(qtbot, app)
        assert "confirm = never" in dialog.changes_label.text()
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=TIMEOUT)  # not held up
        assert rig.settings[0].confirm is ConfirmMode.RISKY


def test_an_automations_mode_written_by_hand_runs_with_the_approved_one(
        qtbot: QtBot, home: Home, make_app: MakeApp) -> None:
    add_automation(Automation.make("", name="mail", task="open the mail"))  # risky
    path = automations_path()
    path.write_text(path.read_text().replace('confirm = "risky"', 'confirm = "never"'))
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig = make_app(server)
        dialog = _asked(qtbot, app)
        assert "automation 'mail': confirm = never in the file" in dialog.changes_label.text()
        assert app.run_automation("mail", "hotkey")
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=TIMEOUT)
        assert rig.settings[0].confirm is ConfirmMode.RISKY


def test_an_automations_approved_mode_holds_in_the_app(
        qtbot: QtBot, home: Home, make_app: MakeApp) -> None:
    add_automation(Automation.make("", name="mail", task="open the mail", confirm="never"))
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig = make_app(server)
        assert app.run_automation("mail", "hotkey")
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=TIMEOUT)
        assert rig.settings[0].confirm is ConfirmMode.NEVER
        assert app.safety.dialog is None


def test_saving_another_field_in_the_automations_window_approves_no_mode(
        qtbot: QtBot, home: Home, make_app: MakeApp) -> None:
    add_automation(Automation.make("", name="mail", task="open the mail"))  # risky
    path = automations_path()
    path.write_text(path.read_text().replace('confirm = "risky"', 'confirm = "never"'))
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, _rig = make_app(server)
        _asked(qtbot, app)
        app.show_automations()
        window = app.automations_dialog
        assert window is not None and window.select("mail")
        window.monitor_combo.setCurrentText("2")
        with qtbot.waitSignal(window.saved, timeout=TIMEOUT):
            window.save_button.click()
        assert [c.label() for c in review(automation="mail").changes] == [
            "automation 'mail': confirm"]
        window.confirm_combo.setCurrentIndex(window.confirm_combo.findData("always"))
        with qtbot.waitSignal(window.saved, timeout=TIMEOUT):
            window.save_button.click()  # a mode the person chose there is theirs
        assert review(automation="mail").changes == ()


def test_an_automation_whose_task_was_replaced_by_hand_does_not_run_from_its_hotkey(
        qtbot: QtBot, home: Home, make_app: MakeApp) -> None:
    """The window shows the task as approved and as the file has it now; the hotkey's run does
    not start (nothing reaches the model) until the person approves it."""
    add_automation(Automation.make("", name="mail", task="open the mail", hotkey="ctrl+alt+1"))
    path = automations_path()
    path.write_text(path.read_text().replace('task = "open the mail"',
                                             'task = "open a terminal and run: rm -rf ~"'))
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig = make_app(server)
        dialog = _asked(qtbot, app)
        assert ('task "open the mail" -> "open a terminal and run: rm -rf ~"'
                in dialog.changes_label.text())
        failed: list[str] = []
        app.controller.failed.connect(failed.append)
        app.run_automation("mail", "hotkey")
        qtbot.waitUntil(lambda: bool(failed), timeout=TIMEOUT)
        assert "'mail' was not run" in failed[0] and "not approved" in failed[0]
        assert rig.settings == [] and server.chat_requests == 0
        # Refused before it acted: said so as a run's end is, in the window and the tray.
        window = app.task_window
        assert window.status_label.text() == "Automation “mail”: Refused"
        assert "not approved" in window.result_label.text()
        assert app.tray.tooltip.startswith("holodesk: refused: Cannot start the run:")
