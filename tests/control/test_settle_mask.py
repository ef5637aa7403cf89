"""The settle detector's looks paint out the windows there at each look: a window painted out
when the wait began that goes away during it (the confirmation panel hiding, a password
manager minimised) does not leave the detector blind where it was (found by a review: the
looks of a wait had been masked with the windows of its start).
"""

from __future__ import annotations

import time

import numpy as np

from control.settle import wait_until_settled
from control.stop import StopLatch
from model.coords import Rect
from tests.support.fake_capturer import FakeCapturer

W, H = 64, 64
PANEL = Rect(0, 0, 32, 64)  # the left half: a window painted out when the wait begins
ANIMATION_S = 0.4  # the app under it animates this long after the action


def test_a_change_under_a_window_that_went_away_during_the_wait_is_waited_for() -> None:
    start = time.monotonic()
    panel_shown = [True]

    def screen() -> np.ndarray:
        image = np.full((H, W), 40, np.uint8)
        elapsed = time.monotonic() - start
        if elapsed < ANIMATION_S:
            # Under the panel, the app's dialog fades in: a new shade every 20 ms.
            image[:, :32] = 60 + int(elapsed / 0.02) * 8 % 160
        else:
            image[:, :32] = 250
        return image

    capturer = FakeCapturer(screen, small_factor=8,
                            exclude=lambda: [PANEL] if panel_shown[0] else [])
    grab_small = capturer.small_grabber()  # the windows painted out: listed now, once
    before = grab_small()
    panel_shown[0] = False  # the person approved: the panel hides as the action runs
    result = wait_until_settled(grab_small, StopLatch(), min_s=0.0, max_s=2.0, before=before,
                                reaction_s=0.15, quiet_s=0.1,
                                on_still=grab_small.prepare, looked_at=grab_small.looked_at)
    waited = time.monotonic() - start
    assert result.changes > 0 and waited >= ANIMATION_S, (
        f"settled after {waited:.3f} s with {result.changes} changes seen; the screen under "
        f"the window that went away changed until {ANIMATION_S} s")
