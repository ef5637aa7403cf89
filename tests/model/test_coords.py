"""Coordinate mapping: a perfect model's answer lands inside its target, whatever the setup.

How small can a target be? The model answers with a quantized number, and rounding moves its
point by up to half a quantum. Per axis, with the monitor ``W`` physical pixels wide, the sent
image ``S`` pixels wide and ``s`` physical pixels per logical point:

* norm1000: one unit is ``W / 1000`` physical pixels; pixels: ``W / S``; norm1: continuous
  (no rounding, only float error).
* Rounding error: at most half a unit, so ``e = unit / (2 * s)`` logical points.
* A target of ``t`` whole logical points starting at ``a`` has its centre at ``a + t / 2``;
  to_screen floors, so the answer stays inside ``[a, a + t)`` iff ``t / 2 >= e`` and
  ``t / 2 > e``: ``t > unit / s``, i.e. ``t_min = floor(unit / s) + 1``.

Examples: a 7680 px monitor at scale 1 needs 8 points in norm1000 and 4 in pixels (sent at
2048); 2560 px needs 3 and 2; a 2880 px Retina panel at scale 2 needs 2 and 1. Real click
targets are 16 points and more, so every convention is precise enough for them.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from model.coords import (
    Convention,
    FrameGeometry,
    Point,
    Rect,
    from_screen,
    to_image_point,
    to_screen,
)

SCALES = (1.0, 1.25, 1.5, 2.0)
MAX_SENT = 2048


def sent_size(width: int, height: int) -> tuple[int, int]:
    """Downscale to at most MAX_SENT on the long side, keeping the aspect ratio."""
    factor = min(1.0, MAX_SENT / max(width, height))
    return max(1, round(width * factor)), max(1, round(height * factor))


def quantum(convention: Convention, monitor_extent: int, sent_extent: int) -> float:
    """Physical pixels per unit of the model's answer on one axis (0 when continuous)."""
    if convention is Convention.NORM1000:
        return monitor_extent / 1000
    if convention is Convention.PIXELS:
        return monitor_extent / sent_extent
    return 0.0


def min_target(convention: Convention, monitor_extent: int, sent_extent: int, scale: float) -> int:
    """The smallest target extent (logical points) a rounding model always hits (see top)."""
    return math.floor(quantum(convention, monitor_extent, sent_extent) / scale) + 1


def perfect_answer(
    cx: float, cy: float, convention: Convention, geom: FrameGeometry
) -> tuple[float, float]:
    """What a perfect model answers for a logical point: exact, rounded when integral."""
    x, y = from_screen(cx, cy, convention, geom)
    if convention is Convention.NORM1:
        return x, y
    return float(round(x)), float(round(y))


@st.composite
def geometries(draw: st.DrawFn) -> FrameGeometry:
    width = draw(st.integers(640, 7680))
    height = draw(st.integers(480, 4320))
    left = draw(st.integers(-7680, 7680))
    top = draw(st.integers(-4320, 4320))
    scale = draw(st.sampled_from(SCALES))
    sent_w, sent_h = sent_size(width, height)
    return FrameGeometry(sent_w, sent_h, Rect(left, top, width, height), scale)


@settings(max_examples=600)
@given(geometries(), st.sampled_from(list(Convention)), st.data())
@example(FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440), 1.0), Convention.NORM1000, None).via(
    "hand: 1440p sent at 2048"
)
def test_perfect_model_hits_the_target(
    geom: FrameGeometry, convention: Convention, data: st.DataObject | None
) -> None:
    lm = geom.logical_monitor
    mon = geom.monitor
    min_w = min_target(convention, mon.width, geom.sent_width, geom.scale)
    min_h = min_target(convention, mon.height, geom.sent_height, geom.scale)
    assume(min_w <= lm.width and min_h <= lm.height)
    if data is None:  # the explicit example: the smallest target at the far corner
        target = Rect(lm.right - min_w, lm.bottom - min_h, min_w, min_h)
    else:
        w = data.draw(st.integers(min_w, min(lm.width, min_w + 40)), label="w")
        h = data.draw(st.integers(min_h, min(lm.height, min_h + 40)), label="h")
        left = data.draw(st.integers(lm.left, lm.right - w), label="left")
        top = data.draw(st.integers(lm.top, lm.bottom - h), label="top")
        target = Rect(left, top, w, h)
    cx, cy = target.left + target.width / 2, target.top + target.height / 2
    x, y = perfect_answer(cx, cy, convention, geom)
    mapped = to_screen(x, y, convention, geom)
    assert target.contains(mapped.point.x, mapped.point.y), (target, (x, y), mapped)
    assert not mapped.clamped


