"""open-by-double-click: double-click the wanted document's row; done once a document is open."""

from __future__ import annotations

from typing import Any

from app.demo.look import Screenshot, Status
from app.demo.plans.common import find_in, inside, point_at
from app.demo.steps import cannot, step
from app.demo.task_look import FILES_BORDER, WANTED_FILE, WANTED_FILE_MARK

BORDERS = (FILES_BORDER,)


def plan(shot: Screenshot) -> dict[str, Any]:
    window = shot.window(FILES_BORDER)
    if window is None:
        return cannot("I cannot see the whole holodesk documents window on the screen (it is "
                      "covered, off the screen or closed), and I act only in it.")
    opened = shot.checklist(inside(window))
    if len(opened) != 1:
        return cannot("I cannot read whether a document is open.")
    if opened[0] is Status.DONE:
        return step("The document is open.", {
            "action": "answer", "text": f"Demo: {WANTED_FILE} is open."})
    row = find_in(shot, WANTED_FILE_MARK, window)
    if row is None:
        return cannot(f"I cannot see {WANTED_FILE} in the documents window.")
    return point_at(shot, row, WANTED_FILE,
                    f"Open {WANTED_FILE}: a double click opens it (one click only selects).",
                    "double_click")
