"""The practice window `holodesk demo` drives: its own process, its own window class."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

#: How often a practice window checks that the holodesk that started it still runs (ms).
PARENT_CHECK_MS = 500


def orphaned(parent: int) -> bool:
    """Whether the process that started this window is gone (this one was handed to another
    parent): a window left behind by a holodesk killed outright would keep the window class a
    later run may act in, so it closes itself."""
    return os.getppid() != parent


def when_drawn(windows: Sequence[Any], then: Callable[[], None]) -> None:
    """Call ``then`` once every Tk window of ``windows`` (the first one the root) is mapped and
    drawn: a condition, not a delay. Each window's <Map> checks; once all are viewable,
    ``update`` handles every pending event and redraw (children mapped, exposed and painted)
    and syncs with the X server, so a screenshot taken after ``then`` shows the whole window,
    never its frame before its widgets."""
    done = False

    def check() -> None:
        nonlocal done
        if done or not all(w.winfo_viewable() == 1 for w in windows):
            return
        done = True
        windows[0].update()
        then()

    for window in windows:
        # After idle: Tk sets a window's mapped flags as it handles the event.
        window.bind("<Map>", lambda _e: windows[0].after_idle(check), add="+")
    windows[0].after_idle(check)