def test_the_minimum_target_size_is_needed() -> None:
    # One point smaller than min_target and some placement misses: the bound is not slack.
    geom = FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440), 1.0)
    size = min_target(Convention.NORM1000, 2560, 2048, 1.0) - 1
    assert size == 2
    misses = 0
    for left in range(0, 200):
        target = Rect(left, 100, size, 10)
        x, y = perfect_answer(left + size / 2, 105, Convention.NORM1000, geom)
        point = to_screen(x, y, Convention.NORM1000, geom).point
        misses += not target.contains(point.x, point.y)
    assert misses > 0


@given(geometries(), st.sampled_from(list(Convention)), st.data())
def test_points_map_inside_the_monitor_and_clamping_is_reported(
    geom: FrameGeometry, convention: Convention, data: st.DataObject
) -> None:
    span = {Convention.NORM1000: 1000.0, Convention.NORM1: 1.0}.get(convention)
    x_span = span if span is not None else float(geom.sent_width)
    y_span = span if span is not None else float(geom.sent_height)
    x = data.draw(st.floats(-x_span, 2 * x_span, allow_nan=False), label="x")
    y = data.draw(st.floats(-y_span, 2 * y_span, allow_nan=False), label="y")
    mapped = to_screen(x, y, convention, geom)
    lm = geom.logical_monitor
    assert lm.contains(mapped.point.x, mapped.point.y)
    inside = 0 <= x <= x_span and 0 <= y <= y_span
    assert mapped.clamped == (not inside)


@pytest.mark.parametrize(
    ("x", "y", "expected"),
    [
        (-50, 500, Point(0, 720)),
        (1100, 500, Point(2559, 720)),
        (500, -1, Point(1280, 0)),
        (500, 1001, Point(1280, 1439)),
        (1e9, -1e9, Point(2559, 0)),
    ],
)
def test_out_of_range_points_are_clamped_to_the_monitor(
    x: float, y: float, expected: Point
) -> None:
    geom = FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440), 1.0)
    mapped = to_screen(x, y, Convention.NORM1000, geom)
    assert mapped.point == expected
    assert mapped.clamped


def test_far_edges_are_inside_not_clamped() -> None:
    # norm1000 names the right and bottom edges 1000: the last pixel, not "outside".
    geom = FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440), 1.0)
    mapped = to_screen(1000, 1000, Convention.NORM1000, geom)
    assert mapped.point == Point(2559, 1439) and not mapped.clamped
    assert to_screen(0, 0, Convention.NORM1000, geom) == to_screen(0, 0, Convention.NORM1, geom)
    assert not to_screen(1.0, 1.0, Convention.NORM1, geom).clamped
    # 2560 physical pixels at 1.5 are 1706.67 points: the last sliver is rounding, not outside.
    scaled = FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440), 1.5)
    edge = to_screen(2047.9, 1151.9, Convention.PIXELS, scaled)
    assert edge.point == Point(1705, 959) and not edge.clamped


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_points_are_refused(bad: float) -> None:
    geom = FrameGeometry(1920, 1080, Rect(0, 0, 1920, 1080))
    with pytest.raises(ValueError, match="not finite"):
        to_screen(bad, 10, Convention.NORM1000, geom)
    with pytest.raises(ValueError, match="not finite"):
        to_screen(10, bad, Convention.PIXELS, geom)


# -- hand-computed examples ------------------------------------------------------------------

