"""The ``holodesk bench`` chart as a PNG, drawn with Pillow (no plotting library needed).

Two panels sharing the concurrency axis (logarithmic, one tick per measured level): on top
total tokens/s (left axis) and generated tokens/s (its own axis on the right: prompt tokens are
nearly all of the total, so on one axis the generated line would lie flat on zero), with the
reference point when one is given; below, step latency p50 and p95 and time to first token
p50, in seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from model.loadbench.bench import BenchReport, LevelResult, Reference

__all__ = ["render_chart", "save_chart"]

WIDTH, HEIGHT = 1200, 900
_MARGIN_L, _MARGIN_R, _MARGIN_T, _GAP, _MARGIN_B = 110, 80, 70, 90, 70
_BG = (255, 255, 255)
_AXIS = (60, 60, 60)
_GRID = (225, 225, 225)
_BLUE, _ORANGE, _GREEN, _RED, _PURPLE = (
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
)  # fmt: skip

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


def _font(size: int) -> Font:
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):
        return ImageFont.load_default()


def _nice_max(value: float) -> float:
    """A round axis maximum at or above ``value``."""
    if value <= 0:
        return 1.0
    exponent = math.floor(math.log10(value))
    # Fine steps: a coarse one (2.5 -> 5) would leave half a panel empty.
    for step in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        top = step * 10**exponent
        if top >= value:
            return float(top)
    return float(10 ** (exponent + 1))


def _label(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 10 or value == 0:
        return f"{value:.0f}"
    return f"{value:.2g}"


class _Panel:
    def __init__(self, box: tuple[int, int, int, int], levels: Sequence[int], y_max: float):
        self.left, self.top, self.right, self.bottom = box
        self.lo = math.log(min(levels))
        self.hi = math.log(max(levels))
        self.y_max = y_max

    def x(self, level: float) -> float:
        if self.hi == self.lo:
            return (self.left + self.right) / 2
        pad = 30
        span = self.right - self.left - 2 * pad
        return self.left + pad + span * (math.log(level) - self.lo) / (self.hi - self.lo)

    def y(self, value: float) -> float:
        return self.bottom - (self.bottom - self.top) * min(value, self.y_max) / self.y_max


def _draw_panel(
    draw: ImageDraw.ImageDraw,
    panel: _Panel,
    levels: Sequence[int],
    title: str,
    small: Font,
    big: Font,
) -> None:
    draw.text((panel.left, panel.top - 34), title, fill=_AXIS, font=big)
    for i in range(6):
        value = panel.y_max * i / 5
        y = panel.y(value)
        draw.line((panel.left, y, panel.right, y), fill=_GRID)
        text = _label(value)
        width = draw.textlength(text, font=small)
        draw.text((panel.left - 10 - width, y - 8), text, fill=_AXIS, font=small)
    for level in levels:
        x = panel.x(level)
        draw.line((x, panel.top, x, panel.bottom), fill=_GRID)
        text = str(level)
        draw.text(
            (x - draw.textlength(text, font=small) / 2, panel.bottom + 8),
            text,
            fill=_AXIS,
            font=small,
        )
    draw.rectangle((panel.left, panel.top, panel.right, panel.bottom), outline=_AXIS)


def _series(
    draw: ImageDraw.ImageDraw,
    panel: _Panel,
    rows: Sequence[LevelResult],
    value: Callable[[LevelResult], float | None],
    color: tuple[int, int, int],
) -> None:
    points = [(panel.x(r.concurrency), panel.y(v)) for r in rows if (v := value(r)) is not None]
    if len(points) > 1:
        draw.line(points, fill=color, width=3)
    for x, y in points:
        draw.ellipse((x - 5, y - 5, x + 5, y + 5), fill=color)


def _legend(
    draw: ImageDraw.ImageDraw,
    x: float,
    y: float,
    items: Sequence[tuple[str, tuple[int, int, int]]],
    font: Font,
) -> None:
    for text, color in items:
        draw.line((x, y + 9, x + 26, y + 9), fill=color, width=4)
        draw.text((x + 32, y), text, fill=_AXIS, font=font)
        x += 32 + draw.textlength(text, font=font) + 30


def render_chart(report: BenchReport, reference: Reference | None = None) -> Image.Image:
    """The chart of ``report`` (see the module doc); an empty report gives a titled blank."""
    image = Image.new("RGB", (WIDTH, HEIGHT), _BG)
    draw = ImageDraw.Draw(image)
    small, big = _font(15), _font(20)
    title = f"holodesk bench: {report.model or 'model'} at {report.endpoint} ({report.mode})"
    draw.text((_MARGIN_L, 16), title, fill=_AXIS, font=big)
    rows = list(report.levels)
    if not rows:
        draw.text((_MARGIN_L, 80), "no level finished", fill=_RED, font=big)
        return image
    extra = {reference.concurrency} if reference else set()
    levels = sorted({r.concurrency for r in rows} | extra)
    panel_h = (HEIGHT - _MARGIN_T - _GAP - _MARGIN_B) // 2
    right = WIDTH - _MARGIN_R

    tok_max = max(
        [r.total_tokens_per_s for r in rows] + [reference.tokens_per_s if reference else 0.0]
    )
    top = _Panel(
        (_MARGIN_L, _MARGIN_T + 30, right, _MARGIN_T + 30 + panel_h - 30),
        levels,
        _nice_max(tok_max * 1.05),
    )
    _draw_panel(draw, top, levels, "Tokens per second vs concurrency", small, big)
    _series(draw, top, rows, lambda r: r.total_tokens_per_s, _BLUE)
    gen = _Panel((top.left, top.top, top.right, top.bottom), levels,
                 _nice_max(max(r.generated_tokens_per_s for r in rows) * 1.05))
    for i in range(6):  # the generated axis, on the right in its colour
        value = gen.y_max * i / 5
        draw.text((gen.right + 6, gen.y(value) - 8), _label(value), fill=_ORANGE, font=small)
    _series(draw, gen, rows, lambda r: r.generated_tokens_per_s, _ORANGE)
    legend = [("total (prompt + generated), left axis", _BLUE),
              ("generated, right axis", _ORANGE)]
    if reference is not None:
        x, y = top.x(reference.concurrency), top.y(reference.tokens_per_s)
        draw.polygon([(x, y - 9), (x + 9, y), (x, y + 9), (x - 9, y)], fill=_RED)
        legend.append((f"reference {reference.tokens_per_s:,.0f} at {reference.concurrency}", _RED))
    _legend(draw, top.left + 10, top.top + 8, legend, small)

    lat_top = top.bottom + _GAP
    lat_values = [v for r in rows for v in (r.latency_p95, r.latency_p50, r.ttft_p50) if v]
    low = _Panel(
        (_MARGIN_L, lat_top, right, lat_top + panel_h - 30),
        levels,
        _nice_max(max(lat_values, default=1.0) * 1.05),
    )
    _draw_panel(draw, low, levels, "Step latency in seconds vs concurrency", small, big)
    _series(draw, low, rows, lambda r: r.latency_p50, _GREEN)
    _series(draw, low, rows, lambda r: r.latency_p95, _PURPLE)
    _series(draw, low, rows, lambda r: r.ttft_p50, _ORANGE)
    _legend(
        draw,
        low.left + 10,
        low.top + 8,
        [("step p50", _GREEN), ("step p95", _PURPLE), ("first token p50", _ORANGE)],
        small,
    )
    axis = "concurrent sessions"
    draw.text(
        ((WIDTH - draw.textlength(axis, font=small)) / 2, HEIGHT - 30), axis, fill=_AXIS, font=small
    )
    return image


def save_chart(report: BenchReport, path: Path, reference: Reference | None = None) -> Path:
    """Write :func:`render_chart` as a PNG at ``path``; returns ``path``."""
    render_chart(report, reference).save(path, format="PNG", optimize=True)
    return path
