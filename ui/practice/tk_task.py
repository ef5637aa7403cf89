"""What the Tk task windows of `holodesk eval` share: a framed window of its own class, and its
state written to a JSON file.

Each window runs as a process of its own (``holodesk --task-window NAME --state FILE``, routed
by ui/main.py to ui/practice/tasks, then ui/practice/tk_windows.py, which also closes it when
the holodesk that started it is gone; app/demo/task_windows.py starts it). Tk: a few widgets,
no Qt needed. The state file holds where each of its windows is (``windows``: name to [x, y,
width, height]), whether they are drawn (``ready``) and what the task's check reads; files a
task edits live beside it.
"""

from __future__ import annotations

import json
import os
import tkinter as tk
from pathlib import Path
from typing import Any

from app.demo.look import RGB, STATUS_COLORS, Status
from app.demo.task_look import hex_colour
from ui.practice import when_drawn


def square(parent: tk.Misc) -> tk.Label:
    """A status square (its colour is set with :func:`show`)."""
    return tk.Label(parent, width=3, height=1)


def show(label: tk.Label, status: Status) -> None:
    label.configure(bg=hex_colour(STATUS_COLORS[status]))


def framed(parent: tk.Misc, color: RGB, width: int = 5) -> tk.Frame:
    """A frame of the mark colour ``color`` to put one widget in (what the demo model finds)."""
    return tk.Frame(parent, bg=hex_colour(color), padx=width, pady=width)


class TkWindow:
    """One task window: a Tk root of class ``wm_class`` framed in ``border``. Subclasses fill
    :attr:`body` and say what their state adds (:meth:`facts`)."""

    wm_class = "holodesk-task"
    title = "holodesk task window (eval)"
    border: RGB = (0, 0, 0)

    def __init__(self, state: Path | None) -> None:
        self.state_path = state
        self.folder = state.parent if state is not None else Path.cwd()
        self.ready = False
        self.root = tk.Tk(className=self.wm_class)
        self.root.title(self.title)
        self.root.resizable(False, False)
        self.body = self.frame_window(self.root)
        self.root.bind("<Configure>", lambda _e: self.refresh())
        # Ready once every window is drawn (subclasses add theirs after this: checked at idle).
        self.root.after_idle(lambda: when_drawn(list(self.windows().values()), self._shown))

    def frame_window(self, window: tk.Tk | tk.Toplevel, border: RGB | None = None) -> tk.Frame:
        """``window``'s content frame inside its mark border."""
        window.configure(bg=hex_colour(border or self.border))
        inner = tk.Frame(window, padx=14, pady=14)
        inner.pack(padx=8, pady=8)
        return inner

    def windows(self) -> dict[str, tk.Tk | tk.Toplevel]:
        """The task's windows by name (one unless a task has more)."""
        return {"main": self.root}

    def facts(self) -> dict[str, Any]:
        """What the task's check reads (added to the state)."""
        return {}

    def _shown(self) -> None:
        self.ready = True
        self.refresh()

    def refresh(self) -> None:
        """Write the state file (atomically: a reader never sees half of it)."""
        if self.state_path is None:
            return
        shown = self.windows()
        data = {"pid": os.getpid(),
                "ready": self.ready and all(w.winfo_viewable() == 1 for w in shown.values()),
                "windows": {name: [w.winfo_rootx(), w.winfo_rooty(), w.winfo_width(),
                                   w.winfo_height()] for name, w in shown.items()},
                **self.facts()}
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, self.state_path)


def write_atomically(path: Path, text: str) -> None:
    """Save ``text`` to ``path`` as an editor should: whole or not at all."""
    tmp = path.with_name(path.name + ".saving")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
