"""The next screenshot made during a settle wait is handed over only when the wait's last look
saw exactly its pixels, recently, with the same windows painted out; otherwise the step grabs.
"""

from __future__ import annotations

import numpy as np
import pytest

from control.capture import EncodeOptions, Frame, GrayFrame, encode_pixels, finished
from control.settle import wait_until_settled
from control.settle_frames import MAX_AGE_S, SettleFrames, Shot
from control.stop import StopLatch
from model.coords import FrameGeometry, Rect


class Screen:
    """A ShotSource over a settable picture and clock; counts encodes."""

    def __init__(self) -> None:
        self.value = 10
        self.now = 100.0
        self.painted: tuple[Rect, ...] = ()
        self.encodes = 0
        self.fail = False

    def shot(self, rects: tuple[Rect, ...] | None) -> Shot:
        raw = bytearray(np.full((8, 16, 4), self.value, np.uint8).tobytes())
        return Shot(raw, 16, 8, self.now, 1.0, self.painted if rects is None else rects)

    def small(self, shot: Shot) -> GrayFrame:
        return np.frombuffer(shot.raw, np.uint8)[::4].reshape(8, 16)[::8, ::8].copy()

    def encode(self, shot: Shot) -> Frame:
        self.encodes += 1
        if self.fail:
            raise OSError("no space left on device")
        data, pixels = encode_pixels(shot.raw, shot.width, shot.height, EncodeOptions())
        return Frame(data, "image/jpeg", FrameGeometry(16, 8, Rect(0, 0, 16, 8)), -1.0, 0.0,
                     0.0, pixels)

    def rects(self) -> tuple[Rect, ...]:
        return self.painted


def _frames(screen: Screen) -> SettleFrames:
    return SettleFrames(screen, clock=lambda: screen.now, finish=finished)


def test_the_frame_made_during_the_wait_is_the_last_looks() -> None:
    screen = Screen()
    frames = _frames(screen)
    frames()
    frames.prepare()
    screen.now += 0.02
    frames()  # the same pixels: this look confirms them
    frame = frames.frame()
    assert frame is not None and frame.captured_at == screen.now and screen.encodes == 1
    assert frame.pixels is not None and int(frame.pixels[0, 0, 0]) == 10
    # What the step makes of it next was made with it.
    assert frame.thumb is not None and frame.thumb[:2] == b"\xff\xd8"
    assert frame.small is not None and frame.small.shape == (1, 2)
    assert frames.frame() is None  # handed over once


@pytest.mark.parametrize("change", ["pixels", "windows", "age", "no look", "fails"])
def test_anything_else_and_the_step_grabs(change: str) -> None:
    screen = Screen()
    frames = _frames(screen)
    frames()
    frames.prepare()
    if change == "pixels":
        screen.value = 11  # one grey level: not the same screenshot
    if change == "fails":
        screen.fail = True
    if change != "no look":
        frames()
    if change == "windows":
        screen.painted = (Rect(0, 0, 4, 4),)  # a window to paint out came since
    if change == "age":
        screen.now += MAX_AGE_S + 0.01
    assert frames.frame() is None


def test_a_look_after_the_confirming_one_that_differs_drops_it() -> None:
    screen = Screen()
    frames = _frames(screen)
    frames()
    frames.prepare()
    frames()
    screen.value = 200
    frames()
    assert frames.frame() is None


def test_the_wait_prepares_the_frame_before_its_last_look_and_hands_it_over() -> None:
    """On a still screen the wait starts the encode before its last look, which confirms it:
    the screenshot is ready when the wait ends, made once."""
    screen = Screen()
    frames = _frames(screen)

    def sleep(seconds: float) -> None:
        screen.now += seconds

    result = wait_until_settled(frames, StopLatch(), min_s=0.0, reaction_s=0.15, quiet_s=0.1,
                                on_still=frames.prepare, clock=lambda: screen.now, sleep=sleep)
    assert result.settled
    frame = frames.frame()
    assert frame is not None and screen.encodes == 1
    assert frame.captured_at == screen.now  # the last look, at the end of the wait


def test_an_unchanged_look_reuses_its_tiny_frame_and_a_changed_one_makes_its_own() -> None:
    screen = Screen()
    made: list[int] = []
    small = screen.small

    def counted(shot: Shot) -> GrayFrame:
        made.append(1)
        return small(shot)

    screen.small = counted  # type: ignore[method-assign]
    frames = _frames(screen)
    first = frames()
    assert frames() is first and frames() is first and len(made) == 1
    screen.value = 90
    changed = frames()
    assert len(made) == 2 and int(changed[0, 0]) == 90
    screen.now += 0.5
    assert frames.looked_at() == screen.now - 0.5  # when the last look read the screen
    frames()
    assert frames.looked_at() == screen.now
