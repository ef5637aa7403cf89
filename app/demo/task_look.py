"""What the Tk task windows of `holodesk eval` look like (ui/practice/tk_*.py), and the words and
values of their tasks, shared by the windows that draw them and the demo model that reads them.

Each window is framed in a border colour of its own (how the demo model tells which task it
sees) and marks the parts a task needs with colours of their own: a highlighted value, a
button's frame, a selection, a focus ring. State is shown with the practice window's status
squares (:data:`app.demo.look.STATUS_COLORS`). To a real model they are ordinary labelled
widgets with a coloured frame or highlight. Every colour here differs from every other mark
(look.py's too), from white, black and Tk's greys by more than
:data:`app.demo.look.TOLERANCE` on some channel (tests/app/test_demo_task_plans.py checks it).
"""

from __future__ import annotations

from app.demo.look import RGB

# -- edit-and-save: a notes editor opened on a file ----------------------------------------------
EDITOR_WM_CLASS = "holodesk-notes"
EDITOR_BORDER: RGB = (0, 120, 0)
#: The highlight of the status line's value: "draft" and "final" each in their own colour.
DRAFT_VALUE: RGB = (255, 90, 120)
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
ORDER_FORM_BORDER: RGB = (90, 0, 120)
ORDER_VALUE: RGB = (120, 255, 255)  # the frame round the order number (source)
ORDER_CUSTOMER = "Ada Lovelace"
ORDER_FIELD: RGB = (255, 255, 90)  # the frame round the form's field
SUBMIT_BUTTON: RGB = (0, 90, 60)
#: Digits only: a double click selects all of it (a dash would end a Tk "word").
ORDER_NUMBER = "4815162342"

# -- export-as-csv: a dialog, a choice of format, OK ---------------------------------------------
EXPORT_WM_CLASS = "holodesk-export"
EXPORT_BORDER: RGB = (180, 0, 255)
CSV_ICON: RGB = (40, 255, 160)  # the icon of the CSV choice
CHOSEN: RGB = (255, 40, 90)  # the background of the chosen format's button
OK_BUTTON: RGB = (120, 0, 0)
FORMATS = ("PDF", "CSV", "Plain text")
START_FORMAT = "PDF"
WANTED_FORMAT = "CSV"

# -- open-by-double-click: a list of documents ---------------------------------------------------
FILES_WM_CLASS = "holodesk-files"
FILES_BORDER: RGB = (150, 150, 0)
WANTED_FILE_MARK: RGB = (255, 200, 120)  # the wanted document's row
DOCUMENTS = ("budget-2026.ods", "holiday-photos", "invoice-0042.pdf", "meeting-notes.txt",
             "recipes.md", "travel-plan.pdf")
WANTED_FILE = "invoice-0042.pdf"

# -- search-with-shortcut: Ctrl+F opens a search bar ---------------------------------------------
CONTACTS_WM_CLASS = "holodesk-contacts"
CONTACTS_BORDER: RGB = (255, 150, 60)  # far from a title bar's blues
LIST_FOCUS: RGB = (200, 100, 255)  # the list's focus ring while it has the focus
LIST_RING: RGB = (150, 0, 180)  # the same ring while it has not
SEARCH_FIELD: RGB = (0, 0, 90)  # the frame round the search field, once it shows
CONTACTS = ("Ada Lovelace", "Alan Turing", "Barbara Liskov", "Edsger Dijkstra",
            "Frances Allen", "Grace Hopper", "John Backus", "Katherine Johnson",
            "Ken Thompson", "Margaret Hamilton")
SEARCH_FOR = "Hopper"
WANTED_CONTACT = "Grace Hopper"

# -- tab-between-fields: two fields, the keyboard moves between them ----------------------------
DELIVERY_WM_CLASS = "holodesk-delivery"
DELIVERY_BORDER: RGB = (0, 255, 0)
CITY_FIELD: RGB = (140, 80, 255)  # the frame round the City field
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


def hex_colour(color: RGB) -> str:
    """``color`` as Tk writes it (#rrggbb)."""
    return "#{:02x}{:02x}{:02x}".format(*color)
