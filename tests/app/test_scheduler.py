"""The scheduler's core (app/scheduler.py) over a fake clock: due runs, never twice, missed
runs reported and not run late, wake detection."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from app.automations import Automation
from app.scheduler import GRACE, Scheduler, WakeDetector, next_runs
from tests.support.fake_clock import FakeWallClock

BERLIN = ZoneInfo("Europe/Berlin")


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=BERLIN)


def _a(name: str, schedule: str | None) -> Automation:
    return Automation.make("", name=name, task=f"do {name}", schedule=schedule)


def _scheduler(clock: FakeWallClock, state: Path, *items: Automation) -> Scheduler:
    s = Scheduler(clock, state_path=state)
    s.set_automations(items)
    return s


def test_a_due_schedule_runs_at_its_time_and_the_next_wake_is_planned(tmp_path: Path) -> None:
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    s = _scheduler(clock, tmp_path / "s.json", _a("timesheet", "daily at 09:00"),
                   _a("plain", None))
    plan = s.check()
    assert plan.run == () and plan.missed == ()
    assert plan.wake_at == _at("2026-03-10 09:00")
    clock.set(_at("2026-03-10 09:00:01"))
    plan = s.check()
    assert plan.run == ("timesheet",)
    assert plan.wake_at == _at("2026-03-11 09:00")
    assert s.check().run == ()  # handled: not again


def test_a_run_slightly_late_still_runs_but_not_beyond_the_grace(tmp_path: Path) -> None:
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    s = _scheduler(clock, tmp_path / "s.json", _a("timesheet", "daily at 09:00"))
    s.check()
    clock.set(_at("2026-03-10 09:00") + GRACE)
    assert s.check().run == ("timesheet",)
    clock.set(_at("2026-03-11 09:00") + GRACE * 2)
    plan = s.check()
    assert plan.run == ()
    assert [m.times for m in plan.missed] == [(_at("2026-03-11 09:00"),)]


def test_never_twice_across_a_restart(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    _scheduler(clock, state, _a("timesheet", "daily at 09:00")).check()
    clock.set(_at("2026-03-10 09:00:05"))
    assert _scheduler(clock, state, _a("timesheet", "daily at 09:00")).check().run == \
        ("timesheet",)
    # The app restarts a few seconds later, still within the grace: nothing runs again.
    clock.advance(10)
    again = _scheduler(clock, state, _a("timesheet", "daily at 09:00")).check()
    assert again.run == () and again.missed == ()
    saved = json.loads(state.read_text())
    assert saved["schedules"]["timesheet"]["schedule"] == "daily at 09:00"


def test_runs_missed_while_the_app_was_not_running_are_reported_not_run(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    clock = FakeWallClock(_at("2026-03-09 08:00"))  # Monday
    _scheduler(clock, state, _a("chores", "weekly on mon,thu at 17:30")).check()
    clock.set(_at("2026-03-17 10:00"))  # the app was off from Monday to the next Tuesday
    plan = _scheduler(clock, state, _a("chores", "weekly on mon,thu at 17:30")).check()
    assert plan.run == ()
    (missed,) = plan.missed
    assert missed.name == "chores"
    assert missed.times == (_at("2026-03-09 17:30"), _at("2026-03-12 17:30"),
                            _at("2026-03-16 17:30"))
    text = missed.text(clock.now())
    assert "missed 3 scheduled runs" in text and "not run late" in text
    assert plan.wake_at == _at("2026-03-19 17:30")


def test_a_new_or_changed_schedule_counts_from_when_it_was_seen(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    _scheduler(clock, state, _a("chores", "weekly on mon at 09:00")).check()
    clock.set(_at("2026-03-20 12:00"))
    # Changed to daily before the app looked again: the weeks before are not "missed".
    plan = _scheduler(clock, state, _a("chores", "daily at 09:00")).check()
    assert plan.run == () and plan.missed == ()
    assert plan.wake_at == _at("2026-03-21 09:00")


def test_an_unreadable_state_file_counts_from_now_and_runs_nothing(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    state.write_text("{not json")
    clock = FakeWallClock(_at("2026-03-10 09:00:30"))
    plan = _scheduler(clock, state, _a("timesheet", "daily at 09:00")).check()
    assert plan.run == () and plan.missed == ()
    assert json.loads(state.read_text())["version"] == 1  # replaced by a good one


def test_removed_schedules_leave_the_state(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    s = _scheduler(clock, state, _a("a", "daily at 09:00"), _a("b", "daily at 10:00"))
    s.check()
    s.set_automations([_a("a", "daily at 09:00"), _a("b", None)])
    assert s.check().wake_at == _at("2026-03-10 09:00")
    assert set(json.loads(state.read_text())["schedules"]) == {"a"}


def test_login_schedules_are_listed_and_never_timed(tmp_path: Path) -> None:
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    s = _scheduler(clock, tmp_path / "s.json", _a("mail", "at login"), _a("x", None))
    assert s.at_login() == ["mail"]
    assert s.check().wake_at is None


def test_sleep_is_detected_from_the_clocks_moving_apart() -> None:
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    wake = WakeDetector(clock)
    clock.advance(3600)  # awake for an hour: both clocks move
    assert not wake.jumped()
    clock.sleep(3600)  # suspended for an hour: only the wall clock moves
    assert wake.jumped()
    assert not wake.jumped()  # once per jump


def test_next_runs_for_people() -> None:
    now = _at("2026-03-12 10:00")
    shown = next_runs([_a("a", "daily at 09:00"), _a("b", "at login"),
                       _a("c", "once at 2026-01-01 09:00"), _a("d", None)], now, BERLIN)
    assert shown == {"a": "tomorrow 09:00", "b": "at login", "c": "none (it has passed)"}
