"""The demo model's planners for `holodesk eval`'s task windows (app/demo/task_look.py), one
module each; :func:`route` picks the one whose window the screenshot shows whole.

Each plans one step from the pixels (and, for the first six, the task's words: the zoom level,
the invoice, the boxes to tick, the number), never from a script, as
:func:`app.demo.model.plan` does for the practice window: it finds its window by its frame
colour, reads the state marks, and points at the part the next step needs, in norm1000 of the
image sent. What it cannot see it says, and does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.demo.look import RGB, Screenshot
from app.demo.plans import (
    contacts,
    copies,
    delivery,
    drag,
    editor,
    export,
    files,
    invoices,
    menu,
    order,
    prefs,
    settings,
)
from app.demo.task_look import BORDERS, TaskWindow

#: A planner: the next step for the screenshot and the task's words.
Planner = Callable[[Screenshot, str], dict[str, Any]]


def _framed(planner: Callable[..., dict[str, Any]], border: RGB) -> Planner:
    """A planner of the first six windows, given the window its border frames."""
    def plan(shot: Screenshot, goal: str) -> dict[str, Any]:
        window = shot.window(border)
        assert window is not None  # route picks it only when the window shows whole
        return planner(shot, window, goal)
    return plan


def _unframed(planner: Callable[[Screenshot], dict[str, Any]]) -> Planner:
    return lambda shot, _goal: planner(shot)


_FRAMED = {TaskWindow.MENU: menu.plan, TaskWindow.DRAG: drag.plan,
           TaskWindow.INVOICES: invoices.plan, TaskWindow.SETTINGS: settings.plan,
           TaskWindow.COPIES: copies.plan, TaskWindow.PREFS: prefs.plan}

#: Each planner with the border colours of its windows (a task of two windows has two).
PLANNERS: tuple[tuple[tuple[RGB, ...], Planner], ...] = (
    *(((BORDERS[kind],), _framed(plan, BORDERS[kind])) for kind, plan in _FRAMED.items()),
    (editor.BORDERS, _unframed(editor.plan)),
    (order.BORDERS, _unframed(order.plan)),
    (export.BORDERS, _unframed(export.plan)),
    (files.BORDERS, _unframed(files.plan)),
    (contacts.BORDERS, _unframed(contacts.plan)),
    (delivery.BORDERS, _unframed(delivery.plan)),
)


def route(shot: Screenshot, goal: str = "") -> dict[str, Any] | None:
    """The next step in the task window ``shot`` shows whole (for a task of two windows: one of
    them whole, the planner then refuses unless both are), or None when it shows none.

    A window only partly in view picks no planner: some pixels of a border's colour are no
    proof of that window (another application may show that colour), and the demo model then
    answers that it cannot see its window, doing nothing.
    """
    for borders, planner in PLANNERS:
        if any(shot.window(border) is not None for border in borders):
            return planner(shot, goal)
    return None
