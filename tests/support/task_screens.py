"""Drawn screenshots of `holodesk eval`'s Tk task windows (app/demo/task_look.py's marks) for the
demo planners' tests: each window is a grey box in its border colour with its marks drawn where
the real window has them, roughly; everything moves with ``offset``."""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image, ImageDraw

from app.demo.look import RGB, STATUS_COLORS, Status
from app.demo.task_look import (
    CHOSEN,
    CITY_FIELD,
    CONTACTS_BORDER,
    CSV_ICON,
    DELIVERY_BORDER,
    DRAFT_VALUE,
    EDITOR_BORDER,
    EXPORT_BORDER,
    FILES_BORDER,
    FINAL_VALUE,
    LIST_FOCUS,
    LIST_RING,
    OK_BUTTON,
    ORDER_FIELD,
    ORDER_FORM_BORDER,
    ORDER_SOURCE_BORDER,
    ORDER_VALUE,
    POSTCODE_FIELD,
    SEARCH_FIELD,
    SELECTION,
    SUBMIT_BUTTON,
    WANTED_FILE_MARK,
)

SIZE = (1100, 700)
DESKTOP = (20, 24, 32)
GREY = (217, 217, 217)
Box = tuple[int, int, int, int]


class Screen:
    """A desktop to draw task windows on."""

    def __init__(self, size: tuple[int, int] = SIZE, offset: tuple[int, int] = (0, 0)) -> None:
        self.image = Image.new("RGB", size, DESKTOP)
        self.draw = ImageDraw.Draw(self.image)
        self.dx, self.dy = offset

    def box(self, box: Box) -> Box:
        return (box[0] + self.dx, box[1] + self.dy, box[2] + self.dx, box[3] + self.dy)

    def window(self, box: Box, border: RGB) -> None:
        self.draw.rectangle(self.box(box), fill=GREY, outline=border, width=8)

    def fill(self, box: Box, color: RGB) -> None:
        self.draw.rectangle(self.box(box), fill=color)

    def frame(self, box: Box, color: RGB, width: int = 5) -> None:
        self.draw.rectangle(self.box(box), fill=(255, 255, 255), outline=color, width=width)

    def square(self, x: int, y: int, status: Status) -> None:
        self.fill((x, y, x + 30, y + 20), STATUS_COLORS[status])

    def cover(self, box: Box) -> None:
        """Another window over this part."""
        self.draw.rectangle(box, fill=(90, 90, 90))

    def centre(self, box: Box) -> tuple[int, int]:
        """``box``'s centre in norm1000 of the image (the planners' answer)."""
        left, top, right, bottom = self.box(box)
        width, height = self.image.size
        return (round((left + right) / 2 / width * 1000), round((top + bottom) / 2 / height * 1000))


# -- the notes editor ----------------------------------------------------------------------------
EDITOR = (200, 150, 760, 460)
VALUE = (292, 230, 342, 252)  # the status line's value


def editor(value: str, *, saved: bool, selected: bool = False, offset: tuple[int, int] = (0, 0),
           covers: Sequence[Box] = ()) -> Screen:
    """``value``: "draft", "final" or anything else (not highlighted)."""
    s = Screen(offset=offset)
    s.window(EDITOR, EDITOR_BORDER)
    s.fill((222, 190, 740, 400), (255, 255, 255))
    if selected:
        s.fill(VALUE, SELECTION)
    elif value in ("draft", "final"):
        s.fill(VALUE, DRAFT_VALUE if value == "draft" else FINAL_VALUE)
    s.square(222, 420, Status.DONE if saved else Status.TODO)
    for box in covers:
        s.cover(box)
    return s


# -- the order and the form ----------------------------------------------------------------------
SOURCE = (100, 150, 460, 330)
FORM = (500, 150, 900, 360)
NUMBER = (280, 190, 440, 226)
FIELD = (680, 190, 850, 226)
SUBMIT = (700, 250, 830, 286)


def order(*, selected: bool = False, copied: bool = False, field: Status = Status.TODO,
          sent: bool = False, covers: Sequence[Box] = ()) -> Screen:
    s = Screen()
    s.window(SOURCE, ORDER_SOURCE_BORDER)
    s.window(FORM, ORDER_FORM_BORDER)
    s.frame(NUMBER, ORDER_VALUE)
    if selected:
        s.fill((292, 198, 400, 218), SELECTION)
    s.square(120, 290, Status.DONE if copied else Status.TODO)
    s.frame(FIELD, ORDER_FIELD)
    s.square(860, 198, field)
    s.frame(SUBMIT, SUBMIT_BUTTON, width=4)
    s.square(860, 258, Status.DONE if sent else Status.TODO)
    for box in covers:
        s.cover(box)
    return s


# -- the export dialog ---------------------------------------------------------------------------
EXPORT = (400, 150, 680, 470)
BUTTONS = {"PDF": (420, 200, 600, 236), "CSV": (420, 242, 600, 278),
           "Plain text": (420, 284, 600, 320)}
CSV = (428, 251, 446, 269)
OK = (420, 340, 520, 372)


def export(chosen: str = "PDF", *, exported: bool = False) -> Screen:
    s = Screen()
    s.window(EXPORT, EXPORT_BORDER)
    s.fill(BUTTONS[chosen], CHOSEN)
    s.fill(CSV, CSV_ICON)
    s.frame(OK, OK_BUTTON, width=4)
    s.square(420, 400, Status.DONE if exported else Status.TODO)
    return s


# -- the documents list --------------------------------------------------------------------------
FILES = (300, 200, 900, 440)
WANTED_ROW = (340, 300, 600, 322)


def files(*, opened: bool = False, wanted_in_view: bool = True) -> Screen:
    s = Screen()
    s.window(FILES, FILES_BORDER)
    s.fill((340, 250, 600, 400), (255, 255, 255))
    if wanted_in_view:
        s.fill(WANTED_ROW, WANTED_FILE_MARK)
    s.square(620, 250, Status.DONE if opened else Status.TODO)
    return s


# -- the contacts window -------------------------------------------------------------------------
CONTACTS = (300, 150, 900, 500)
CONTACT_LIST = (340, 250, 600, 480)


def contacts(*, focused: bool = False, search: bool = False, opened: bool = False) -> Screen:
    s = Screen()
    s.window(CONTACTS, CONTACTS_BORDER)
    if search:
        s.frame((340, 200, 600, 236), SEARCH_FIELD, width=4)
    s.frame(CONTACT_LIST, LIST_FOCUS if focused else LIST_RING, width=4)
    s.square(620, 250, Status.DONE if opened else Status.TODO)
    return s


# -- the delivery form ---------------------------------------------------------------------------
DELIVERY = (300, 150, 800, 420)
CITY_BOX = (420, 200, 620, 236)
POSTCODE_BOX = (420, 250, 620, 286)
SAVE = (440, 320, 580, 356)


def delivery(city: Status = Status.TODO, postcode: Status = Status.TODO, *,
             saved: bool = False) -> Screen:
    s = Screen()
    s.window(DELIVERY, DELIVERY_BORDER)
    s.frame(CITY_BOX, CITY_FIELD)
    s.square(640, 208, city)
    s.frame(POSTCODE_BOX, POSTCODE_FIELD)
    s.square(640, 258, postcode)
    s.frame(SAVE, SUBMIT_BUTTON, width=4)
    s.square(640, 328, Status.DONE if saved else Status.TODO)
    return s
