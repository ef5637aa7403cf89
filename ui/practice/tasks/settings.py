"""The settings window of `holodesk eval`'s tick-the-right-boxes task: four checkboxes, each
with its icon, an Apply button, and a line saying whether the shown settings are applied.

A ticked box is filled :data:`TICK`, each option's icon has its colour (:data:`OPTION_TAGS`),
Apply is framed in :data:`APPLY_BUTTON`, and a square beside "Applied" / "Not applied" shows
the practice window's done and to-do colours (app/demo/task_look.py, app/demo/look.py): what
the demo model reads. The state file says the boxes as shown and as last applied.
"""

from __future__ import annotations

from typing import Any

from app.demo.look import STATUS_COLORS, Status
from app.demo.task_look import APPLY_BUTTON, OPTION_TAGS, OPTIONS, OPTIONS_START, TICK, TaskWindow
from ui.practice.tasks.base import TaskApp, hex_colour

_ICON = 16


class SettingsApp(TaskApp):
    kind = TaskWindow.SETTINGS
    title = "holodesk settings window (eval)"

    def build(self) -> None:
        import tkinter as tk

        self.applied: dict[str, bool] | None = None
        self.icons: list[Any] = []  # Tk drops an image nobody holds
        tk.Label(self.body, text="Editor settings", font=("TkDefaultFont", 13, "bold")
                 ).pack(anchor="w", pady=(0, 8))
        self.values: dict[str, Any] = {}
        self.boxes: dict[str, Any] = {}
        for option in OPTIONS:
            value = tk.BooleanVar(self.root, value=OPTIONS_START[option])
            value.trace_add("write", lambda *_a: self.show())
            self.values[option] = value
            icon = tk.PhotoImage(width=_ICON, height=_ICON)
            icon.put(hex_colour(OPTION_TAGS[option]), to=(0, 0, _ICON, _ICON))
            self.icons.append(icon)
            box = tk.Checkbutton(self.body, text=" " + option, image=icon, compound="left",
                                 variable=value, font=("TkDefaultFont", 12), anchor="w",
                                 width=260)
            box.pack(anchor="w", pady=3)
            self.boxes[option] = box
        bottom = tk.Frame(self.body)
        bottom.pack(fill="x", pady=(14, 0))
        self.square = tk.Label(bottom, width=3, height=1)
        self.square.pack(side="left")
        self.status = tk.Label(bottom, width=14, anchor="w", font=("TkDefaultFont", 11))
        self.status.pack(side="left", padx=(6, 0))
        frame = tk.Frame(bottom, bg=hex_colour(APPLY_BUTTON), padx=4, pady=4)
        frame.pack(side="right")
        tk.Button(frame, text="Apply", width=8, command=self.apply).pack()
        self.show()

    def shown(self) -> dict[str, bool]:
        return {option: bool(value.get()) for option, value in self.values.items()}

    def apply(self) -> None:
        self.applied = self.shown()
        self.show()

    def show(self) -> None:
        # Tk fills a box with its select colour ticked or not: the fill follows the value.
        for option, ticked in self.shown().items():
            self.boxes[option].configure(selectcolor=hex_colour(TICK) if ticked else "white")
        done = self.applied is not None and self.applied == self.shown()
        self.square.configure(bg=hex_colour(STATUS_COLORS[Status.DONE if done else Status.TODO]))
        self.status.configure(text="Applied" if done else "Not applied")
        self.write()

    def fields(self) -> dict[str, Any]:
        return {"shown": self.shown(), "applied": self.applied}
