"""What the task planners share: the window's inside, and steps aimed at a mark."""

from __future__ import annotations

from typing import Any

from app.demo.answers import norm1000, step
from app.demo.look import RGB, Box, Mark, Screenshot


def inside(window: Box) -> Box:
    """``window``'s box without its border's outermost pixel (as the practice planner reads)."""
    return Box(window.left + 1, window.top + 1, window.right - 1, window.bottom - 1)


def at(shot: Screenshot, mark: Mark) -> tuple[int, int]:
    """``mark``'s centre in norm1000 of the image sent."""
    return norm1000(mark.x, mark.y, shot.width, shot.height)


def pointed(shot: Screenshot, kind: str, element: str, mark: Mark,
            thought: str) -> dict[str, Any]:
    """A ``kind`` action ("click", "double_click") at ``mark``, named ``element``."""
    x, y = at(shot, mark)
    return step(thought, {"action": kind, "element": element, "x": x, "y": y})


def find_in(shot: Screenshot, color: RGB, window: Box, min_pixels: int = 60) -> Mark | None:
    """``color``'s mark inside ``window``, never one outside it."""
    mark = shot.find(color, inside(window), min_pixels)
    return mark if mark is not None and window.contains(mark.x, mark.y) else None
