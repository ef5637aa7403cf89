"""When an automation runs by itself: once at a time, daily, weekly, or at login.

Pure: every function takes the times it works on (aware datetimes) and the time zone; nothing
here reads a clock. The text form is the one truth shown and stored (``schedule = "daily at
09:00"`` in automations.toml), and :func:`parse_schedule` reads it back::

    once at 2026-12-24 09:00
    daily at 09:00
    weekly on mon,thu at 17:30
    at login

Times are wall-clock times in the person's time zone, so a daily 09:00 stays 09:00 across a
change to or from summer time:

* a time the clock skips (02:30 on a spring-forward night) runs at the first valid minute
  after the gap (03:00), once;
* a time the clock passes twice (02:30 on a fall-back night) runs once, at the first of them.

"At login" has no time: the desktop app fires it once when it was started at login
(:mod:`app.autostart`), so :meth:`Schedule.next_due` never returns one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = [
    "DAY_NAMES",
    "Repeat",
    "Schedule",
    "ScheduleError",
    "describe_due",
    "local_zone",
    "parse_schedule",
    "wall_to_instant",
]

#: Monday first, as :meth:`datetime.date.weekday` counts.
DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_LONG_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: A long sleep must not make :meth:`Schedule.missed` list years of days.
MAX_MISSED = 400


class ScheduleError(ValueError):
    """A schedule's text cannot be read; the message shows the forms that can."""


class Repeat(StrEnum):
    ONCE = "once"
    DAILY = "daily"
    WEEKLY = "weekly"
    LOGIN = "login"


_EXAMPLES = ("daily at 09:00, weekly on mon,thu at 17:30, once at 2026-12-24 09:00, "
             "or at login")


@dataclass(frozen=True)
class Schedule:
    """One schedule. ``at`` is the wall-clock time (daily, weekly) and ``on`` the date (once);
    ``days`` the weekdays of a weekly one (0 = Monday)."""

    repeat: Repeat
    at: time | None = None
    on: date | None = None
    days: frozenset[int] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.repeat is Repeat.LOGIN:
            return
        if self.at is None:
            raise ScheduleError(f"a {self.repeat} schedule needs a time")
        if self.repeat is Repeat.ONCE and self.on is None:
            raise ScheduleError("a once schedule needs a date")
        if self.repeat is Repeat.WEEKLY and not self.days:
            raise ScheduleError("a weekly schedule needs at least one day")

    def text(self) -> str:
        """The canonical text form (what the file stores and the CLI shows)."""
        at = self.at.strftime("%H:%M") if self.at is not None else ""
        if self.repeat is Repeat.ONCE:
            assert self.on is not None
            return f"once at {self.on.isoformat()} {at}"
        if self.repeat is Repeat.DAILY:
            return f"daily at {at}"
        if self.repeat is Repeat.WEEKLY:
            return f"weekly on {','.join(DAY_NAMES[d] for d in sorted(self.days))} at {at}"
        return "at login"

    def label(self) -> str:
        """For people: ``Daily at 09:00``, ``Mon, Thu at 17:30``, ``At login``."""
        at = self.at.strftime("%H:%M") if self.at is not None else ""
        if self.repeat is Repeat.ONCE:
            assert self.on is not None
            return f"Once, {self.on.isoformat()} at {at}"
        if self.repeat is Repeat.DAILY:
            return f"Daily at {at}"
        if self.repeat is Repeat.WEEKLY:
            days = ", ".join(DAY_NAMES[d].capitalize() for d in sorted(self.days))
            return f"{days} at {at}"
        return "At login"

    @property
    def timed(self) -> bool:
        """Whether it has due times (all but "at login")."""
        return self.repeat is not Repeat.LOGIN

    def next_due(self, after: datetime, tz: tzinfo) -> datetime | None:
        """The first due time strictly after ``after`` (aware, in ``tz``); None when there is
        none (a once schedule that has passed, "at login")."""
        if self.at is None:
            return None
        if self.repeat is Repeat.ONCE:
            assert self.on is not None
            due = wall_to_instant(datetime.combine(self.on, self.at), tz)
            return due if due > after else None
        # The wall date of `after`, a day back (a due time pushed past midnight by a gap),
        # then forward until one is due: at most 8 days for a weekly one.
        day = after.astimezone(tz).date() - timedelta(days=1)
        for _ in range(10):
            if self.repeat is Repeat.DAILY or day.weekday() in self.days:
                due = wall_to_instant(datetime.combine(day, self.at), tz)
                if due > after:
                    return due
            day += timedelta(days=1)
        return None  # unreachable for a valid schedule

    def missed(self, start: datetime, end: datetime, tz: tzinfo) -> list[datetime]:
        """The due times in ``(start, end]``, oldest first (at most :data:`MAX_MISSED`, the
        newest kept)."""
        found: list[datetime] = []
        due = self.next_due(start, tz)
        while due is not None and due <= end:
            found.append(due)
            due = self.next_due(due, tz)
        return found[-MAX_MISSED:]


