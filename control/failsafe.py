"""The failsafe corner, watched all the time, not only when holodesk moves the mouse.

pyautogui checks its failsafe corners only inside its own calls, so a person throwing the
pointer into a corner while the model thinks, or while a confirmation waits, would not stop
anything until the next action. A small thread polls the pointer and pulls the stop latch.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable

from control.stop import StopLatch

log = logging.getLogger(__name__)

STOP_REASON = "the pointer was pushed into a screen corner"

Position = Callable[[], tuple[int, int]]


def corners(width: int, height: int) -> frozenset[tuple[int, int]]:
    """The four corner pixels of a ``width`` x ``height`` screen (pyautogui's failsafe points)."""
    return frozenset({(0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1)})


class CornerWatch:
    """Polls ``position`` every ``interval`` seconds; a corner pulls the stop."""

    def __init__(self, latch: StopLatch, position: Position,
                 points: frozenset[tuple[int, int]], interval: float = 0.05) -> None:
        self.latch = latch
        self.position = position
        self.points = points
        self.interval = interval
        self._quit = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._watch, name="corner-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._quit.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def _watch(self) -> None:
        while not self._quit.wait(self.interval):
            try:
                point = self.position()
            except Exception:  # a display gone away: the run notices on its own
                log.exception("the corner watch cannot read the pointer; it stops watching")
                return
            if point in self.points:
                self.latch.stop("failsafe-corner", STOP_REASON)
                return


def pointer_source() -> tuple[Position, frozenset[tuple[int, int]], Callable[[], None]]:
    """A thread-safe pointer reader for this platform, the corners, and a closer.

    On X11 the watch gets an X connection of its own: Xlib connections must not be shared
    between threads, and pyautogui's belongs to the input thread.
    """
    if sys.platform.startswith("linux"):
        from Xlib import display as xdisplay

        conn = xdisplay.Display()
        screen = conn.screen()
        root = screen.root

        def x11_position() -> tuple[int, int]:
            reply = root.query_pointer()
            return int(reply.root_x), int(reply.root_y)

        return (x11_position, corners(screen.width_in_pixels, screen.height_in_pixels),
                conn.close)
    from control.pyautogui_loader import load_pyautogui

    pyautogui = load_pyautogui()

    width, height = pyautogui.size()

    def position() -> tuple[int, int]:
        x, y = pyautogui.position()
        return int(x), int(y)

    return position, corners(width, height), lambda: None
