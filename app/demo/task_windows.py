"""The task windows of `holodesk eval` (ui/practice/tasks, Tk): starting one's process and
reading its state, as app/demo/rows.py does for the rows window.

Each runs as a process of its own, started with the hidden option :data:`EVAL_WINDOW_OPTION`
and the window's name (ui/main.py routes it, so a frozen holodesk starts them too), and writes
its state to a JSON file: where it is, and the task's part (app/demo/task_look.py says what).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from app.demo.practice import practice_env
from app.demo.task_look import TaskWindow
from app.demo.window_process import START_TIMEOUT, WindowProcess
from model.coords import Rect

#: The hidden first argument that makes `holodesk` show a task window (its name follows).
EVAL_WINDOW_OPTION = "--eval-window"


def window_command(kind: TaskWindow, state: Path, *, frozen: bool | None = None) -> list[str]:
    """The command line of the ``kind`` window's process, writing its state to ``state``."""
    options = [EVAL_WINDOW_OPTION, kind.value, "--state", str(state)]
    if getattr(sys, "frozen", False) if frozen is None else frozen:
        return [sys.executable, *options]
    # -P: a folder of the person's with its own `app` or `ui` must not shadow holodesk's.
    return [sys.executable, "-P", "-m", "ui.main", *options]


class TaskWindowProcess(WindowProcess[dict[str, Any]]):
    """One task window's process: :meth:`start` shows it, :meth:`close` ends it."""

    def __init__(self, kind: TaskWindow, folder: Path | None = None) -> None:
        self.kind = kind
        self.label = f"the {kind.value} window"
        self.prefix = f"holodesk-{kind.value}-"
        self.state_file = f"{kind.value}-state.json"
        self.log_file = f"{kind.value}-window.log"
        super().__init__(folder)

    def command(self) -> list[str]:
        return window_command(self.kind, self.state_path)

    def environment(self) -> dict[str, str]:
        return practice_env()

    def state(self) -> dict[str, Any] | None:
        try:
            data: Any = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def placed(self, state: dict[str, Any]) -> Rect | None:
        return Rect(*(int(v) for v in state["window"])) if state.get("ready") else None

    def start(self, timeout: float = START_TIMEOUT) -> Rect:
        """Start the window and wait until it is drawn and placed; its rectangle."""
        box = self.placed(self.launch(timeout))
        assert box is not None  # launch returns a placed state
        return box
