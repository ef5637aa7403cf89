"""The rows window of `holodesk eval`'s scroll-to-row task: a long list in a small Tk window.

A list of :data:`app.demo.rows.ROW_COUNT` rows of which the wanted one
(:data:`app.demo.rows.WANTED_ROW`) is far below the visible part and marked with its own colour
(:data:`app.demo.look.WANTED_ROW_MARK`; the list is framed in :data:`app.demo.look.LIST_FRAME`),
so a model must scroll the list to find it, then select it. The window's frame is
:data:`app.demo.look.ROWS_BORDER` and one status square says whether the wanted row is selected
(the practice window's status colours), which is what the demo model reads. Every change is
written to a JSON state file (atomically), which app/demo/rows.py reads.

It runs as a process of its own (``holodesk --rows-window --state FILE``, routed by ui/main.py),
window class :data:`app.demo.rows.ROWS_WM_CLASS`. Tk, a few widgets: no Qt needed for a list.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from app.demo.look import (
    LIST_FRAME,
    RGB,
    ROWS_BORDER,
    STATUS_COLORS,
    WANTED_ROW_MARK,
    Status,
)
from app.demo.rows import ROW_COUNT, ROWS_WM_CLASS, WANTED_ROW
from ui.practice import PARENT_CHECK_MS, orphaned, when_drawn

_VISIBLE = 12  # rows shown at once


def _hex(color: RGB) -> str:
    return "#{:02x}{:02x}{:02x}".format(*color)


class _RowsApp:
    """The Tk window itself (in its own process)."""

    def __init__(self, state: Path | None) -> None:
        import tkinter as tk

        self.state_path = state
        self.ready = False
        self.root = tk.Tk(className=ROWS_WM_CLASS)
        self.root.title("holodesk rows window (eval)")
        self.root.configure(bg=_hex(ROWS_BORDER))
        self.root.resizable(False, False)
        inner = tk.Frame(self.root, padx=14, pady=14)
        inner.pack(padx=8, pady=8)
        tk.Label(inner, text="Select the row named " + WANTED_ROW,
                 font=("TkDefaultFont", 13, "bold")).grid(row=0, column=0, columnspan=2,
                                                         sticky="w", pady=(0, 10))
        self.square = tk.Label(inner, width=3, height=1)
        self.square.grid(row=1, column=1, sticky="n", padx=(16, 0))
        frame = tk.Frame(inner, bg=_hex(LIST_FRAME), padx=5, pady=5)
        self.list = tk.Listbox(frame, height=_VISIBLE, width=28, exportselection=False,
                               font=("TkDefaultFont", 12), activestyle="none",
                               highlightthickness=0)
        for n in range(1, ROW_COUNT + 1):
            self.list.insert("end", f"Row {n}")
        wanted = int(WANTED_ROW.split()[1]) - 1
        self.list.itemconfigure(wanted, background=_hex(WANTED_ROW_MARK), foreground="white",
                                selectbackground=_hex(WANTED_ROW_MARK))
        self.list.pack()
        frame.grid(row=1, column=0)
        self.list.bind("<<ListboxSelect>>", lambda _e: self.refresh())
        # The wheel scrolls the list wherever the pointer is in the window (X11 sends it as
        # buttons 4 and 5; Tk's own bindings differ between versions).
        self.root.bind_all("<Button-4>", lambda _e: self._wheel(-3))
        self.root.bind_all("<Button-5>", lambda _e: self._wheel(3))
        self.root.bind_all("<MouseWheel>", lambda e: self._wheel(-3 if e.delta > 0 else 3))
        self.root.bind("<Configure>", lambda _e: self.refresh())
        when_drawn([self.root], self._shown)
        self.refresh()

    def _wheel(self, rows: int) -> str:
        self.list.yview_scroll(rows, "units")
        return "break"

    def _shown(self) -> None:
        self.ready = True
        self.refresh()

    def selected(self) -> str | None:
        chosen: tuple[int, ...] = self.list.curselection()  # type: ignore[no-untyped-call]
        return str(self.list.get(chosen[0])) if chosen else None

    def refresh(self) -> None:
        done = self.selected() == WANTED_ROW
        self.square.configure(bg=_hex(STATUS_COLORS[Status.DONE if done else Status.TODO]))
        if self.state_path is None:
            return
        r = self.root
        data = {"pid": os.getpid(), "ready": self.ready and r.winfo_viewable() == 1,
                "window": [r.winfo_rootx(), r.winfo_rooty(), r.winfo_width(), r.winfo_height()],
                "selected": self.selected(), "done": done}
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, self.state_path)


def main(argv: Sequence[str] | None = None) -> int:
    """``holodesk --rows-window [--state FILE]``: show the window until it is closed."""
    parser = argparse.ArgumentParser(prog="holodesk --rows-window",
                                     description="the rows window of holodesk eval")
    parser.add_argument("--state", type=Path, help="write the window's state here (JSON)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    app = _RowsApp(args.state)
    parent = os.getppid()

    def watch() -> None:
        if orphaned(parent):
            app.root.destroy()
        else:
            app.root.after(PARENT_CHECK_MS, watch)

    app.root.after(PARENT_CHECK_MS, watch)
    app.root.mainloop()
    return 0
