"""What every task window of `holodesk eval` shares: a Tk window of its own class framed in its
colour, its state written to a JSON file on every change (atomically: the eval reads it at any
moment), and closing itself when the holodesk that started it is gone."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from app.demo.dots import layout
from app.demo.look import RGB
from app.demo.task_look import BORDERS, INK, WM_CLASSES, TaskWindow
from ui.practice import PARENT_CHECK_MS, orphaned, when_drawn


def hex_colour(color: RGB) -> str:
    return "#{:02x}{:02x}{:02x}".format(*color)


def draw_dots(canvas: Any, text: str, x: int, y: int, unit: int = 4,
              color: RGB = INK) -> int:
    """Draw ``text`` in the dot font (app/demo/dots.py) on a Tk canvas at ``x``, ``y``; its
    width in pixels."""
    dots, width = layout(text, unit)
    fill = hex_colour(color)
    for dot in dots:
        canvas.create_rectangle(x + dot.x, y + dot.y, x + dot.x + dot.size - 1,
                                y + dot.y + dot.size - 1, fill=fill, outline=fill)
    return width


class TaskApp:
    """A task window: subclasses fill :attr:`body` and say their state in :meth:`fields`."""

    kind: TaskWindow
    title = "holodesk eval"

    def __init__(self, state: Path | None) -> None:
        import tkinter as tk

        self.state_path = state
        self.ready = False
        self.root = tk.Tk(className=WM_CLASSES[self.kind])
        self.root.title(self.title)
        self.root.configure(bg=hex_colour(BORDERS[self.kind]))
        self.root.resizable(False, False)
        self.body = tk.Frame(self.root, padx=14, pady=14)
        self.body.pack(padx=8, pady=8)
        self.build()
        self.root.bind("<Configure>", lambda _e: self.write())
        when_drawn([self.root], self._shown)

    def build(self) -> None:
        """Make the window's widgets in :attr:`body`."""
        raise NotImplementedError

    def fields(self) -> dict[str, Any]:
        """The task's part of the state file."""
        raise NotImplementedError

    def rect(self) -> list[int]:
        """Where the window is on the screen: left, top, width, height."""
        r = self.root
        return [r.winfo_rootx(), r.winfo_rooty(), r.winfo_width(), r.winfo_height()]

    def _shown(self) -> None:
        self.ready = True
        self.write()

    def write(self) -> None:
        if self.state_path is None:
            return
        r = self.root
        data = {"pid": os.getpid(), "ready": self.ready and r.winfo_viewable() == 1,
                "windows": {"main": self.rect()}, **self.fields()}
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, self.state_path)

    def run(self) -> None:
        """Show the window until it is closed, or the holodesk that started it is gone."""
        parent = os.getppid()

        def watch() -> None:
            if orphaned(parent):
                self.root.destroy()
            else:
                self.root.after(PARENT_CHECK_MS, watch)

        self.root.after(PARENT_CHECK_MS, watch)
        self.write()
        self.root.mainloop()
