"""The set-a-number task (ui/practice/tasks/copies.py): the number of copies read from its
dot-font display, - or + pressed one at a time until it is the goal's, then OK."""

from __future__ import annotations

import re
from typing import Any

from app.demo.dots import ink, read_lines
from app.demo.look import STATUS_COLORS, Box, Screenshot, Status
from app.demo.plans.common import cannot, done, inside, point_at
from app.demo.task_look import APPLY_BUTTON, MINUS_BUTTON, PLUS_BUTTON


def plan(shot: Screenshot, window: Box, goal: str) -> dict[str, Any]:
    found = re.search(r"\bto (\d+)", goal)
    if found is None:
        return cannot("The task names no number of copies to set.")
    wanted = int(found[1])
    area = inside(window)
    shown = [words[0] for _y, words in read_lines(ink(shot.pixels(area)))
             if len(words) == 1 and words[0].isdigit()]
    if len(shown) != 1:
        return cannot("I cannot read the number of copies in the print window.")
    copies = int(shown[0])
    if copies != wanted:
        color, name = (PLUS_BUTTON, "+") if copies < wanted else (MINUS_BUTTON, "-")
        button = shot.find(color, area)
        if button is None:
            return cannot(f"I cannot see the {name} button in the print window.")
        return point_at(shot, button, f"the {name} button",
                        f"It shows {copies} copies, not {wanted}; press {name}.")
    if shot.find(STATUS_COLORS[Status.DONE], area) is not None:
        return done(f"{wanted} copies are set.", f"the number of copies is set to {wanted}.")
    ok = shot.find(APPLY_BUTTON, area)
    if ok is None:
        return cannot("I cannot see the OK button in the print window.")
    return point_at(shot, ok, "OK button", f"It shows {wanted} copies; press OK.")
