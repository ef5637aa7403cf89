"""What the task windows of `holodesk eval` look like (ui/practice/tasks and ui/practice/tk_*.py),
and the words and values of their tasks, for the windows that draw them, the eval's subjects
that check them (app/eval_windows.py) and the demo model that reads them (app/demo/plans).

Each window is framed in a colour of its own (the demo model tells them apart by it) and marks
the parts a task needs with colours of their own: saturated, apart from each other, from the
practice window's marks (app/demo/look.py) and from white, black and Tk's greys by more than
:data:`app.demo.look.TOLERANCE` on some channel (tests/app/test_demo_tasks.py checks every pair
of this module's and look.py's colours; tests/app/test_demo_task_plans.py checks :data:`MARKS`).
To a real model they are ordinary labelled widgets: a menu bar, a board of cards, a table, a
settings dialog, a number with - and + buttons, tabs, a text editor, two windows side by side,
a dialog, a list, a search bar, a form. Text the demo model must read is drawn in the dot font
of :mod:`app.demo.dots` in :data:`INK`; state is shown with the practice window's status
squares (:data:`app.demo.look.STATUS_COLORS`).
"""

from __future__ import annotations

from enum import StrEnum

from app.demo.look import RGB


class TaskWindow(StrEnum):
    """The task windows, by the name the hidden option takes (``--task-window NAME``,
    app/demo/task_windows.py). The first six are drawn by ui/practice/tasks (a window on
    :class:`ui.practice.tasks.base.TaskApp`), the others by ui/practice/tk_*.py."""

    MENU = "menu"
    DRAG = "drag"
    INVOICES = "invoices"
    SETTINGS = "settings"
    COPIES = "copies"
    PREFS = "prefs"
    EDITOR = "editor"
    ORDER = "order"
    EXPORT = "export"
    FILES = "files"
    CONTACTS = "contacts"
    DELIVERY = "delivery"


#: The first six windows' frames, all round (the others' are named below, by task).
BORDERS: dict[TaskWindow, RGB] = {
    TaskWindow.MENU: (120, 0, 0),
    TaskWindow.DRAG: (0, 240, 60),
    TaskWindow.INVOICES: (180, 180, 0),
    TaskWindow.SETTINGS: (120, 0, 180),
    TaskWindow.COPIES: (240, 60, 120),
    TaskWindow.PREFS: (240, 180, 60),
}

#: The dot font's colour: a dark blue, apart from black text and its grey edges (read by its
#: hue, :func:`app.demo.dots.ink`: JPEG pales small squares towards the white round them).
INK: RGB = (0, 0, 120)

#: Small square icons naming one of up to four things (a zoom level, a setting).
TAGS: tuple[RGB, ...] = ((240, 240, 120), (60, 0, 240), (120, 180, 0), (180, 60, 240))

# -- pick from a menu --------------------------------------------------------------------------
VIEW_MARK: RGB = (240, 180, 120)  # the menu bar's View entry
ZOOM_MARK: RGB = (120, 240, 240)  # View's Zoom cascade entry
ZOOM_LEVELS: tuple[str, ...] = ("100%", "125%", "150%", "200%")
ZOOM_START = "100%"
ZOOM_WANTED = "150%"
#: Each level's icon in the Zoom menu, and the swatch beside the window's "Zoom:" label.
LEVEL_TAGS: dict[str, RGB] = dict(zip(ZOOM_LEVELS, TAGS, strict=True))
#: The Tk names of the menu bar and its menus: a menu bar's pop-ups are windows of their own,
#: named "#bar#view" by Tk (its clones), not by the application's class.
MENU_NAMES = ("holodesk-menubar", "holodesk-view", "holodesk-zoom")
POPUP_INSTANCES: tuple[str, ...] = (
    f"#{MENU_NAMES[0]}#{MENU_NAMES[1]}",
    f"#{MENU_NAMES[0]}#{MENU_NAMES[1]}#{MENU_NAMES[2]}",
)

