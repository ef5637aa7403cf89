"""Waiting for the screen to settle after an action, instead of a fixed sleep.

After an action the loop polls tiny grayscale frames (1/8 size, a few ms each) and returns as
soon as the screen has not changed for ``quiet_s``; never before ``min_s`` and never after
``max_s`` (a video or a spinner never settles). A frame counts as changed when at least
``min_cells`` cells of the tiny frame moved by more than ``threshold`` gray levels from the
frame at the last change (comparing with that reference, not just the previous poll, also
catches slow fades). One changed cell is enough: a caret blinking every ~0.5 s only costs one
more quiet period, while ignoring small changes would miss the last typed character.

If nothing changes at all, the wait lasts ``reaction_s``: an app may take a moment to start
reacting to a click, and acting before it did would act on a stale screen. How long that moment
is depends on the action (:func:`settle_for`): nothing reacts to a ``wait``, a pointer move only
repaints a hover highlight, a click or a typed key can open something.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from control.stop import StopLatch

GrayFrame = NDArray[np.uint8]

#: How long the screen must stay still after a change before it counts as settled. Bounded
#: below by bench/settle.py: a window animating every 40 ms on a loaded machine pauses up to
#: ~50 ms between frames, and a quiet window shorter than an app's pause acts mid-change.
QUIET_S = 0.1

#: How long before the wait may end the next screenshot starts being made from the last look
#: (an encode takes 6 ms at 1080p, 15-20 at 4K on this project's CI machine).
PREPARE_AHEAD_S = 0.03


@dataclass(frozen=True)
class SettleProfile:
    """How the wait after one kind of action goes (see :func:`settle_for`)."""

    #: How long an unchanged screen is given to start reacting. A change seen ends this
    #: wait early and starts the ``quiet_s`` one, which each further change extends.
    reaction_s: float
    quiet_s: float = QUIET_S


#: The reaction time per action kind (bench/README.md, "Step", has the measurements):
#:
#: * ``wait``: none. The wait itself was the app's time to react; its last ``quiet_s`` are
#:   watched by the detector instead of slept blind (app/agent.py), so a screen still changing
#:   at its end is still waited for.
#: * ``move``: 25 ms. A pointer's arrival repaints at most a hover highlight, in the next frame
#:   (16 ms at 60 Hz; the polls come every 10 ms until a change); tooltips and hover menus
#:   open after 400 ms or more, which the former 250 ms did not cover either (a ``wait``
#:   does). A highlight seen starts the full quiet window; one missed only leaves the model a
#:   screenshot without it.
#: * ``click``, ``type``, ``scroll``: 150 ms. A button, a field or a list repaints at once (the
#:   press, the caret, the characters): a change seen within that time ends the reaction wait
#:   and only the quiet window after the last change is waited for. An app that shows nothing
#:   for 150 ms after a click is slow to start (a page load, a program launching); the model
#:   sees the screen it left and can wait.
#: * ``double_click``, ``hotkey``, ``drag``: 250 ms, as before. They open files and programs,
#:   switch windows or drop things, the actions whose first repaint comes late.
#:
#: * ``update_plan``: none. The model writes its plan; nothing on the screen reacts.
#: * ``drag_to`` as ``drag``; ``hold_and_tap`` (a window switcher, tabs) as ``hotkey``.
#:
#: Anything else (a kind added later, ``key_down``, ``key_up``) gets the longest, the safe side.
REACTION_S: dict[str, float] = {
    "wait": 0.0,
    "update_plan": 0.0,
    "move": 0.025,
    "click": 0.15,
    "type": 0.15,
    "scroll": 0.15,
    "double_click": 0.25,
    "hotkey": 0.25,
    "drag": 0.25,
    "drag_to": 0.25,
    "hold_and_tap": 0.25,
}
DEFAULT_REACTION_S = 0.25


def settle_for(action_kind: str) -> SettleProfile:
    """The settle wait after an action of ``action_kind`` (a schema action's ``action``)."""
    return SettleProfile(REACTION_S.get(action_kind, DEFAULT_REACTION_S))


@dataclass(frozen=True)
class SettleResult:
    """How a wait went."""

    waited_s: float
    settled: bool  # False when max_s ran out with the screen still changing
    frames: int  # tiny frames grabbed
    changes: int = 0  # polls that saw a change
    last_change_s: float | None = None  # when the last change was seen, from the start
    last: GrayFrame | None = field(default=None, compare=False, repr=False)


def changed_cells(a: GrayFrame, b: GrayFrame, threshold: int) -> int:
    """How many cells differ by more than ``threshold`` (all of them if the sizes differ)."""
    if a.shape != b.shape:
        return int(max(a.size, b.size))
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16))
    return int(np.count_nonzero(diff > threshold))


