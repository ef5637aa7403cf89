"""Executing H's tool vocabulary (issue 22) on the dry-run backend: keys held across actions by
``key_down`` until their ``key_up`` or the end of the run, hold-and-tap released whatever
happens, a chord's repeats stoppable between presses, a drag from the pointer. Nothing stays
pressed after any exit (tests/control/test_input_x11.py holds the same on Xvfb)."""

from __future__ import annotations

from typing import Any

import pytest

from control.input import DryRunBackend, Executor, InputError, InputTiming
from control.stop import StopLatch, StoppedError
from model.coords import Point
from model.schema import ACTION_ADAPTER, Action

NO_WAIT = InputTiming(after_move_s=0, char_interval_s=0, key_interval_s=0, drag_hold_s=0,
                      drag_steps=2, drag_step_s=0, scroll_step_s=0, before_drop_s=0)


def act(**fields: Any) -> Action:
    return ACTION_ADAPTER.validate_python(fields)


def dry() -> tuple[Executor, DryRunBackend, StopLatch]:
    latch = StopLatch()
    backend = DryRunBackend()
    return Executor(backend, latch, timing=NO_WAIT, platform="linux"), backend, latch


def calls(be: DryRunBackend) -> list[str]:
    return [str(c) for c in be.calls]


def test_a_key_down_stays_down_across_actions_until_its_key_up() -> None:
    ex, be, _ = dry()
    ex.execute(act(action="key_down", key="Control_L"))
    assert ex.sticky_keys == ("ctrlleft",) and ex.held_keys == ()
    ex.execute(act(action="hotkey", keys=["ctrl", "s"]))  # ctrl is down already
    ex.execute(act(action="type", text="a"))
    ex.execute(act(action="key_up", key="ctrl"))  # either side releases it
    assert calls(be) == ["key_down('ctrlleft')", "key_down('s')", "key_up('s')",
                         "key_down('a')", "key_up('a')", "key_up('ctrlleft')"]
    assert ex.sticky_keys == ()


def test_a_second_key_down_of_a_held_key_and_a_key_up_of_none_do_nothing() -> None:
    ex, be, _ = dry()
    ex.execute(act(action="key_down", key="shift"))
    ex.execute(act(action="key_down", key="Shift"))
    ex.execute(act(action="key_up", key="alt"))
    assert calls(be) == ["key_down('shift')"]
    ex.release_all()
    assert calls(be)[-1] == "key_up('shift')" and ex.sticky_keys == ()


def test_typing_with_shift_held_presses_each_characters_own_key() -> None:
    # Typing "A" as usual would press and release Shift around it, releasing the held one.
    ex, be, _ = dry()
    ex.execute(act(action="key_down", key="shift"))
    ex.execute(act(action="type", text="aB!\n", clear_first=True))
    assert "key_up('shift')" not in calls(be)
    assert [c for c in calls(be) if c.startswith("key_down")] == [
        "key_down('shift')", "key_down('ctrl')", "key_down('a')", "key_down('backspace')",
        "key_down('a')", "key_down('b')", "key_down('1')", "key_down('enter')"]
    assert ex.sticky_keys == ("shift",)


def test_pasted_text_is_refused_before_any_input_while_keys_are_held() -> None:
    ex, be, _ = dry()
    ex.execute(act(action="key_down", key="shift"))
    with pytest.raises(InputError):
        ex.execute(act(action="type", text="caf\u00e9"))
    # A failed action releases the held keys too.
    assert calls(be) == ["key_down('shift')", "key_up('shift')"]
    assert ex.sticky_keys == ()


