"""The Automations window's schedule editor, offscreen: kinds, days, next run, at login."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from PySide6.QtCore import QDate, QDateTime, QTime
from pytestqt.qtbot import QtBot

from app.automations import Automation, load_automations, save_automations
from app.autostart import Autostart
from tests.support.home import Home, isolate_home
from ui.automations_dialog import AutomationsDialog

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 3, 12, 10, 0, tzinfo=BERLIN)  # a Thursday
TIMEOUT = 20000


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def path(home: Home) -> Path:
    return home.config / "holodesk" / "automations.toml"


@pytest.fixture
def entry(tmp_path: Path) -> Autostart:
    return Autostart(tmp_path / "autostart" / "holodesk.desktop",
                     ("/opt/holodesk/holodesk", "--at-login"))


@pytest.fixture
def make_dialog(qtbot: QtBot, path: Path, entry: Autostart
                ) -> Callable[..., AutomationsDialog]:
    def make(**kwargs: Any) -> AutomationsDialog:
        dialog = AutomationsDialog(path=path, now=lambda: NOW, autostart=lambda: entry,
                                   **kwargs)
        qtbot.addWidget(dialog)
        return dialog

    return make


def _kind(dialog: AutomationsDialog, shown: str) -> None:
    dialog.schedule_kind.setCurrentIndex(dialog.schedule_kind.findText(shown))


def _save(qtbot: QtBot, dialog: AutomationsDialog) -> None:
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        dialog.save_button.click()


def test_a_weekly_schedule_is_set_saved_and_shown_with_its_next_run(
        qtbot: QtBot, path: Path, make_dialog: Callable[..., AutomationsDialog]) -> None:
    save_automations([Automation.make("", name="chores", task="water the plants")], path)
    dialog = make_dialog()
    assert dialog.schedule_kind.currentText() == "None"
    assert not dialog.days_box.isVisibleTo(dialog)
    _kind(dialog, "Weekly")
    assert dialog.days_box.isVisibleTo(dialog) and dialog.schedule_time.isVisibleTo(dialog)
    assert not dialog.schedule_date.isVisibleTo(dialog)
    for i, check in enumerate(dialog.day_checks):
        check.setChecked(i in (0, 3))  # Mon, Thu
    dialog.schedule_time.setTime(QTime(17, 30))
    assert dialog.is_dirty
    assert dialog.schedule_status.text() == "Next run: today 17:30."
    _save(qtbot, dialog)
    assert [a.schedule for a in load_automations(path)] == ["weekly on mon,thu at 17:30"]
    # Read back into the editor from the file.
    dialog.reload()
    assert [c.isChecked() for c in dialog.day_checks] == \
        [True, False, False, True, False, False, False]
    assert not dialog.is_dirty


def test_no_day_ticked_is_refused_with_the_reason(
        qtbot: QtBot, path: Path, make_dialog: Callable[..., AutomationsDialog]) -> None:
    save_automations([Automation.make("", name="chores", task="water the plants")], path)
    dialog = make_dialog()
    _kind(dialog, "Weekly")
    for check in dialog.day_checks:
        check.setChecked(False)
    assert "Tick at least one day" in dialog.schedule_status.text()
    dialog.save_button.click()
    assert "schedule" in dialog.message.text()
    assert load_automations(path)[0].schedule is None


def test_once_in_the_past_is_refused_and_ahead_is_saved(
        qtbot: QtBot, path: Path, make_dialog: Callable[..., AutomationsDialog]) -> None:
    save_automations([Automation.make("", name="card", task="send the card")], path)
    dialog = make_dialog()
    _kind(dialog, "Once")
    assert dialog.schedule_date.isVisibleTo(dialog)
    dialog.schedule_date.setDateTime(QDateTime(QDate(2026, 3, 1), QTime(9, 0)))
    dialog.save_button.click()
    assert "has passed" in dialog.message.text()
    assert load_automations(path)[0].schedule is None
    dialog.schedule_date.setDateTime(QDateTime(QDate(2026, 12, 24), QTime(9, 0)))
    assert dialog.schedule_status.text() == "Next run: 2026-12-24 09:00."
    _save(qtbot, dialog)
    assert load_automations(path)[0].schedule == "once at 2026-12-24 09:00"


def test_at_login_says_it_needs_start_at_login_until_it_is_on(
        qtbot: QtBot, path: Path, entry: Autostart,
        make_dialog: Callable[..., AutomationsDialog]) -> None:
    save_automations([Automation.make("", name="mail", task="check the mail")], path)
    dialog = make_dialog()
    _kind(dialog, "At login")
    status = dialog.schedule_status.text()
    assert "Runs once each time holodesk starts at login" in status
    assert "turn on Start at login in the desktop app's Settings" in status
    entry.enable()
    _save(qtbot, dialog)
    assert "turn on" not in dialog.schedule_status.text()
    assert load_automations(path)[0].schedule == "at login"


def test_notes_about_missed_runs_show_under_that_automation_only(
        path: Path, make_dialog: Callable[..., AutomationsDialog]) -> None:
    save_automations([Automation.make("", name="a", task="x", schedule="daily 09:00"),
                      Automation.make("", name="b", task="y")], path)
    dialog = make_dialog()
    dialog.set_notes({"a": "The automation “a” missed a scheduled run."})
    assert dialog.editing == "a"
    assert "Next run: tomorrow 09:00." in dialog.schedule_status.text()
    assert "missed a scheduled run" in dialog.schedule_status.text()
    dialog.select("b")
    assert dialog.schedule_status.text() == ""
    assert dialog.schedule_kind.currentText() == "None"
