"""What a request costs in tokens on the stand-in server, and how its answer is cut into tokens.

Images follow the base model's processor (docs/holotron.md, "Images"): the image is stretched
to the grid of 512-pixel tiles (at most 12) whose aspect ratio is closest to its own; on a tie
the larger grid wins when the image's area is more than half of that grid's; a grid of more
than one tile gets a 512x512 thumbnail too; every tile costs 256 tokens. So a 16:9 frame above
1,048,576 pixels costs 4x2 + 1 = 9 tiles (2,304 tokens), a 1280x720 one 2x1 + 1 (768).

Text has no tokenizer here: about four characters a token for the prompt, and the answer is cut
into word-sized pieces (a word with its leading space, a run of punctuation) of at most four
characters, each counted as one token and streamed as one delta, as vLLM streams tokens.
"""

from __future__ import annotations

import functools
import math
import re

TILE = 512
MAX_TILES = 12
TOKENS_PER_TILE = 256


@functools.cache
def _grids() -> tuple[tuple[int, int], ...]:
    """Every (columns, rows) grid of 1..MAX_TILES tiles, fewest tiles first."""
    grids = {
        (columns, rows)
        for columns in range(1, MAX_TILES + 1)
        for rows in range(1, MAX_TILES + 1)
        if columns * rows <= MAX_TILES
    }
    return tuple(sorted(grids, key=lambda grid: (grid[0] * grid[1], grid)))


def tile_grid(width: int, height: int) -> tuple[int, int]:
    """The (columns, rows) of 512-pixel tiles the processor stretches a ``width`` x ``height``
    image to."""
    aspect = width / height
    area = width * height
    best = (1, 1)
    best_diff = math.inf
    for columns, rows in _grids():
        diff = abs(aspect - columns / rows)
        if diff < best_diff:
            best, best_diff = (columns, rows), diff
        elif diff == best_diff and area > 0.5 * TILE * TILE * columns * rows:
            best = (columns, rows)
    return best


def image_tokens(width: int, height: int) -> int:
    """Prompt tokens of one image: its tiles, plus a thumbnail when there is more than one."""
    columns, rows = tile_grid(width, height)
    tiles = columns * rows
    return TOKENS_PER_TILE * (tiles + (1 if tiles > 1 else 0))


def text_tokens(text: str) -> int:
    """The stand-in's estimate of a prompt text's tokens."""
    return math.ceil(len(text) / 4)


_PIECE = re.compile(r" ?[^\W_]+| ?[^\w\s]+|\s+|_+", re.UNICODE)


def pieces(text: str, size: int = 4) -> list[str]:
    """``text`` cut into token-sized pieces of at most ``size`` characters (their concatenation
    is ``text``)."""
    out: list[str] = []
    position = 0
    for match in _PIECE.finditer(text):
        if match.start() > position:  # anything the pattern skipped stays, as its own pieces
            out.extend(_split(text[position : match.start()], size))
        out.extend(_split(match.group(), size))
        position = match.end()
    if position < len(text):
        out.extend(_split(text[position:], size))
    return out


def _split(piece: str, size: int) -> list[str]:
    return [piece[i : i + size] for i in range(0, len(piece), size)]
