"""The schedule model (app/schedule.py): text forms, due times, summer time, missed runs."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from app.automations import Automation, AutomationError
from app.schedule import (
    Repeat,
    Schedule,
    ScheduleError,
    describe_due,
    parse_schedule,
    wall_to_instant,
)

BERLIN = ZoneInfo("Europe/Berlin")


def _at(text: str, tz: ZoneInfo = BERLIN) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=tz)


@pytest.mark.parametrize(("said", "canonical"), [
    ("daily at 09:00", "daily at 09:00"),
    ("daily 9:00", "daily at 09:00"),
    ("Every day at 21:05", "daily at 21:05"),
    ("weekly on mon,thu at 17:30", "weekly on mon,thu at 17:30"),
    ("weekly thursday, Mon 17:30", "weekly on mon,thu at 17:30"),
    ("weekdays 08:15", "weekly on mon,tue,wed,thu,fri at 08:15"),
    ("once at 2026-12-24 09:00", "once at 2026-12-24 09:00"),
    ("2026-12-24T09:00", "once at 2026-12-24 09:00"),
    ("at login", "at login"),
    ("login", "at login"),
])
def test_text_forms_read_back_to_one_canonical_text(said: str, canonical: str) -> None:
    schedule = parse_schedule(said)
    assert schedule.text() == canonical
    assert parse_schedule(schedule.text()) == schedule


@pytest.mark.parametrize(("said", "why"), [
    ("", "empty"),
    ("daily at 25:00", "not a time of day"),
    ("daily at 09:60", "not a time of day"),
    ("weekly on mon,funday at 09:00", "'funday' is not a day"),
    ("once at 2026-02-30 09:00", "not a date"),
    ("sometimes", "not a schedule"),
])
def test_bad_text_is_refused_with_the_forms_that_work(said: str, why: str) -> None:
    with pytest.raises(ScheduleError, match=why):
        parse_schedule(said)


def test_the_automation_field_stores_the_canonical_text_and_names_a_bad_one() -> None:
    a = Automation.make("", name="chores", task="water the plants", schedule="weekly Mon 7:05")
    assert a.schedule == "weekly on mon at 07:05"
    assert a.when == Schedule(Repeat.WEEKLY, at=time(7, 5), days=frozenset({0}))
    assert Automation.make("", name="n", task="t", schedule="  ").schedule is None
    with pytest.raises(AutomationError, match=r"automations.toml: schedule: 'at noon-ish'"):
        Automation.make("automations.toml", name="n", task="t", schedule="at noon-ish")


def test_daily_next_due_is_today_when_still_ahead_else_tomorrow() -> None:
    s = parse_schedule("daily at 09:00")
    assert s.next_due(_at("2026-03-10 08:59"), BERLIN) == _at("2026-03-10 09:00")
    # Strictly after: the due time itself is not due again.
    assert s.next_due(_at("2026-03-10 09:00"), BERLIN) == _at("2026-03-11 09:00")


def test_weekly_wraps_into_the_next_week() -> None:
    s = parse_schedule("weekly on mon,thu at 17:30")
    # Friday 2026-03-13 -> Monday 2026-03-16.
    assert s.next_due(_at("2026-03-13 12:00"), BERLIN) == _at("2026-03-16 17:30")
    # Sunday evening after the time -> Monday.
    assert s.next_due(_at("2026-03-15 23:59"), BERLIN) == _at("2026-03-16 17:30")
    # Thursday after the time -> next Monday; Monday after the time -> Thursday.
    assert s.next_due(_at("2026-03-12 17:31"), BERLIN) == _at("2026-03-16 17:30")
    assert s.next_due(_at("2026-03-16 17:30"), BERLIN) == _at("2026-03-19 17:30")


def test_once_is_due_once_and_login_never() -> None:
    s = parse_schedule("once at 2026-12-24 09:00")
    assert s.next_due(_at("2026-12-01 00:00"), BERLIN) == _at("2026-12-24 09:00")
    assert s.next_due(_at("2026-12-24 09:00"), BERLIN) is None
    assert parse_schedule("at login").next_due(_at("2026-12-01 00:00"), BERLIN) is None


def test_a_time_the_clock_skips_runs_at_the_first_valid_minute_once() -> None:
    """29 March 2026, Berlin: 02:00 CET becomes 03:00 CEST; a daily 02:30 runs at 03:00."""
    s = parse_schedule("daily at 02:30")
    due = s.next_due(_at("2026-03-29 00:00"), BERLIN)
    assert due is not None
    assert due.astimezone(UTC) == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)  # 03:00 CEST
    assert due.astimezone(BERLIN).strftime("%H:%M") == "03:00"
    following = s.next_due(due, BERLIN)
    assert following == _at("2026-03-30 02:30")
    assert len(s.missed(_at("2026-03-28 12:00"), _at("2026-03-30 12:00"), BERLIN)) == 2


def test_a_time_the_clock_passes_twice_runs_at_the_first_only() -> None:
    """25 October 2026, Berlin: 03:00 CEST becomes 02:00 CET; 02:30 happens twice."""
    s = parse_schedule("daily at 02:30")
    due = s.next_due(_at("2026-10-25 00:00"), BERLIN)
    assert due is not None
    assert due.astimezone(UTC) == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # 02:30 CEST
    second_time = datetime(2026, 10, 25, 1, 30, tzinfo=UTC)  # 02:30 CET, the repeat
    assert s.next_due(due, BERLIN) == _at("2026-10-26 02:30")
    assert second_time not in s.missed(_at("2026-10-24 12:00"), _at("2026-10-26 12:00"), BERLIN)


def test_daily_keeps_its_wall_time_across_the_change() -> None:
    s = parse_schedule("daily at 09:00")
    times = s.missed(_at("2026-03-28 00:00"), _at("2026-03-31 00:00"), BERLIN)
    assert [t.astimezone(BERLIN).strftime("%d %H:%M") for t in times] == \
        ["28 09:00", "29 09:00", "30 09:00"]
    assert [t.astimezone(UTC).hour for t in times] == [8, 7, 7]  # CET, then CEST


def test_missed_lists_the_due_times_in_between_oldest_first() -> None:
    s = parse_schedule("weekly on mon,thu at 17:30")
    times = s.missed(_at("2026-03-09 18:00"), _at("2026-03-19 17:30"), BERLIN)
    assert times == [_at("2026-03-12 17:30"), _at("2026-03-16 17:30"), _at("2026-03-19 17:30")]
    assert s.missed(_at("2026-03-09 18:00"), _at("2026-03-12 17:29"), BERLIN) == []


def test_a_very_long_gap_keeps_only_the_newest_missed_times() -> None:
    s = parse_schedule("daily at 09:00")
    start = _at("2020-01-01 00:00")
    times = s.missed(start, start + timedelta(days=2000), BERLIN)
    assert len(times) == 400
    assert times[-1] == _at("2025-06-22 09:00")


def test_wall_times_outside_a_change_are_unchanged() -> None:
    wall = datetime(2026, 7, 1, 12, 0)
    assert wall_to_instant(wall, BERLIN) == wall.replace(tzinfo=BERLIN)


def test_due_times_are_described_relative_to_now() -> None:
    now = _at("2026-03-12 10:00")  # a Thursday
    assert describe_due(_at("2026-03-12 17:30"), now) == "today 17:30"
    assert describe_due(_at("2026-03-13 09:00"), now) == "tomorrow 09:00"
    assert describe_due(_at("2026-03-16 17:30"), now) == "Mon 17:30"
    assert describe_due(_at("2026-12-24 09:00"), now) == "2026-12-24 09:00"


def test_a_schedule_without_its_parts_is_refused() -> None:
    with pytest.raises(ScheduleError, match="needs a time"):
        Schedule(Repeat.DAILY)
    with pytest.raises(ScheduleError, match="at least one day"):
        Schedule(Repeat.WEEKLY, at=time(9, 0))
    with pytest.raises(ScheduleError, match="needs a date"):
        Schedule(Repeat.ONCE, at=time(9, 0))
    assert Schedule(Repeat.ONCE, at=time(9, 0), on=date(2026, 1, 1)).label() == \
        "Once, 2026-01-01 at 09:00"
