"""The Tk task windows of `holodesk eval` (ui/practice/tk_*.py): starting one's process, reading
its state.

Each runs as a process of its own, started with the hidden option :data:`TASK_WINDOW_OPTION`
and its :class:`Kind` (ui/main.py routes it, so a frozen holodesk starts them too), as the rows
window is (app/demo/rows.py). It writes its state to a JSON file in the task folder: where
each of its windows is (``windows``: name to [x, y, width, height]), whether they are drawn,
and what the task's check reads; a file it edits lives beside it.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Any

from app.demo.practice import practice_env
from app.demo.window_process import START_TIMEOUT, WindowProcess
from model.coords import Rect

#: The hidden first argument that makes `holodesk` show a task window (then its kind).
TASK_WINDOW_OPTION = "--task-window"


class Kind(StrEnum):
    """Which task window."""

    EDITOR = "editor"
    ORDER = "order"
    EXPORT = "export"
    FILES = "files"
    CONTACTS = "contacts"
    DELIVERY = "delivery"


def task_window_command(kind: Kind, state: Path, *, frozen: bool | None = None) -> list[str]:
    """The command line of a task window's process, writing its state to ``state``."""
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

    prefix = "holodesk-task-"

    def __init__(self, kind: Kind, folder: Path | None = None) -> None:
        self.kind = kind
        self.label = f"the {kind.value} window"
        self.state_file = f"{kind.value}-state.json"
        self.log_file = f"{kind.value}-window.log"
        super().__init__(folder)
        self.folder = self.state_path.parent

    def command(self) -> list[str]:
        return task_window_command(self.kind, self.state_path)

    def environment(self) -> dict[str, str]:
        return practice_env()

    def state(self) -> dict[str, Any] | None:
        try:
            data: Any = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

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
