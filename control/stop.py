"""The emergency stop latch: one per process, checked before every input primitive."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class StopInfo:
    """Who pulled the stop, why, and when (monotonic seconds)."""

    source: str  # e.g. "hotkey", "failsafe-corner", "signal", "tray", "user"
    reason: str
    at: float


class StoppedError(Exception):
    """Raised by code that finds the latch set; carries who stopped and why."""

    def __init__(self, info: StopInfo) -> None:
        super().__init__(f"stopped by {info.source}: {info.reason}")
        self.info = info


class StopLatch:
    """A thread-safe latch: once set it stays set, with its first cause, until reset.

    Listeners (e.g. the model client's cancel) are called synchronously by the thread that
    sets the latch, so an in-flight request can be aborted at once rather than at the next poll.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._info: StopInfo | None = None
        self._listeners: list[Callable[[StopInfo], None]] = []

    def stop(self, source: str, reason: str = "") -> bool:
        """Set the latch. Returns False when it was already set (the first cause is kept)."""
        with self._lock:
            if self._info is not None:
                return False
            self._info = StopInfo(source, reason, time.monotonic())
            self._event.set()
            listeners = list(self._listeners)
        for listener in listeners:
            listener(self._info)
        return True

    @property
    def is_set(self) -> bool:
        return self._event.is_set()

    @property
    def info(self) -> StopInfo | None:
        with self._lock:
            return self._info

    def check(self) -> None:
        """Raise :class:`StoppedError` if the latch is set."""
        info = self._info
        if info is not None:
            raise StoppedError(info)

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds, waking early on a stop; True if stopped."""
        return self._event.wait(timeout)

    def sleep(self, seconds: float) -> None:
        """Sleep, but raise :class:`StoppedError` as soon as the latch is set."""
        if self._event.wait(seconds):
            self.check()

    def reset(self) -> None:
        """Clear the latch: only the person starting a new run should do this."""
        with self._lock:
            self._info = None
            self._event.clear()

    def add_listener(self, listener: Callable[[StopInfo], None]) -> Callable[[], None]:
        """Call ``listener`` whenever the latch gets set; returns a function that removes it."""
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove
