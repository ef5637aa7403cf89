"""Red team, issue 21 part 3, the desktop app (each test failed before its fix).

- The app reads the settings once, when it starts. A value the person makes stricter with
  holodesk's own `config set` while it runs (confirm always, only_in) never reaches its runs
  (the task window, hotkeys, schedules) until it is restarted: it keeps asking less than what
  the person approved. No file watch, no re-read before a run: SafetyWatch.check looks for
  changes *not* approved, not for approved ones.
- An automation the person approved with ``always`` (stricter than the settings' risky) and an
  editor turned to ``risky`` runs risky from its hotkey: app/controller.py (_prepare) reads the
  record only when the file's mode asks less than the settings', while the review (the window,
  `config approve`, `automation list`) compares every mode and tells the person "always
  (approved) is used".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.automations import Automation, add_automation
from app.settings import set_value
from control.policy import ConfirmMode
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.hand_edits import edit_automation_by_hand
from tests.support.home import Home, isolate_home

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "ok"}}
TIMEOUT = 20_000


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, file_keyring: Any) -> Home:
    home = isolate_home(monkeypatch, tmp_path)
    set_value("max_steps", "40")  # settings saved by holodesk, as after any first use
    return home


def test_a_stricter_value_set_while_the_app_runs_applies_to_its_next_run(
        qtbot: QtBot, home: Home, make_app: MakeApp) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig = make_app(server)
        # In a terminal, while the app runs: `holodesk config set confirm always` and
        # `holodesk config set only_in firefox`; both approved, both in the files.
        set_value("confirm", "always")
        set_value("only_in", "firefox")
        assert app.start_task("open the mail")
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=TIMEOUT)
    assert (rig.settings[0].confirm, rig.settings[0].only_in) == (
        ConfirmMode.ALWAYS, ("firefox",))


def test_an_automation_approved_always_and_edited_to_risky_runs_always_from_its_hotkey(
        qtbot: QtBot, home: Home, make_app: MakeApp) -> None:
    add_automation(Automation.make("", name="pay", task="pay the open invoices",
                                   confirm="always"))
    edit_automation_by_hand("pay", confirm="risky")
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig = make_app(server)
        assert app.run_automation("pay", "hotkey")
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=TIMEOUT)
        # The window even says so: "automation 'pay': confirm = risky in the file; not
        # applied, always (approved) is used". The run is risky all the same.
        dialog = app.safety.dialog
        assert dialog is not None and "always (approved) is used" in dialog.changes_label.text()
    assert rig.settings[0].confirm is ConfirmMode.ALWAYS
