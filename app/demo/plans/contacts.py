"""search-with-shortcut: give the list the focus (a click), press Ctrl+F, type the name with
Enter in the search field that shows; done once a contact is open."""

from __future__ import annotations

from typing import Any

from app.demo.look import Screenshot, Status
from app.demo.plans.common import find_in, inside, point_at
from app.demo.steps import cannot, step
from app.demo.task_look import (
    CONTACTS_BORDER,
    LIST_FOCUS,
    LIST_RING,
    SEARCH_FIELD,
    SEARCH_FOR,
    WANTED_CONTACT,
)

BORDERS = (CONTACTS_BORDER,)


def plan(shot: Screenshot) -> dict[str, Any]:
    window = shot.window(CONTACTS_BORDER)
    if window is None:
        return cannot("I cannot see the whole holodesk contacts window on the screen (it is "
                      "covered, off the screen or closed), and I act only in it.")
    opened = shot.checklist(inside(window))
    if len(opened) != 1:
        return cannot("I cannot read whether a contact is open.")
    if opened[0] is Status.DONE:
        return step("The contact is open.", {
            "action": "answer", "text": f"Demo: {WANTED_CONTACT} is open."})
    if find_in(shot, SEARCH_FIELD, window) is not None:
        return step("The search field shows; search the name and press Enter.",
                    {"action": "type", "text": SEARCH_FOR, "press_enter": True})
    if find_in(shot, LIST_FOCUS, window) is not None:
        return step("The window has the keyboard focus; open the search with Ctrl+F.",
                    {"action": "hotkey", "keys": ["ctrl", "f"]})
    ring = find_in(shot, LIST_RING, window)
    if ring is None:
        return cannot("I cannot see the contacts list.")
    return point_at(shot, ring, "the contacts list",
                    "The contacts window has not the keyboard focus; click its list first.")
