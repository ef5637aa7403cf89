"""What one `holodesk eval` task is (app/eval.py runs them): its window (:class:`Subject`),
the check of its outcome (:class:`Check`) and its entry in the suite (:class:`EvalTask`).

A module of its own so that the task windows' subjects (app/eval_windows.py) and the suite that
lists them (app/eval.py) both import it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from model.coords import Rect


class EvalError(RuntimeError):
    """The suite cannot run (an unknown task name, a window that does not open)."""


@dataclass(frozen=True)
class Check:
    """Whether a task's goal was reached, read from its window's own state, and what it saw."""

    passed: bool
    detail: str


class Subject(Protocol):
    """A throwaway window an eval task acts in."""

    #: Its X11 window class: the run may act in nothing else.
    wm_class: str

    def open(self) -> Rect:
        """Show the window; its rectangle on the screen once placed."""
        ...

    def check(self, answer: str | None = None) -> Check:
        """Whether the goal is reached, from the window's own state; ``answer`` is the run's
        final answer text (None when the run ended without one), for a task whose goal is to
        read something off the window."""
        ...

    @property
    def alive(self) -> bool:
        """Whether its window's process is still running."""
        ...

    def where(self) -> Rect | None:
        """Where the window is now (its own state says), None when it cannot tell."""
        ...

    def close(self) -> None:
        """End the window (safe to call twice)."""
        ...


def also_in(subject: Subject) -> tuple[str, ...]:
    """Other X11 names the run may act in besides the subject's class: the pop-up menus of a
    Tk menu bar are windows of their own, named by their menu (not by the application's
    class). A subject lists them in an ``also_in`` attribute; most have none."""
    names = getattr(subject, "also_in", ())
    return tuple(str(n) for n in names)


@dataclass(frozen=True)
class EvalTask:
    """One task of the suite: its name, the goal told to the model, and its window."""

    name: str
    goal: str
    summary: str
    subject: Callable[[Path], Subject]
