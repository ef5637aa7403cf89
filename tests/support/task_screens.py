r"""Drawn screenshots of the eval's task windows (app/demo/task_look.py's marks, the dot font)
for the demo planners' tests: each window a grey box framed in its colour on a dark screen,
its parts drawn where a test says, in the marks the real window paints (no display). The
first six windows' screens are PIL images of :data:`SIZE`; the others' are :class:`Screen`\ s
of :data:`SCREEN_SIZE`, which a test can shift or partly cover."""

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
    CHOSEN,
    CITY_FIELD,
    CONTACTS_BORDER,
    CSV_ICON,
    DELIVERY_BORDER,
    DISPLAY_TAB,
    DRAFT_VALUE,
    DROP_BOX,
    EDITOR_BORDER,
    EXPORT_BORDER,
    FILES_BORDER,
    FINAL_VALUE,
    INK,
    INVOICES,
    LEVEL_TAGS,
    LIST_FOCUS,
    LIST_RING,
    MINUS_BUTTON,
    OK_BUTTON,
    OPTION_TAGS,
    OPTIONS,
    ORDER_FIELD,
    ORDER_FORM_BORDER,
    ORDER_SOURCE_BORDER,
    ORDER_VALUE,
    PLUS_BUTTON,
    POSTCODE_FIELD,
    SEARCH_FIELD,
    SELECTION,
    SUBMIT_BUTTON,
    THEME_TAGS,
    THEMES,
    TICK,
    VIEW_MARK,
    WANTED_FILE_MARK,
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


# -- the Tk windows of ui/practice/tk_*.py ------------------------------------------------------

SCREEN_SIZE = (1100, 700)
DESKTOP = (20, 24, 32)
GREY = (217, 217, 217)


class Screen:
    """A desktop to draw task windows on."""

    def __init__(self, size: tuple[int, int] = SCREEN_SIZE,
                 offset: tuple[int, int] = (0, 0)) -> None:
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
