"""Generated desktop-like screenshots for ``holodesk bench``: windows, text, a taskbar.

The load generator needs many screenshots that cost the server what real ones cost: the same
size (the tile grid, hence the image tokens, depends only on the size), a realistic JPEG size
(the request body, the decode), and content that differs per session and per step, because
vLLM recognises an image it has seen by its content and reuses its work. A frame is drawn from
a seed: a wallpaper with some grain (flat colours would compress to unrealistically small
files), a few windows with title bars, lines of text, buttons and a terminal, a taskbar with a
clock. The per-session layout is drawn once and each step draws its own changes onto a copy
(new text, a moved window, the clock), so no two steps of any session are byte-identical.

Encoded like a run sends a frame: JPEG, quality 90, 4:4:4 chroma (control/capture.py).
"""

from __future__ import annotations

import functools
import io
import random
import threading
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw, ImageFont

__all__ = ["GeneratedFrames", "Screenshot", "desktop_frame", "encode_jpeg"]

_WORD_TEXT = (
    "file edit view insert format tools window help report invoice budget quarterly draft "
    "meeting notes project timeline review status update send archive search settings "
    "display network printer account profile download upload folder document spreadsheet "
    "total amount customer order shipping address payment date time name value open close "
    "save cancel apply next back finish summary details preview export import refresh"
)
_WORDS = tuple(_WORD_TEXT.split())
_APPS = ("Text Editor", "Files", "Terminal", "Mail", "Spreadsheet", "Browser", "Settings")


@dataclass(frozen=True)
class Screenshot:
    """One encoded screenshot as a run would send it."""

    data: bytes
    mime: str
    width: int
    height: int


def encode_jpeg(image: Image.Image, quality: int = 90) -> bytes:
    """JPEG like a run sends it: the given quality, 4:4:4 chroma (keeps small text legible)."""
    out = io.BytesIO()
    image.convert("RGB").save(out, format="JPEG", quality=quality, subsampling=0)
    return out.getvalue()


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # a Pillow without FreeType: the bitmap font, fixed size
        return ImageFont.load_default()


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize()


@functools.cache
def _grain(width: int, height: int) -> NDArray[np.float32]:
    # Drawn once per size: the costly part of a wallpaper, and nothing a cache could exploit
    # (the gradient under it differs per session).
    noise = np.random.default_rng(7).normal(0.0, 4.0, (height, width, 1))
    return noise.astype(np.float32)


def _wallpaper(rng: random.Random, width: int, height: int) -> Image.Image:
    # A two-colour gradient plus grain: real wallpapers are photos, which never compress flat.
    a = np.array([rng.randrange(20, 120) for _ in range(3)], dtype=np.float32)
    b = np.array([rng.randrange(80, 220) for _ in range(3)], dtype=np.float32)
    t = np.linspace(0.0, 1.0, width, dtype=np.float32)[None, :, None]
    s = np.linspace(0.0, 1.0, height, dtype=np.float32)[:, None, None]
    mix = (t + s) / 2
    base = a * (1 - mix) + b * mix
    pixels = np.clip(base + _grain(width, height), 0, 255).astype(np.uint8)
    return Image.fromarray(pixels, "RGB")


def _window(
    draw: ImageDraw.ImageDraw, rng: random.Random, box: tuple[int, int, int, int], scale: float
) -> None:
    left, top, right, bottom = box
    title_h = int(32 * scale)
    draw.rectangle(box, fill=(250, 250, 250), outline=(120, 120, 120))
    draw.rectangle((left, top, right, top + title_h), fill=(rng.randrange(40, 90),) * 3)
    font = _font(max(10, int(15 * scale)))
    draw.text((left + 10, top + 7 * scale), rng.choice(_APPS), fill=(240, 240, 240), font=font)
    for i in range(3):  # the window buttons
        cx = right - int((20 + 28 * i) * scale)
        draw.ellipse((cx - 7, top + 9 * scale, cx + 7, top + 23 * scale), fill=(200, 90, 80))
    y = top + title_h + int(12 * scale)
    line_h = max(14, int(22 * scale))  # tiny test frames: a few lines, not hundreds
    terminal = rng.random() < 0.3
    if terminal:
        draw.rectangle((left + 1, top + title_h, right - 1, bottom - 1), fill=(24, 26, 30))
    while y + line_h < bottom - int(50 * scale):
        text = _sentence(rng, rng.randrange(3, 12))
        if terminal:
            draw.text((left + 10, y), "$ " + text.lower(), fill=(180, 230, 180), font=font)
        else:
            draw.text((left + 14, y), text, fill=(30, 30, 30), font=font)
        y += line_h
    # two buttons at the bottom right
    bw, bh = int(90 * scale), int(30 * scale)
    for i, label in enumerate(("OK", "Cancel")):
        bx = right - (i + 1) * (bw + 12)
        by = bottom - bh - 10
        draw.rounded_rectangle((bx, by, bx + bw, by + bh), 5, fill=(60, 110, 200))
        draw.text((bx + 12, by + 6), label, fill=(255, 255, 255), font=font)


