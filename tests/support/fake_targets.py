"""A target finder that answers what the test says: the focused window and windows by area."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace

from control.procfs import TerminalSign
from control.target import Target
from model.coords import Rect

_IDS = itertools.count(0x400001)


def window(name: str, *, inside: str = "", title: str = "", own: bool = False,
           rect: Rect | None = None, window_id: int | None = None,
           terminal: TerminalSign | None = None, dialog: bool = False,
           menu: bool | None = None) -> Target:
    """A found window of the application ``name`` (its class, instance and process); each
    call makes another window (its own id) unless ``window_id`` says which. ``terminal`` is
    what the finder found its processes hold (None: nothing that makes it a terminal);
    ``dialog`` says the window is a dialog (its type, or transient for another); ``menu``
    whether the finder saw a menu shown on the screen (None: it cannot tell)."""
    wid = next(_IDS) if window_id is None else window_id
    return Target(window=wid, wm_instance=name.lower(), wm_class=name, title=title or name,
                  pid=4242, process=name.lower(), inside=inside, own=own, rect=rect,
                  terminal=terminal, dialog=dialog, menu=menu)


def terminal(name: str, *, inside: str = "bash", title: str = "",
             sign: TerminalSign = TerminalSign.PTY_MASTER, rect: Rect | None = None) -> Target:
    """A window whose process holds a terminal (by default a pty master with ``inside`` in
    front), whatever ``name`` it goes by."""
    return window(name, inside=inside, title=title, rect=rect, terminal=sign)


XTERM = terminal("XTerm", inside="bash", title="bash")
FIREFOX = window("Firefox", title="Search - Mozilla Firefox")
NAUTILUS = window("org.gnome.Nautilus", title="Home")
NOTHING = Target(note="no window found")


class FakeTargetFinder:
    """``focus`` receives keys; ``placed`` windows (bottom to top) answer ``at``; anything
    else under a point is ``below`` (by default no window)."""

    def __init__(self, focus: Target = NOTHING, placed: Sequence[Target] = (),
                 below: Target = NOTHING) -> None:
        self.focus = focus
        self.placed = list(placed)
        self.below = below
        self.asked: list[tuple[str, tuple[int, ...]]] = []

    def focused(self) -> Target:
        self.asked.append(("focused", ()))
        return self.focus

    def at(self, x: int, y: int) -> Target:
        self.asked.append(("at", (x, y)))
        for t in reversed(self.placed):
            r = t.rect
            if r is not None and r.left <= x < r.right and r.top <= y < r.top + r.height:
                return t
        return self.below

    def windows(self) -> Sequence[Target]:
        return list(self.placed)

    def activate(self, target: Target) -> bool:
        self.asked.append(("activate", (target.window,)))
        self.focus = target
        return True

    def focus_on(self, target: Target) -> None:
        self.focus = target

    def placed_at(self, target: Target, rect: Rect) -> Target:
        placed = replace(target, rect=rect)
        self.placed.append(placed)
        return placed
