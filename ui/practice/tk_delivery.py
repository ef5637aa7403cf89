"""The delivery form of `holodesk eval`'s tab-between-fields task: two fields and Save.

City (framed in :data:`CITY_FIELD`) and Postcode (framed in :data:`POSTCODE_FIELD`), each with a
status square: to do while empty, in progress while it has the focus and is empty, done once
filled. Save is framed in :data:`app.demo.task_look.SUBMIT_BUTTON` and a square says it was
saved. The state says how the Postcode field got the focus: Tab from City (the task's skill)
or otherwise (a click); the check reads it with what was saved.
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.demo.look import Status
from app.demo.task_look import (
    CITY_FIELD,
    DELIVERY_BORDER,
    DELIVERY_WM_CLASS,
    POSTCODE_FIELD,
    SUBMIT_BUTTON,
)
from ui.practice.tk_task import TkWindow, framed, show, square


class DeliveryWindow(TkWindow):
    wm_class = DELIVERY_WM_CLASS
    title = "holodesk delivery form (eval)"
    border = DELIVERY_BORDER

    def __init__(self, state: Path | None) -> None:
        super().__init__(state)
        self.saved: dict[str, str] | None = None
        self.tabbed = False  # the Postcode field last got the focus by Tab from City
        font = ("TkDefaultFont", 13)
        tk.Label(self.body, text="Delivery address", font=("TkDefaultFont", 13, "bold")).grid(
            row=0, column=0, columnspan=3, sticky="w", pady=(0, 10))
        self.fields: dict[str, tk.Entry] = {}
        self.squares: dict[str, tk.Label] = {}
        self.typed: dict[str, tk.StringVar] = {}
        for row, (name, color) in enumerate((("City", CITY_FIELD),
                                             ("Postcode", POSTCODE_FIELD)), start=1):
            tk.Label(self.body, text=f"{name}:", font=font).grid(row=row, column=0, sticky="w")
            box = framed(self.body, color)
            box.grid(row=row, column=1, padx=8, pady=4)
            # Kept: a StringVar Python forgets unsets its Tcl variable (and the trace with it).
            typed = self.typed[name] = tk.StringVar(self.root)
            entry = tk.Entry(box, width=16, font=font, highlightthickness=0,
                             textvariable=typed)
            entry.pack()
            self.fields[name] = entry
            self.squares[name] = square(self.body)
            self.squares[name].grid(row=row, column=2)
            # The square changes as the text or the focus does, before Tk redraws: a
            # screenshot never shows typed text beside a square that still says empty.
            typed.trace_add("write", lambda *_: self._show_fields())
            entry.bind("<FocusIn>", self._focus_on(name), add="+")
            entry.bind("<FocusOut>", lambda _e: self._focus(None), add="+")
        self.fields["City"].bind("<Tab>", self._tab, add="+")
        self.fields["Postcode"].bind("<FocusIn>", self._focus_in, add="+")
        save = framed(self.body, SUBMIT_BUTTON, width=4)
        save.grid(row=3, column=1, pady=(14, 0))
        tk.Button(save, text="Save", width=10, command=self._save).pack()
        self.saved_square = square(self.body)
        self.saved_square.grid(row=3, column=2, pady=(14, 0))
        show(self.saved_square, Status.TODO)
        self._pending_tab = False
        self._focused: str | None = None
        self._show_fields()

    def _tab(self, _event: object) -> None:
        self._pending_tab = True  # Tk's own binding moves the focus next

    def _focus_in(self, _event: object) -> None:
        self.tabbed, self._pending_tab = self._pending_tab, False
        self.refresh()

    def _save(self) -> None:
        self.saved = {name: entry.get() for name, entry in self.fields.items()}
        show(self.saved_square, Status.DONE)
        self.refresh()

    def _focus_on(self, name: str) -> Callable[[object], None]:
        return lambda _event: self._focus(name)

    def _focus(self, name: str | None) -> None:
        self._focused = name
        self._show_fields()

    def _show_fields(self) -> None:
        for name, entry in self.fields.items():
            status = (Status.DONE if entry.get() else
                      Status.ACTIVE if self._focused == name else Status.TODO)
            show(self.squares[name], status)

    def facts(self) -> dict[str, Any]:
        return {"saved": self.saved, "tabbed": self.tabbed,
                "typed": {name: entry.get() for name, entry in self.fields.items()}}
