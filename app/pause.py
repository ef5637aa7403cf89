"""Pause and resume a run: a gate the agent loop passes before each step and each action.

Any thread pauses (the Pause button, the touch detector) and resumes (the Resume button); the
agent's worker blocks in :meth:`PauseGate.wait_if_paused` at its next checkpoint until the run
is resumed or stopped. The stop always wins: a stop while paused ends the wait at once with
:class:`~control.stop.StoppedError`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from control.stop import StopLatch

__all__ = ["PauseGate"]


class PauseGate:
    """A thread-safe pause flag with a reason, and a blocking wait for the worker."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._reason: str | None = None
        self._listeners: list[Callable[[str | None], None]] = []

    def pause(self, reason: str = "paused") -> bool:
        """Pause; returns False when already paused (the first reason is kept)."""
        with self._cond:
            if self._reason is not None:
                return False
            self._reason = reason
            listeners = list(self._listeners)
        for listener in listeners:
            listener(reason)
        return True

    def resume(self) -> bool:
        """Resume; returns False when the gate was not paused."""
        with self._cond:
            if self._reason is None:
                return False
            self._reason = None
            self._cond.notify_all()
            listeners = list(self._listeners)
        for listener in listeners:
            listener(None)
        return True

    @property
    def reason(self) -> str | None:
        """Why the run is paused, or None."""
        return self._reason

    def add_listener(self, listener: Callable[[str | None], None]) -> Callable[[], None]:
        """Call ``listener(reason)`` on pause and ``listener(None)`` on resume, from the thread
        that changed the gate; returns a function that removes it."""
        with self._cond:
            self._listeners.append(listener)

        def remove() -> None:
            with self._cond:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    def wait_if_paused(
        self, latch: StopLatch, on_pause: Callable[[str], None] | None = None
    ) -> bool:
        """Block while paused; returns whether it waited at all.

        ``on_pause(reason)`` is called once, before blocking. Raises
        :class:`~control.stop.StoppedError` when the latch is or gets set (checked first: a
        stopped run never waits).
        """
        latch.check()
        with self._cond:
            reason = self._reason
        if reason is None:
            return False
        if on_pause is not None:
            on_pause(reason)

        def wake(_info: object) -> None:
            with self._cond:
                self._cond.notify_all()

        remove = latch.add_listener(wake)
        try:
            with self._cond:
                # The timeout only guards against a missed wake-up; the listener is the path.
                while self._reason is not None and not latch.is_set:
                    self._cond.wait(0.5)
        finally:
            remove()
        latch.check()
        return True
