"""Where the confirmation panel goes: never over the point it asks about.

The panel asked "click here?" while covering "here" (a click at 960,540 under a panel spanning
x 915–1421): the person could not see the real target, nor the marker on it. :func:`place_panel`
is a pure function of the panel's size, the target points and the screens (all in Qt global
coordinates), so it is tested over many geometries without a display; :func:`move_clear_of`
applies it to the real window and screens.

The rule, in order of preference:

1. another monitor, one without a target point, centred there;
2. on the target's monitor, the side away from the targets (the largest free band left, right,
   above or below the keep-out box around the points), the panel at its full size;
3. any place on a monitor clear of every point's own keep-out box (a long drag's two ends);
4. the panel made smaller (not below ``minimum``) in the largest free band.

Each point keeps clear a square of ``keep_out`` (the marker's radius and its halo plus a
margin) on every side. When nothing at all is free (a panel larger than every screen), the
place farthest from the points is returned and ``covers`` says so.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from model.coords import Point, Rect
from ui.overlay import OVERLAY_RADIUS, logical_to_qt

__all__ = ["KEEP_OUT", "Placement", "keep_out_boxes", "move_clear_of", "place_bar",
           "place_panel"]

log = logging.getLogger(__name__)

Spot = tuple[float, float]
EDGE = 8  # from the screen's edge: the window frame and a little air


@dataclass(frozen=True)
class Placement:
    """The panel's frame rectangle; ``covers`` is True only when no free place existed."""

    rect: Rect
    covers: bool = False


def keep_out_boxes(points: Sequence[Spot], keep_out: float) -> list[Rect]:
    """The square each point keeps free of the panel."""
    r = math.ceil(keep_out)
    return [Rect(math.floor(x) - r, math.floor(y) - r, 2 * r + 1, 2 * r + 1) for x, y in points]


def _overlaps(a: Rect, b: Rect) -> bool:
    return a.left < b.right and b.left < a.right and a.top < b.bottom and b.top < a.bottom


def _inside(rect: Rect, screen: Rect) -> bool:
    return (screen.left <= rect.left and rect.right <= screen.right
            and screen.top <= rect.top and rect.bottom <= screen.bottom)


def _clear(rect: Rect, boxes: Sequence[Rect]) -> bool:
    return not any(_overlaps(rect, box) for box in boxes)


def _inner(screen: Rect) -> Rect:
    """The screen less a small edge (a screen too small for that keeps all of itself)."""
    if screen.width <= 4 * EDGE or screen.height <= 4 * EDGE:
        return screen
    return Rect(screen.left + EDGE, screen.top + EDGE, screen.width - 2 * EDGE,
                screen.height - 2 * EDGE)


def _distance(rect: Rect, point: Spot) -> float:
    x, y = point
    dx = max(rect.left - x, 0.0, x - rect.right)
    dy = max(rect.top - y, 0.0, y - rect.bottom)
    return math.hypot(dx, dy)


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))


def _fit(width: int, height: int, area: Rect, anchor_x: float, anchor_y: float) -> Rect:
    """A ``width``×``height`` rectangle inside ``area``, as near (anchor_x, anchor_y) as fits."""
    left = _clamp(round(anchor_x - width / 2), area.left, area.right - width)
    top = _clamp(round(anchor_y - height / 2), area.top, area.bottom - height)
    return Rect(left, top, width, height)


def _bands(screen: Rect, boxes: Sequence[Rect]) -> list[tuple[Rect, str]]:
    """The free bands of ``screen`` left, right, above and below the boxes' bounding box."""
    on = [b for b in boxes if _overlaps(b, screen)]
    if not on:
        return [(screen, "whole")]
    left = min(b.left for b in on)
    right = max(b.right for b in on)
    top = min(b.top for b in on)
    bottom = max(b.bottom for b in on)
    s = screen
    bands = [
        (Rect(s.left, s.top, left - s.left, s.height), "left"),
        (Rect(right, s.top, s.right - right, s.height), "right"),
        (Rect(s.left, s.top, s.width, top - s.top), "above"),
        (Rect(s.left, bottom, s.width, s.bottom - bottom), "below"),
    ]
    return [(band, side) for band, side in bands if band.width > 0 and band.height > 0]


