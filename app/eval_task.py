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

from app.result import Check as Check
from model.coords import Rect


class EvalError(RuntimeError):
    """The suite cannot run (an unknown task name, a window that does not open)."""


class Subject(Protocol):
    """A throwaway window an eval task acts in (or several: see :func:`confined_to`)."""

    @property
    def wm_class(self) -> str:
        """Its X11 window class (its first window's, for a subject of several)."""
        ...

    def open(self) -> Rect:
        """Show the window; its rectangle on the screen once placed (for several windows, the
        rectangle holding them all: the capture)."""
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
        """Where the window is now (its own state says), None when it cannot tell. A subject of
        several windows says the rectangle :meth:`open` gave only while every window is where
        it opened, so the eval stops a run once one moved."""
        ...

    def close(self) -> None:
        """End the window (safe to call twice)."""
        ...


def confined_to(subject: Subject) -> tuple[str, ...]:
    """The X11 names a task's run may act in (``only_in``): the subject's ``wm_classes`` when
    it has them, else its one ``wm_class``. A subject of several windows (copy-order-number's
    order and form) names each one's class there; the menu window names its menu bar's pop-up
    menus too, which Tk makes windows of their own, named by their menu, not by the
    application's class."""
    classes: tuple[str, ...] = tuple(str(c) for c in getattr(subject, "wm_classes", ()))
    return classes or (subject.wm_class,)


@dataclass(frozen=True)
class EvalTask:
    """One task of the suite: its name, the goal told to the model, and its window."""

    name: str
    goal: str
    summary: str
    subject: Callable[[Path], Subject]