HAND = [
    # 1440p sent at 2048x1152: the centre is the centre.
    (
        FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440)),
        Convention.NORM1000,
        (500, 500),
        (1280, 720),
    ),
    (
        FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440)),
        Convention.PIXELS,
        (1024, 576),
        (1280, 720),
    ),
    (
        FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440)),
        Convention.NORM1,
        (0.25, 0.75),
        (640, 1080),
    ),
    # 100 sent pixels are 125 monitor pixels.
    (FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440)), Convention.PIXELS, (100, 100), (125, 125)),
    # A monitor left of the primary one.
    (
        FrameGeometry(1920, 1080, Rect(-1920, 0, 1920, 1080)),
        Convention.NORM1000,
        (500, 500),
        (-960, 540),
    ),
    (
        FrameGeometry(1920, 1080, Rect(-1920, 0, 1920, 1080)),
        Convention.NORM1000,
        (0, 0),
        (-1920, 0),
    ),
    (
        FrameGeometry(1920, 1080, Rect(-1920, 0, 1920, 1080)),
        Convention.PIXELS,
        (100, 200),
        (-1820, 200),
    ),
    # Above the primary one, 4K sent at 2048x1152.
    (
        FrameGeometry(2048, 1152, Rect(0, -2160, 3840, 2160)),
        Convention.NORM1000,
        (250, 100),
        (960, -1944),
    ),
    # Retina: 2880x1800 physical at scale 2 is 1440x900 points.
    (
        FrameGeometry(2048, 1280, Rect(0, 0, 2880, 1800), 2.0),
        Convention.NORM1000,
        (500, 500),
        (720, 450),
    ),
    # Windows at 125 %, monitor left of the primary: physical -2400..0 is logical -1920..0.
    (
        FrameGeometry(2048, 1152, Rect(-2400, 0, 2400, 1350), 1.25),
        Convention.NORM1000,
        (250, 500),
        (-1440, 540),
    ),
]


@pytest.mark.parametrize(("geom", "convention", "answer", "expected"), HAND)
def test_hand_computed_examples(
    geom: FrameGeometry,
    convention: Convention,
    answer: tuple[float, float],
    expected: tuple[int, int],
) -> None:
    mapped = to_screen(*answer, convention, geom)
    assert (mapped.point.x, mapped.point.y) == expected
    assert not mapped.clamped
    # And back: the exact inverse gives the answer again (the expected points are exact).
    back = from_screen(*expected, convention, geom)
    assert back == pytest.approx(answer)


def test_image_point_and_logical_monitor() -> None:
    geom = FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440), 1.5)
    assert to_image_point(500, 250, Convention.NORM1000, geom) == (1024, 288)
    assert to_image_point(0.5, 0.25, Convention.NORM1, geom) == (1024, 288)
    assert to_image_point(7, 9, Convention.PIXELS, geom) == (7, 9)
    assert geom.logical_monitor == Rect(0, 0, 1706, 960)
    left = FrameGeometry(1920, 1080, Rect(-1920, 0, 1920, 1080), 1.25)
    assert left.logical_monitor == Rect(-1536, 0, 1536, 864)


def test_sent_size_helper_keeps_aspect() -> None:
    assert sent_size(2560, 1440) == (2048, 1152)
    assert sent_size(3840, 2160) == (2048, 1152)
    assert sent_size(1920, 1080) == (1920, 1080)
    assert sent_size(2880, 1800) == (2048, 1280)


@pytest.mark.parametrize("huge", [1e308, -1e308, 1.7e308])
def test_points_whose_mapping_overflows_are_refused(huge: float) -> None:
    # The step schema refuses these first; the mapping still never raises OverflowError.
    geom = FrameGeometry(1920, 1080, Rect(0, 0, 1920, 1080))
    with pytest.raises(ValueError, match="too large"):
        to_screen(huge, 10, Convention.NORM1000, geom)
    with pytest.raises(ValueError, match="too large"):
        to_screen(10, huge, Convention.NORM1000, geom)


def test_a_point_a_hair_below_zero_is_reported_clamped() -> None:
    """Found by the property above: -5e-324 maps to -0.0 in the image, still off it."""
    geom = FrameGeometry(640, 480, Rect(0, 0, 640, 480), 1.0)
    assert to_screen(0.0, -5e-324, Convention.NORM1000, geom).clamped
    assert not to_screen(0.0, 0.0, Convention.NORM1000, geom).clamped
