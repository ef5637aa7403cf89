"""The practice window `holodesk demo` drives: its own process, its own window class."""

from __future__ import annotations

import os

#: How often a practice window checks that the holodesk that started it still runs (ms).
PARENT_CHECK_MS = 500


def orphaned(parent: int) -> bool:
    """Whether the process that started this window is gone (this one was handed to another
    parent): a window left behind by a holodesk killed outright would keep the window class a
    later run may act in, so it closes itself."""
    return os.getppid() != parent
