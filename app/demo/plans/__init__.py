"""The demo model's planners for the task windows of `holodesk eval` (app/demo/task_look.py),
one module each; :func:`route` picks the one whose window's frame the screenshot shows.

Each plans one step from the pixels and the task's words (the zoom level, the invoice, the
boxes to tick, the number), never from a script: what it cannot see it says, and does nothing.
"""

from __future__ import annotations

from typing import Any

from app.demo.look import Screenshot
from app.demo.plans import copies, drag, invoices, menu, prefs, settings
from app.demo.task_look import BORDERS, TaskWindow


def route(shot: Screenshot, goal: str) -> dict[str, Any] | None:
    """The next step in the task window ``shot`` shows whole, or None when it shows none."""
    planners = {TaskWindow.MENU: menu.plan, TaskWindow.DRAG: drag.plan,
                TaskWindow.INVOICES: invoices.plan, TaskWindow.SETTINGS: settings.plan,
                TaskWindow.COPIES: copies.plan, TaskWindow.PREFS: prefs.plan}
    for kind, border in BORDERS.items():
        window = shot.window(border)
        if window is not None:
            return planners[kind](shot, window, goal)
    return None