@pytest.mark.parametrize("ending", ["stop", "error"])
def test_keys_held_by_key_down_are_released_when_a_later_action_stops_or_fails(
        ending: str) -> None:
    ex, be, latch = dry()
    ex.execute(act(action="key_down", key="alt"))
    ex.execute(act(action="key_down", key="ctrl"))

    def hook(call: Any) -> None:
        if call.name == "key_down" and call.args == ("x",):
            if ending == "stop":
                latch.stop("user", "mid-action")
            else:
                raise OSError("display went away")

    be.hook = hook
    with pytest.raises(StoppedError if ending == "stop" else OSError):
        ex.execute(act(action="type", text="xyz"))
    assert ex.sticky_keys == () and ex.held_keys == ()
    ups = [c for c in calls(be) if c.startswith("key_up")]
    assert set(ups) >= {"key_up('alt')", "key_up('ctrl')"}


def test_a_stop_before_an_action_releases_the_held_keys() -> None:
    ex, be, latch = dry()
    ex.execute(act(action="key_down", key="super"))
    latch.stop("user", "between steps")
    with pytest.raises(StoppedError):
        ex.execute(act(action="wait", seconds=0))
    assert calls(be) == ["key_down('win')", "key_up('win')"] and ex.sticky_keys == ()


def test_hold_and_tap_releases_the_hold_after_the_taps() -> None:
    ex, be, _ = dry()
    ex.execute(act(action="hold_and_tap", hold=["alt"], tap=["tab", "tab"]))
    assert calls(be) == ["key_down('alt')", "key_down('tab')", "key_up('tab')",
                         "key_down('tab')", "key_up('tab')", "key_up('alt')"]


def test_hold_and_tap_stopped_between_taps_releases_the_hold() -> None:
    ex, be, latch = dry()

    def hook(call: Any) -> None:
        if str(call) == "key_up('tab')":
            latch.stop("user", "between taps")

    be.hook = hook
    with pytest.raises(StoppedError):
        ex.execute(act(action="hold_and_tap", hold=["ctrl", "shift"], tap=["tab"] * 5))
    assert calls(be) == ["key_down('ctrl')", "key_down('shift')", "key_down('tab')",
                         "key_up('tab')", "key_up('shift')", "key_up('ctrl')"]
    assert ex.held_keys == ()


def test_hold_and_tap_with_an_unknown_key_presses_nothing() -> None:
    ex, be, _ = dry()
    with pytest.raises(ValueError):
        ex.execute(act(action="hold_and_tap", hold=["alt"], tap=["tab", "nosuchkey"]))
    assert be.calls == []


def test_a_repeated_chord_is_pressed_that_many_times_and_stops_between_presses() -> None:
    ex, be, latch = dry()
    ex.execute(act(action="hotkey", keys=["down"], repeat=3))
    assert calls(be) == ["key_down('down')", "key_up('down')"] * 3
    be.calls.clear()
    presses = 0

    def hook(call: Any) -> None:
        nonlocal presses
        if call.name == "key_up":
            presses += 1
            if presses == 2:
                latch.stop("user", "between presses")

    be.hook = hook
    with pytest.raises(StoppedError):
        ex.execute(act(action="hotkey", keys=["ctrl", "tab"], repeat=20))
    assert presses == 2 and ex.held_keys == ()


def test_drag_to_drags_from_the_start_it_was_given_or_from_the_pointer() -> None:
    ex, be, _ = dry()
    be.pointer = (5, 6)
    ex.execute(act(action="drag_to", element="file", x=0, y=0), (Point(40, 60),))
    assert calls(be)[:2] == ["move_to(5, 6)", "mouse_down('left')"]
    assert calls(be)[-2:] == ["move_to(40, 60)", "mouse_up('left')"]
    be.calls.clear()
    # The agent passes the start the person was shown: the pointer moving meanwhile (to the
    # confirmation's Approve button) changes nothing.
    be.pointer = (900, 700)
    ex.execute(act(action="drag_to", element="file", x=0, y=0), (Point(5, 6), Point(40, 60)))
    assert calls(be)[:2] == ["move_to(5, 6)", "mouse_down('left')"]
    assert ex.pointer() == Point(40, 60)


def test_a_plan_does_nothing() -> None:
    ex, be, _ = dry()
    ex.execute(act(action="update_plan", goals=[{"title": "a"}]))
    assert be.calls == []
