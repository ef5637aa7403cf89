"""Drawn screenshots of the eval's task windows (app/demo/task_look.py's marks, the dot font)
for the demo planners' tests: each window a grey box framed in its colour on a dark screen,
its parts drawn where a test says, in the marks the real window paints (no display)."""

from __future__ import annotations

import io
from collections.abc import Sequence

from PIL import Image, ImageDraw

from app.demo.dots import layout
from app.demo.look import RGB, STATUS_COLORS, Status
from app.demo.task_look import (
    APPLY_BUTTON,
    BORDERS,
    CARD,
    CARD_HOVER,
    DISPLAY_TAB,
    DROP_BOX,
    INK,
    INVOICES,
    LEVEL_TAGS,
    MINUS_BUTTON,
    OPTION_TAGS,
    OPTIONS,
    PLUS_BUTTON,
    THEME_TAGS,
    THEMES,
    TICK,
    VIEW_MARK,
    ZOOM_LEVELS,
    ZOOM_MARK,
    TaskWindow,
)

SIZE = (1000, 700)
WINDOW = (200, 120, 800, 560)  # left, top, right, bottom
Box = tuple[int, int, int, int]


def _window(kind: TaskWindow) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("RGB", SIZE, (30, 30, 30))
    draw = ImageDraw.Draw(image)
    draw.rectangle(WINDOW, fill=(217, 217, 217), outline=BORDERS[kind], width=8)
    return image, draw


def frame(draw: ImageDraw.ImageDraw, box: Box, color: RGB, width: int = 4) -> None:
    draw.rectangle(box, outline=color, width=width)


def dots(draw: ImageDraw.ImageDraw, text: str, at: tuple[int, int], unit: int = 4) -> None:
    for dot in layout(text, unit)[0]:
        x, y = at[0] + dot.x, at[1] + dot.y
        draw.rectangle((x, y, x + dot.size - 1, y + dot.size - 1), fill=INK)


def centre(box: Box) -> tuple[float, float]:
    return (box[0] + box[2] + 1) / 2, (box[1] + box[3] + 1) / 2


def norm(point: tuple[float, float]) -> tuple[int, int]:
    return round(point[0] / SIZE[0] * 1000), round(point[1] / SIZE[1] * 1000)


def jpeg(image: Image.Image, quality: int = 90) -> Image.Image:
    """``image`` as the client sends it: JPEG, decoded again."""
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return Image.open(io.BytesIO(buffer.getvalue()))


# -- the menu window ------------------------------------------------------------------------------
VIEW_BOX = (260, 128, 310, 150)
ZOOM_BOX = (262, 190, 380, 212)
SWATCH_BOX = (330, 170, 370, 190)
ICONS = {level: (400, 200 + 26 * i, 414, 214 + 26 * i) for i, level in enumerate(ZOOM_LEVELS)}


def menu(zoom: str = "100%", *, view_open: bool = False, zoom_open: bool = False) -> Image.Image:
    image, draw = _window(TaskWindow.MENU)
    draw.rectangle(VIEW_BOX, fill=VIEW_MARK)
    draw.rectangle(SWATCH_BOX, fill=LEVEL_TAGS[zoom])
    if view_open or zoom_open:
        draw.rectangle((258, 150, 390, 260), fill=(236, 236, 236))
        draw.rectangle(ZOOM_BOX, fill=ZOOM_MARK)
    if zoom_open:
        draw.rectangle((390, 190, 480, 300), fill=(236, 236, 236))
        for level, box in ICONS.items():
            draw.rectangle(box, fill=LEVEL_TAGS[level])
    return image


# -- the board window ----------------------------------------------------------------------------
DONE_BOX = (520, 200, 760, 500)
CARD_AT = {"todo": (260, 240, 430, 296), "done": (555, 240, 725, 296)}


