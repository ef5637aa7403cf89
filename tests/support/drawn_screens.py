"""Drawn screens for the replay's tests: a window with a patterned button, anywhere.

The button has a label-like pattern (a dark strip, glyph bars whose heights follow the label's
letters), so a crop around it is recognisable, a relabelled one is not the same, and two of
them on one screen are ambiguous, as on a real desktop.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

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
