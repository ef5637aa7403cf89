"""What went wrong and what to do about it: the one shape of every error and status in holodesk.

A :class:`Problem` is a ``message`` (what happened, in plain words) and a :class:`Fix`. The fix is
structured so that each front end can say it in its own terms: the CLI names a command or an
option, the GUI a button or a menu item (``app/cli/render.py`` and ``ui/problem_view.py`` are
the one renderer of each). ``Fix.text`` is the part that holds in every front end, so it never
names a command-line option or a menu; ``setting`` and ``remedy`` carry those.

Every exception a person may see derives from :class:`HolodeskError`, which carries a Problem.
This module is at the bottom of the import order (``ui -> app -> control -> model``,
docs/architecture.md), so every package can use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Remedy(Enum):
    """Something holodesk itself can do about a problem; each front end names it its own way."""

    START_SERVER = "start_server"      # CLI: `holodesk serve`; GUI: the tray's Server menu
    CHECK_SERVER = "check_server"      # CLI: `holodesk doctor`; GUI: the status line's Retry
    RUN_DOCTOR = "run_doctor"          # CLI: `holodesk doctor`; GUI: the Doctor window
    CALIBRATE = "calibrate"            # CLI: `holodesk calibrate`; GUI: the Calibrate window
    SET_API_KEY = "set_api_key"        # CLI: `holodesk config set api_key`; GUI: Settings
    OPEN_SETTINGS = "open_settings"    # CLI: `holodesk config show`; GUI: Settings
    SHOW_LOG = "show_log"              # CLI: `holodesk log`; GUI: the action log window


@dataclass(frozen=True)
class Fix:
    """What the person can do.

    ``text`` says it in words true in every front end; ``setting`` names the settings key to
    change (the CLI says ``holodesk config set endpoint ...``, the GUI the field in Settings);
    ``remedy`` is an action holodesk offers for it. ``value``, when set, is the exact value
    ``setting`` should take, so the CLI can print the whole command.
    """

    text: str
    setting: str | None = None
    remedy: Remedy | None = None
    value: str | None = None

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Problem:
    """A message and, when the person can do something about it, a fix."""

    message: str
    fix: Fix | None = None

    def describe(self) -> str:
        """The message and the fix's words, for a log line or any front end without a renderer."""
        return describe(self.message, self.fix)

    def __str__(self) -> str:
        return self.describe()


def describe(message: str, fix: Fix | str | None) -> str:
    """``message`` and, on a second line, ``Fix: ...``: the one plain-text form of a problem."""
    text = fix.text if isinstance(fix, Fix) else fix
    return f"{message}\nFix: {text}" if text else message


def as_fix(fix: Fix | str | None) -> Fix | None:
    """A fix given as plain words becomes a :class:`Fix`; an empty one is no fix."""
    if fix is None or isinstance(fix, Fix):
        return fix
    return Fix(fix) if fix else None


class HolodeskError(Exception):
    """The root of every error holodesk shows to a person: a message and a fix."""

    def __init__(self, message: str, fix: Fix | str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix: Fix | None = as_fix(fix)

    @property
    def problem(self) -> Problem:
        return Problem(self.message, self.fix)

    def describe(self) -> str:
        return describe(self.message, self.fix)

    def __str__(self) -> str:
        return self.describe()
