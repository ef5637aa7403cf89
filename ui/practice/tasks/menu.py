"""The menu window of `holodesk eval`'s pick-from-a-menu task: a document with a real menu bar
(File, View, Help) where View > Zoom is a cascade of zoom levels.

The View entry and the Zoom entry are painted in marks of their own, each zoom level has an
icon of its own colour, and a swatch of the current level's colour stands beside the "Zoom:"
label (app/demo/task_look.py): what the demo model reads. The state file says the zoom.
"""

from __future__ import annotations

import functools
from typing import Any

from app.demo.task_look import (
    LEVEL_TAGS,
    MENU_NAMES,
    VIEW_MARK,
    ZOOM_LEVELS,
    ZOOM_MARK,
    ZOOM_START,
    TaskWindow,
)
from ui.practice.tasks.base import TaskApp, hex_colour

_ICON = 14  # pixels of a level's icon


class MenuApp(TaskApp):
    kind = TaskWindow.MENU
    title = "holodesk menu window (eval)"

    def build(self) -> None:
        import tkinter as tk

        self.zoom = ZOOM_START
        self.icons: list[Any] = []  # Tk drops an image nobody holds
        bar = tk.Menu(self.root, name=MENU_NAMES[0])
        file = tk.Menu(bar, tearoff=0)
        file.add_command(label="New")
        file.add_command(label="Open…")
        bar.add_cascade(label="File", menu=file)
        view = tk.Menu(bar, tearoff=0, name=MENU_NAMES[1])
        view.add_checkbutton(label="Show ruler")
        view.add_checkbutton(label="Word wrap")
        zoom = tk.Menu(view, tearoff=0, name=MENU_NAMES[2])
        for level in ZOOM_LEVELS:
            icon = tk.PhotoImage(width=_ICON, height=_ICON)
            icon.put(hex_colour(LEVEL_TAGS[level]), to=(0, 0, _ICON, _ICON))
            self.icons.append(icon)
            zoom.add_command(label=level, image=icon, compound="left",
                             command=functools.partial(self.set_zoom, level))
        mark = hex_colour(ZOOM_MARK)
        view.add_cascade(label="Zoom", menu=zoom, background=mark, activebackground=mark)
        view.add_command(label="Full screen")
        mark = hex_colour(VIEW_MARK)
        bar.add_cascade(label="View", menu=view, background=mark, activebackground=mark)
        help_menu = tk.Menu(bar, tearoff=0)
        help_menu.add_command(label="About")
        bar.add_cascade(label="Help", menu=help_menu)
        self.root.configure(menu=bar)

        row = tk.Frame(self.body)
        row.pack(anchor="w", pady=(0, 10))
        self.label = tk.Label(row, font=("TkDefaultFont", 12))
        self.label.pack(side="left")
        self.swatch = tk.Label(row, width=4, height=1)
        self.swatch.pack(side="left", padx=(10, 0))
        # A page of fixed size: a window that changes size stops the eval's run.
        paper = tk.Frame(self.body, width=460, height=220, bg="white")
        paper.pack_propagate(False)
        paper.pack()
        self.page = tk.Label(paper, justify="left", anchor="nw", bg="white", padx=10, pady=10,
                             text="Minutes of the meeting\n\nPresent: Ada, Grace, Alan.\n"
                                  "The budget for next year was agreed.\n"
                                  "Next meeting: the first Monday of the month.")
        self.page.pack(fill="both", expand=True)
        self.show()

    def set_zoom(self, level: str) -> None:
        self.zoom = level
        self.show()
        self.write()

    def show(self) -> None:
        self.label.configure(text=f"Zoom: {self.zoom}")
        self.swatch.configure(bg=hex_colour(LEVEL_TAGS[self.zoom]))
        size = round(10 * int(self.zoom.rstrip("%")) / 100)
        self.page.configure(font=("TkDefaultFont", size))

    def rect(self) -> list[int]:
        # The menu bar sits above the toplevel's own area, in the frame Tk wraps round it: the
        # window, for the eval's capture, starts at the bar.
        import tkinter as tk

        left, top, width, height = super().rect()
        try:
            bar_top = int(self.root.tk.call("winfo", "rooty", f".#{MENU_NAMES[0]}"))
        except tk.TclError:  # the bar's clone is made when the window is first drawn
            return [left, top, width, height]
        return [left, min(top, bar_top), width, height + max(0, top - bar_top)]

    def fields(self) -> dict[str, Any]:
        return {"zoom": self.zoom}
