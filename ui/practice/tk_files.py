"""The documents window of `holodesk eval`'s open-by-double-click task.

A list of documents; a single click selects one, a double click (or Enter) opens it in the
pane beside the list, and a status square says a document is open. The wanted document's row
is highlighted in :data:`WANTED_FILE_MARK` (a pinned item's colour). The check reads which
document was opened.
"""

from __future__ import annotations

import tkinter as tk
from pathlib import Path
from typing import Any

from app.demo.look import Status
from app.demo.task_look import (
    DOCUMENTS,
    FILES_BORDER,
    FILES_WM_CLASS,
    WANTED_FILE,
    WANTED_FILE_MARK,
    hex_colour,
)
from ui.practice.tk_task import TkWindow, show, square


class FilesWindow(TkWindow):
    wm_class = FILES_WM_CLASS
    title = "holodesk documents (eval)"
    border = FILES_BORDER

    def __init__(self, state: Path | None) -> None:
        super().__init__(state)
        self.opened: str | None = None
        font = ("TkDefaultFont", 13)
        tk.Label(self.body, text="Documents (double-click to open)",
                 font=("TkDefaultFont", 13, "bold")).grid(row=0, column=0, columnspan=2,
                                                         sticky="w", pady=(0, 10))
        self.list = tk.Listbox(self.body, height=len(DOCUMENTS), width=24, font=font,
                               exportselection=False, activestyle="none")
        for name in DOCUMENTS:
            self.list.insert("end", name)
        wanted = DOCUMENTS.index(WANTED_FILE)
        # Selected, it keeps its colour (its text turns white): the row stays findable.
        self.list.itemconfigure(wanted, background=hex_colour(WANTED_FILE_MARK),
                                selectbackground=hex_colour(WANTED_FILE_MARK),
                                selectforeground="white")
        self.list.grid(row=1, column=0, sticky="n")
        self.list.bind("<Double-Button-1>", self._open)
        self.list.bind("<Return>", self._open)
        pane = tk.Frame(self.body, padx=16)
        pane.grid(row=1, column=1, sticky="n")
        self.square = square(pane)
        self.square.grid(row=0, column=0, sticky="w")
        self.words = tk.Label(pane, text="No document open", width=26, anchor="w")
        self.words.grid(row=0, column=1, sticky="w", padx=8)
        show(self.square, Status.TODO)

    def _open(self, _event: object) -> None:
        chosen: tuple[int, ...] = self.list.curselection()  # type: ignore[no-untyped-call]
        if not chosen:
            return
        self.opened = str(self.list.get(chosen[0]))
        show(self.square, Status.DONE)
        self.words.configure(text=f"Open: {self.opened}")
        self.refresh()

    def selected(self) -> str | None:
        chosen: tuple[int, ...] = self.list.curselection()  # type: ignore[no-untyped-call]
        return str(self.list.get(chosen[0])) if chosen else None

    def facts(self) -> dict[str, Any]:
        return {"selected": self.selected(), "opened": self.opened}
