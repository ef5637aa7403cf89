"""What `holodesk eval`'s tasks answer and raise (app/eval.py re-exports both): in a module of
their own so the subjects of app/eval_windows.py can use them without importing the suite."""

from __future__ import annotations

from dataclasses import dataclass


class EvalError(RuntimeError):
    """The suite cannot run (an unknown task name, a window that does not open)."""


@dataclass(frozen=True)
class Check:
    """Whether a task's goal was reached, read from its window's own state, and what it saw."""

    passed: bool
    detail: str
