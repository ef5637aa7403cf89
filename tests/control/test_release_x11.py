"""control/release.py on a private Xvfb: what a killed process left pressed is released.

A process that presses through XTest and is then SIGKILLed releases nothing: the X server keeps
its button and Shift down (checked first, so the test proves the need as well as the fix).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from Xlib import XK, X
from Xlib import display as xdisplay

from control.release import Released, X11Releaser, release_everything
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

# Presses button 1 and Shift through XTest, says Shift's keycode, then waits to be killed.
_PRESS_AND_HANG = (
    "import signal, sys\n"
    "from Xlib import X, XK, display\n"
    "from Xlib.ext import xtest\n"
    "d = display.Display()\n"
    "shift = d.keysym_to_keycode(XK.string_to_keysym('Shift_L'))\n"
    "xtest.fake_input(d, X.ButtonPress, 1)\n"
    "xtest.fake_input(d, X.KeyPress, shift)\n"
    "d.sync()\n"
    "print(shift, flush=True)\n"
    "signal.pause()\n"
)


@dataclass(frozen=True)
class Held:
    keys: list[int]
    buttons: list[int]


def held(xvfb: Xvfb) -> Held:
    """What the X server holds down now: keycodes (XQueryKeymap), buttons (pointer mask)."""
    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)
        try:
            keymap = d.query_keymap()
            mask = d.screen().root.query_pointer().mask
        finally:
            d.close()
    keys = [i * 8 + bit for i, byte in enumerate(keymap) for bit in range(8) if byte >> bit & 1]
    return Held(keys, [n for n in range(1, 6) if mask & (X.Button1Mask << (n - 1))])


def shift_keycode(xvfb: Xvfb) -> int:
    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)
        try:
            return int(d.keysym_to_keycode(XK.string_to_keysym("Shift_L")))
        finally:
            d.close()


@pytest.fixture
def killed_mid_press(xvfb: Xvfb) -> Iterator[int]:
    """A process pressed button 1 and Shift and was SIGKILLed; yields Shift's keycode."""
    proc = subprocess.Popen([sys.executable, "-c", _PRESS_AND_HANG], env=xvfb.env(),
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        shift = int(proc.stdout.readline())  # pressed and synced
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        yield shift
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        with xvfb.activated():  # whatever the test did, the next one starts with nothing held
            X11Releaser(xvfb.display).release_everything()


def test_what_a_killed_process_left_pressed_is_released(xvfb: Xvfb,
                                                         killed_mid_press: int) -> None:
    shift = killed_mid_press
    before = held(xvfb)
    assert before.buttons == [1] and shift in before.keys, "the kill released them itself"
    with xvfb.activated():
        released = X11Releaser(xvfb.display).release_everything()
    assert released.buttons == (1,)
    assert shift in released.keys
    assert held(xvfb) == Held([], [])


def test_the_run_start_entry_point_releases_on_the_display_of_the_environment(
    xvfb: Xvfb, killed_mid_press: int
) -> None:
    with xvfb.activated():
        released = release_everything("linux")
    assert released is not None and 1 in released.buttons
    assert held(xvfb) == Held([], [])


def test_nothing_held_means_nothing_sent(xvfb: Xvfb) -> None:
    assert held(xvfb) == Held([], [])
    with xvfb.activated():
        released = X11Releaser(xvfb.display).release_everything()
    assert released == Released()
    assert not released


#: The right-hand modifiers, by their X keysyms (pyautogui presses AltGr as Alt_R).
RIGHT_HAND = ["Shift_R", "Control_R", "Alt_R", "Super_R"]


def keycodes(xvfb: Xvfb, keysyms: list[str]) -> list[int]:
    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)
        try:
            return [int(d.keysym_to_keycode(XK.string_to_keysym(name))) for name in keysyms]
        finally:
            d.close()


def test_right_hand_modifiers_and_every_button_left_down_are_released(xvfb: Xvfb) -> None:
    codes = keycodes(xvfb, RIGHT_HAND)
    assert all(codes), dict(zip(RIGHT_HAND, codes, strict=True))  # each is on this keymap
    try:
        # xdotool presses through XTest and exits: the server keeps it all down.
        subprocess.run(["xdotool", "keydown", *RIGHT_HAND, "mousedown", "1", "mousedown", "2",
                        "mousedown", "3"], env=xvfb.env(), check=True, timeout=30)
        before = held(xvfb)
        assert set(codes) <= set(before.keys) and before.buttons == [1, 2, 3]
        with xvfb.activated():
            released = release_everything("linux")
        assert released is not None
        assert set(codes) <= set(released.keys) and released.buttons == (1, 2, 3)
        assert held(xvfb) == Held([], [])
    finally:
        with xvfb.activated():
            X11Releaser(xvfb.display).release_everything()


def test_keys_a_killed_run_held_by_key_down_are_released(xvfb: Xvfb, tmp_path: Path) -> None:
    # The real executor holds Ctrl and Super by key_down actions (issue 22) and its process is
    # killed outright between steps: nothing of it releases them; the next run's start does.
    from tests.support.fixtures import InputWorker

    codes = keycodes(xvfb, ["Control_L", "Super_L"])
    worker = InputWorker(xvfb, tmp_path)
    try:
        for key in ("ctrl", "super"):
            reply = worker.execute({"action": "key_down", "key": key})
            assert reply["ok"], reply
        worker.proc.send_signal(signal.SIGKILL)
        worker.proc.wait(10)
        assert set(codes) <= set(held(xvfb).keys), "the kill released them itself"
        with xvfb.activated():
            released = release_everything("linux")
        assert released is not None and set(codes) <= set(released.keys)
        assert held(xvfb) == Held([], [])
    finally:
        worker.close()
        with xvfb.activated():
            X11Releaser(xvfb.display).release_everything()