# -- drag an item -------------------------------------------------------------------------------
CARD: RGB = (240, 120, 60)  # the card, pointer elsewhere
CARD_HOVER: RGB = (180, 240, 120)  # the card with the pointer on it (ready to be dragged)
DROP_BOX: RGB = (0, 0, 240)  # the frame of the "Done" box
CARD_TITLE = "Pay the rent"

# -- find and read a value ------------------------------------------------------------------------
#: (invoice, customer, total): the wanted one among others whose numbers and totals look alike.
INVOICES: tuple[tuple[str, str, str], ...] = (
    ("INV-0024", "Acme Ltd", "318.40"),
    ("INV-0420", "Birch & Co", "1257.09"),
    ("INV-0042", "Cole GmbH", "1275.90"),
    ("INV-0043", "Dunn plc", "86.15"),
    ("INV-0142", "Eyre SA", "947.60"),
)
WANTED_INVOICE = "INV-0042"

# -- tick the right checkboxes ----------------------------------------------------------------
OPTIONS: tuple[str, ...] = ("Auto-save", "Spell check", "Sounds", "Send usage data")
OPTION_TAGS: dict[str, RGB] = dict(zip(OPTIONS, TAGS, strict=True))
OPTIONS_START: dict[str, bool] = {"Auto-save": False, "Spell check": False, "Sounds": True,
                                  "Send usage data": True}
OPTIONS_WANTED: dict[str, bool] = {"Auto-save": True, "Spell check": True, "Sounds": False,
                                   "Send usage data": False}
TICK: RGB = (0, 240, 180)  # a ticked box's fill
APPLY_BUTTON: RGB = (180, 120, 240)  # the frame of Apply (and of the copies window's OK)

# -- set a number ---------------------------------------------------------------------------------
MINUS_BUTTON: RGB = (60, 240, 120)
PLUS_BUTTON: RGB = (120, 0, 120)
COPIES_START = 2
COPIES_WANTED = 7
COPIES_MAX = 20

# -- switch to a tab and change a value -----------------------------------------------------------
TABS: tuple[str, ...] = ("General", "Display", "Sound")
DISPLAY_TAB: RGB = (240, 120, 140)  # the Display tab's icon
THEMES: tuple[str, ...] = ("Light", "Dark", "System")
THEME_TAGS: dict[str, RGB] = dict(zip(THEMES, TAGS, strict=False))
THEME_START = "Light"
THEME_WANTED = "Dark"

# -- edit-and-save: a notes editor opened on a file ----------------------------------------------
EDITOR_WM_CLASS = "holodesk-notes"
EDITOR_BORDER: RGB = (0, 120, 0)
#: The highlight of the status line's value: "draft" and "final" each in their own colour.
DRAFT_VALUE: RGB = (240, 60, 180)
FINAL_VALUE: RGB = (150, 230, 60)
#: The selection's background (the editor's and the order number's).
SELECTION: RGB = (0, 60, 120)
NOTES_FILE = "notes.txt"
NOTES_BEFORE = ("title: holodesk notes\n"
                "status: draft\n"
                "owner: Ada Lovelace\n"
                "\n"
                "Remember: the draft is reviewed on Friday.\n")
NOTES_AFTER = NOTES_BEFORE.replace("status: draft", "status: final")
NEW_STATUS = "final"

# -- copy-order-number: two windows, a source and a form -----------------------------------------
ORDER_SOURCE_WM_CLASS = "holodesk-order-source"
ORDER_FORM_WM_CLASS = "holodesk-order-form"
ORDER_SOURCE_BORDER: RGB = (190, 150, 90)
ORDER_FORM_BORDER: RGB = (60, 0, 120)
ORDER_VALUE: RGB = (60, 240, 240)  # the frame round the order number (source)
ORDER_CUSTOMER = "Ada Lovelace"
ORDER_FIELD: RGB = (180, 240, 0)  # the frame round the form's field
SUBMIT_BUTTON: RGB = (0, 90, 60)
#: Digits only: a double click selects all of it (a dash would end a Tk "word").
ORDER_NUMBER = "4815162342"

