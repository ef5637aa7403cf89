"""Drawn screens for the replay's tests: a window with a patterned button, anywhere.

The button has a label-like pattern (a dark strip, glyph bars whose heights follow the label's
letters), so a crop around it is recognisable, a relabelled one is not the same, and two of
them on one screen are ambiguous, as on a real desktop.
"""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageFont

BACKGROUND = (217, 217, 217)
BUTTON = (230, 20, 20)  # within SeeingPolicy's default tolerance of pure red


def draw_button(draw: ImageDraw.ImageDraw, x: int, y: int, scale: float = 1.0,
                colour: tuple[int, int, int] = BUTTON, label: str = "save") -> None:
    """A 160x80 button (times ``scale``) with its top-left corner at (x, y)."""
    def s(v: float) -> int:
        return round(v * scale)
    draw.rectangle((x, y, x + s(160), y + s(80)), fill=colour, outline=(0, 0, 0), width=s(2))
    draw.rectangle((x + s(10), y + s(10), x + s(150), y + s(30)), fill=(40, 40, 40))
    for i, ch in enumerate(label):
        h = 10 + (ord(ch) % 5) * 6
        draw.rectangle((x + s(20 + i * 28), y + s(40), x + s(34 + i * 28), y + s(40 + h)),
                       fill=(250, 250, 250))


def screen(buttons: list[tuple[int, int]], scale: float = 1.0,
           size: tuple[int, int] = (960, 600), *, colour: tuple[int, int, int] = BUTTON,
           label: str = "save", extra: tuple[int, int, int, int] | None = None) -> Image.Image:
    """A screen with some fixed content and a button at each of ``buttons`` (top-left corners);
    ``extra`` draws a black box (x0, y0, x1, y1): something that opened meanwhile."""
    image = Image.new("RGB", size, BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.rectangle((600, 400, 900, 560), fill=(30, 90, 200))
    draw.rectangle((40, 480, 300, 520), fill=(20, 160, 60))
    for x, y in buttons:
        draw_button(draw, x, y, scale, colour=colour, label=label)
    if extra is not None:
        draw.rectangle(extra, fill=(0, 0, 0))
    return image


DESKTOP = (20, 24, 32)
WINDOW_SIZE = (660, 540)
#: The button's top-left corner inside the window.
BUTTON_AT = (100, 100)


def window_screen(origin: tuple[int, int], size: tuple[int, int] = (1280, 800), *,
                  label: str = "save", colour: tuple[int, int, int] = BUTTON,
                  extra: tuple[int, int, int, int] | None = None) -> Image.Image:
    """A dark desktop with one window at ``origin``: the button at :data:`BUTTON_AT` inside it
    and some fixed content; the whole window moves with ``origin``."""
    image = Image.new("RGB", size, DESKTOP)
    draw = ImageDraw.Draw(image)
    ox, oy = origin
    draw.rectangle((ox, oy, ox + WINDOW_SIZE[0] - 1, oy + WINDOW_SIZE[1] - 1), fill=BACKGROUND)
    draw.rectangle((ox + 400, oy + 300, ox + 640, oy + 420), fill=(30, 90, 200))
    draw.rectangle((ox + 20, oy + 440, ox + 300, oy + 500), fill=(20, 160, 60))
    draw_button(draw, ox + BUTTON_AT[0], oy + BUTTON_AT[1], colour=colour, label=label)
    if extra is not None:
        draw.rectangle(extra, fill=(0, 0, 0))
    return image


def _font(size: int = 14) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size)


def busy_desktop(size: tuple[int, int] = (1920, 1080), *, origin: tuple[int, int] = (100, 80),
                 clock: str = "14:41") -> Image.Image:
    """A light desktop with a window full of text rows at ``origin`` (it moves with it) and a
    clock in the top right corner: a screen with detail everywhere, as real ones have."""
    image = Image.new("RGB", size, (236, 236, 236))
    draw = ImageDraw.Draw(image)
    ox, oy = origin
    draw.rectangle((ox, oy, ox + 1400, oy + 820), fill=(255, 255, 255), outline=(120, 120, 120))
    for i in range(30):
        draw.text((ox + 30, oy + 30 + i * 25),
                  f"Row {i}: quarterly_report_{i}.pdf    2026-11-{i % 28 + 1:02d}    {i * 37} KB",
                  fill=(30, 30, 30), font=_font())
    draw.text((size[0] - 70, 8), clock, fill=(20, 20, 20), font=_font())
    return image


def draw_dialog(image: Image.Image, question: str, at: tuple[int, int] = (760, 420), *,
                button: str = "Sync", colour: tuple[int, int, int] = BUTTON) -> tuple[int, int]:
    """A 420x160 dialog at ``at`` asking ``question``, with a button (by default red,
    SeeingPolicy's colour) at its bottom right; returns the button's centre."""
    draw = ImageDraw.Draw(image)
    x, y = at
    draw.rectangle((x, y, x + 420, y + 160), fill=(246, 246, 246), outline=(90, 90, 90))
    draw.rectangle((x, y, x + 420, y + 28), fill=(220, 220, 226))
    draw.text((x + 10, y + 6), "Files", fill=(0, 0, 0), font=_font())
    draw.text((x + 20, y + 50), question, fill=(0, 0, 0), font=_font())
    bx, by = x + 310, y + 110
    draw.rectangle((bx, by, bx + 90, by + 36), fill=colour, outline=(120, 10, 10))
    draw.text((bx + 28, by + 10), button, fill=(255, 255, 255), font=_font())
    return bx + 45, by + 18
