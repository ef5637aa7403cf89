"""The global hotkeys of this desktop: which :class:`~control.hotkeys.HotkeyListener` the app
and ``holodesk run`` use (its own module: it knows both kinds, which know nothing of it)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

from control.hotkeys import GrabFallback, HotkeyListener, PynputHotkeys
from control.hotkeys_x11 import GrabbedHotkeys

__all__ = ["system_hotkeys"]


def system_hotkeys(
    on_fallback: Callable[[GrabFallback], None] | None = None,
    *,
    platform: str = sys.platform,
    environ: Mapping[str, str] | None = None,
) -> HotkeyListener:
    """The global hotkeys of this desktop: reserved with X grabs on X11, so the press does not
    also reach the window in front, and listened for as well, so they fire while another
    program holds the keyboard (:class:`~control.hotkeys_x11.GrabbedHotkeys`, which calls
    ``on_fallback``, maybe from its own thread, for a combination it can only listen for);
    only listened for elsewhere."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    if platform.startswith("linux") and env.get("DISPLAY"):
        return GrabbedHotkeys(display=env["DISPLAY"], on_fallback=on_fallback)
    return PynputHotkeys()