def wait_until_settled(
    grab_small: Callable[[], GrayFrame],
    latch: StopLatch,
    *,
    min_s: float = 0.1,
    max_s: float = 3.0,
    quiet_s: float = QUIET_S,
    threshold: int = 8,
    min_cells: int = 1,
    reaction_s: float = DEFAULT_REACTION_S,
    poll_s: float = 0.025,
    first_poll_s: float = 0.01,
    fast_s: float = 0.06,
    before: GrayFrame | None = None,
    on_still: Callable[[], None] | None = None,
    looked_at: Callable[[], float] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] | None = None,
) -> SettleResult:
    """Poll ``grab_small`` until the screen has been still for ``quiet_s``.

    ``before`` is a tiny frame grabbed before the action, if the caller has one: a change that
    happened before the first poll is then seen too. Polls come every ``first_poll_s`` until a
    change is seen and for the first ``fast_s``, then every ``poll_s``. ``on_still`` is called
    after a look that saw no change when the wait may end within :data:`PREPARE_AHEAD_S`
    (control/settle_frames.py makes the next screenshot then). ``looked_at`` says when the
    last look read the screen (on ``clock``): a change seen dates from then, not from when
    the look was compared (3 ms later at 1080p, 12 at 4K), which still dates it no earlier
    than it happened. ``sleep`` defaults to
    ``latch.sleep``, so a stop raises :class:`~control.stop.StoppedError` at once; ``clock``
    and ``sleep`` are injectable for tests.
    """
    if not 0 <= min_s <= max_s:
        raise ValueError("need 0 <= min_s <= max_s")
    nap = sleep or latch.sleep
    latch.check()
    start = clock()
    looked = start  # when the last look began: the polls keep their period from look to look
    ref = grab_small()
    frames = 1
    changes = 0
    last_change = start
    saw_change = False
    if before is not None and changed_cells(before, ref, threshold) >= min_cells:
        saw_change = True
        changes = 1
        last_change = looked_at() if looked_at is not None else clock()
    current = ref
    still = not saw_change  # the last look saw no change
    while True:
        now = clock()
        elapsed = now - start
        # Unchanged so far: only the reaction time is owed (``min_s`` still applies). Changed:
        # the screen must then stay still for ``quiet_s``.
        needed = quiet_s if saw_change else reaction_s
        due = max(start + min_s, last_change + needed)  # settled then, if nothing changes
        if now >= due:
            return _result(elapsed, True, frames, changes, saw_change, last_change - start,
                           current)
        if elapsed >= max_s:
            return _result(elapsed, False, frames, changes, saw_change, last_change - start,
                           current)
        # Never past the moment it may return: the look taken then is the last one needed
        # (a fixed poll would overshoot it by up to ``poll_s``).
        # Until the first change, and in the first moments after the action, faster: the quiet
        # window runs from when a change is seen, and an app repaints in bursts right after an
        # input (the last typed keys a few ms after the first ones, seen already in ``before``):
        # seeing one 25 ms late would cost 25 ms every step. Later, the slower polls only need
        # to catch a further change.
        fast = not saw_change or elapsed < fast_s
        period = min(poll_s, first_poll_s) if fast else poll_s
        if still and on_still is not None and due - now <= max(period, PREPARE_AHEAD_S):
            on_still()
        nap(max(0.0, min(looked + period, due, start + max_s) - now))
        looked = clock()
        current = grab_small()
        frames += 1
        still = changed_cells(ref, current, threshold) < min_cells
        if not still:
            ref = current
            last_change = looked_at() if looked_at is not None else clock()
            saw_change = True
            changes += 1


def _result(elapsed: float, settled: bool, frames: int, changes: int, saw_change: bool,
            last_change_s: float, last: GrayFrame) -> SettleResult:
    return SettleResult(elapsed, settled, frames, changes,
                        last_change_s if saw_change else None, last)
