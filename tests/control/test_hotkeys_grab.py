"""How a combination becomes X grabs, and which listener the desktop gets (no display needed;
the grabs themselves are tested on Xvfb in test_hotkeys_grab_x11.py)."""

from __future__ import annotations

import pytest

from control.hotkeys import FallbackKind, GrabFallback, PynputHotkeys, parse_combo
from control.hotkeys_desktop import system_hotkeys
from control.hotkeys_x11 import (
    CONTROL_MASK,
    LOCK_MASK,
    MOD_MASKS,
    SHIFT_MASK,
    CannotGrab,
    GrabbedHotkeys,
    KeyboardMasks,
    PressPairing,
    PressPath,
    grab_plan,
)
from control.keys import x11_keysym_name

MOD1, MOD2, MOD4 = MOD_MASKS[0], MOD_MASKS[1], MOD_MASKS[3]
USUAL = KeyboardMasks()  # Alt on Mod1, Num Lock on Mod2, Super on Mod4, no Scroll Lock


def test_the_stop_hotkey_is_grabbed_under_every_lock_state_and_with_more_held() -> None:
    plan = grab_plan(parse_combo("ctrl+alt+shift+escape"), USUAL)
    state = CONTROL_MASK | MOD1 | SHIFT_MASK
    assert plan.keysym_name == "Escape"
    assert plan.state == state
    assert plan.exact == tuple(sorted({state, state | LOCK_MASK, state | MOD2,
                                       state | LOCK_MASK | MOD2}))
    # Super held as well still stops (as the listener did): four more grabs.
    assert plan.extra == tuple(sorted(s | MOD4 for s in plan.exact))


def test_a_lone_f_key_is_grabbed_with_any_modifiers_but_never_without_itself() -> None:
    plan = grab_plan(parse_combo("f9"), USUAL)
    assert plan.keysym_name == "F9" and plan.state == 0
    assert len(plan.exact) == 4 and 0 in plan.exact
    assert len(plan.extra) == 15 * 4  # every non-empty set of Ctrl, Alt, Shift, Super
    assert all(s & (CONTROL_MASK | MOD1 | SHIFT_MASK | MOD4) for s in plan.extra)


def test_what_one_grab_cannot_express_is_said() -> None:
    with pytest.raises(CannotGrab, match="one key besides"):
        grab_plan(parse_combo("ctrl+alt+a+b"), USUAL)
    with pytest.raises(CannotGrab, match="no Super modifier"):
        grab_plan(parse_combo("ctrl+super+k"), KeyboardMasks(super=0))


@pytest.mark.parametrize(("key", "name"), [
    ("escape", "Escape"), ("pagedown", "Next"), ("f12", "F12"), ("1", "1"), ("k", "k"),
    ("printscreen", "Print"), ("enter", "Return"), ("é", None), ("power", None),
])
def test_keysym_names(key: str, name: str | None) -> None:
    assert x11_keysym_name(key) == name


def test_x11_gets_grabs_and_other_desktops_the_listener() -> None:
    told: list[GrabFallback] = []
    on_x11 = system_hotkeys(told.append, platform="linux", environ={"DISPLAY": ":99"})
    assert isinstance(on_x11, GrabbedHotkeys) and on_x11.display_name == ":99"
    assert isinstance(system_hotkeys(platform="linux", environ={}), PynputHotkeys)
    assert isinstance(system_hotkeys(platform="darwin", environ={"DISPLAY": ":0"}),
                      PynputHotkeys)


def test_the_fallback_message_is_plain() -> None:
    message = GrabFallback("ctrl+alt+1", "another program already uses it").message
    assert message.startswith("The hotkey Ctrl+Alt+1 could not be reserved")
    assert "still work" in message and "window in front" in message


def test_what_is_said_when_the_listener_or_the_grab_is_missing_is_plain() -> None:
    deaf = GrabFallback("ctrl+alt+1", "the hotkey listener did not start",
                        FallbackKind.RESERVED).message
    assert deaf.startswith("The hotkey Ctrl+Alt+1 won't fire while another program holds "
                           "the keyboard")
    gone = GrabFallback("ctrl+alt+1", "holodesk lost its reservation with the X server",
                        FallbackKind.STOPPED).message
    assert gone.startswith("The hotkey Ctrl+Alt+1 stopped working") and \
        gone.endswith("restart holodesk.")
    assert not any("`" in m or "--" in m for m in (deaf, gone))


def test_without_an_x_server_start_says_why() -> None:
    from control.hotkeys import ListenerError

    hotkeys = GrabbedHotkeys(display="unix:/nonexistent/socket:57", ready_timeout=10)
    hotkeys.register("ctrl+alt+shift+escape", lambda: None)
    with pytest.raises(ListenerError, match="global hotkeys are unavailable"):
        hotkeys.start()
    hotkeys.stop()  # harmless after a failed start


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_each_press_fires_once_whichever_path_reports_it_first() -> None:
    clock = _Clock()
    pairing = PressPairing(within=2.0, clock=clock)
    grab, listener = PressPath.GRAB, PressPath.RECORD
    fires = [pairing.first("stop", path) for path in (
        grab, listener,  # one press: the grab first
        listener, grab,  # the next: the listener first
        grab, grab, listener, listener,  # two quick presses, the listener late
    )]
    assert fires == [True, False, True, False, True, True, False, False]
    assert pairing.first("other", PressPath.RECORD)  # combinations are paired apart


def test_a_press_only_the_listener_hears_fires_and_the_next_still_fires_once() -> None:
    clock = _Clock()
    pairing = PressPairing(within=2.0, clock=clock)
    # Another program holds the keyboard: the grab hears nothing, every press fires.
    assert [pairing.first("stop", PressPath.RECORD) for _ in range(2)] == [True, True]
    clock.now += 0.5
    # It let go: the next press's grab report pairs with an earlier one, its own
    # listener's report then fires; still one call for the press.
    assert [pairing.first("stop", PressPath.GRAB), pairing.first("stop", PressPath.RECORD)] == \
        [False, True]
    clock.now += 2.1  # unpaired reports expire: a later press is new on either path
    assert pairing.first("stop", PressPath.GRAB)
    assert not pairing.first("stop", PressPath.RECORD)
