"""The invoices window of `holodesk eval`'s find-and-read-a-value task: a small table of
invoices (number, customer, total) whose numbers and totals look alike; the model is asked for
one invoice's total and answers in words.

Numbers and totals are drawn in the dot font (app/demo/dots.py) in :data:`INK`, which the demo
model reads back; customers are ordinary text. Nothing in the window changes: the check reads
the run's answer. The state file says only where the window is.
"""

from __future__ import annotations

from typing import Any

from app.demo.task_look import INVOICES, TaskWindow
from ui.practice.tasks.base import TaskApp, draw_dots

_WIDTH = 620
_ROW = 46  # pixels from one row to the next
_COLUMNS = (14, 220, 440)  # where invoice, customer and total start


class InvoicesApp(TaskApp):
    kind = TaskWindow.INVOICES
    title = "holodesk invoices window (eval)"

    def build(self) -> None:
        import tkinter as tk

        tk.Label(self.body, text="Invoices, December", font=("TkDefaultFont", 13, "bold")
                 ).pack(anchor="w", pady=(0, 8))
        height = _ROW * (len(INVOICES) + 1)
        canvas = tk.Canvas(self.body, width=_WIDTH, height=height, bg="white",
                           highlightthickness=1, highlightbackground="#a0a0a0")
        canvas.pack()
        for x, head in zip(_COLUMNS, ("Invoice", "Customer", "Total (EUR)"), strict=True):
            canvas.create_text(x, _ROW / 2, text=head, anchor="w",
                               font=("TkDefaultFont", 11, "bold"))
        for i, (number, customer, total) in enumerate(INVOICES, start=1):
            top = _ROW * i
            canvas.create_line(0, top, _WIDTH, top, fill="#d0d0d0")
            draw_dots(canvas, number, _COLUMNS[0], top + 10)
            canvas.create_text(_COLUMNS[1], top + _ROW / 2, text=customer, anchor="w",
                               font=("TkDefaultFont", 11))
            draw_dots(canvas, total, _COLUMNS[2], top + 10)

    def fields(self) -> dict[str, Any]:
        return {}
