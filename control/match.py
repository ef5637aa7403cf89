"""Finding a recorded patch of the screen again: template matching with numpy and Pillow.

A replayed step (app/replay.py) knows what the screen looked like around the point it acted
on; here that crop is looked for in today's screen. The search is normalised cross-correlation
(NCC) on grayscale images, done in two passes so a full monitor costs a few FFTs:

* coarse: the screen and the crop box-reduced by :data:`COARSE` (1920x1080 becomes 480x270),
  the crop tried at a few scales around the one expected (a display scaled from 100 % to 125 %
  draws every control 1.25 times larger); the NCC of every position at once by FFT, window
  statistics from integral images;
* fine: around the best coarse position, at full resolution, the same NCC over a small window,
  for a position exact to the pixel.

A match counts only when it is confident and unique, because a replay acts on it without
asking a model:

* its NCC is at least :data:`MIN_SCORE`, and the middle half of the crop around the point acted
  on, alone, scores at least :data:`MIN_FOCUS_SCORE` (a relabelled button in an unchanged
  window still looks much like the crop as a whole);
* its colours are those of the crop (NCC ignores brightness and contrast, so a red button
  turned green would otherwise still match): mean absolute difference per channel at most
  :data:`MAX_COLOUR_DIFF`;
* no detail of that middle half changed: the grey levels of every 8x8 block of it differ by at
  most :data:`MAX_DETAIL_DIFF` on average (NCC over a whole crop barely notices a button's
  label turning from "Save" into "Store"; a block of changed letters stands out);
* the best position elsewhere (outside the neighbourhood of the best) scores at least
  :data:`MIN_MARGIN` lower: two identical buttons are not a confident match for either.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

__all__ = [
    "COARSE",
    "MAX_COLOUR_DIFF",
    "MIN_MARGIN",
    "MIN_SCORE",
    "Match",
    "NoMatch",
    "find",
    "largest_block_difference",
    "shifted_difference",
]

FloatArray = NDArray[np.float64]

#: Box reduction of the coarse pass.
COARSE = 4
#: The lowest NCC that counts as found.
MIN_SCORE = 0.95
#: The lowest NCC of the middle half of the crop, around the point acted on.
MIN_FOCUS_SCORE = 0.95
#: The largest mean difference (grey levels) of any 8x8 block around the point acted on.
MAX_DETAIL_DIFF = 24.0
_DETAIL_BLOCK = 8
#: How much lower the best other position must score.
MIN_MARGIN = 0.08
#: The largest mean absolute difference (0-255, per channel) between crop and match.
MAX_COLOUR_DIFF = 24.0
#: Scales tried around the expected one.
SCALE_STEPS: tuple[float, ...] = (1.0, 1 / 1.1, 1.1, 1 / 1.25, 1.25)
#: The smallest crop side (pixels, after scaling) the coarse pass can still use.
_MIN_SIDE = 8 * COARSE
#: A crop with less contrast than this (standard deviation of grey levels) is flat: it would
#: match any patch of the same colour.
_MIN_STD = 4.0


@dataclass(frozen=True)
class Match:
    """Where the crop is: its top-left corner in the screen image (pixels), the scale it was
    found at, its NCC score and the margin over the best other position."""

    left: int
    top: int
    scale: float
    score: float
    margin: float
    colour_diff: float


@dataclass(frozen=True)
class NoMatch:
    """Why the crop was not found with confidence, in words for the log and the model."""

    reason: str
    score: float = 0.0


def find(screen: Image.Image, crop: Image.Image, *, scale: float = 1.0,
         scales: Sequence[float] = SCALE_STEPS,
         focus: tuple[float, float] | None = None) -> Match | NoMatch:
    """Look for ``crop`` in ``screen`` (both RGB), expected ``scale`` times its size there.

    ``focus`` is the point acted on, in pixels of ``crop`` (default: its centre).

    Returns the confident, unique :class:`Match`, or :class:`NoMatch` saying why not.
    """
    screen_rgb = screen.convert("RGB")
    crop_rgb = crop.convert("RGB")
    gray = np.asarray(screen_rgb.convert("L"), dtype=np.float64)
    coarse_screen = _reduce(screen_rgb.convert("L"), COARSE)
    best: tuple[float, float, int, int, FloatArray] | None = None  # score, scale, y, x, map
    for step in scales:
        s = scale * step
        w, h = round(crop_rgb.width * s), round(crop_rgb.height * s)
        if w < _MIN_SIDE or h < _MIN_SIDE or w > screen_rgb.width or h > screen_rgb.height:
            continue
        template = _reduce(crop_rgb.convert("L").resize((w, h), Image.Resampling.BILINEAR),
                           COARSE)
        if float(template.std()) < _MIN_STD:
            return NoMatch("the recorded patch is a flat colour: nothing to recognise it by")
        scores = ncc(coarse_screen, template)
        y, x = np.unravel_index(int(np.argmax(scores)), scores.shape)
        value = float(scores[y, x])
        if best is None or value > best[0]:
            best = (value, s, int(y), int(x), scores)
    if best is None:
        return NoMatch("the recorded patch does not fit this screen at any scale tried")
    value, s, cy, cx, scores = best
    th, tw = (round(crop_rgb.height * s) // COARSE, round(crop_rgb.width * s) // COARSE)
    margin = value - _second_best(scores, cy, cx, max(1, th // 2), max(1, tw // 2))
    if value < MIN_SCORE:
        return NoMatch(f"not found (best likeness {value:.2f}, needs {MIN_SCORE:.2f})", value)
    if margin < MIN_MARGIN:
        return NoMatch(f"found in more than one place (likeness {value:.2f}, another place "
                       f"{value - margin:.2f})", value)
    # Fine pass: full resolution, a few pixels around the coarse position.
    w, h = round(crop_rgb.width * s), round(crop_rgb.height * s)
    sized = crop_rgb.resize((w, h), Image.Resampling.BILINEAR) if (w, h) != crop_rgb.size \
        else crop_rgb
    pad = 2 * COARSE
    x0, y0 = max(0, cx * COARSE - pad), max(0, cy * COARSE - pad)
    x1 = min(gray.shape[1], cx * COARSE + w + pad)
    y1 = min(gray.shape[0], cy * COARSE + h + pad)
    fine = ncc(gray[y0:y1, x0:x1], np.asarray(sized.convert("L"), dtype=np.float64))
    fy, fx = np.unravel_index(int(np.argmax(fine)), fine.shape)
    left, top = x0 + int(fx), y0 + int(fy)
    fine_score = float(fine[fy, fx])
    if fine_score < MIN_SCORE:
        return NoMatch(f"not found (best likeness {fine_score:.2f}, needs {MIN_SCORE:.2f})",
                       fine_score)
    fx0, fy0, fx1, fy1 = _focus_box(w, h, focus, s)
    focus_score = float(ncc(gray[top + fy0:top + fy1, left + fx0:left + fx1],
                            np.asarray(sized.convert("L"), dtype=np.float64)[fy0:fy1, fx0:fx1]
                            ).max(initial=0.0))
    if focus_score < MIN_FOCUS_SCORE:
        return NoMatch(f"the surroundings match but the target itself changed (likeness "
                       f"{focus_score:.2f}, needs {MIN_FOCUS_SCORE:.2f})", fine_score)
    detail = _detail_difference(gray[top + fy0:top + fy1, left + fx0:left + fx1],
                                np.asarray(sized.convert("L"), dtype=np.float64)[fy0:fy1, fx0:fx1])
    if detail > MAX_DETAIL_DIFF:
        return NoMatch(f"the target itself looks different (a detail differs by {detail:.0f}, "
                       f"at most {MAX_DETAIL_DIFF:.0f})", fine_score)
    found = np.asarray(screen_rgb.crop((left, top, left + w, top + h)), dtype=np.float64)
    colour = float(np.abs(found - np.asarray(sized, dtype=np.float64)).mean())
    if colour > MAX_COLOUR_DIFF:
        return NoMatch(f"the same shapes in other colours (colour difference {colour:.0f}, at "
                       f"most {MAX_COLOUR_DIFF:.0f})", fine_score)
    return Match(left, top, s, fine_score, margin, colour)


def ncc(image: FloatArray, template: FloatArray) -> FloatArray:
    """The normalised cross-correlation of ``template`` at every position where it fits in
    ``image`` (shape ``(H - h + 1, W - w + 1)``), in [-1, 1]; 0 where the image is flat."""
    image = np.asarray(image, dtype=np.float64)
    template = np.asarray(template, dtype=np.float64)
    h, w = template.shape
    big_h, big_w = image.shape
    if h > big_h or w > big_w:
        return np.zeros((0, 0))
    t = template - template.mean()
    t_norm = math.sqrt(float((t * t).sum()))
    if t_norm == 0:
        return np.zeros((big_h - h + 1, big_w - w + 1))
    shape = (_fast_size(big_h + h - 1), _fast_size(big_w + w - 1))
    spectrum = np.fft.rfft2(image, shape) * np.fft.rfft2(t[::-1, ::-1], shape)
    corr = np.fft.irfft2(spectrum, shape)[h - 1:big_h, w - 1:big_w]
    n = h * w
    window_sum = _window_sums(image, h, w)
    window_sq = _window_sums(image * image, h, w)
    variance = np.maximum(window_sq - window_sum * window_sum / n, 0.0)
    denominator = np.sqrt(variance) * t_norm
    out = np.zeros_like(corr)
    # Flat windows (a single-colour area) have no shape to compare: score 0, never a match.
    ok = denominator > 1e-6 * t_norm * math.sqrt(n)
    out[ok] = corr[ok] / denominator[ok]
    return np.clip(out, -1.0, 1.0)


def shifted_difference(before: NDArray[Any], screen: Image.Image, dx: int, dy: int,
                       factor: int, *, block: int = 0) -> float:
    """Mean absolute difference (grey levels) between ``before``, a thumbnail of an earlier
    screen box-reduced by ``factor``, and ``screen`` moved back by (``dx``, ``dy``) pixels:
    is the screen as it was, give or take where a window moved to? Only the part the moved
    screen still covers counts (255 when that is less than half of it).

    With ``block`` (thumbnail pixels), the largest mean over ``block`` x ``block`` blocks
    instead (:func:`largest_block_difference`): a mean over the whole screen barely moves for
    a dialog that covers a tenth of it, the block the dialog covers does.

    The move is made in full pixels before reducing: a thumbnail moved by whole thumbnail
    pixels would be up to half a pixel off, and every edge would count as a change.
    """
    width, height = screen.size
    aligned = screen.convert("L").crop((dx, dy, dx + width, dy + height))  # outside: black
    now = np.asarray(aligned.reduce(factor), dtype=np.int16)
    old = np.asarray(before, dtype=np.int16)
    if old.shape != now.shape:
        return 255.0
    x0, x1 = math.ceil(max(0, -dx) / factor), (min(width, width - dx)) // factor
    y0, y1 = math.ceil(max(0, -dy) / factor), (min(height, height - dy)) // factor
    if (x1 - x0) * 2 < old.shape[1] or (y1 - y0) * 2 < old.shape[0]:
        return 255.0
    if block:
        return largest_block_difference(old[y0:y1, x0:x1], now[y0:y1, x0:x1], block)
    return float(np.abs(old[y0:y1, x0:x1] - now[y0:y1, x0:x1]).mean())


def _detail_difference(found: FloatArray, recorded: FloatArray) -> float:
    """The largest mean absolute difference of an 8x8 block between two same-size images."""
    return largest_block_difference(found, recorded, _DETAIL_BLOCK)


def largest_block_difference(found: NDArray[Any], recorded: NDArray[Any], block: int) -> float:
    """The largest mean absolute difference (grey levels) of a ``block`` x ``block`` block
    between two same-size grey images (255 when their sizes differ or they are empty)."""
    if found.shape != recorded.shape or found.size == 0:
        return 255.0
    diff = np.abs(np.asarray(found, dtype=np.float64) - np.asarray(recorded, dtype=np.float64))
    b = block
    h, w = (diff.shape[0] + b - 1) // b * b, (diff.shape[1] + b - 1) // b * b
    padded = np.zeros((h, w))
    padded[:diff.shape[0], :diff.shape[1]] = diff
    # Blocks cut by the edge are averaged over their real pixels only.
    counts = np.zeros((h, w))
    counts[:diff.shape[0], :diff.shape[1]] = 1.0
    sums = padded.reshape(h // b, b, w // b, b).sum(axis=(1, 3))
    sizes = counts.reshape(h // b, b, w // b, b).sum(axis=(1, 3))
    return float((sums / np.maximum(sizes, 1.0)).max())


def _focus_box(w: int, h: int, focus: tuple[float, float] | None,
               scale: float) -> tuple[int, int, int, int]:
    """The middle half of a ``w`` x ``h`` crop, centred on ``focus`` (scaled), kept inside."""
    fx, fy = (w / 2, h / 2) if focus is None else (focus[0] * scale, focus[1] * scale)
    bw, bh = max(1, w // 2), max(1, h // 2)
    x0 = min(max(0, round(fx - bw / 2)), w - bw)
    y0 = min(max(0, round(fy - bh / 2)), h - bh)
    return x0, y0, x0 + bw, y0 + bh


def _reduce(image: Image.Image, factor: int) -> FloatArray:
    return np.asarray(image.reduce(factor) if factor > 1 else image, dtype=np.float64)


def _window_sums(values: FloatArray, h: int, w: int) -> FloatArray:
    integral = np.zeros((values.shape[0] + 1, values.shape[1] + 1))
    integral[1:, 1:] = values.cumsum(0).cumsum(1)
    return (integral[h:, w:] - integral[:-h, w:] - integral[h:, :-w]  # type: ignore[no-any-return]
            + integral[:-h, :-w])


def _second_best(scores: FloatArray, y: int, x: int, ry: int, rx: int) -> float:
    """The best score outside the (2ry+1) x (2rx+1) neighbourhood of (y, x)."""
    masked = scores.copy()
    masked[max(0, y - ry):y + ry + 1, max(0, x - rx):x + rx + 1] = -1.0
    return float(masked.max()) if masked.size else -1.0


def _fast_size(n: int) -> int:
    """The smallest 2^a 3^b 5^c at least ``n``: sizes numpy's FFT handles fast."""
    best = 1 << max(0, (n - 1).bit_length())
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            p = p35
            while p < n:
                p *= 2
            best = min(best, p)
            p35 *= 3
        p5 *= 5
    return best
