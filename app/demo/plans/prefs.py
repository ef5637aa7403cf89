"""The switch-to-a-tab task (ui/practice/tasks/prefs.py): the theme the goal names, which is on
the Display tab. The tab shows when its themes' icons do; otherwise its tab is clicked first.
A chosen theme's button, left of its icon, shows the tick colour."""

from __future__ import annotations

import re
from typing import Any

from app.demo.look import STATUS_COLORS, Box, Screenshot, Status
from app.demo.plans.common import cannot, done, inside, point_at, solid
from app.demo.task_look import APPLY_BUTTON, DISPLAY_TAB, THEME_TAGS, TICK


def plan(shot: Screenshot, window: Box, goal: str) -> dict[str, Any]:
    found = re.search(r"\b(" + "|".join(THEME_TAGS) + r")\b", goal)
    if found is None:
        return cannot(f"The task names no theme ({', '.join(THEME_TAGS)}).")
    wanted = found[1]
    area = inside(window)
    icon = solid(shot, THEME_TAGS[wanted], area)
    if icon is None:
        tab = solid(shot, DISPLAY_TAB, area)
        if tab is None:
            return cannot("I cannot see the Display tab in the preferences window.")
        return point_at(shot, tab, "the Display tab",
                        "The themes are not shown; open the Display tab.")
    row = Box(area.left, max(area.top, int(icon.y) - 10), int(icon.x) - 6,
              min(area.bottom, int(icon.y) + 10))
    if row.width <= 0 or shot.find(TICK, row, min_pixels=20) is None:
        return point_at(shot, icon, f"the {wanted} theme", f"{wanted} is not chosen; choose it.")
    if shot.find(STATUS_COLORS[Status.DONE], area) is not None:
        return done(f"{wanted} is chosen and applied.", f"the theme is {wanted}, applied.")
    apply = shot.find(APPLY_BUTTON, area)
    if apply is None:
        return cannot("I cannot see the Apply button in the preferences window.")
    return point_at(shot, apply, "Apply button", f"{wanted} is chosen; press Apply.")
