"""Waiting on Qt outside pytest-qt (scripts and benches): a real event loop, polled."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(condition: Callable[[], bool], what: str = "a condition",
               timeout: float = 30.0, poll_ms: int = 10) -> None:
    """Run a real Qt event loop (as the app does) until ``condition()`` holds.

    Not a ``QApplication.processEvents()`` loop: PySide6 6.12 on CPython 3.11 drops a
    reference to None on each of those calls, and a few thousand of them abort the interpreter.
    Raises TimeoutError after ``timeout`` seconds.
    """
    from PySide6.QtCore import QEventLoop, QTimer

    if condition():
        return
    loop = QEventLoop()
    deadline = time.monotonic() + timeout
    timed_out = [False]

    def check() -> None:
        if condition():
            loop.quit()
        elif time.monotonic() > deadline:
            timed_out[0] = True
            loop.quit()

    poll = QTimer()
    poll.setInterval(poll_ms)
    poll.timeout.connect(check)
    poll.start()
    loop.exec()
    poll.stop()
    if timed_out[0]:
        raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
