"""Clocks that tests move by hand: a monotonic one (alone or on top of the real one), and a
wall clock with its monotonic partner for the scheduler."""

from __future__ import annotations

import datetime
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


class FakeWallClock:
    """A wall clock and a monotonic one that tests move by hand (the scheduler's two clocks).

    :meth:`advance` moves both, as time passing with the machine awake; :meth:`sleep` only the
    wall clock, as a suspended machine (Linux's monotonic clock stands still in suspend). With
    ``real=True`` real time passes on both too (for a Qt timer that really waits).
    """

    def __init__(self, start: datetime.datetime, mono: float = 1000.0, *,
                 real: bool = False) -> None:
        if start.tzinfo is None:
            raise ValueError("the fake wall clock needs an aware start time")
        self._lock = threading.Lock()
        self._wall = start
        self._mono = mono
        self._real = real
        self._t0 = time.monotonic()
        self.tz = start.tzinfo

    def _elapsed(self) -> float:
        return time.monotonic() - self._t0 if self._real else 0.0

    def now(self) -> datetime.datetime:
        with self._lock:
            return self._wall + datetime.timedelta(seconds=self._elapsed())

    def monotonic(self) -> float:
        with self._lock:
            return self._mono + self._elapsed()

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._wall += datetime.timedelta(seconds=seconds)
            self._mono += seconds

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self._wall += datetime.timedelta(seconds=seconds)

    def set(self, wall: datetime.datetime) -> None:
        """Move to ``wall`` awake (the monotonic clock moves by the same amount)."""
        with self._lock:
            step = wall - (self._wall + datetime.timedelta(seconds=self._elapsed()))
            self._mono += step.total_seconds()
            self._wall += step
