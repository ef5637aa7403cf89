"""The export dialog of `holodesk eval`'s export-as-csv task: choose a format, confirm with OK.

Three formats as toggle buttons of one radio group (the chosen one's background is
:data:`CHOSEN`; CSV carries its own icon, :data:`CSV_ICON`), PDF chosen at first, then OK
(framed in :data:`OK_BUTTON`) and Cancel. OK exports (nothing is written anywhere: the state
says which format was confirmed) and a status square says it is done; the dialog stays open,
so the run ends by the model's answer, not by its window going away.
"""

from __future__ import annotations

import tkinter as tk
from pathlib import Path
from typing import Any

from app.demo.look import Status
from app.demo.task_look import (
    CHOSEN,
    CSV_ICON,
    EXPORT_BORDER,
    EXPORT_WM_CLASS,
    FORMATS,
    OK_BUTTON,
    START_FORMAT,
    WANTED_FORMAT,
    hex_colour,
)
from ui.practice.tk_task import TkWindow, framed, show, square


class ExportWindow(TkWindow):
    wm_class = EXPORT_WM_CLASS
    title = "holodesk export (eval)"
    border = EXPORT_BORDER

    def __init__(self, state: Path | None) -> None:
        super().__init__(state)
        self.exported: str | None = None
        self.cancelled = False
        font = ("TkDefaultFont", 13)
        tk.Label(self.body, text="Export the report as:", font=("TkDefaultFont", 13, "bold")
                 ).grid(row=0, column=0, columnspan=2, sticky="w", pady=(0, 10))
        self.choice = tk.StringVar(self.root, value=START_FORMAT)
        self.icon = tk.PhotoImage(master=self.root, width=18, height=18)
        self.icon.put(hex_colour(CSV_ICON), to=(0, 0, 18, 18))
        self.blank = tk.PhotoImage(master=self.root, width=18, height=18)
        for row, name in enumerate(FORMATS, start=1):
            tk.Radiobutton(self.body, text=name, value=name, variable=self.choice,
                           indicatoron=False, selectcolor=hex_colour(CHOSEN), width=160,
                           image=self.icon if name == WANTED_FORMAT else self.blank,
                           compound="left", anchor="w", font=font, padx=8, pady=6,
                           command=self.refresh).grid(row=row, column=0, columnspan=2,
                                                      sticky="w", pady=2)
        ok = framed(self.body, OK_BUTTON, width=4)
        ok.grid(row=4, column=0, pady=(14, 0), sticky="w")
        tk.Button(ok, text="OK", width=8, command=self._ok).pack()
        tk.Button(self.body, text="Cancel", width=8, command=self._cancel).grid(
            row=4, column=1, pady=(14, 0), sticky="e")
        bar = tk.Frame(self.body)
        bar.grid(row=5, column=0, columnspan=2, sticky="w", pady=(12, 0))
        self.square = square(bar)
        self.square.pack(side="left")
        self.words = tk.Label(bar, text="Not exported yet")
        self.words.pack(side="left", padx=8)
        show(self.square, Status.TODO)

    def _ok(self) -> None:
        self.exported = self.choice.get()
        show(self.square, Status.DONE)
        self.words.configure(text=f"Exported as {self.exported}")
        self.refresh()

    def _cancel(self) -> None:
        self.cancelled = True
        self.refresh()

    def facts(self) -> dict[str, Any]:
        return {"chosen": self.choice.get(), "exported": self.exported,
                "cancelled": self.cancelled}
