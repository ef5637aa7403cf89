"""Settle detection: scripted screens on a fake clock (unit), and a real animating window on a
private Xvfb (x11)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from control.capture import MssCapturer
from control.settle import GrayFrame, changed_cells, wait_until_settled
from control.stop import StopLatch, StoppedError
from tests.support.fake_capturer import FakeCapturer
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb, xvfb_available


class FakeClock:
    """Time that only moves when someone sleeps (or a grab costs time)."""

    def __init__(self, grab_cost: float = 0.004) -> None:
        self.now = 100.0
        self.grab_cost = grab_cost

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def scripted(clock: FakeClock, screen: Callable[[float], GrayFrame]) -> Callable[[], GrayFrame]:
    """grab_small showing ``screen(t)``, t seconds after the start."""
    start = clock.now

    def grab() -> GrayFrame:
        clock.now += clock.grab_cost
        return screen(clock.now - start)

    return grab


def flat(value: int) -> GrayFrame:
    return np.full((135, 240), value, np.uint8)


def animated_until(end: float, period: float = 0.04) -> Callable[[float], GrayFrame]:
    """A screen whose big area flips every ``period`` seconds until ``end``, then rests."""

    def screen(t: float) -> GrayFrame:
        frame = flat(200)
        if t < end:
            frame[20:80, 20:120] = 40 if int(t / period) % 2 else 230
        return frame

    return screen


def test_a_still_screen_settles_after_the_reaction_time() -> None:
    clock = FakeClock()
    result = wait_until_settled(scripted(clock, lambda t: flat(100)), StopLatch(), clock=clock,
                                sleep=clock.sleep, reaction_s=0.25, quiet_s=0.1)
    assert result.settled and result.changes == 0 and result.last_change_s is None
    assert 0.25 <= result.waited_s < 0.35


def test_returns_soon_after_the_screen_stops_changing() -> None:
    clock = FakeClock()
    result = wait_until_settled(scripted(clock, animated_until(0.8)), StopLatch(), clock=clock,
                                sleep=clock.sleep, quiet_s=0.1, poll_s=0.025)
    assert result.settled and result.changes > 5
    assert result.last_change_s is not None and 0.75 <= result.last_change_s <= 0.85
    # Never before the end, at most quiet + one poll (+ grab costs) after it.
    assert 0.8 + 0.1 <= result.waited_s <= 0.8 + 0.1 + 0.025 + 0.04


def test_a_screen_that_never_stops_changing_gives_up_at_max() -> None:
    clock = FakeClock()
    result = wait_until_settled(scripted(clock, animated_until(99)), StopLatch(), clock=clock,
                                sleep=clock.sleep, max_s=1.5)
    assert not result.settled
    assert 1.5 <= result.waited_s <= 1.55


def test_never_returns_before_min_s() -> None:
    clock = FakeClock()
    result = wait_until_settled(scripted(clock, lambda t: flat(100)), StopLatch(), clock=clock,
                                sleep=clock.sleep, min_s=0.6, reaction_s=0.0, quiet_s=0.05)
    assert result.settled and result.waited_s >= 0.6


def test_a_change_before_the_first_poll_counts_when_given_the_frame_before() -> None:
    clock = FakeClock()
    result = wait_until_settled(scripted(clock, lambda t: flat(100)), StopLatch(), clock=clock,
                                sleep=clock.sleep, before=flat(0), reaction_s=1.0, quiet_s=0.1)
    # The change was seen, so the long "has it reacted yet" wait does not apply.
    assert result.settled and result.changes == 1 and result.waited_s < 0.2


def test_a_repaint_right_after_the_first_change_is_seen_at_once() -> None:
    """Typed text repaints in bursts: the first keys are on screen before the wait starts, the
    last a few ms into it. That second change is caught by the fast early polls, not a 25 ms
    poll later: the quiet window runs from when a change is seen."""
    clock = FakeClock()

    def typed(t: float) -> GrayFrame:
        return flat(100 if t < 0.012 else 160)

    result = wait_until_settled(scripted(clock, typed), StopLatch(), clock=clock,
                                sleep=clock.sleep, before=flat(0), reaction_s=0.15, quiet_s=0.1,
                                poll_s=0.025, first_poll_s=0.01)
    assert result.settled and result.changes == 2
    assert result.last_change_s is not None and 0.012 <= result.last_change_s <= 0.012 + 0.015
    assert result.waited_s <= 0.012 + 0.015 + 0.1 + 0.01


def test_noise_below_the_threshold_is_not_a_change_but_one_cell_is() -> None:
    clock = FakeClock()

    def noisy(t: float) -> GrayFrame:
        frame = flat(100)
        frame[0, : int(t * 100) % 50] = 104  # flickers by 4 levels
        return frame

    result = wait_until_settled(scripted(clock, noisy), StopLatch(), clock=clock,
                                sleep=clock.sleep, threshold=8)
    assert result.changes == 0
    a, b = flat(100), flat(100)
    b[5, 5] = 120
    assert changed_cells(a, b, 8) == 1
    assert changed_cells(a, np.zeros((10, 10), np.uint8), 8) == a.size


def test_a_blinking_caret_costs_at_most_one_more_quiet_period() -> None:
    clock = FakeClock()

    def caret(t: float) -> GrayFrame:
        frame = flat(255)
        if int(t / 0.5) % 2:
            frame[50:52, 60] = 0
        return frame

    result = wait_until_settled(scripted(clock, caret), StopLatch(), clock=clock,
                                sleep=clock.sleep, reaction_s=0.25, quiet_s=0.1)
    assert result.settled and result.waited_s < 0.5


def test_a_stop_ends_the_wait() -> None:
    latch = StopLatch()
    cap = FakeCapturer(lambda: np.random.default_rng().integers(0, 255, (64, 64, 3), np.uint8))
    timer = threading.Timer(0.15, latch.stop, args=("user", "stop now"))
    timer.start()
    started = time.monotonic()
    with pytest.raises(StoppedError):
        wait_until_settled(cap.grab_small, latch, max_s=10)
    assert time.monotonic() - started < 5
    timer.join()
    with pytest.raises(StoppedError):  # and a set latch refuses to start one
        wait_until_settled(cap.grab_small, latch)


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError):
        wait_until_settled(lambda: flat(0), StopLatch(), min_s=2, max_s=1)


# -- x11: a real window that animates after a click ------------------------------------------


@pytest.fixture(scope="module")
def animating(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Xvfb, RunningApp]]:
    if not xvfb_available():
        pytest.skip("Xvfb is not installed")
    with Xvfb(1280, 800) as server:
        app = RunningApp(server, tmp_path_factory.mktemp("settle") / "app",
                         geometry="1000x660+0+0", extra_args=("--animate-ms", "700"))
        try:
            yield server, app
        finally:
            app.stop()


def xdotool_click(server: Xvfb, x: int, y: int) -> None:
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], env=server.env(),
                   check=True)


@pytest.mark.x11
def test_on_xvfb_the_wait_ends_after_the_animation(animating: tuple[Xvfb, RunningApp]) -> None:
    server, app = animating
    with server.activated(), MssCapturer(display=server.display) as cap:
        assert cap.grab_small().shape == (100, 160)
        still = wait_until_settled(cap.grab_small, StopLatch())
        assert still.settled and still.changes == 0
        mark = app.mark()
        xdotool_click(server, *app.widgets["animate"].solid_center)
        result = wait_until_settled(cap.grab_small, StopLatch(), max_s=5.0)
        returned_at = time.monotonic()
    end = app.wait_for(lambda: app.events_since(mark, "animate_end"), what="animation end")[0]
    assert app.events_since(mark, "animate_start")
    assert result.settled and result.changes >= 3
    assert returned_at >= end["changed_at"], "returned while the window was still changing"
    # Loose on purpose (a busy 2-core machine): the bench measures the real latency.
    assert returned_at - end["changed_at"] < 1.5


def test_a_change_dates_from_when_its_look_read_the_screen() -> None:
    """A look reads the screen, then reduces and compares it (a few ms): the quiet window runs
    from the read, which is still no earlier than the change it saw."""
    clock = FakeClock(grab_cost=0.004)
    reads: list[float] = []
    first_changed: list[float] = []

    def grab() -> GrayFrame:
        read = clock.now + 0.001  # read 1 ms in, then 3 ms of reduction
        reads.append(read)
        clock.now += clock.grab_cost
        changed = read - start >= 0.05
        if changed and not first_changed:
            first_changed.append(read)
        return flat(160 if changed else 100)

    start = clock.now
    result = wait_until_settled(grab, StopLatch(), clock=clock, sleep=clock.sleep,
                                reaction_s=0.15, quiet_s=0.1, looked_at=lambda: reads[-1])
    assert result.settled and result.changes == 1 and result.last_change_s is not None
    assert result.last_change_s == pytest.approx(first_changed[0] - start)
    # Over once quiet_s passed since that read (plus the last look's own cost).
    assert result.waited_s == pytest.approx(first_changed[0] - start + 0.1 + 0.004, abs=1e-6)
