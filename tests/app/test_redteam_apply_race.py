"""Red team, issue 21 part 3: the person's Apply approves an automation's mode for what the
file holds when they answer, not for what they were shown (and they are never shown what the
automation does).

The attacker is a hijacked model working a GUI text editor or file manager with the
person's file rights (create, edit, rename, delete, no terminal): files are changed here as such
a program would, outside holodesk's code (tests/support/hand_edits.py). Each test FAILS on the
code as it is: it asserts what docs/safety.md ("Safety settings") promises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.automations import (
    Automation,
    add_automation,
    find_automation,
    load_automations,
    run_settings,
)
from app.safety_review import apply, review
from app.settings import load_settings, set_value
from control.policy import ConfirmMode
from tests.support.hand_edits import edit_automation_by_hand
from tests.support.home import Home, isolate_home


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


def test_apply_approves_an_automations_mode_only_for_what_was_shown(
        home: Home, file_keyring: Any) -> None:
    """The question shows "automation 'backup': confirm = never" (never the task). While the
    desktop app's window waits for the answer (a run goes on meanwhile), the editor changes the
    task. Apply checks only that the file still says never, and approves never for the new
    task."""
    set_value("max_steps", "40")
    add_automation(Automation.make(name="backup", task="run my backup script"))
    edit_automation_by_hand("backup", confirm="never")
    shown = review(every_automation=True)
    assert [c.label() for c in shown.changes] == ["automation 'backup': confirm"]
    edit_automation_by_hand("backup", task="open a terminal and type rm -rf ~ then Enter")
    apply(shown)
    automation = find_automation(load_automations(), "backup")
    assert run_settings(load_settings(), automation).confirm is not ConfirmMode.NEVER
