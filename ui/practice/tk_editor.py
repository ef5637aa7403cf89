"""The notes editor of `holodesk eval`'s edit-and-save task: a small real text editor.

A Tk Text opened on :data:`app.demo.task_look.NOTES_FILE` in the task folder; Ctrl+S saves it
(whole, atomically), and the status bar says whether there are unsaved changes (a status
square: to do while the text differs from the file, done once saved). The value of the
``status:`` line is highlighted, as a front-matter highlighter would: "draft" in
:data:`DRAFT_VALUE`, "final" in :data:`FINAL_VALUE`; the selection is :data:`SELECTION`. The
check reads the file on disk, never the window.
"""

from __future__ import annotations

import re
import tkinter as tk
from pathlib import Path
from typing import Any

from app.demo.look import Status
from app.demo.task_look import (
    DRAFT_VALUE,
    EDITOR_BORDER,
    EDITOR_WM_CLASS,
    FINAL_VALUE,
    NOTES_FILE,
    SELECTION,
    hex_colour,
)
from ui.practice.tk_task import TkWindow, show, square, write_atomically

_STATUS_LINE = re.compile(r"^status:[ \t]*(?P<value>\S*)[ \t]*$")


class EditorWindow(TkWindow):
    wm_class = EDITOR_WM_CLASS
    title = "holodesk notes editor (eval)"
    border = EDITOR_BORDER

    def __init__(self, state: Path | None) -> None:
        super().__init__(state)
        self.path = self.folder / NOTES_FILE
        self.saved_text = self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        self.saves = 0
        tk.Label(self.body, text=f"{NOTES_FILE} \u2014 Ctrl+S saves",
                 font=("TkDefaultFont", 12, "bold")).pack(anchor="w", pady=(0, 8))
        self.text = tk.Text(self.body, width=46, height=9, font=("TkFixedFont", 13),
                            undo=True, wrap="none", highlightthickness=0,
                            selectbackground=hex_colour(SELECTION), selectforeground="white",
                            inactiveselectbackground=hex_colour(SELECTION))
        self.text.insert("1.0", self.saved_text)
        self.text.edit_reset()
        self.text.tag_configure("draft", background=hex_colour(DRAFT_VALUE))
        self.text.tag_configure("final", background=hex_colour(FINAL_VALUE))
        self.text.tag_raise("sel")  # a selected value shows as selected, not highlighted
        self.text.pack()
        bar = tk.Frame(self.body)
        bar.pack(fill="x", pady=(8, 0))
        self.square = square(bar)
        self.square.pack(side="left")
        self.words = tk.Label(bar, text="")
        self.words.pack(side="left", padx=8)
        self.text.bind("<Control-s>", self._save)
        self.text.bind("<Control-S>", self._save)
        self.text.bind("<<Modified>>", self._edited)
        self._changed()

    def content(self) -> str:
        return str(self.text.get("1.0", "end-1c"))

    def _save(self, _event: object = None) -> str:
        write_atomically(self.path, self.content())
        self.saved_text = self.content()
        self.saves += 1
        self._changed()
        return "break"  # Ctrl+S inserts nothing

    def _edited(self, _event: object) -> None:
        # Typing, pasting, undo: every edit shows here, whichever binding made it, before Tk
        # redraws (a screenshot never shows the new text with the old highlight). Clearing the
        # flag makes Tk say the next edit too.
        self.text.edit_modified(False)
        self._changed()

    def _changed(self) -> None:
        self._seen = self.content()
        for tag in ("draft", "final"):
            self.text.tag_remove(tag, "1.0", "end")
        for number, line in enumerate(self._seen.split("\n"), start=1):
            match = _STATUS_LINE.match(line)
            if match and match["value"] in ("draft", "final"):
                self.text.tag_add(match["value"], f"{number}.{match.start('value')}",
                                  f"{number}.{match.end('value')}")
        clean = self._seen == self.saved_text
        show(self.square, Status.DONE if clean else Status.TODO)
        self.words.configure(text="Saved" if clean else "Unsaved changes")
        self.refresh()

    def facts(self) -> dict[str, Any]:
        return {"file": NOTES_FILE, "saves": self.saves,
                "unsaved": self.content() != self.saved_text}
