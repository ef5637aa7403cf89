"""Which scheduled automations are due, which were missed, and when to look again (Qt-free).

The desktop app drives it (ui/scheduler.py): it calls :meth:`Scheduler.check` when its timer
wakes at :attr:`Plan.wake_at`, when the automations file changes and when the machine woke
from sleep (:class:`WakeDetector`), and runs :attr:`Plan.run` through its usual run path.

What a person expects of it:

* a run happens at its time while the app runs, and never twice: the last time each schedule
  was handled is kept in a small state file in the data folder (replaced atomically) and saved
  *before* the run starts, so a restart or a crash mid-run does not run it again;
* a due time the app did not see in time (it was not running, the machine slept, the clock
  jumped) is **reported, not run late**: a 09:00 "file the timesheet" at 15:00 after a lunch
  sleep is a surprise, not a help. "In time" is within :data:`GRACE` of the due time (a timer
  on a busy machine is a little late);
* a schedule newly set, or changed, counts from the moment it was seen: what came before under
  another schedule is not "missed".
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Protocol

from app import paths
from app.automations import (
    Automation,
    AutomationError,
    automations_path,
    find_automation,
    load_automations,
    replace_automation,
)
from app.autostart import Autostart
from app.schedule import Repeat, Schedule, ScheduleError, describe_due, local_zone, parse_schedule

__all__ = [
    "GRACE",
    "SCHEDULE_STATE_FILE",
    "WAKE_JUMP",
    "Clock",
    "Missed",
    "Plan",
    "Scheduler",
    "SystemClock",
    "WakeDetector",
    "check_new_schedule",
    "login_needs",
    "next_runs",
    "schedule_state_path",
    "set_schedule",
]

log = logging.getLogger(__name__)

SCHEDULE_STATE_FILE = "schedules.json"
#: How late a due run may still start: a timer on a busy machine fires a little late.
GRACE = timedelta(minutes=2)
#: A change of the wall clock against the monotonic one by more than this is a wake from sleep
#: (or the clock being set): the plan is made again.
WAKE_JUMP = 30.0


def schedule_state_path() -> Path:
    """When each schedule was last handled: ``data_dir()/schedules.json``."""
    return paths.data_dir() / SCHEDULE_STATE_FILE


class Clock(Protocol):
    """The two clocks the scheduler reads (tests pass their own)."""

    def now(self) -> datetime:
        """The wall-clock time, aware."""
        ...

    def monotonic(self) -> float:
        """Seconds that do not jump (and on Linux do not advance while the machine sleeps)."""
        ...


class SystemClock:
    """The machine's clocks in ``tz`` (default: the person's time zone)."""

    def __init__(self, tz: tzinfo | None = None) -> None:
        self.tz = local_zone() if tz is None else tz

    def now(self) -> datetime:
        return datetime.now(self.tz)

    def monotonic(self) -> float:
        return time.monotonic()


@dataclass(frozen=True)
class Missed:
    """Due times of ``name`` that passed unseen (oldest first); never run late."""

    name: str
    times: tuple[datetime, ...]

    def text(self, now: datetime) -> str:
        count = len(self.times)
        last = describe_due(self.times[-1], now)
        runs = "a scheduled run" if count == 1 else f"{count} scheduled runs"
        return (f"The automation “{self.name}” missed {runs} (the last {last}) while holodesk "
                "was not running or the computer was asleep; it was not run late. Run it now "
                "from the tray menu if it is still wanted.")


@dataclass(frozen=True)
class Plan:
    """What :meth:`Scheduler.check` found: automations to run now, due times missed, and when
    the next one is due (None: nothing timed is scheduled)."""

    run: tuple[str, ...] = ()
    missed: tuple[Missed, ...] = ()
    wake_at: datetime | None = None


@dataclass
class _Entry:
    schedule: str
    handled: datetime  # every due time up to here was run or reported


@dataclass
class Scheduler:
    """The schedules of ``automations`` over ``clock``; state kept in ``state_path``."""

    clock: Clock
    state_path: Path = field(default_factory=schedule_state_path)
    tz: tzinfo | None = None
    _schedules: dict[str, tuple[str, Schedule]] = field(default_factory=dict)
    _state: dict[str, _Entry] = field(default_factory=dict)
    _loaded: bool = False

    def __post_init__(self) -> None:
        if self.tz is None:
            self.tz = getattr(self.clock, "tz", None) or local_zone()

    def set_automations(self, items: Sequence[Automation]) -> None:
        """Use the schedules of ``items`` (those without one are left alone)."""
        schedules: dict[str, tuple[str, Schedule]] = {}
        for a in items:
            if a.schedule is None:
                continue
            try:
                schedules[a.key] = (a.name, parse_schedule(a.schedule))
            except ScheduleError as e:  # the file validates it; never stop the others
                log.warning("automation %r: %s", a.name, e)
        self._schedules = schedules

    def at_login(self) -> list[str]:
        """The automations scheduled "at login", in order."""
        return [name for name, s in self._schedules.values() if s.repeat is Repeat.LOGIN]

    def check(self) -> Plan:
        """Handle every due time up to now: run the ones in time, report the others; the
        state is saved before this returns (so before any run starts)."""
        tz = self.tz
        assert tz is not None
        now = self.clock.now()
        self._load()
        run: list[str] = []
        missed: list[Missed] = []
        changed = False
        wake_at: datetime | None = None
        for key, (name, schedule) in self._schedules.items():
            if not schedule.timed:
                continue
            text = schedule.text()
            entry = self._state.get(key)
            if entry is None or entry.schedule != text:
                # New or changed: it counts from now.
                self._state[key] = entry = _Entry(text, now)
                changed = True
            elif now > entry.handled:
                due = schedule.missed(entry.handled, now, tz)
                if due and now - due[-1] <= GRACE:
                    run.append(name)
                    due = due[:-1]
                if due:
                    missed.append(Missed(name, tuple(due)))
                entry.handled = now
                changed = True
            upcoming = schedule.next_due(max(now, entry.handled), tz)
            if upcoming is not None and (wake_at is None or upcoming < wake_at):
                wake_at = upcoming
        # Entries of automations deleted or unscheduled go: set again later, they count anew.
        for key in [k for k in self._state if k not in self._schedules]:
            del self._state[key]
            changed = True
        if changed:
            self._save()
        for name in run:
            log.info("scheduled run of %r is due", name)
        for m in missed:
            log.warning("automation %r missed %d scheduled run(s)", m.name, len(m.times))
        return Plan(tuple(run), tuple(missed), wake_at)

    # -- the state file ----------------------------------------------------------------------

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        try:
            raw = json.loads(self.state_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as e:
            # Lost state only means "counts from now" for each schedule: nothing runs twice
            # (a due time before now is never run late).
            log.warning("the schedule state %s cannot be read (%s); schedules count from now",
                        self.state_path, e)
            return
        entries = raw.get("schedules", {}) if isinstance(raw, dict) else {}
        for key, value in entries.items() if isinstance(entries, dict) else ():
            try:
                handled = datetime.fromisoformat(value["handled"])
                if handled.tzinfo is None:
                    continue
                self._state[str(key)] = _Entry(str(value["schedule"]), handled)
            except (KeyError, TypeError, ValueError):
                continue

    def _save(self) -> None:
        data = {"version": 1, "schedules": {
            key: {"schedule": e.schedule, "handled": e.handled.isoformat()}
            for key, e in self._state.items()
        }}
        try:
            paths.write_atomic(self.state_path, json.dumps(data, indent=1) + "\n")
        except OSError as e:
            log.error("cannot save the schedule state %s: %s", self.state_path, e)


class WakeDetector:
    """Notices the machine waking from sleep, or its clock being set: the wall clock moved
    against the monotonic one (which stands still in suspend on Linux)."""

    def __init__(self, clock: Clock, jump: float = WAKE_JUMP) -> None:
        self._clock = clock
        self._jump = jump
        self._offset = self._now_offset()

    def _now_offset(self) -> float:
        return self._clock.now().timestamp() - self._clock.monotonic()

    def jumped(self) -> bool:
        """Whether the clocks moved apart by more than the jump since the last call."""
        offset = self._now_offset()
        moved = abs(offset - self._offset) > self._jump
        self._offset = offset
        return moved


def next_runs(
    items: Sequence[Automation], now: datetime, tz: tzinfo | None = None
) -> dict[str, str]:
    """For each scheduled automation (by key), its next run for people: ``tomorrow 09:00``,
    ``at login``, or ``none (it has passed)``."""
    zone = local_zone() if tz is None else tz
    shown: dict[str, str] = {}
    for a in items:
        if a.schedule is None:
            continue
        try:
            schedule = parse_schedule(a.schedule)
        except ScheduleError:
            continue
        if not schedule.timed:
            shown[a.key] = "at login"
            continue
        due = schedule.next_due(now, zone)
        shown[a.key] = describe_due(due, now.astimezone(zone)) if due else "none (it has passed)"
    return shown



def check_new_schedule(text: str | None, now: datetime, tz: tzinfo | None = None) -> None:
    """Refuse a schedule being set that could never run: a once time that has passed
    (:class:`AutomationError` saying so). One already in the file is left alone: it ran."""
    if not text:
        return
    try:
        schedule = parse_schedule(text)
    except ScheduleError as e:
        raise AutomationError(f"schedule: {e}") from None
    zone = local_zone() if tz is None else tz
    if schedule.repeat is Repeat.ONCE and schedule.next_due(now, zone) is None:
        raise AutomationError(f"schedule: {schedule.text().removeprefix('once at ')} has "
                              "passed; choose a time still ahead")


def set_schedule(
    name: str, text: str | None, *, now: datetime, tz: tzinfo | None = None,
    path: Path | None = None,
) -> Automation:
    """Give the automation ``name`` the schedule ``text`` (None: none); the saved automation.

    The desktop app picks the change up by itself (it watches the file).
    """
    path = automations_path() if path is None else path
    check_new_schedule(text, now, tz)
    old = find_automation(load_automations(path), name)
    new = old.changed(schedule=text)
    replace_automation(old.name, new, path=path)
    return new


def login_needs(autostart: Autostart | None) -> str | None:
    """What an "at login" schedule still needs from Start at login, in plain words; None when
    the app will be started at login and told so."""
    if autostart is None:
        return ("Starting holodesk at login is not available on this system, so an automation "
                "scheduled at login will not run by itself.")
    if not autostart.enabled():
        return ("It runs only when holodesk starts at login, which is off: turn on Start at "
                "login in the desktop app's Settings.")
    if not autostart.says_at_login():
        return ("holodesk starts at login with an entry written by an older version, which "
                "does not run automations: in the desktop app's Settings turn Start at login "
                "off and on again.")
    return None
