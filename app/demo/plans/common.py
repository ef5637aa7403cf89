"""What the task windows' planners share: the window's inside, finding and pointing at a mark,
the answers (a refusal is :func:`app.demo.steps.cannot`)."""

from __future__ import annotations

from typing import Any

from app.demo.look import RGB, Box, Mark, Screenshot
from app.demo.steps import LABEL, norm1000, step
from app.demo.steps import cannot as cannot


def inside(window: Box) -> Box:
    """The window within its frame's outer edge (as the practice planner reads)."""
    return Box(window.left + 1, window.top + 1, window.right - 1, window.bottom - 1)


def find_in(shot: Screenshot, color: RGB, window: Box, min_pixels: int = 60) -> Mark | None:
    """``color``'s mark inside ``window``, never one outside it."""
    mark = shot.find(color, inside(window), min_pixels)
    return mark if mark is not None and window.contains(mark.x, mark.y) else None


def solid(shot: Screenshot, color: RGB, area: Box, min_pixels: int = 40) -> Mark | None:
    """The centre of ``color``'s solid parts inside ``area``: pixels whose four neighbours
    show it too. A small icon is solid; the fringe JPEG leaves along the edge of another
    colour's square (a few pixels wide) is not, so it cannot pull the centre away."""
    import numpy as np

    mask = np.asarray(shot.mask(color, area))
    core = np.zeros_like(mask)
    core[1:-1, 1:-1] = (mask[1:-1, 1:-1] & mask[:-2, 1:-1] & mask[2:, 1:-1]
                        & mask[1:-1, :-2] & mask[1:-1, 2:])
    count = int(core.sum())
    if count < min_pixels:
        return None
    ys, xs = np.nonzero(core)
    return Mark(area.left + float(xs.mean()) + 0.5, area.top + float(ys.mean()) + 0.5, count)


def point_at(shot: Screenshot, mark: Mark | tuple[float, float], element: str, thought: str,
             action: str = "click") -> dict[str, Any]:
    """A step that points at ``mark`` (a ``click``, ``double_click``, ``move`` or ``drag_to``)
    named ``element``, in norm1000 of the image."""
    x, y = (mark.x, mark.y) if isinstance(mark, Mark) else mark
    nx, ny = norm1000(x, y, shot.width, shot.height)
    return step(thought, {"action": action, "element": element, "x": nx, "y": ny})


def done(thought: str, text: str) -> dict[str, Any]:
    """The answer that ends a task: what was done (or read)."""
    return step(thought, {"action": "answer", "text": LABEL + text})
