"""A dot font: text drawn as squares on a grid, which the demo model can read back from a
screenshot without OCR.

The task windows that show a value the demo model must read (the invoices' table, the number
of copies) draw it with :func:`layout`: each glyph a 5 x 7 pattern of squares of ``unit``
pixels, narrowed to its inked columns, one empty column between glyphs and
:data:`SPACE` between words, in :data:`app.demo.task_look.INK`. To a person or a real model it
is a dot-matrix display. :func:`read_lines` reads it back: lines by their inked rows, glyphs
by the empty columns between them, each glyph by the nearest pattern of its width.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_ROWS = 7
#: Empty columns between words (one is the gap between the glyphs of a word).
SPACE = 3

_FONT_5x7: dict[str, tuple[str, ...]] = {
    "0": ("01110", "10001", "10011", "10101", "11001", "10001", "01110"),
    "1": ("00100", "01100", "00100", "00100", "00100", "00100", "01110"),
    "2": ("01110", "10001", "00001", "00010", "00100", "01000", "11111"),
    "3": ("11111", "00010", "00100", "00010", "00001", "10001", "01110"),
    "4": ("00010", "00110", "01010", "10010", "11111", "00010", "00010"),
    "5": ("11111", "10000", "11110", "00001", "00001", "10001", "01110"),
    "6": ("00110", "01000", "10000", "11110", "10001", "10001", "01110"),
    "7": ("11111", "00001", "00010", "00100", "01000", "01000", "01000"),
    "8": ("01110", "10001", "10001", "01110", "10001", "10001", "01110"),
    "9": ("01110", "10001", "10001", "01111", "00001", "00010", "01100"),
    ".": ("0", "0", "0", "0", "0", "1", "1"),
    "-": ("000", "000", "000", "111", "000", "000", "000"),
    "%": ("11000", "11001", "00010", "00100", "01000", "10011", "00011"),
    "I": ("111", "010", "010", "010", "010", "010", "111"),
    "N": ("10001", "11001", "10101", "10011", "10001", "10001", "10001"),
    "V": ("10001", "10001", "10001", "10001", "10001", "01010", "00100"),
}


def _narrowed(rows: tuple[str, ...]) -> tuple[str, ...]:
    """The pattern without its empty columns at either side."""
    used = [i for i in range(len(rows[0])) if any(r[i] == "1" for r in rows)]
    return tuple(r[used[0]:used[-1] + 1] for r in rows)


#: Every glyph as drawn: its inked columns only.
GLYPHS: dict[str, tuple[str, ...]] = {ch: _narrowed(rows) for ch, rows in _FONT_5x7.items()}


class DotFontError(ValueError):
    """Text with a character the dot font has no glyph for."""


@dataclass(frozen=True)
class Dot:
    """One square of the text, in pixels from the text's top left corner."""

    x: int
    y: int
    size: int


def layout(text: str, unit: int) -> tuple[list[Dot], int]:
    """The squares that draw ``text`` (``unit`` pixels each) and its width in pixels.

    Raises DotFontError for a character without a glyph (it says which ones there are).
    """
    dots: list[Dot] = []
    column = 0
    for word_no, word in enumerate(text.split(" ")):
        if word_no:
            column += SPACE - 1
        for ch in word:
            glyph = GLYPHS.get(ch.upper())
            if glyph is None:
                raise DotFontError(f"the dot font has no {ch!r}; it has "
                                   f"{''.join(sorted(GLYPHS))} and spaces")
            for row, bits in enumerate(glyph):
                dots += [Dot((column + i) * unit, row * unit, unit)
                         for i, bit in enumerate(bits) if bit == "1"]
            column += len(glyph[0]) + 1
    return dots, max(0, column - 1) * unit


def ink(pixels: Any) -> Any:
    """Which of ``pixels`` (rows of RGB) are the dot font's ink: blue well above red and green,
    which stay dark. By hue, not by a distance to :data:`app.demo.task_look.INK`: JPEG's
    halved colour resolution pales a lone square towards the white round it, but keeps it
    blue; black text and its grey edges are never blue."""
    import numpy as np

    rgb = np.asarray(pixels, dtype=np.int16)
    red_green = np.maximum(rgb[..., 0], rgb[..., 1])
    return (rgb[..., 2] - red_green >= 40) & (red_green <= 110)


def _runs(flags: Sequence[bool]) -> list[tuple[int, int]]:
    """The runs of True in ``flags``: (start, end) with end exclusive."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for i, flag in enumerate(flags):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            runs.append((start, i))
            start = None
    if start is not None:
        runs.append((start, len(flags)))
    return runs


def _glyph(cells: list[str]) -> str:
    """The character whose pattern is nearest ``cells`` (of the same width); "?" when none is
    near."""
    width = len(cells[0])
    best, score = "?", 4  # more than 3 squares wrong: not read
    for ch, glyph in GLYPHS.items():
        if len(glyph[0]) != width:
            continue
        wrong = sum(a != b for row, want in zip(cells, glyph, strict=True)
                    for a, b in zip(row, want, strict=True))
        if wrong < score:
            best, score = ch, wrong
    return best


def read_lines(ink: Any) -> list[tuple[float, list[str]]]:
    """The dot-font text in ``ink`` (a numpy mask of the ink's pixels), top to bottom: each line's
    middle row and its words, left to right.

    A line must hold a glyph of full height (a digit or a letter); its height gives the size
    of a square.
    """
    lines: list[tuple[float, list[str]]] = []
    for top, bottom in _runs(ink.any(axis=1).tolist()):
        height = bottom - top
        if height < _ROWS * 2:  # a sliver (a JPEG fringe), not text
            continue
        unit = height / _ROWS
        band = ink[top:bottom]
        words: list[str] = []
        word = ""
        last_end: int | None = None
        for left, right in _runs(band.any(axis=0).tolist()):
            if right - left < unit * 0.6:
                continue
            if last_end is not None and left - last_end > unit * (SPACE - 0.5):
                words.append(word)
                word = ""
            columns = max(1, round((right - left) / unit))
            cells = []
            for row in range(_ROWS):
                y = int((row + 0.5) * unit)
                cells.append("".join(
                    "1" if band[y, min(right - 1, left + int((col + 0.5) * (right - left)
                                                             / columns))] else "0"
                    for col in range(columns)))
            word += _glyph(cells)
            last_end = right
        if word:
            words.append(word)
        lines.append(((top + bottom) / 2, words))
    return lines
