"""The task windows of `holodesk eval` (Tk: ui/practice/tasks and ui/practice/tk_*.py):
starting one's process and reading its state, as app/demo/rows.py does for the rows window.

Each runs as a process of its own, started with the hidden option :data:`TASK_WINDOW_OPTION`
and the window's name (:class:`app.demo.task_look.TaskWindow`; ui/main.py routes it to
ui/practice/tasks, so a frozen holodesk would start them too, though its build leaves tkinter
out: docs/eval.md), and writes its state to a JSON file in the task folder: where each of its
windows is (``windows``: name to [x, y, width, height]), whether they are drawn (``ready``)
and the task's part (app/demo/task_look.py says what); a file it edits lives beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from app.demo.practice import practice_env
from app.demo.task_look import TaskWindow
from app.demo.window_process import START_TIMEOUT, WindowProcess, json_state
from model.coords import Rect

#: The hidden first argument that makes `holodesk` show a task window (its name follows).
TASK_WINDOW_OPTION = "--task-window"


def task_window_command(kind: TaskWindow, state: Path, *, frozen: bool | None = None
                        ) -> list[str]:
    """The command line of the ``kind`` window's process, writing its state to ``state``."""
    options = [TASK_WINDOW_OPTION, kind.value, "--state", str(state)]
    if getattr(sys, "frozen", False) if frozen is None else frozen:
        return [sys.executable, *options]
    # -P: a folder of the person's with its own `app` or `ui` must not shadow holodesk's.
    return [sys.executable, "-P", "-m", "ui.main", *options]


def bounding(rects: list[Rect]) -> Rect:
    """The smallest rectangle holding every one of ``rects``."""
    left = min(r.left for r in rects)
    top = min(r.top for r in rects)
    right = max(r.left + r.width for r in rects)
    bottom = max(r.top + r.height for r in rects)
    return Rect(left, top, right - left, bottom - top)


class TaskWindowProcess(WindowProcess[dict[str, Any]]):
    """One task window's process: :meth:`start` shows it, :meth:`close` ends it."""

    def __init__(self, kind: TaskWindow, folder: Path | None = None) -> None:
        self.kind = kind
        self.label = f"the {kind.value} window"
        self.prefix = f"holodesk-{kind.value}-"
        self.state_file = f"{kind.value}-state.json"
        self.log_file = f"{kind.value}-window.log"
        super().__init__(folder)
        self.folder = self.state_path.parent

    def command(self) -> list[str]:
        return task_window_command(self.kind, self.state_path)

    def environment(self) -> dict[str, str]:
        return practice_env()

    def state(self) -> dict[str, Any] | None:
        return json_state(self.state_path)

    @staticmethod
    def rects(state: dict[str, Any]) -> dict[str, Rect]:
        """Where each of the task's windows is, by name."""
        shown = state.get("windows")
        if not isinstance(shown, dict):
            return {}
        return {str(name): Rect(*(int(v) for v in box)) for name, box in shown.items()}

    def placed(self, state: dict[str, Any]) -> Rect | None:
        """The rectangle holding all the task's windows, once they are drawn."""
        rects = self.rects(state)
        return bounding(list(rects.values())) if state.get("ready") and rects else None

    def start(self, timeout: float = START_TIMEOUT) -> dict[str, Any]:
        """Start the window and wait until it is drawn and placed; its state then."""
        return self.launch(timeout)
