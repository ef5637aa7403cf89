"""The two windows of `holodesk eval`'s copy-order-number task: an order shown in one window,
a form in another, side by side, each of its own window class.

The order window shows an order number in a read-only field framed in :data:`ORDER_VALUE`
(selectable, Ctrl+C copies it; a status square says once it is copied). The form window has an
order number field framed in :data:`ORDER_FIELD` with a status square (to do while empty,
in progress while it has the focus and is empty, done once filled) and Submit framed in
:data:`SUBMIT_BUTTON` with a square that says it was sent. The check reads what was submitted.
"""

from __future__ import annotations

import tkinter as tk
from pathlib import Path
from typing import Any

from app.demo.look import Status
from app.demo.task_look import (
    ORDER_CUSTOMER,
    ORDER_FIELD,
    ORDER_FORM_BORDER,
    ORDER_FORM_WM_CLASS,
    ORDER_NUMBER,
    ORDER_SOURCE_BORDER,
    ORDER_SOURCE_WM_CLASS,
    ORDER_VALUE,
    SELECTION,
    SUBMIT_BUTTON,
    hex_colour,
)
from ui.practice.tk_task import TkWindow, framed, show, square

#: Where the order window opens, and the gap between it and the form to its right.
_AT = (120, 140)
_GAP = 24


class OrderWindows(TkWindow):
    wm_class = ORDER_SOURCE_WM_CLASS
    title = "holodesk order (eval)"
    border = ORDER_SOURCE_BORDER

    def __init__(self, state: Path | None) -> None:
        super().__init__(state)
        self.copied = False
        self.submitted: str | None = None
        font = ("TkDefaultFont", 13)
        tk.Label(self.body, text="Order", font=("TkDefaultFont", 13, "bold")).grid(
            row=0, column=0, columnspan=2, sticky="w", pady=(0, 10))
        tk.Label(self.body, text="Order number:", font=font).grid(row=1, column=0, sticky="w")
        box = framed(self.body, ORDER_VALUE)
        box.grid(row=1, column=1, padx=(8, 0))
        self.number = tk.Entry(box, width=14, font=font, highlightthickness=0,
                               selectbackground=hex_colour(SELECTION),
                               selectforeground="white")
        self.number.insert(0, ORDER_NUMBER)
        self.number.configure(state="readonly", readonlybackground="white")
        self.number.pack()
        self.number.bind("<<Copy>>", self._copy, add="+")
        tk.Label(self.body, text="Customer:", font=font).grid(row=2, column=0, sticky="w",
                                                              pady=(8, 0))
        tk.Label(self.body, text=ORDER_CUSTOMER, font=font).grid(row=2, column=1, sticky="w",
                                                                 padx=(8, 0), pady=(8, 0))
        copied = tk.Frame(self.body)
        copied.grid(row=3, column=0, columnspan=2, sticky="w", pady=(12, 0))
        self.copied_square = square(copied)
        self.copied_square.pack(side="left")
        self.copied_words = tk.Label(copied, text="Not copied yet")
        self.copied_words.pack(side="left", padx=8)
        show(self.copied_square, Status.TODO)

        self.form = tk.Toplevel(self.root, class_=ORDER_FORM_WM_CLASS)
        self.form.title("holodesk order form (eval)")
        self.form.resizable(False, False)
        self.form.protocol("WM_DELETE_WINDOW", self.root.destroy)
        form = self.frame_window(self.form, ORDER_FORM_BORDER)
        tk.Label(form, text="Returns form", font=("TkDefaultFont", 13, "bold")).grid(
            row=0, column=0, columnspan=3, sticky="w", pady=(0, 10))
        tk.Label(form, text="Order number:", font=font).grid(row=1, column=0, sticky="w")
        field = framed(form, ORDER_FIELD)
        field.grid(row=1, column=1, padx=8)
        self.typed = tk.StringVar(self.form)
        self.field = tk.Entry(field, width=14, font=font, highlightthickness=0,
                              textvariable=self.typed)
        self.field.pack()
        self._focused = False
        self.field_square = square(form)
        self.field_square.grid(row=1, column=2)
        submit = framed(form, SUBMIT_BUTTON, width=4)
        submit.grid(row=2, column=1, pady=(14, 0))
        tk.Button(submit, text="Submit", width=10, command=self._submit).pack()
        self.sent_square = square(form)
        self.sent_square.grid(row=2, column=2, pady=(14, 0))
        self.sent_words = tk.Label(form, text="")
        self.sent_words.grid(row=3, column=0, columnspan=3, sticky="w", pady=(8, 0))
        show(self.sent_square, Status.TODO)
        self.form.bind("<Configure>", lambda _e: self.refresh())
        # The square changes as the text or the focus does, before Tk redraws: a screenshot
        # never shows a pasted number beside a square that still says empty.
        self.typed.trace_add("write", lambda *_: self._show_field())
        self.field.bind("<FocusIn>", lambda _e: self._focus(True), add="+")
        self.field.bind("<FocusOut>", lambda _e: self._focus(False), add="+")
        self._show_field()
        self._place()

    def _place(self) -> None:
        self.root.geometry(f"+{_AT[0]}+{_AT[1]}")
        self.root.update_idletasks()
        right = _AT[0] + self.root.winfo_reqwidth() + 16 + _GAP
        self.form.geometry(f"+{right}+{_AT[1]}")

    def windows(self) -> dict[str, tk.Tk | tk.Toplevel]:
        return {"order": self.root, "form": self.form}

    def _copy(self, _event: object) -> None:
        if self.number.selection_present():
            self.copied = True
            show(self.copied_square, Status.DONE)
            self.copied_words.configure(text="Copied")
            self.refresh()

    def _submit(self) -> None:
        self.submitted = self.field.get()
        show(self.sent_square, Status.DONE)
        self.sent_words.configure(text=f"Sent: {self.submitted}")
        self.refresh()

    def _focus(self, focused: bool) -> None:
        self._focused = focused
        self._show_field()

    def _show_field(self) -> None:
        status = (Status.DONE if self.typed.get() else
                  Status.ACTIVE if self._focused else Status.TODO)
        show(self.field_square, status)

    def facts(self) -> dict[str, Any]:
        return {"copied": self.copied, "field": self.field.get(), "submitted": self.submitted}
