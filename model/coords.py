"""Coordinate conventions: from a point the model gave to a point pyautogui can click.

Three spaces are involved, and confusing them is the top complaint about peer apps:

* the *sent image*: the (possibly downscaled) screenshot the model saw, ``sent_width`` x
  ``sent_height`` pixels; the model answers in a convention relative to it;
* *physical* pixels of the virtual screen, as mss captures them; the monitor is a rectangle
  there, with an origin that may be negative (a monitor left of or above the primary one);
* *logical* points, pyautogui's space: physical divided by ``scale`` (2 on a Retina Mac, 1.25 or
  1.5 on a scaled Windows display, 1 on X11).

Mapping is per axis from the exact sent size, then the monitor's origin, then the scale, and the
result is clamped to the monitor so a sloppy answer can never leave the chosen screen.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Convention(StrEnum):
    """How the model expresses a point of the image it was sent."""

    NORM1000 = "norm1000"  # integers 0-1000, the default (Holo2 and later)
    NORM1 = "norm1"  # floats 0-1
    PIXELS = "pixels"  # pixels of the sent image (Holo1.x)


@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle; right and bottom are exclusive."""

    left: int
    top: int
    width: int
    height: int

    @property
    def right(self) -> int:
        return self.left + self.width

    @property
    def bottom(self) -> int:
        return self.top + self.height

    def contains(self, x: float, y: float) -> bool:
        """Whether the point lies inside (left/top inclusive, right/bottom exclusive)."""
        return self.left <= x < self.right and self.top <= y < self.bottom

    def __str__(self) -> str:
        return f"{self.width}x{self.height}{self.left:+d}{self.top:+d}"


@dataclass(frozen=True)
class Point:
    """A point in pyautogui's logical coordinate space."""

    x: int
    y: int

    def __str__(self) -> str:
        return f"({self.x}, {self.y})"


@dataclass(frozen=True)
class FrameGeometry:
    """Everything needed to map a point in the sent image back to the screen.

    ``monitor`` is in physical pixels of the virtual screen; ``scale`` is physical pixels per
    logical point (pyautogui's space).
    """

    sent_width: int
    sent_height: int
    monitor: Rect
    scale: float = 1.0

    @property
    def logical_monitor(self) -> Rect:
        """The monitor rectangle in logical points (what pyautogui moves within)."""
        left = math.ceil(self.monitor.left / self.scale)
        top = math.ceil(self.monitor.top / self.scale)
        right = math.floor(self.monitor.right / self.scale)
        bottom = math.floor(self.monitor.bottom / self.scale)
        return Rect(left, top, max(1, right - left), max(1, bottom - top))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data: the form the action log stores and exports."""
        m = self.monitor
        return {
            "sent_width": self.sent_width,
            "sent_height": self.sent_height,
            "monitor": {"left": m.left, "top": m.top, "width": m.width, "height": m.height},
            "scale": self.scale,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FrameGeometry:
        """The inverse of :meth:`to_dict`; ``scale`` defaults to 1.0 when absent.

        Raises ValueError when a field is missing or not a number.
        """
        try:
            mon = data["monitor"]
            return cls(
                sent_width=int(data["sent_width"]),
                sent_height=int(data["sent_height"]),
                monitor=Rect(
                    int(mon["left"]), int(mon["top"]), int(mon["width"]), int(mon["height"])
                ),
                scale=float(data.get("scale", 1.0)),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a frame geometry: {data!r} ({exc!r})") from exc


@dataclass(frozen=True)
class MappedPoint:
    """The result of mapping: the screen point and whether it had to be clamped."""

    point: Point
    clamped: bool
    image_x: float
    image_y: float


def to_image_point(
    x: float, y: float, convention: Convention, geom: FrameGeometry
) -> tuple[float, float]:
    """A model point as a (fractional) pixel position in the sent image."""
    if convention is Convention.NORM1000:
        return x / 1000 * geom.sent_width, y / 1000 * geom.sent_height
    if convention is Convention.NORM1:
        return x * geom.sent_width, y * geom.sent_height
    return float(x), float(y)


def to_screen(x: float, y: float, convention: Convention, geom: FrameGeometry) -> MappedPoint:
    """Map a model point to a logical screen point, clamped to the monitor.

    ``clamped`` says the model pointed outside the image it was sent. The image's far edges
    count as inside (norm1000 names the right edge 1000, norm1 names it 1.0): a point there
    lands on the monitor's last pixel, which is rounding, not the model leaving the screen.
    Raises ValueError on a non-finite coordinate, or one so large its mapping overflows (the
    step schema refuses those long before; this keeps the mapping total on its own).
    """
    if not (math.isfinite(x) and math.isfinite(y)):
        raise ValueError(f"model point ({x}, {y}) is not finite")
    ix, iy = to_image_point(x, y, convention, geom)
    mon = geom.monitor
    px = mon.left + ix * mon.width / geom.sent_width
    py = mon.top + iy * mon.height / geom.sent_height
    if not (math.isfinite(px) and math.isfinite(py)):
        raise ValueError(f"model point ({x}, {y}) is too large to map to the screen")
    lx = math.floor(px / geom.scale)
    ly = math.floor(py / geom.scale)
    lm = geom.logical_monitor
    cx = min(max(lx, lm.left), lm.right - 1)
    cy = min(max(ly, lm.top), lm.bottom - 1)
    # Judged on the model's own numbers, not on (cx, cy) != (lx, ly): the exclusive right edge
    # and a fractional scale (2560 px / 1.5 = 1706.67 points) move edge points by one point,
    # and a point a hair below 0 maps to -0.0 in the image, which is still the model leaving it.
    span = {Convention.NORM1000: 1000.0, Convention.NORM1: 1.0}.get(convention)
    x_span = span if span is not None else float(geom.sent_width)
    y_span = span if span is not None else float(geom.sent_height)
    outside = not (0 <= x <= x_span and 0 <= y <= y_span)
    return MappedPoint(Point(cx, cy), clamped=outside, image_x=ix, image_y=iy)


def from_screen(
    point_x: float, point_y: float, convention: Convention, geom: FrameGeometry
) -> tuple[float, float]:
    """The inverse of :func:`to_screen`, unrounded: where a logical screen point is in a convention.

    Used by calibration and by the fake model server's tests to answer like a perfect model.
    """
    mon = geom.monitor
    px = point_x * geom.scale
    py = point_y * geom.scale
    ix = (px - mon.left) * geom.sent_width / mon.width
    iy = (py - mon.top) * geom.sent_height / mon.height
    if convention is Convention.NORM1000:
        return ix / geom.sent_width * 1000, iy / geom.sent_height * 1000
    if convention is Convention.NORM1:
        return ix / geom.sent_width, iy / geom.sent_height
    return ix, iy