# -- export-as-csv: a dialog, a choice of format, OK ---------------------------------------------
EXPORT_WM_CLASS = "holodesk-export"
EXPORT_BORDER: RGB = (180, 0, 255)
CSV_ICON: RGB = (60, 240, 180)  # the icon of the CSV choice
CHOSEN: RGB = (180, 60, 60)  # the background of the chosen format's button
OK_BUTTON: RGB = (180, 0, 0)
FORMATS = ("PDF", "CSV", "Plain text")
START_FORMAT = "PDF"
WANTED_FORMAT = "CSV"

# -- open-by-double-click: a list of documents ---------------------------------------------------
FILES_WM_CLASS = "holodesk-files"
FILES_BORDER: RGB = (120, 120, 0)
WANTED_FILE_MARK: RGB = (120, 240, 120)  # the wanted document's row
DOCUMENTS = ("budget-2026.ods", "holiday-photos", "invoice-0042.pdf", "meeting-notes.txt",
             "recipes.md", "travel-plan.pdf")
WANTED_FILE = "invoice-0042.pdf"

# -- search-with-shortcut: Ctrl+F opens a search bar ---------------------------------------------
CONTACTS_WM_CLASS = "holodesk-contacts"
CONTACTS_BORDER: RGB = (240, 240, 60)  # far from a title bar's blues
LIST_FOCUS: RGB = (240, 60, 240)  # the list's focus ring while it has the focus
LIST_RING: RGB = (120, 60, 180)  # the same ring while it has not
SEARCH_FIELD: RGB = (0, 0, 180)  # the frame round the search field, once it shows
CONTACTS = ("Ada Lovelace", "Alan Turing", "Barbara Liskov", "Edsger Dijkstra",
            "Frances Allen", "Grace Hopper", "John Backus", "Katherine Johnson",
            "Ken Thompson", "Margaret Hamilton")
SEARCH_FOR = "Hopper"
WANTED_CONTACT = "Grace Hopper"

# -- tab-between-fields: two fields, the keyboard moves between them ----------------------------
DELIVERY_WM_CLASS = "holodesk-delivery"
DELIVERY_BORDER: RGB = (0, 255, 0)
CITY_FIELD: RGB = (120, 60, 240)  # the frame round the City field
POSTCODE_FIELD: RGB = (255, 0, 160)  # the frame round the Postcode field
CITY = "Lyon"
POSTCODE = "69002"

#: Every mark of this module, by name (the test that keeps them apart reads it).
MARKS: dict[str, RGB] = {
    "editor border": EDITOR_BORDER, "draft value": DRAFT_VALUE, "final value": FINAL_VALUE,
    "selection": SELECTION, "order source border": ORDER_SOURCE_BORDER,
    "order form border": ORDER_FORM_BORDER, "order value": ORDER_VALUE,
    "order field": ORDER_FIELD, "submit": SUBMIT_BUTTON, "export border": EXPORT_BORDER,
    "csv icon": CSV_ICON, "chosen": CHOSEN, "ok": OK_BUTTON, "files border": FILES_BORDER,
    "wanted file": WANTED_FILE_MARK, "contacts border": CONTACTS_BORDER,
    "list focus": LIST_FOCUS, "list ring": LIST_RING, "search field": SEARCH_FIELD,
    "delivery border": DELIVERY_BORDER, "city field": CITY_FIELD,
    "postcode field": POSTCODE_FIELD,
}


#: Each window's X11 window class (a task of two windows: its first's).
WM_CLASSES: dict[TaskWindow, str] = {
    **{kind: f"holodesk-{kind.value}" for kind in BORDERS},
    TaskWindow.EDITOR: EDITOR_WM_CLASS,
    TaskWindow.ORDER: ORDER_SOURCE_WM_CLASS,
    TaskWindow.EXPORT: EXPORT_WM_CLASS,
    TaskWindow.FILES: FILES_WM_CLASS,
    TaskWindow.CONTACTS: CONTACTS_WM_CLASS,
    TaskWindow.DELIVERY: DELIVERY_WM_CLASS,
}


def hex_colour(color: RGB) -> str:
    """``color`` as Tk writes it (#rrggbb)."""
    return "#{:02x}{:02x}{:02x}".format(*color)
