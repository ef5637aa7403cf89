"""The find-and-read-a-value task (ui/practice/tasks/invoices.py): the total of the invoice
the goal names, read from the table's dot-font text, answered in words."""

from __future__ import annotations

import re
from typing import Any

from app.demo.dots import ink, read_lines
from app.demo.look import Box, Screenshot
from app.demo.plans.common import cannot, done, inside


def plan(shot: Screenshot, window: Box, goal: str) -> dict[str, Any]:
    found = re.search(r"INV-\d+", goal, flags=re.IGNORECASE)
    if found is None:
        return cannot("The task names no invoice number (INV-...) to look for.")
    wanted = found[0].upper()
    rows = [words for _y, words in read_lines(ink(shot.pixels(inside(window))))]
    for words in rows:
        if len(words) >= 2 and words[0] == wanted:
            return done(f"The row of {wanted} shows the total {words[-1]}.",
                        f"the total of invoice {wanted} is {words[-1]}.")
    return cannot(f"I cannot find invoice {wanted} in the invoices window (I read "
                  f"{len(rows)} rows).")
