"""The print window of `holodesk eval`'s set-a-number task: the number of copies on a small
display with - and + buttons beside it, an OK button, and a line saying whether the number
shown is the one set.

The number is drawn in the dot font (app/demo/dots.py) in :data:`INK`; - and + are framed in
:data:`MINUS_BUTTON` and :data:`PLUS_BUTTON`, OK in :data:`APPLY_BUTTON`, and a square beside
"Set" / "Not set" shows the practice window's done and to-do colours: what the demo model
reads. The state file says the number shown and the one last set with OK.
"""

from __future__ import annotations

import functools
from typing import Any

from app.demo.look import STATUS_COLORS, Status
from app.demo.task_look import (
    APPLY_BUTTON,
    COPIES_MAX,
    COPIES_START,
    MINUS_BUTTON,
    PLUS_BUTTON,
    TaskWindow,
)
from ui.practice.tasks.base import TaskApp, draw_dots, hex_colour

_UNIT = 6  # pixels of a square of the display's dot font


class CopiesApp(TaskApp):
    kind = TaskWindow.COPIES
    title = "holodesk print window (eval)"

    def build(self) -> None:
        import tkinter as tk

        self.copies = COPIES_START
        self.set: int | None = None
        tk.Label(self.body, text="Print", font=("TkDefaultFont", 13, "bold")
                 ).pack(anchor="w", pady=(0, 8))
        row = tk.Frame(self.body)
        row.pack(anchor="w")
        tk.Label(row, text="Copies:", font=("TkDefaultFont", 12)).pack(side="left")
        for sign, color, change in (("-", MINUS_BUTTON, -1), ("+", PLUS_BUTTON, 1)):
            frame = tk.Frame(row, bg=hex_colour(color), padx=4, pady=4)
            tk.Button(frame, text=sign, width=3, font=("TkDefaultFont", 12, "bold"),
                      command=functools.partial(self.change, change)).pack()
            if change > 0:
                self.display = tk.Canvas(row, width=110, height=64, bg="white",
                                         highlightthickness=1, highlightbackground="#a0a0a0")
                self.display.pack(side="left", padx=8)
            frame.pack(side="left", padx=(10 if change < 0 else 0, 0))
        bottom = tk.Frame(self.body)
        bottom.pack(fill="x", pady=(18, 0))
        self.square = tk.Label(bottom, width=3, height=1)
        self.square.pack(side="left")
        self.status = tk.Label(bottom, width=10, anchor="w", font=("TkDefaultFont", 11))
        self.status.pack(side="left", padx=(6, 0))
        frame = tk.Frame(bottom, bg=hex_colour(APPLY_BUTTON), padx=4, pady=4)
        frame.pack(side="right")
        tk.Button(frame, text="OK", width=8, command=self.ok).pack()
        tk.Label(self.body, text="Printer: Office (A4)", fg="#505050").pack(anchor="w",
                                                                           pady=(12, 0))
        self.show()

    def change(self, by: int) -> None:
        self.copies = min(COPIES_MAX, max(1, self.copies + by))
        self.show()

    def ok(self) -> None:
        self.set = self.copies
        self.show()

    def show(self) -> None:
        self.display.delete("all")
        text = str(self.copies)
        width = len(text) * 6 * _UNIT
        draw_dots(self.display, text, (110 - width) // 2 + _UNIT // 2, 11, unit=_UNIT)
        done = self.set == self.copies
        self.square.configure(bg=hex_colour(STATUS_COLORS[Status.DONE if done else Status.TODO]))
        self.status.configure(text="Set" if done else "Not set")
        self.write()

    def fields(self) -> dict[str, Any]:
        return {"copies": self.copies, "set": self.set}
