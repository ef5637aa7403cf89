"""Drawn screenshots of the practice window (app/demo/look.py's marks) for the demo tests."""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image

from app.demo.look import (
    BLUE_SWATCH,
    BORDER,
    DELETE_BUTTON,
    NAME_FIELD,
    OTHER_SWATCHES,
    SAVE_BUTTON,
    STATUS_COLORS,
    Status,
)
from tests.support.fake_policies import screenshot

SIZE = (1280, 800)
WINDOW = (260, 140, 1020, 660)  # left, top, right, bottom
Box = tuple[int, int, int, int]
Color = tuple[int, int, int]

# Where each part is drawn (a frame 5 px wide, as the practice window draws its marks).
NAME_BOX = (386, 230, 694, 322)
SAVE_BOX = (386, 444, 536, 538)
DELETE_BOX = (544, 444, 694, 538)
SWATCHES = {"Red": (389, 331, 413, 355), "Green": (389, 357, 413, 381),
            "Blue": (389, 383, 413, 407)}


def frame(box: Box, color: Color, width: int = 5) -> list[tuple[Box, Color]]:
    left, top, right, bottom = box
    return [((left, top, right, top + width), color),
            ((left, bottom - width, right, bottom), color),
            ((left, top, left + width, bottom), color),
            ((right - width, top, right, bottom), color)]


def practice(statuses: Sequence[Status] = (Status.TODO,) * 4, *,
             covers: Sequence[Box] = (), offset: tuple[int, int] = (0, 0),
             size: tuple[int, int] = SIZE, without: Sequence[str] = ()) -> Image.Image:
    """A screenshot with the practice window drawn, ``covers`` painted grey over it."""
    dx, dy = offset

    def moved(box: Box) -> Box:
        return (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy)

    rects: list[tuple[Box, Color]] = [(moved(WINDOW), (239, 239, 239))]
    rects += frame(moved(WINDOW), BORDER, 8)
    parts = {"name": (NAME_BOX, NAME_FIELD), "save": (SAVE_BOX, SAVE_BUTTON),
             "delete": (DELETE_BOX, DELETE_BUTTON)}
    for key, (box, color) in parts.items():
        if key not in without:
            rects += frame(moved(box), color)
    for text, box in SWATCHES.items():
        if text == "Blue" and "blue" in without:
            continue
        rects.append((moved(box), BLUE_SWATCH if text == "Blue" else OTHER_SWATCHES[text]))
    for i, status in enumerate(statuses):
        top = 249 + 42 * i
        rects.append((moved((724, top, 750, top + 26)), STATUS_COLORS[status]))
    rects += [(box, (90, 90, 90)) for box in covers]
    return screenshot(size, rects, background=(20, 20, 20))


def centre(box: Box, size: tuple[int, int] = SIZE) -> tuple[int, int]:
    x = (box[0] + box[2]) / 2
    y = (box[1] + box[3]) / 2
    return round(x / size[0] * 1000), round(y / size[1] * 1000)
