"""Releasing whatever is left pressed, by any process: run at the start of every real run.

:meth:`control.input.Executor.release_all` releases what *this* process pressed. A process
that is killed outright (SIGKILL, a crash of the interpreter, a power-cut session) releases
nothing, and the window system keeps its button or modifiers down: the next run's first click
would then continue the dead run's drag, or land with Shift held. So before a run drives the
desktop, :func:`release_everything` releases every key and mouse button the window system
holds down, whoever pressed them.

It does release keys the person is holding at that moment (an automation's hotkey still held
as its run starts, say): at the start of a run that is acceptable, since holodesk is about to
take the keyboard and mouse anyway. How much of that is seen depends on the platform; each
:class:`Releaser` says what it covers.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger(__name__)

#: The core protocol's button masks stop at button 5 (wheel clicks 4 and 5 are press+release).
_CORE_BUTTONS = range(1, 6)

#: The keys pyautogui can release outside X11: every modifier under each of its names.
_MODIFIERS: tuple[str, ...] = (
    "shift", "shiftleft", "shiftright", "ctrl", "ctrlleft", "ctrlright", "alt", "altleft",
    "altright", "win", "winleft", "winright", "option", "optionleft", "optionright", "command",
    "fn",
)
_BUTTONS: tuple[str, ...] = ("left", "middle", "right")


@dataclass(frozen=True)
class Released:
    """What a :class:`Releaser` released: X11 keycodes (or key names elsewhere) and buttons
    (X11 button numbers, or pyautogui button names elsewhere)."""

    keys: tuple[int | str, ...] = ()
    buttons: tuple[int | str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.keys or self.buttons)


class Releaser(Protocol):
    """Releases every key and mouse button held down on the desktop."""

    def release_everything(self) -> Released:
        """Release them all; raises when the window system cannot be reached."""
        ...


class X11Releaser:
    """Asks the X server what is down (``XQueryKeymap``; the pointer's button mask) and releases
    each of them through XTest, then waits until the server has processed the releases.

    Exact on X11: only what is down gets a release, nothing else is sent. What a killed
    holodesk (or xdotool, or any XTest client) left down is released. The releases go through
    the XTest device, and the X server tracks each device's keys apart, so a key the person
    holds on a real keyboard is expected to stay down as long as they hold it; the tests cannot
    show that (Xvfb has no second keyboard), so count on no more than the module says.
    """

    def __init__(self, display_name: str | None = None) -> None:
        self.display_name = display_name

    def release_everything(self) -> Released:
        from Xlib import X
        from Xlib import display as xdisplay
        from Xlib.ext import xtest

        display = xdisplay.Display(self.display_name)
        try:
            if not display.has_extension("XTEST"):
                raise RuntimeError("the X server has no XTEST extension")
            keymap = display.query_keymap()  # 32 bytes: one bit per keycode
            keys = tuple(index * 8 + bit for index, byte in enumerate(keymap)
                         for bit in range(8) if byte >> bit & 1)
            mask = display.screen().root.query_pointer().mask
            buttons = tuple(n for n in _CORE_BUTTONS if mask & (X.Button1Mask << (n - 1)))
            # Buttons first, as the executor does: a drag ends with its modifiers still held.
            for button in buttons:
                xtest.fake_input(display, X.ButtonRelease, button)
            for keycode in keys:
                xtest.fake_input(display, X.KeyRelease, keycode)
            display.sync()  # processed before the run's own input (or its touch watch) starts
        finally:
            display.close()
        return Released(keys=keys, buttons=buttons)


class PyAutoGuiReleaser:
    """Windows and macOS: a release (``keyUp``, ``mouseUp``) for every modifier and mouse
    button pyautogui knows, whether down or not, since pyautogui cannot ask what is down.

    What it cannot cover: other keys left down (a letter, Enter: pyautogui holds them only
    inside one action, so only a kill in that instant leaves one), buttons beyond left, middle
    and right, and what the system has already turned into a repeat or a drag. A stray release
    of a button that was up may reach the window under the pointer; applications ignore an up
    without its down.
    """

    def release_everything(self) -> Released:
        from control.pyautogui_loader import load_pyautogui

        pyautogui = load_pyautogui()

        keys = tuple(key for key in _MODIFIERS if pyautogui.isValidKey(key))
        # Releasing is safe anywhere: a pointer resting in a fail-safe corner must not stop it.
        saved = pyautogui.FAILSAFE
        pyautogui.FAILSAFE = False
        try:
            for button in _BUTTONS:
                pyautogui.mouseUp(button=button, _pause=False)
            for key in keys:
                pyautogui.keyUp(key, _pause=False)
        finally:
            pyautogui.FAILSAFE = saved
        return Released(keys=keys, buttons=_BUTTONS)


def releaser(platform: str = sys.platform) -> Releaser:
    """The releaser for this platform: X11 on Linux, pyautogui elsewhere."""
    if platform.startswith("linux"):
        return X11Releaser(os.environ.get("DISPLAY"))
    return PyAutoGuiReleaser()


def release_everything(platform: str = sys.platform) -> Released | None:
    """Release every key and mouse button held down on the desktop; never raises.

    None when it could not (logged): the run goes on, its own input still works, and a key
    left down by a killed run is then the person's to release.
    """
    try:
        released = releaser(platform).release_everything()
    except Exception:
        log.warning("could not release the keys and buttons left pressed", exc_info=True)
        return None
    if released:
        log.info("released what was left pressed: keys %s, buttons %s",
                 list(released.keys), list(released.buttons))
    return released
