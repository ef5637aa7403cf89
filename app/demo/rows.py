"""The rows window of `holodesk eval`'s scroll-to-row task: starting its process, reading
its state.

The window (ui/practice/rows.py, Tk) runs as a process of its own, started here with the hidden
option :data:`ROWS_OPTION` that ui/main.py routes, as the practice window is
(app/demo/practice.py). It writes its state to a JSON file: where it is, which row is selected.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.demo.practice import SETTLE, START_TIMEOUT, PracticeWindowError, practice_env
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


class RowsWindow:
    """The rows window's process: :meth:`start` shows it, :meth:`close` ends it."""

    def __init__(self, folder: Path | None = None) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if folder is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="holodesk-rows-")
            folder = Path(self._tmp.name)
        self.state_path = folder / "rows-state.json"
        self._stderr = folder / "rows-window.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def state(self) -> dict[str, Any] | None:
        try:
            data: Any = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def start(self, timeout: float = START_TIMEOUT) -> Rect:
        """Start the window and wait until it is drawn and placed; its rectangle."""
        with self._stderr.open("wb") as err:
            self.proc = subprocess.Popen(rows_command(self.state_path), stdin=subprocess.DEVNULL,
                                         env=practice_env(), stdout=subprocess.DEVNULL,
                                         stderr=err)
        deadline = time.monotonic() + timeout
        placed: Rect | None = None
        since = 0.0
        while True:
            state = self.state()
            if state is not None and state.get("ready"):
                box = Rect(*(int(v) for v in state["window"]))
                if box != placed:
                    placed, since = box, time.monotonic()
                elif time.monotonic() - since >= SETTLE:
                    return box
            if self.proc.poll() is not None or time.monotonic() > deadline:
                code = self.proc.poll()
                self.close()
                raise PracticeWindowError(
                    f"the rows window did not open (exit status {code})" if code is not None
                    else f"the rows window did not show within {timeout:g} s")
            time.sleep(0.05)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