def _in_band(width: int, height: int, band: Rect, side: str, screen: Rect,
             points: Sequence[Spot]) -> Rect:
    """The panel in ``band``: at the band's far edge from the points, level with them."""
    cx = sum(p[0] for p in points) / len(points) if points else screen.left + screen.width / 2
    cy = sum(p[1] for p in points) / len(points) if points else screen.top + screen.height / 2
    if side == "left":
        return _fit(width, height, band, band.left, cy)
    if side == "right":
        return _fit(width, height, band, band.right, cy)
    if side == "above":
        return _fit(width, height, band, cx, band.top)
    if side == "below":
        return _fit(width, height, band, cx, band.bottom)
    return _fit(width, height, band, band.left + band.width / 2, band.top + band.height / 2)


def _grid(width: int, height: int, screen: Rect, boxes: Sequence[Rect]) -> list[Rect]:
    """Places beside each keep-out box and at the screen's edges and middle."""
    xs = {screen.left, screen.right - width, screen.left + (screen.width - width) // 2}
    ys = {screen.top, screen.bottom - height, screen.top + (screen.height - height) // 2}
    for box in boxes:
        xs.update((box.right, box.left - width))
        ys.update((box.bottom, box.top - height))
    out = []
    for x in xs:
        for y in ys:
            rect = Rect(_clamp(x, screen.left, screen.right - width),
                        _clamp(y, screen.top, screen.bottom - height), width, height)
            out.append(rect)
    return out


def place_panel(size: tuple[int, int], points: Sequence[Spot], screens: Sequence[Rect], *,
                keep_out: float, minimum: tuple[int, int] = (0, 0),
                avoid: Sequence[Rect] = ()) -> Placement:
    """Where to put a panel of ``size`` (its frame) so it covers none of ``points``.

    ``screens`` are the monitors' available areas, ``keep_out`` the room each point keeps on
    every side, ``minimum`` the smallest the panel may be made, ``avoid`` rectangles kept free
    like the points' (the window a run works in). See the module doc for the order of
    preference. Without points or rectangles the panel goes in the middle of the first screen.
    """
    if not screens:
        raise ValueError("no screen to place the confirmation panel on")
    width, height = size
    areas = [_inner(s) for s in screens]
    boxes = keep_out_boxes(points, keep_out) + list(avoid)
    # How far a place is from what it keeps clear: the points, else the rectangles' middles.
    spots = list(points) or [(r.left + r.width / 2, r.top + r.height / 2) for r in avoid]

    def score(rect: Rect) -> float:
        return min((_distance(rect, p) for p in spots), default=0.0)

    if not points and not avoid:
        return Placement(_fit(min(width, areas[0].width), min(height, areas[0].height),
                              areas[0], areas[0].left + areas[0].width / 2,
                              areas[0].top + areas[0].height / 2))

    # 1. Another monitor: the whole panel, in its middle (or, when a point at the edge of the
    # next monitor reaches into this one, away from that edge).
    for screen, area in zip(screens, areas, strict=True):
        if any(screen.contains(x, y) for x, y in points) or not _clear(screen, avoid):
            continue
        if area.width < width or area.height < height:
            continue
        middle = _fit(width, height, area, area.left + area.width / 2,
                      area.top + area.height / 2)
        if _clear(middle, boxes):
            return Placement(middle)
        for band, side in _bands(area, boxes):
            if band.width >= width and band.height >= height:
                rect = _in_band(width, height, band, side, area, spots)
                if _clear(rect, boxes):
                    return Placement(rect)

    # 2. The far side of the targets' monitor, full size: the roomiest band wins.
    best: tuple[float, Rect] | None = None
    for area in areas:
        for band, side in _bands(area, boxes):
            if band.width < width or band.height < height:
                continue
            rect = _in_band(width, height, band, side, area, spots)
            if _clear(rect, boxes) and (best is None or score(rect) > best[0]):
                best = (score(rect), rect)
    if best is not None:
        return Placement(best[1])

    # 3. Between the points (a long drag): any place clear of each point's own box.
    for area in areas:
        if area.width < width or area.height < height:
            continue
        for rect in _grid(width, height, area, boxes):
            if _inside(rect, area) and _clear(rect, boxes) and (
                    best is None or score(rect) > best[0]):
                best = (score(rect), rect)
    if best is not None:
        return Placement(best[1])

    # 4. Smaller, in the largest free band (never below the minimum).
    min_w, min_h = minimum
    shrunk: tuple[int, Rect] | None = None
    for area in areas:
        for band, side in _bands(area, boxes):
            w, h = min(width, band.width), min(height, band.height)
            if w < max(min_w, 1) or h < max(min_h, 1):
                continue
            rect = _in_band(w, h, band, side, area, spots)
            if _clear(rect, boxes) and (shrunk is None or w * h > shrunk[0]):
                shrunk = (w * h, rect)
    if shrunk is not None:
        return Placement(shrunk[1])

    # Nothing is free: as far from the points as the first screen allows, and said so.
    area = areas[0]
    w, h = min(width, area.width), min(height, area.height)
    candidates = _grid(w, h, area, boxes)
    return Placement(max(candidates, key=score), covers=True)


def _top_middle(width: int, height: int, area: Rect) -> Rect:
    return _fit(min(width, area.width), min(height, area.height), area,
                area.left + area.width / 2, area.top)


def place_bar(size: tuple[int, int], points: Sequence[Spot], screens: Sequence[Rect], *,
              keep_out: float, avoid: Sequence[Rect] = ()) -> Placement:
    """Where the run bar goes while a run acts: over none of the windows it works in
    (``avoid``) nor the points it acts on.

    In order: the top middle of a screen the work does not touch (another monitor: the edge,
    where the person's own work there is least in the way); beside the work on its screen, at
    the edge farthest from it (:func:`place_panel`'s bands); over the work's windows but clear
    of the points, as far from them as it gets; with nothing known to keep clear of, the top
    middle of the work's screen. ``covers`` is True in the last two cases: the work's window
    fills its screen.
    """
    if not screens:
        raise ValueError("no screen to place the run bar on")
    width, height = size
    boxes = keep_out_boxes(points, keep_out) + list(avoid)
    for screen in screens:
        area = _inner(screen)
        if _clear(screen, boxes) and area.width >= width and area.height >= height:
            return Placement(_top_middle(width, height, area))
    beside = place_panel(size, points, screens, keep_out=keep_out, avoid=avoid)
    if not beside.covers and beside.rect.width == width and beside.rect.height == height:
        return beside
    if points:
        clear_of_points = place_panel(size, points, screens, keep_out=keep_out)
        if not clear_of_points.covers:
            return Placement(clear_of_points.rect, covers=True)
    work = [s for s in screens if not _clear(s, boxes)] or list(screens)
    return Placement(_top_middle(width, height, _inner(work[0])), covers=True)


# -- on the real screens ---------------------------------------------------------------------

#: What each point keeps free: the overlay's marker with its halo (ui/overlay.py pads its window
#: by the same amount) and a margin the eye needs to see the target around it.
KEEP_OUT = OVERLAY_RADIUS * 1.7 + 8 + 16
#: Room for the window manager's frame before the panel was first shown (unknown until then).
FRAME_GUESS = (8, 36)


def move_clear_of(window: QWidget, points: Sequence[Point], *,
                  screens: Sequence[Rect] | None = None) -> Placement | None:
    """Move (and if need be shrink) the top-level ``window`` so it covers none of ``points``
    (logical screen points, as the agent gives them). ``screens``: the monitors' available
    areas in Qt coordinates (default: Qt's). Without points (typing, a shortcut) there is
    nothing to keep clear: the window stays where it is, None."""
    if not points:
        return None
    if screens is None:
        screens = [_rect(s.availableGeometry()) for s in QGuiApplication.screens()]
    spots = [(q.x(), q.y()) for q in (logical_to_qt(p.x, p.y) for p in points)]
    frame, inner = window.frameGeometry(), window.geometry()
    extra_w = max(frame.width() - inner.width(), FRAME_GUESS[0])
    extra_h = max(frame.height() - inner.height(), FRAME_GUESS[1])
    # Until it was sized once (by this, or the person), the window's size is Qt's default.
    size = window.size() if window.testAttribute(Qt.WidgetAttribute.WA_Resized) \
        else window.sizeHint().expandedTo(window.minimumSizeHint())
    least = window.minimumSizeHint()
    placed = place_panel((size.width() + extra_w, size.height() + extra_h), spots, screens,
                         keep_out=KEEP_OUT,
                         minimum=(least.width() + extra_w, least.height() + extra_h))
    if placed.covers:
        log.warning("no place on the screens leaves the target free: the panel covers it")
    window.resize(placed.rect.width - extra_w, placed.rect.height - extra_h)
    window.move(placed.rect.left, placed.rect.top)
    return placed


def _rect(r: QRect) -> Rect:
    return Rect(r.x(), r.y(), r.width(), r.height())