def board(where: str = "todo", *, hover: bool = False, without: Sequence[str] = ()
          ) -> Image.Image:
    image, draw = _window(TaskWindow.DRAG)
    draw.rectangle((240, 200, 480, 500), outline=(144, 144, 144), width=5)
    if "done" not in without:
        frame(draw, DONE_BOX, DROP_BOX, 5)
    if "card" not in without:
        draw.rectangle(CARD_AT[where], fill=CARD_HOVER if hover else CARD)
        draw.text((CARD_AT[where][0] + 12, CARD_AT[where][1] + 20), "Pay the rent",
                  fill=(0, 0, 0))
    return image


# -- the invoices window -------------------------------------------------------------------------
def invoices(rows: Sequence[tuple[str, str, str]] = INVOICES) -> Image.Image:
    image, draw = _window(TaskWindow.INVOICES)
    draw.rectangle((220, 170, 780, 540), fill=(255, 255, 255))
    draw.text((230, 180), "Invoice       Customer        Total (EUR)", fill=(0, 0, 0))
    for i, (number, customer, total) in enumerate(rows):
        top = 210 + 46 * i
        dots(draw, number, (230, top))
        draw.text((430, top + 8), customer, fill=(0, 0, 0))
        dots(draw, total, (620, top))
    return image


# -- the settings window -------------------------------------------------------------------------
def option_rows() -> dict[str, tuple[Box, Box]]:
    """Each option's box and icon."""
    return {option: ((230, 190 + 40 * i, 242, 202 + 40 * i),
                     (252, 188 + 40 * i, 268, 204 + 40 * i)) for i, option in enumerate(OPTIONS)}


APPLY_BOX = (640, 480, 760, 520)


def settings(ticked: dict[str, bool], *, applied: bool = False) -> Image.Image:
    image, draw = _window(TaskWindow.SETTINGS)
    for option, (box, icon) in option_rows().items():
        draw.rectangle(box, fill=TICK if ticked[option] else (255, 255, 255),
                       outline=(80, 80, 80))
        draw.rectangle(icon, fill=OPTION_TAGS[option])
        draw.text((276, icon[1] + 2), option, fill=(0, 0, 0))
    draw.rectangle((230, 485, 256, 505),
                   fill=STATUS_COLORS[Status.DONE if applied else Status.TODO])
    frame(draw, APPLY_BOX, APPLY_BUTTON)
    return image


# -- the print window ----------------------------------------------------------------------------
MINUS_BOX = (330, 200, 380, 240)
PLUS_BOX = (520, 200, 570, 240)
OK_BOX = (640, 400, 760, 440)


def copies(number: int, *, set_: bool = False) -> Image.Image:
    image, draw = _window(TaskWindow.COPIES)
    frame(draw, MINUS_BOX, MINUS_BUTTON)
    frame(draw, PLUS_BOX, PLUS_BUTTON)
    draw.rectangle((395, 188, 505, 252), fill=(255, 255, 255))
    dots(draw, str(number), (420, 199), unit=6)
    draw.rectangle((230, 405, 256, 425), fill=STATUS_COLORS[Status.DONE if set_ else Status.TODO])
    frame(draw, OK_BOX, APPLY_BUTTON)
    return image


# -- the preferences window ----------------------------------------------------------------------
DISPLAY_TAB_BOX = (300, 140, 316, 156)
THEME_ROWS = {theme: ((230, 200 + 30 * i, 242, 212 + 30 * i),
                      (252, 198 + 30 * i, 268, 214 + 30 * i)) for i, theme in enumerate(THEMES)}
PREFS_APPLY_BOX = (640, 480, 760, 520)


def prefs(tab: str = "General", chosen: str = "Light", *, applied: bool = False) -> Image.Image:
    image, draw = _window(TaskWindow.PREFS)
    draw.rectangle(DISPLAY_TAB_BOX, fill=DISPLAY_TAB)
    if tab == "Display":
        for theme, (box, icon) in THEME_ROWS.items():
            draw.ellipse(box, fill=TICK if theme == chosen else (255, 255, 255),
                         outline=(80, 80, 80))
            draw.rectangle(icon, fill=THEME_TAGS[theme])
    draw.rectangle((230, 485, 256, 505),
                   fill=STATUS_COLORS[Status.DONE if applied else Status.TODO])
    frame(draw, PREFS_APPLY_BOX, APPLY_BUTTON)
    return image
