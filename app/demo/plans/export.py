"""export-as-csv: choose CSV (PDF is chosen at first), then OK; done once the dialog says it
exported."""

from __future__ import annotations

from typing import Any

from app.demo.look import Screenshot, Status
from app.demo.plans.common import find_in, inside, point_at
from app.demo.steps import cannot, step
from app.demo.task_look import CHOSEN, CSV_ICON, EXPORT_BORDER, OK_BUTTON, WANTED_FORMAT

BORDERS = (EXPORT_BORDER,)
#: How far apart (pixels, up or down) the chosen button's middle and the CSV icon may be for
#: CSV to be the one chosen: the buttons are about 40 pixels apart.
_SAME_ROW = 15


def plan(shot: Screenshot) -> dict[str, Any]:
    window = shot.window(EXPORT_BORDER)
    if window is None:
        return cannot("I cannot see the whole holodesk export dialog on the screen (it is "
                      "covered, off the screen or closed), and I act only in it.")
    exported = shot.checklist(inside(window))
    if len(exported) != 1:
        return cannot("I cannot read the export dialog's status.")
    if exported[0] is Status.DONE:
        return step("The dialog says it exported.", {
            "action": "answer", "text": f"Demo: the report is exported as {WANTED_FORMAT}."})
    csv = find_in(shot, CSV_ICON, window)
    if csv is None:
        return cannot(f"I cannot see the {WANTED_FORMAT} choice in the export dialog.")
    chosen = find_in(shot, CHOSEN, window)
    if chosen is not None and abs(chosen.y - csv.y) <= _SAME_ROW:
        ok = find_in(shot, OK_BUTTON, window)
        if ok is None:
            return cannot("I cannot see the export dialog's OK button.")
        return point_at(shot, ok, "OK button",
                        f"{WANTED_FORMAT} is chosen; confirm with OK.")
    return point_at(shot, csv, f"{WANTED_FORMAT} format choice",
                    f"{WANTED_FORMAT} is not the chosen format yet; choose it.")
