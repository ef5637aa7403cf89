"""The rows window of `holodesk eval`'s scroll-to-row task: starting its process, reading
its state.

The window (ui/practice/rows.py, Tk) runs as a process of its own, started here with the hidden
option :data:`ROWS_OPTION` that ui/main.py routes, as the practice window is
(app/demo/practice.py). It writes its state to a JSON file: where it is, which row is selected.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from app.demo.practice import practice_env
from app.demo.window_process import START_TIMEOUT, WindowProcess, json_state
from model.coords import Rect

#: The hidden first argument that makes `holodesk` show the rows window.
ROWS_OPTION = "--rows-window"
#: The rows window's X11 window class: what the eval's run is limited to (``only_in``).
ROWS_WM_CLASS = "holodesk-rows"
ROW_COUNT = 60
WANTED_ROW = "Row 47"


def rows_command(state: Path, *, frozen: bool | None = None) -> list[str]:
    """The command line of the rows window's process, writing its state to ``state``."""
    if getattr(sys, "frozen", False) if frozen is None else frozen:
        return [sys.executable, ROWS_OPTION, "--state", str(state)]
    # -P: a folder of the person's with its own `app` or `ui` must not shadow holodesk's.
    return [sys.executable, "-P", "-m", "ui.main", ROWS_OPTION, "--state", str(state)]


class RowsWindow(WindowProcess[dict[str, Any]]):
    """The rows window's process: :meth:`start` shows it, :meth:`close` ends it."""

    label = "the rows window"
    prefix = "holodesk-rows-"
    state_file = "rows-state.json"
    log_file = "rows-window.log"

    def command(self) -> list[str]:
        return rows_command(self.state_path)

    def environment(self) -> dict[str, str]:
        return practice_env()

    def state(self) -> dict[str, Any] | None:
        return json_state(self.state_path)

    def placed(self, state: dict[str, Any]) -> Rect | None:
        return Rect(*(int(v) for v in state["window"])) if state.get("ready") else None

    def start(self, timeout: float = START_TIMEOUT) -> Rect:
        """Start the window and wait until it is drawn and placed; its rectangle."""
        box = self.placed(self.launch(timeout))
        assert box is not None  # launch returns a placed state
        return box
