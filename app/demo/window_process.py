"""A window of the demo and the eval that runs as a process of its own (Qt or Tk, which app/
never imports) and writes its state to a JSON file: starting it, waiting until it is drawn and
placed, ending it. app/demo/practice.py and app/demo/rows.py say which window and how to read
its state.
"""

from __future__ import annotations

import json
import logging
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from control.stop import StopLatch
from control.target import Target, TargetFinder
from model.coords import Rect

log = logging.getLogger(__name__)

__all__ = ["MARGIN", "SETTLE", "START_TIMEOUT", "PracticeWindowError", "WindowProcess",
           "capture_region", "wait_focused", "watch_window"]

#: Seconds to wait for the window to show (Qt's start on a busy machine takes a few).
START_TIMEOUT = 60.0
#: How long the window must stay in one place before its rectangle is taken: a window manager
#: places (and frames) a new window just after it is first drawn.
SETTLE = 0.6

#: Pixels of screen around the window that the screenshots include (a window manager may still
#: nudge the window after it was drawn).
MARGIN = 16

State = TypeVar("State")


def capture_region(window: Rect) -> str:
    """The ``monitor`` setting that captures ``window`` and :data:`MARGIN` around it."""
    return (f"{window.width + 2 * MARGIN}x{window.height + 2 * MARGIN}"
            f"{window.left - MARGIN:+d}{window.top - MARGIN:+d}")


def watch_window(alive: Callable[[], bool], latch: StopLatch, source: str, reason: str,
                 poll: float = 0.2) -> Callable[[], None]:
    """Stop the run behind ``latch`` (as ``source``, for ``reason``) once ``alive`` says the
    window is gone: nothing is left the run may act in. Call what it returns to end the watch."""
    ended = threading.Event()

    def loop() -> None:
        while not latch.wait(poll) and not ended.is_set():
            if not alive():
                latch.stop(source, reason)
                return

    threading.Thread(target=loop, name=f"{source}-watch", daemon=True).start()
    return ended.set


def wait_focused(finder: TargetFinder, mine: Callable[[Target], bool],
                 timeout: float) -> bool:
    """Wait until the window ``mine`` picks has the keyboard focus, asking the window manager
    to give it (``finder.activate``) while it does not; whether it got it in ``timeout``. A
    finder that cannot tell (no X11) answers False at once."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            focused = finder.focused()
            if mine(focused):
                return True
            if not focused.finder:
                return False  # this platform cannot tell which window has the focus
            for target in finder.windows():
                if mine(target):
                    finder.activate(target)  # it waits a moment for the focus to move
                    break
        except Exception:  # a display that fails must not keep the demo from starting
            log.warning("could not give the window the focus", exc_info=True)
            return False
        if time.monotonic() > deadline:
            log.warning("the window did not get the keyboard focus in %g s", timeout)
            return False
        time.sleep(0.05)


def json_state(path: Path) -> dict[str, Any] | None:
    """A window's state file as a JSON object; None while it is missing, partly written or
    not an object (the window writes it atomically, but may not have written it yet)."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class PracticeWindowError(RuntimeError):
    """The window's process exited, or the window did not show in time."""


class WindowProcess(Generic[State]):
    """The process of one window writing its state to ``state_path`` in ``folder`` (a
    temporary folder, removed on :meth:`close`, when none is given). Subclasses give the
    command, the environment, how to read the state and where the window is in it."""

    #: Words for the messages ("the practice window").
    label = "the window"
    #: A temporary folder's name starts with this.
    prefix = "holodesk-window-"
    state_file = "state.json"
    log_file = "window.log"

    def __init__(self, folder: Path | None = None) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if folder is None:
            self._tmp = tempfile.TemporaryDirectory(prefix=self.prefix)
            folder = Path(self._tmp.name)
        self.state_path = folder / self.state_file
        self._stderr = folder / self.log_file
        self.proc: subprocess.Popen[bytes] | None = None

    # -- what a subclass says ----------------------------------------------------------------

    def command(self) -> list[str]:
        raise NotImplementedError

    def environment(self) -> dict[str, str] | None:
        return None

    def state(self) -> State | None:
        raise NotImplementedError

    def placed(self, state: State) -> Rect | None:
        """Where the drawn window is, or None while it is not drawn yet."""
        raise NotImplementedError

    def hint(self) -> str:
        """What to check when the window does not show (appended to the message)."""
        return ""

    # -- the process -------------------------------------------------------------------------

    def launch(self, timeout: float = START_TIMEOUT) -> State:
        """Start the window and wait until it is drawn and stays in one place; that state.

        Raises :class:`PracticeWindowError` when it exits or does not show in ``timeout``.
        """
        with self._stderr.open("wb") as err:
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL,
                                         env=self.environment(), stdout=subprocess.DEVNULL,
                                         stderr=err)
        deadline = time.monotonic() + timeout
        where: Rect | None = None
        since = 0.0
        while True:
            state = self.state()
            box = self.placed(state) if state is not None else None
            if state is not None and box is not None:
                if box != where:
                    where, since = box, time.monotonic()
                elif time.monotonic() - since >= SETTLE:
                    return state
            if self.proc.poll() is not None:
                words = self._last_words()
                code = self.proc.returncode
                self.close()
                raise PracticeWindowError(
                    f"{self.label} did not open (exit status {code}). {words}{self.hint()}")
            if time.monotonic() > deadline:
                self.close()
                raise PracticeWindowError(
                    f"{self.label} did not show within {timeout:g} s.{self.hint()}")
            time.sleep(0.05)

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
