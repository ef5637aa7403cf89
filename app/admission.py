"""Whether a run may start now, and the one way a refusal is said (app/controller.py uses it).

A refusal is a value, :class:`Refused`: what happened and what the person can do about it, and
a :class:`Refusal` kind a front end or a reply can branch on. Nobody reads a reason back from
the last message shown.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class RunSource(enum.StrEnum):
    """Where a request for a run came from; the value is the word the person reads."""

    TYPED = "task window"
    TRAY = "tray"
    TEST_RUN = "test run"
    HOTKEY = "hotkey"
    SCHEDULE = "schedule"
    LOGIN = "run at login"
    TRIGGER = "trigger"
    DEMO = "demo"
    COMMAND_LINE = "command line"

    @property
    def asks(self) -> bool:
        """Whether the person started it and is there to be asked for a missing value."""
        return self in _ASKING

    @property
    def scheduled(self) -> bool:
        """Whether it was started by a schedule (the person may be elsewhere)."""
        return self in (RunSource.SCHEDULE, RunSource.LOGIN)


_ASKING = frozenset({RunSource.TYPED, RunSource.TRAY, RunSource.TEST_RUN})


class Refusal(enum.Enum):
    """Why a run did not start."""

    BUSY = "a run is already active"
    CALIBRATING = "a calibration is running"
    NOT_FOUND = "no such automation"
    SERVER = "the model server is not ready"
    LIMITS = "its limits cannot be met"
    MISSING_VALUES = "a value is missing"
    BAD_VALUE = "a value cannot be used"
    KEYRING = "the keyring could not be read"
    NO_TASK = "no task given"
    START = "the run could not start"
    MALFORMED = "the request was not understood"


@dataclass(frozen=True)
class Refused:
    """A run that did not start: ``message`` says what happened, ``fix`` what to do."""

    kind: Refusal
    message: str
    fix: str = ""

    @property
    def text(self) -> str:
        """The whole sentence for the person."""
        return f"{self.message} {self.fix}" if self.fix else self.message

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Started:
    """A run was started; ``later``: it starts once the keyring has answered or the person
    has filled in the missing values (a refusal then is told, as any)."""

    later: bool = False


#: What a request for a run comes to.
Outcome = Started | Refused


class Activity(enum.Enum):
    """What the desktop is busy with, as far as a new run is concerned."""

    IDLE = "idle"
    RUN = "run"  # a run, or a demo getting ready to run
    CALIBRATION = "calibration"

    @staticmethod
    def of(running: bool, calibrating: bool) -> Activity:
        """``running``: a run is active or getting ready; ``calibrating``: a calibration."""
        if running:
            return Activity.RUN
        return Activity.CALIBRATION if calibrating else Activity.IDLE


def busy(what: str) -> Refused:
    """The one refusal for "a run is already active"; ``what``: the run that was not started
    (``the automation “mail” (hotkey)``)."""
    return Refused(Refusal.BUSY, f"A run is already active: {what} was not started.",
                   "Stop the run first.")


def admit(activity: Activity, what: str) -> Refused | None:
    """None when a run may start now, else why not. Never a second run next to an active
    one, nor a run while a calibration draws its targets (it would click them)."""
    if activity is Activity.RUN:
        return busy(what)
    if activity is Activity.CALIBRATION:
        return Refused(Refusal.CALIBRATING,
                       f"A calibration is running: {what} was not started.",
                       "Let it finish or press Esc first.")
    return None


def what_run(source: RunSource, automation: str = "") -> str:
    """How a refusal names the run that was not started (``automation``: its name)."""
    if source is RunSource.TEST_RUN:
        return f"the test run of “{automation}”"
    if automation:
        return f"the automation “{automation}” ({source})"
    return "the demo" if source is RunSource.DEMO else "the task"
