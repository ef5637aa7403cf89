"""A monotonic clock that tests move by hand, alone or on top of the real one."""

from __future__ import annotations

import threading
import time


class FakeClock:
    """``clock()`` is ``start`` plus every :meth:`advance` so far; with ``real=True`` the real
    monotonic time passes too (for waits that really sleep, skipping ahead by hand)."""

    def __init__(self, start: float = 1000.0, *, real: bool = False) -> None:
        self._lock = threading.Lock()
        self._offset = start - (time.monotonic() if real else 0.0)
        self._real = real

    def __call__(self) -> float:
        with self._lock:
            return (time.monotonic() if self._real else 0.0) + self._offset

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._offset += seconds
