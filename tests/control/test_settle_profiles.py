"""The settle wait per kind of action (control/settle.settle_for), on a fake clock: how long
each waits on a still screen, that a change seen cuts the reaction wait short and then holds
the action until the screen is quiet, and that no profile ever returns mid-change."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from control.settle import (
    DEFAULT_REACTION_S,
    QUIET_S,
    REACTION_S,
    GrayFrame,
    SettleResult,
    settle_for,
    wait_until_settled,
)
from control.stop import StopLatch
from tests.support.fake_clock import FakeClock

GRAB_COST_S = 0.003


def flat(value: int) -> GrayFrame:
    return np.full((135, 240), value, np.uint8)


def changing_until(end: float, period: float = 0.04, start: float = 0.0
                   ) -> Callable[[float], GrayFrame]:
    """A screen whose big area flips every ``period`` from ``start`` to ``end``, then rests."""

    def screen(t: float) -> GrayFrame:
        frame = flat(200)
        if start <= t < end:
            frame[20:80, 20:120] = 40 if int((t - start) / period) % 2 else 230
        return frame

    return screen


def settle(kind: str, screen: Callable[[float], GrayFrame], *, before: GrayFrame | None = None,
           min_s: float = 0.0) -> SettleResult:
    """Wait after an action of ``kind`` on ``screen(t)``, t seconds after the wait began."""
    clock = FakeClock(start=50.0)
    t0 = clock()

    def grab() -> GrayFrame:
        clock.advance(GRAB_COST_S)
        return screen(clock() - t0)

    profile = settle_for(kind)
    result = wait_until_settled(grab, StopLatch(), clock=clock, sleep=clock.advance,
                                min_s=min_s, reaction_s=profile.reaction_s,
                                quiet_s=profile.quiet_s, before=before)
    return result


def test_each_kind_of_action_has_its_reaction_time() -> None:
    assert settle_for("wait").reaction_s == 0.0
    assert 0.0 < settle_for("move").reaction_s < QUIET_S
    assert QUIET_S <= settle_for("click").reaction_s < DEFAULT_REACTION_S
    assert settle_for("type").reaction_s == settle_for("click").reaction_s
    # The actions whose first repaint comes late keep the long wait; so does any new kind.
    for kind in ("double_click", "hotkey", "drag", "some_new_action"):
        assert settle_for(kind).reaction_s == DEFAULT_REACTION_S
    assert all(settle_for(kind).quiet_s == QUIET_S for kind in REACTION_S)


@pytest.mark.parametrize("kind", ["move", "wait", "click", "hotkey"])
def test_a_still_screen_is_waited_for_the_reaction_time_of_the_action(kind: str) -> None:
    result = settle(kind, lambda t: flat(100), before=flat(100))
    assert result.settled and result.changes == 0
    # The last look is taken when the reaction time is up, never a poll later.
    react = settle_for(kind).reaction_s
    assert react <= result.waited_s <= react + 2 * GRAB_COST_S


def test_a_floor_still_holds_a_move() -> None:
    result = settle("move", lambda t: flat(100), min_s=0.3)
    assert result.waited_s >= 0.3


def test_a_change_seen_at_once_ends_the_reaction_wait_and_starts_the_quiet_one() -> None:
    # The window reacted before the first look (a field showing the typed text): the action
    # is over once the screen has been still for the quiet window.
    result = settle("click", lambda t: flat(180), before=flat(100))
    assert result.changes == 1 and result.last_change_s is not None
    assert QUIET_S <= result.waited_s <= QUIET_S + 0.025 + 2 * GRAB_COST_S


@pytest.mark.parametrize("kind", ["move", "click", "type", "wait"])
def test_a_change_that_starts_within_the_reaction_time_is_waited_out(kind: str) -> None:
    # The app starts repainting just before the reaction time runs out, then animates for
    # 0.5 s (40 ms frames): the wait is extended to the quiet window after its end.
    react = settle_for(kind).reaction_s
    starts = max(0.0, react - 0.03)
    end = starts + 0.5
    result = settle(kind, changing_until(end, start=starts), before=flat(200))
    assert result.settled and result.changes > 5
    assert end + QUIET_S <= result.waited_s <= end + QUIET_S + 0.025 + 0.04 + 4 * GRAB_COST_S


@pytest.mark.parametrize("kind", sorted(REACTION_S))
def test_no_kind_of_action_returns_while_the_screen_still_changes(kind: str) -> None:
    # Already changing when the wait begins (the before frame differs), for 1.2 s: every
    # profile waits until the end plus the quiet window.
    result = settle(kind, changing_until(1.2), before=flat(0))
    assert result.settled
    assert result.waited_s >= 1.2 + QUIET_S


def test_the_first_change_is_seen_within_a_fast_poll_and_the_quiet_window_runs_from_it() -> None:
    # The app repaints 12 ms after the wait began (after the first look): seen by the next
    # fast poll, so the wait ends about 0.1 s after that, not a slow poll later.
    def screen(t: float) -> GrayFrame:
        return flat(180) if t >= 0.012 else flat(100)

    result = settle("click", screen, before=flat(100))
    assert result.changes == 1 and result.last_change_s is not None
    assert result.last_change_s <= 0.012 + 0.01 + 2 * GRAB_COST_S
    assert result.waited_s <= 0.012 + 0.01 + QUIET_S + 4 * GRAB_COST_S
