"""The contacts window of `holodesk eval`'s search-with-shortcut task.

A list of contacts and a hint: "Ctrl+F searches". Ctrl+F shows a search field (framed in
:data:`SEARCH_FIELD`) with the focus; Enter there opens the first contact matching what was
typed, and a status square says a contact is open. The list's focus ring is
:data:`LIST_FOCUS` while the list has the keyboard focus, :data:`LIST_RING` while not. The
check reads which contact was opened and that it was found through the search.
"""

from __future__ import annotations

import tkinter as tk
from pathlib import Path
from typing import Any

from app.demo.look import Status
from app.demo.task_look import (
    CONTACTS,
    CONTACTS_BORDER,
    CONTACTS_WM_CLASS,
    LIST_FOCUS,
    LIST_RING,
    SEARCH_FIELD,
    hex_colour,
)
from ui.practice.tk_task import TkWindow, framed, show, square

#: The search row's height (pixels): the field and its frame.
_SEARCH_ROW = 44


class ContactsWindow(TkWindow):
    wm_class = CONTACTS_WM_CLASS
    title = "holodesk contacts (eval)"
    border = CONTACTS_BORDER

    def __init__(self, state: Path | None) -> None:
        super().__init__(state)
        self.opened: str | None = None
        self.searched: str | None = None
        font = ("TkDefaultFont", 13)
        tk.Label(self.body, text="Contacts \u2014 Ctrl+F searches",
                 font=("TkDefaultFont", 13, "bold")).grid(row=0, column=0, columnspan=2,
                                                         sticky="w", pady=(0, 10))
        # The search row keeps its room while hidden: a window that changes size when the
        # field shows would stop an eval run (its capture is the window's first rectangle).
        self.search_row = tk.Frame(self.body, height=_SEARCH_ROW)
        self.search_row.grid(row=1, column=0, columnspan=2, sticky="ew", pady=(0, 8))
        self.search_row.pack_propagate(False)
        self.search_box = framed(self.search_row, SEARCH_FIELD, width=4)
        self.search = tk.Entry(self.search_box, width=24, font=font, highlightthickness=0)
        self.search.pack()
        self.search.bind("<Return>", self._find)
        self.list = tk.Listbox(self.body, height=len(CONTACTS), width=24, font=font,
                               exportselection=False, activestyle="none",
                               highlightthickness=4, highlightcolor=hex_colour(LIST_FOCUS),
                               highlightbackground=hex_colour(LIST_RING))
        for name in CONTACTS:
            self.list.insert("end", name)
        self.list.grid(row=2, column=0, sticky="n")
        pane = tk.Frame(self.body, padx=16)
        pane.grid(row=2, column=1, sticky="n")
        self.square = square(pane)
        self.square.grid(row=0, column=0, sticky="w")
        self.words = tk.Label(pane, text="No contact open", width=22, anchor="w")
        self.words.grid(row=0, column=1, sticky="w", padx=8)
        show(self.square, Status.TODO)
        self.root.bind("<Control-f>", self._show_search)
        self.root.bind("<Control-F>", self._show_search)

    def _show_search(self, _event: object) -> str:
        self.search_box.pack(side="left", anchor="n")
        self.search.focus_set()
        self.refresh()
        return "break"

    def _find(self, _event: object) -> str:
        typed = self.search.get().strip()
        self.searched = typed
        match = next((c for c in CONTACTS if typed and typed.lower() in c.lower()), None)
        if match is not None:
            self.opened = match
            at = CONTACTS.index(match)
            self.list.selection_clear(0, "end")
            self.list.selection_set(at)
            self.list.see(at)
            show(self.square, Status.DONE)
            self.words.configure(text=f"Open: {match}")
        self.refresh()
        return "break"

    def facts(self) -> dict[str, Any]:
        return {"searched": self.searched, "opened": self.opened,
                "search_shown": bool(self.search_box.winfo_ismapped())}