def desktop_frame(seed: int, width: int = 2048, height: int = 1152) -> Image.Image:
    """A desktop-like screenshot drawn from ``seed`` (same seed, same pixels)."""
    rng = random.Random(seed)
    image = _wallpaper(rng, width, height)
    draw = ImageDraw.Draw(image)
    scale = width / 2048
    for _ in range(rng.randrange(2, 5)):
        w = rng.randrange(width // 4, width * 2 // 3)
        h = rng.randrange(height // 4, height * 2 // 3)
        x = rng.randrange(0, width - w)
        y = rng.randrange(0, height - h - int(40 * scale))
        _window(draw, rng, (x, y, x + w, y + h), scale)
    clock = f"{rng.randrange(24):02d}:{rng.randrange(60):02d}"
    _taskbar(draw, rng, width, height, scale, label=clock)
    return image


def _taskbar(
    draw: ImageDraw.ImageDraw,
    rng: random.Random,
    width: int,
    height: int,
    scale: float,
    label: str,
) -> None:
    bar = int(40 * scale)
    draw.rectangle((0, height - bar, width, height), fill=(32, 34, 40))
    font = _font(max(10, int(15 * scale)))
    for i, app in enumerate(_APPS[:5]):
        draw.text(
            (int((20 + 140 * i) * scale), height - bar + 10 * scale),
            app,
            fill=(220, 220, 220),
            font=font,
        )
    draw.text(
        (width - int(90 * scale), height - bar + 10 * scale), label, fill=(240, 240, 240), font=font
    )


class GeneratedFrames:
    """Screenshots for every (session, step) of a bench, all different, drawn on demand.

    ``nonce`` separates bench runs (and levels): two runs never send the same image, so a
    server that kept its cache from the last run gets no free hits. Thread-safe: each session
    thread draws its own frames; the per-session base layout is drawn once and cached.
    """

    def __init__(
        self, width: int = 2048, height: int = 1152, *, quality: int = 90, nonce: int | None = None
    ) -> None:
        if width < 64 or height < 64:
            raise ValueError(f"frame size too small: {width}x{height}")
        self.width = width
        self.height = height
        self.quality = quality
        self.nonce = random.randrange(1 << 30) if nonce is None else nonce
        self._bases: dict[int, Image.Image] = {}
        self._lock = threading.Lock()

    def _base(self, session: int) -> Image.Image:
        with self._lock:
            base = self._bases.get(session)
        if base is None:
            base = desktop_frame(hash((self.nonce, session)) & 0x7FFFFFFF, self.width, self.height)
            with self._lock:
                self._bases[session] = base
        return base

    def __call__(self, session: int, index: int) -> Screenshot:
        """The screenshot of ``session`` at its ``index``-th step."""
        rng = random.Random(hash((self.nonce, session, index)) & 0x7FFFFFFF)
        image = self._base(session).copy()
        draw = ImageDraw.Draw(image)
        scale = self.width / 2048
        # The step's own change: a window in front with new content, and the clock.
        w = rng.randrange(self.width // 4, self.width // 2)
        h = rng.randrange(self.height // 4, self.height // 2)
        x = rng.randrange(0, self.width - w)
        y = rng.randrange(0, max(1, self.height - h - int(40 * scale)))
        _window(draw, rng, (x, y, x + w, y + h), scale)
        _taskbar(
            draw,
            rng,
            self.width,
            self.height,
            scale,
            label=f"{index // 60 % 24:02d}:{index % 60:02d}",
        )
        return Screenshot(encode_jpeg(image, self.quality), "image/jpeg", self.width, self.height)

    def forget(self) -> None:
        """Drop the cached base layouts (between levels: they hold full-size images)."""
        with self._lock:
            self._bases.clear()
