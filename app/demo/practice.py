"""Starting the practice window's process and reading its state.

The window is Qt, which app/ never imports: it runs as a process of its own, started here from
the command line :func:`practice_command` gives (this Python with ``ui.main``, or in the frozen
app its own binary, which has no Python beside it), with the hidden option
:data:`PRACTICE_OPTION` that ui/main.py routes to ui/practice. The window writes its state to a
JSON file (ui/practice/window.py); :class:`PracticeWindow` reads it.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.demo.look import PRACTICE_WM_CLASS, STEPS
from app.demo.window_process import (
    START_TIMEOUT,
    WindowProcess,
    wait_focused,
)
from app.parts import Closeable
from control.target import Target
from model.coords import Rect

log = logging.getLogger(__name__)

#: How long the practice window is given to get the keyboard focus before the run starts.
FOCUS_TIMEOUT = 10.0

#: The hidden first argument that makes `holodesk` show the practice window.
PRACTICE_OPTION = "--practice-window"


def practice_command(state: Path, *, frozen: bool | None = None,
                     preset: str | None = None) -> list[str]:
    """The command line of the practice window's process, writing its state to ``state``
    (``preset``: the state it starts in, for `holodesk eval`; ui/practice ``PRESETS``)."""
    options = ["--state", str(state), *(["--preset", preset] if preset else [])]
    if getattr(sys, "frozen", False) if frozen is None else frozen:
        return [sys.executable, PRACTICE_OPTION, *options]
    # -P: a folder of the person's with its own `app` or `ui` must not shadow holodesk's.
    return [sys.executable, "-P", "-m", "ui.main", PRACTICE_OPTION, *options]


def practice_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The window's environment: on Linux an X11 window whatever Qt would pick (holodesk sees
    and drives X11 windows only; in a Wayland session that is XWayland)."""
    env = dict(os.environ if base is None else base)
    if sys.platform.startswith("linux"):
        env["QT_QPA_PLATFORM"] = "xcb"
    return env


@dataclass(frozen=True)
class PracticeState:
    """What the practice window last wrote: where it is and how far the task is."""

    ready: bool
    window: Rect | None
    steps: dict[str, str]
    done: bool
    events: tuple[str, ...]

    @classmethod
    def read(cls, path: Path) -> PracticeState | None:
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # not written yet
        box = data.get("window")
        window = Rect(int(box[0]), int(box[1]), int(box[2]), int(box[3])) if box else None
        return cls(ready=bool(data.get("ready")), window=window,
                   steps={str(k): str(v) for k, v in dict(data.get("steps", {})).items()},
                   done=bool(data.get("done")), events=tuple(data.get("events", ())))

    def missing(self) -> list[str]:
        """The checklist items not done, in order."""
        return [step for step in STEPS if self.steps.get(step) != "done"]


class PracticeWindow(WindowProcess[PracticeState]):
    """The practice window's process: :meth:`start` shows it, :meth:`close` ends it."""

    label = "the practice window"
    prefix = "holodesk-demo-"
    state_file = "practice-state.json"
    log_file = "practice-window.log"

    def __init__(self, folder: Path | None = None, preset: str | None = None) -> None:
        super().__init__(folder)
        self.preset = preset

    def command(self) -> list[str]:
        return practice_command(self.state_path, preset=self.preset)

    def environment(self) -> dict[str, str]:
        return practice_env()

    def state(self) -> PracticeState | None:
        return PracticeState.read(self.state_path)

    def placed(self, state: PracticeState) -> Rect | None:
        return state.window if state.ready else None

    def hint(self) -> str:
        return (" Check that windows can open on this display (the set-up checks say what is "
                "missing).")

    def start(self, timeout: float = START_TIMEOUT) -> PracticeState:
        """Start the window and wait until it is drawn and has the keyboard focus; its first
        state.

        Raises :class:`PracticeWindowError` when it exits or does not show in ``timeout``.
        """
        log.info("starting the practice window: %s", " ".join(self.command()))
        state = self.launch(timeout)
        self.take_focus()
        return state

    def take_focus(self, timeout: float = FOCUS_TIMEOUT) -> bool:
        """Wait until the window has the keyboard focus, asking the window manager for it when
        it does not come; whether it came.

        The demo's first step types the name into the field the window focuses: typed before
        the window manager handed the window the focus (it may do so a moment after the window
        is drawn, or give it to another window), the keys went elsewhere and the run went in
        circles (issue 24). Without it after ``timeout`` the run still starts: the demo model
        clicks the field first when the window shows it has no focus.
        """
        from control.target_x11 import make_target_finder

        finder = make_target_finder()
        try:
            return wait_focused(finder, self._mine, timeout)
        finally:
            if isinstance(finder, Closeable):
                finder.close()

    def _mine(self, target: Target) -> bool:
        proc = self.proc
        return (proc is not None and target.found and target.pid == proc.pid
                and PRACTICE_WM_CLASS.lower() in target.names)
