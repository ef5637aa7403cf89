"""What the task windows of `holodesk eval` look like (ui/practice/tasks), for the windows
that draw them and the demo model that reads them (app/demo/plans).

Each window is framed in a colour of its own (the demo model tells them apart by it) and marks
the parts a task needs with colours of their own: saturated, apart from each other, from the
practice window's marks (app/demo/look.py) and from Tk's greys by more than the look's
tolerance on some channel (tests/app/test_demo_tasks.py checks every pair). To a real model
they are ordinary labelled widgets: a menu bar, a board of cards, a table, a settings dialog,
a number with - and + buttons, tabs. Text the demo model must read is drawn in the dot font of
:mod:`app.demo.dots` in :data:`INK`.

The tasks' fixed content (the zoom levels, the invoices, the options) is here too: the window
shows it, the eval's subjects check against it (app/eval_windows.py).
"""

from __future__ import annotations

from enum import StrEnum

from app.demo.look import RGB


class TaskWindow(StrEnum):
    """The task windows, by the name the hidden option takes (``--eval-window NAME``)."""

    MENU = "menu"
    DRAG = "drag"
    INVOICES = "invoices"
    SETTINGS = "settings"
    COPIES = "copies"
    PREFS = "prefs"


#: Each window's X11 window class: what a task's run is limited to (``only_in``).
WM_CLASSES: dict[TaskWindow, str] = {kind: f"holodesk-{kind.value}" for kind in TaskWindow}

#: Each window's frame, all round.
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
