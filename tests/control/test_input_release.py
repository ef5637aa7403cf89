"""What the executor holds is released after a stop or an error, for every modifier of either
hand and every mouse button (no display: the dry-run backend records each primitive).

The model may write a right-hand modifier under many names (altright, AltGr, Alt_R, super_r,
...); each is pressed as the platform's own key and must come up again under that name.
tests/control/test_input_x11.py holds the same for the real backend on Xvfb.
"""

from __future__ import annotations

from typing import Any

import pytest

from control.input import DryRunBackend, Executor, InputTiming
from control.keys import normalize_hotkey
from control.stop import StopLatch, StoppedError
from model.coords import Point
from model.schema import ACTION_ADAPTER, Action

NO_WAIT = InputTiming(after_move_s=0, char_interval_s=0, key_interval_s=0, drag_hold_s=0,
                      drag_steps=2, drag_step_s=0, scroll_step_s=0, before_drop_s=0)
PLATFORMS = ["linux", "win32", "darwin"]
#: Right-hand modifiers in the spellings a model writes.
RIGHT_HAND = ["altright", "ctrlright", "shiftright", "winright", "optionright", "altgr",
              "Alt_R", "Control_R", "Shift_R", "Super_R", "cmd_r"]
BUTTONS = ["left", "middle", "right"]


def act(**fields: Any) -> Action:
    return ACTION_ADAPTER.validate_python(fields)


def dry(platform: str) -> tuple[Executor, DryRunBackend, StopLatch]:
    latch = StopLatch()
    backend = DryRunBackend()
    return Executor(backend, latch, timing=NO_WAIT, platform=platform), backend, latch


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("modifier", RIGHT_HAND)
def test_a_right_hand_modifier_held_at_a_stop_is_released(platform: str, modifier: str) -> None:
    ex, be, latch = dry(platform)
    (pressed, _x) = normalize_hotkey([modifier, "x"], platform)

    def hook(call: Any) -> None:
        if call.name == "key_down" and call.args == (pressed,):
            latch.stop("user", "mid-hotkey")

    be.hook = hook
    with pytest.raises(StoppedError):
        ex.execute(act(action="hotkey", keys=[modifier, "x"]))
    assert [str(c) for c in be.calls] == [f"key_down({pressed!r})", f"key_up({pressed!r})"]
    assert ex.held_keys == ()


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("modifier", RIGHT_HAND)
def test_a_right_hand_modifier_held_at_an_error_is_released(platform: str, modifier: str) -> None:
    ex, be, _latch = dry(platform)
    (pressed, _x) = normalize_hotkey([modifier, "x"], platform)

    def hook(call: Any) -> None:
        if call.name == "key_down" and call.args == ("x",):
            raise OSError("display went away")

    be.hook = hook
    with pytest.raises(OSError):
        ex.execute(act(action="hotkey", keys=[modifier, "x"]))
    # "x" may have gone down before the error: both come up, last pressed first.
    assert [str(c) for c in be.calls[-2:]] == ["key_up('x')", f"key_up({pressed!r})"]
    assert ex.held_keys == ()


@pytest.mark.parametrize("button", BUTTONS)
def test_a_button_held_at_a_stop_or_an_error_is_released(button: str) -> None:
    click = act(action="click", element="b", x=0, y=0, button=button)
    ex, be, latch = dry("linux")

    def stop(call: Any) -> None:
        if call.name == "mouse_down":
            latch.stop("user", "mid-click")

    be.hook = stop
    with pytest.raises(StoppedError):
        ex.execute(click, [Point(5, 5)])
    assert [str(c) for c in be.calls[1:]] == [f"mouse_down({button!r})", f"mouse_up({button!r})"]
    assert ex.held_buttons == ()

    ex, be, _latch = dry("linux")

    def fail(call: Any) -> None:
        if call.name == "mouse_down":
            raise OSError("display went away")  # it may have gone down half-way

    be.hook = fail
    with pytest.raises(OSError):
        ex.execute(click, [Point(5, 5)])
    assert [str(c) for c in be.calls[1:]] == [f"mouse_down({button!r})", f"mouse_up({button!r})"]
    assert ex.held_buttons == ()
