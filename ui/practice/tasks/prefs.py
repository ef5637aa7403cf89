"""The preferences window of `holodesk eval`'s switch-to-a-tab task: a notebook of three tabs
(General, Display, Sound); the theme is on the Display tab (Light, Dark, System radio buttons),
and Apply, below the tabs, applies it.

The Display tab's icon is :data:`DISPLAY_TAB`, each theme has an icon of its colour
(:data:`THEME_TAGS`), a chosen theme's button is filled :data:`TICK`, Apply is framed in
:data:`APPLY_BUTTON`, and a square beside "Applied" / "Not applied" shows the practice window's
done and to-do colours (app/demo/task_look.py): what the demo model reads. The state file says
the tab shown, the theme chosen and the one last applied.
"""

from __future__ import annotations

from typing import Any

from app.demo.look import STATUS_COLORS, Status
from app.demo.task_look import (
    APPLY_BUTTON,
    DISPLAY_TAB,
    TABS,
    THEME_START,
    THEME_TAGS,
    THEMES,
    TICK,
    TaskWindow,
)
from ui.practice.tasks.base import TaskApp, hex_colour

_ICON = 16


def _icon(tk: Any, color: str) -> Any:
    icon = tk.PhotoImage(width=_ICON, height=_ICON)
    icon.put(color, to=(0, 0, _ICON, _ICON))
    return icon


class PrefsApp(TaskApp):
    kind = TaskWindow.PREFS
    title = "holodesk preferences window (eval)"

    def build(self) -> None:
        import tkinter as tk
        from tkinter import ttk

        self.applied: str | None = None
        self.icons: list[Any] = []  # Tk drops an image nobody holds
        self.notebook = ttk.Notebook(self.body, width=360, height=170)
        self.notebook.pack()
        self.pages: dict[str, Any] = {}
        for name in TABS:
            page = tk.Frame(self.notebook, padx=12, pady=10)
            self.pages[name] = page
            if name == "Display":
                icon = _icon(tk, hex_colour(DISPLAY_TAB))
                self.icons.append(icon)
                self.notebook.add(page, text=f" {name}", image=icon, compound="left")
            else:
                self.notebook.add(page, text=name)
        tk.Label(self.pages["General"], text="Language: English\nStart at login: yes",
                 justify="left").pack(anchor="w")
        tk.Label(self.pages["Sound"], text="Volume: 80 %\nOutput: Speakers",
                 justify="left").pack(anchor="w")
        tk.Label(self.pages["Display"], text="Theme:").pack(anchor="w")
        self.theme = tk.StringVar(self.root, value=THEME_START)
        self.theme.trace_add("write", lambda *_a: self.show())
        self.radios: dict[str, Any] = {}
        for theme in THEMES:
            icon = _icon(tk, hex_colour(THEME_TAGS[theme]))
            self.icons.append(icon)
            radio = tk.Radiobutton(self.pages["Display"], text=f" {theme}", image=icon,
                                   compound="left", variable=self.theme, value=theme,
                                   anchor="w", width=200)
            radio.pack(anchor="w", pady=2)
            self.radios[theme] = radio
        self.notebook.bind("<<NotebookTabChanged>>", lambda _e: self.write())
        bottom = tk.Frame(self.body)
        bottom.pack(fill="x", pady=(12, 0))
        self.square = tk.Label(bottom, width=3, height=1)
        self.square.pack(side="left")
        self.status = tk.Label(bottom, width=12, anchor="w")
        self.status.pack(side="left", padx=(6, 0))
        frame = tk.Frame(bottom, bg=hex_colour(APPLY_BUTTON), padx=4, pady=4)
        frame.pack(side="right")
        tk.Button(frame, text="Apply", width=8, command=self.apply).pack()
        self.show()

    def apply(self) -> None:
        self.applied = str(self.theme.get())
        self.show()

    def show(self) -> None:
        chosen = str(self.theme.get())
        # Tk fills a button with its select colour chosen or not: the fill follows the value.
        for theme, radio in self.radios.items():
            radio.configure(selectcolor=hex_colour(TICK) if theme == chosen else "white")
        done = self.applied == chosen
        self.square.configure(bg=hex_colour(STATUS_COLORS[Status.DONE if done else Status.TODO]))
        self.status.configure(text="Applied" if done else "Not applied")
        self.write()

    def fields(self) -> dict[str, Any]:
        shown = str(self.notebook.tk.call(self.notebook, "select"))
        tab = str(self.notebook.tk.call(self.notebook, "tab", shown, "-text")) if shown else ""
        return {"tab": tab.strip(), "theme": str(self.theme.get()),
                "applied": self.applied}
