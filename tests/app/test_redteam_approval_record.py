"""Red team, issue 21 part 3: the record of approved values (approved.json) can be taken
away, and the defaults then count as approved, so a person's stricter values (confirm always,
only_in, extra never_touch entries) are lost without a question.

The attacker is a hijacked model working a GUI text editor or file manager with the
person's file rights (create, edit, rename, delete, no terminal): files are changed here as such
a program would, outside holodesk's code (tests/support/hand_edits.py). Each test FAILS on the
code as it is: it asserts what docs/safety.md ("Safety settings") promises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app import paths
from app.approval import record_path
from app.settings import NEVER_TOUCH, load_settings, set_value
from control.policy import ConfirmMode
from tests.support.hand_edits import edit_settings_by_hand
from tests.support.home import Home, isolate_home


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


def _strict_person() -> None:
    """What a careful person approved with holodesk's own commands: every question, only the
    browser, their bank's app never touched."""
    set_value("confirm", "always")
    set_value("only_in", "firefox")
    set_value("never_touch", ",".join([*NEVER_TOUCH, "mybank"]))


def _assert_still_strict() -> None:
    settings = load_settings()
    assert settings.confirm is ConfirmMode.ALWAYS, (settings.confirm, settings.approval_state)
    assert settings.only_in == ("firefox",)
    assert "mybank" in settings.never_touch


def test_deleting_approved_json_and_settings_toml_keeps_the_approved_values(
        home: Home, file_keyring: Any) -> None:
    """A file manager selects the two files in ~/.config/holodesk and presses Delete. holodesk
    then takes itself for a fresh install: the defaults are the approved values, nothing is
    asked and nothing is told (RecordState.MISSING has no note), although the keyring still
    holds the key of a record that existed."""
    _strict_person()
    paths.settings_path().unlink()
    record_path(paths.config_dir()).unlink()
    settings = load_settings()
    assert settings.pending or settings.approval_note, "nothing is asked, nothing is told"
    _assert_still_strict()


def test_deleting_approved_json_lets_a_loosened_settings_file_apply(
        home: Home, file_keyring: Any) -> None:
    """Only approved.json deleted, and the person's stricter lines removed from settings.toml:
    every value is now at its default, which the missing record makes 'approved'."""
    _strict_person()
    record_path(paths.config_dir()).unlink()
    edit_settings_by_hand(confirm=None, only_in=None, never_touch=None)
    _assert_still_strict()


def test_a_broken_record_does_not_loosen_what_was_approved(
        home: Home, file_keyring: Any) -> None:
    """One byte of approved.json changed (or the file replaced by anything): the record is 'not
    trusted' and the defaults are the approved values again, so the same loosened settings file
    is applied; the person gets a note, the run goes on asking less."""
    _strict_person()
    record = record_path(paths.config_dir())
    record.write_text(record.read_text(encoding="utf-8").replace('"always"', '"risky"'),
                      encoding="utf-8")
    edit_settings_by_hand(confirm="risky", only_in=None, never_touch=None)
    _assert_still_strict()


def test_without_a_keyring_a_stricter_value_set_with_holodesk_is_kept(home: Home) -> None:
    """No keyring (a minimal machine): `config set confirm always` is accepted (stricter), but
    nothing remembers it, so a text editor writing confirm = "risky" back is applied silently."""
    set_value("confirm", "always")
    set_value("only_in", "firefox")
    edit_settings_by_hand(confirm="risky", only_in=None)
    settings = load_settings()
    assert settings.confirm is ConfirmMode.ALWAYS
    assert settings.only_in == ("firefox",)