def wall_to_instant(wall: datetime, tz: tzinfo) -> datetime:
    """The instant a naive wall-clock time happens in ``tz``.

    A time the clock skips (spring forward) becomes the first valid minute after the gap; a
    time the clock passes twice (fall back) its first occurrence.
    """
    first = wall.replace(tzinfo=tz, fold=0)
    if _exists(first):
        return first
    probe = wall.replace(second=0, microsecond=0)
    for _ in range(24 * 60):  # gaps are an hour, rarely half an hour, at most a day
        probe += timedelta(minutes=1)
        candidate = probe.replace(tzinfo=tz, fold=0)
        if _exists(candidate):
            return candidate
    return first


def _exists(moment: datetime) -> bool:
    """Whether the wall time of aware ``moment`` is one the clock shows (not in a gap)."""
    back = moment.astimezone(UTC).astimezone(moment.tzinfo)
    return back.replace(tzinfo=None) == moment.replace(tzinfo=None)


_TIME = r"(?P<hour>\d{1,2}):(?P<minute>\d{2})"
_FORMS = (
    (Repeat.LOGIN, re.compile(r"(at\s+)?login")),
    (Repeat.DAILY, re.compile(rf"(daily|every\s+day)\s+(at\s+)?{_TIME}")),
    (Repeat.WEEKLY, re.compile(rf"(weekly\s+)?(on\s+)?(?P<days>[a-z]+(\s*,\s*[a-z]+)*)\s+(at\s+)?"
                               rf"{_TIME}")),
    (Repeat.ONCE, re.compile(rf"(once\s+)?(at\s+|on\s+)?(?P<date>\d{{4}}-\d{{2}}-\d{{2}})"
                             rf"(\s+|t)(at\s+)?{_TIME}")),
)


def parse_schedule(text: str) -> Schedule:
    """Read a schedule's text (:meth:`Schedule.text`, and the CLI's shorter forms: ``daily
    09:00``, ``weekly mon,thu 17:30``, ``once 2026-12-24T09:00``, ``login``)."""
    said = " ".join(text.strip().lower().split())
    if not said:
        raise ScheduleError(f"the schedule is empty; say when, e.g. {_EXAMPLES}")
    for repeat, pattern in _FORMS:
        match = pattern.fullmatch(said)
        if match is None:
            continue
        if repeat is Repeat.LOGIN:
            return Schedule(Repeat.LOGIN)
        at = _clock_time(match.group("hour"), match.group("minute"), text)
        if repeat is Repeat.DAILY:
            return Schedule(Repeat.DAILY, at=at)
        if repeat is Repeat.WEEKLY:
            if match.group("days") in ("daily", "once", "weekly"):
                continue
            return Schedule(Repeat.WEEKLY, at=at, days=_days(match.group("days")))
        try:
            on = date.fromisoformat(match.group("date"))
        except ValueError:
            raise ScheduleError(f"{text.strip()!r}: {match.group('date')} is not a date") from None
        return Schedule(Repeat.ONCE, at=at, on=on)
    raise ScheduleError(f"{text.strip()!r} is not a schedule; say e.g. {_EXAMPLES}")


def _clock_time(hour: str, minute: str, text: str) -> time:
    h, m = int(hour), int(minute)
    if h > 23 or m > 59:
        raise ScheduleError(f"{text.strip()!r}: {hour}:{minute} is not a time of day "
                            "(00:00 to 23:59)")
    return time(h, m)


def _days(text: str) -> frozenset[int]:
    days: set[int] = set()
    for word in (w.strip() for w in text.split(",")):
        if word in ("weekdays", "workdays"):
            days.update(range(5))
            continue
        if word == "weekends":
            days.update((5, 6))
            continue
        index = next((i for i, (short, long) in enumerate(zip(DAY_NAMES, _LONG_DAYS, strict=True))
                      if word in (short, long) or (len(word) >= 3 and long.startswith(word))),
                     None)
        if index is None:
            raise ScheduleError(f"{word!r} is not a day of the week (mon, tue, wed, thu, fri, "
                                "sat, sun)")
        days.add(index)
    return frozenset(days)


def describe_due(due: datetime, now: datetime) -> str:
    """A due time for people, relative to ``now``: ``today 09:00``, ``tomorrow 09:00``,
    ``Thu 17:30`` (within a week), else the date."""
    local, today = due.astimezone(now.tzinfo), now.date()
    at = local.strftime("%H:%M")
    if local.date() == today:
        return f"today {at}"
    if local.date() == today + timedelta(days=1):
        return f"tomorrow {at}"
    if today < local.date() < today + timedelta(days=7):
        return f"{DAY_NAMES[local.weekday()].capitalize()} {at}"
    return f"{local.date().isoformat()} {at}"


def local_zone() -> tzinfo:
    """The person's time zone with its summer-time rules: ``$TZ`` when it names one, else the
    system's (``/etc/localtime``), else the current fixed offset."""
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        with open("/etc/localtime", "rb") as handle:
            return ZoneInfo.from_file(handle, key="localtime")
    except (OSError, ValueError):
        pass
    return datetime.now().astimezone().tzinfo or UTC
