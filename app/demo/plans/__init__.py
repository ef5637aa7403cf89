"""The demo model's planners for `holodesk eval`'s Tk task windows (app/demo/task_look.py), one
module each; :func:`plan_task_window` picks the one whose window shows.

Each plans one step from the pixels as :func:`app.demo.model.plan` does for the practice
window: it finds its window by its border (a window not wholly in view gets no action, only an
answer saying so), reads the state marks, and points at the part the next step needs, in
norm1000 of the image sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.demo.look import RGB, Screenshot
from app.demo.plans import contacts, delivery, editor, export, files, order

Planner = Callable[[Screenshot], dict[str, Any]]

#: Each planner with the border colours of its windows.
PLANNERS: tuple[tuple[tuple[RGB, ...], Planner], ...] = (
    (editor.BORDERS, editor.plan),
    (order.BORDERS, order.plan),
    (export.BORDERS, export.plan),
    (files.BORDERS, files.plan),
    (contacts.BORDERS, contacts.plan),
    (delivery.BORDERS, delivery.plan),
)


def plan_task_window(shot: Screenshot) -> dict[str, Any] | None:
    """The next step in the task window ``shot`` shows whole (for a task of two windows: one of
    them whole, the planner then refuses unless both are), or None when it shows none.

    A window only partly in view picks no planner: some pixels of a border's colour are no
    proof of that window (another application may show that colour), and the demo model then
    answers that it cannot see its window, doing nothing.
    """
    for borders, planner in PLANNERS:
        if any(shot.window(border) is not None for border in borders):
            return planner(shot)
    return None
