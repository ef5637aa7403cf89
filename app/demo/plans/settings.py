"""The tick-the-right-boxes task (ui/practice/tasks/settings.py): each option ticked or not as
the goal says, then Apply. An option is found by its icon's colour; its box, left of the icon,
is ticked when it shows the tick colour."""

from __future__ import annotations

import re
from typing import Any

from app.demo.look import STATUS_COLORS, Box, Screenshot, Status
from app.demo.plans.common import cannot, done, inside, point_at, solid
from app.demo.task_look import APPLY_BUTTON, OPTION_TAGS, TICK


def wanted_ticks(goal: str) -> dict[str, bool]:
    """Which options the goal ticks (True) and unticks (False): "tick A and B, untick C"."""
    wanted: dict[str, bool] = {}
    for clause in re.split(r",|;|\bthen\b", goal):
        verb = re.match(r"\s*(untick|tick)\b", clause, flags=re.IGNORECASE)
        if verb is None:
            continue
        for option in OPTION_TAGS:
            if option.lower() in clause.lower():
                wanted[option] = verb[1].lower() == "tick"
    return wanted


def plan(shot: Screenshot, window: Box, goal: str) -> dict[str, Any]:
    wanted = wanted_ticks(goal)
    if not wanted:
        return cannot("The task names no setting of the settings window to tick or untick.")
    area = inside(window)
    for option, tick in wanted.items():
        icon = solid(shot, OPTION_TAGS[option], area)
        if icon is None:
            return cannot(f"I cannot see {option} in the settings window.")
        row = Box(area.left, max(area.top, int(icon.y) - 10), int(icon.x) - 6,
                  min(area.bottom, int(icon.y) + 10))
        ticked = row.width > 0 and shot.find(TICK, row, min_pixels=20) is not None
        if ticked != tick:
            state = "ticked" if ticked else "not ticked"
            return point_at(shot, icon, f"the {option} checkbox",
                            f"{option} is {state}; click it.")
    if shot.find(STATUS_COLORS[Status.DONE], area) is not None:
        return done("The boxes are as asked, and applied.",
                    "the settings are ticked as asked and applied.")
    apply = shot.find(APPLY_BUTTON, area)
    if apply is None:
        return cannot("I cannot see the Apply button in the settings window.")
    return point_at(shot, apply, "Apply button", "The boxes are as asked; press Apply.")
