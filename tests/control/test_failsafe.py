"""The failsafe corner watch: a pointer in a corner pulls the stop, wherever the run is."""

from __future__ import annotations

import threading

from control.failsafe import STOP_REASON, CornerWatch, corners
from control.stop import StopLatch


def test_the_corners_of_a_screen() -> None:
    assert corners(1920, 1080) == {(0, 0), (1919, 0), (0, 1079), (1919, 1079)}


def test_a_pointer_in_a_corner_pulls_the_stop() -> None:
    latch = StopLatch()
    where = [(500, 500)]
    looked = threading.Semaphore(0)

    def position() -> tuple[int, int]:
        here = where[-1]
        looked.release()
        return here

    watch = CornerWatch(latch, position, corners(1920, 1080), interval=0.01)
    watch.start()
    try:
        for _ in range(3):  # it looked at the middle (and went on) a few times
            assert looked.acquire(timeout=5)
        assert not latch.is_set  # the middle of the screen is no stop
        where.append((1919, 1079))
        assert latch.wait(5.0)
    finally:
        watch.stop()
    info = latch.info
    assert info is not None
    assert (info.source, info.reason) == ("failsafe-corner", STOP_REASON)


def test_the_watch_ends_when_told() -> None:
    latch = StopLatch()
    watch = CornerWatch(latch, lambda: (1, 1), corners(100, 100), interval=0.01)
    watch.start()
    watch.stop()
    assert watch._thread is not None and not watch._thread.is_alive()
    assert not latch.is_set
