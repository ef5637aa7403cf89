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
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.demo.look import STEPS
from model.coords import Rect

log = logging.getLogger(__name__)

#: The hidden first argument that makes `holodesk` show the practice window.
PRACTICE_OPTION = "--practice-window"
#: Seconds to wait for the window to show (Qt's start on a busy machine takes a few).
START_TIMEOUT = 60.0
#: How long the window must stay in one place before the demo takes its rectangle: a window
#: manager places (and frames) a new window just after it is first drawn.
SETTLE = 0.6


class PracticeWindowError(RuntimeError):
    """The practice window did not start or went away; the message says why and what to do."""


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


class PracticeWindow:
    """The practice window's process: :meth:`start` shows it, :meth:`close` ends it."""

    def __init__(self, folder: Path | None = None, preset: str | None = None) -> None:
        self.preset = preset
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if folder is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="holodesk-demo-")
            folder = Path(self._tmp.name)
        self.state_path = folder / "practice-state.json"
        self._stderr = folder / "practice-window.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = START_TIMEOUT) -> PracticeState:
        """Start the window and wait until it is drawn; its first state.

        Raises :class:`PracticeWindowError` when it exits or does not show in ``timeout``.
        """
        command = practice_command(self.state_path, preset=self.preset)
        log.info("starting the practice window: %s", " ".join(command))
        with self._stderr.open("wb") as err:
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, env=practice_env(),
                                         stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + timeout
        placed: Rect | None = None
        since = 0.0
        while True:
            state = self.state()
            if state is not None and state.ready and state.window is not None:
                if state.window != placed:
                    placed, since = state.window, time.monotonic()
                elif time.monotonic() - since >= SETTLE:
                    return state
            if self.proc.poll() is not None:
                words = self._last_words()
                code = self.proc.returncode
                self.close()
                raise PracticeWindowError(
                    f"the practice window did not open (exit status {code}). "
                    f"{words} Check that windows can open on this display "
                    "(the set-up checks say what is missing)."
                )
            if time.monotonic() > deadline:
                self.close()
                raise PracticeWindowError(
                    f"the practice window did not show within {timeout:g} s. Check that "
                    "windows can open on this display (the set-up checks say what is "
                    "missing).")
            time.sleep(0.05)

    def state(self) -> PracticeState | None:
        return PracticeState.read(self.state_path)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _last_words(self) -> str:
        try:
            lines = self._stderr.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1] if lines else ""

    def close(self) -> None:
        """End the window's process (safe to call twice) and remove its files."""
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
