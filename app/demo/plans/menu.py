"""The pick-from-a-menu task (ui/practice/tasks/menu.py): View > Zoom > the level the goal
names. The swatch beside "Zoom:" says the current level; with the Zoom cascade open every
level's icon shows, so two or more level colours mean it is open."""

from __future__ import annotations

import re
from typing import Any

from app.demo.look import Box, Screenshot
from app.demo.plans.common import cannot, done, inside, point_at, solid
from app.demo.task_look import LEVEL_TAGS, VIEW_MARK, ZOOM_MARK

#: Pixels above the window's frame where its menu bar is (Tk puts it outside the frame); not
#: more: above the bar is the window manager's title bar, whose colours are not the window's.
_BAR = 34


def plan(shot: Screenshot, window: Box, goal: str) -> dict[str, Any]:
    found = re.search(r"(\d+)\s*%", goal)
    wanted = f"{found[1]}%" if found else ""
    if wanted not in LEVEL_TAGS:
        return cannot(f"The task names no zoom level the menu window has "
                      f"({', '.join(LEVEL_TAGS)}).")
    body = inside(window)
    area = Box(body.left, max(0, body.top - _BAR), body.right, body.bottom)
    shown = {level: mark for level, color in LEVEL_TAGS.items()
             if (mark := solid(shot, color, area)) is not None}
    if len(shown) >= 2:
        if wanted not in shown:
            return cannot(f"The Zoom menu is open but I cannot see {wanted} in it.")
        return point_at(shot, shown[wanted], f"{wanted} in the Zoom menu",
                        f"The Zoom menu is open; choose {wanted}.")
    zoom = shot.find(ZOOM_MARK, area)
    if zoom is not None:
        return point_at(shot, zoom, "Zoom in the View menu",
                        "The View menu is open; open its Zoom menu.")
    if len(shown) != 1:
        return cannot("I cannot read the menu window's zoom.")
    [current] = shown
    if current == wanted:
        return done(f"The zoom is {wanted}.", f"View > Zoom is set to {wanted}.")
    view = shot.find(VIEW_MARK, area)
    if view is None:
        return cannot("I cannot see View in the menu window's menu bar.")
    return point_at(shot, view, "View in the menu bar",
                    f"The zoom is {current}, not {wanted}; open the View menu.")
