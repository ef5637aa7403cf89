"""copy-order-number: two windows side by side. Select the order number in the order window
(a double click selects it all), copy it with Ctrl+C, click the form's field, paste with
Ctrl+V, press Submit; done once the form says it was sent."""

from __future__ import annotations

from typing import Any

from app.demo.look import Screenshot, Status
from app.demo.plans.common import find_in, inside, point_at
from app.demo.steps import cannot, step
from app.demo.task_look import (
    ORDER_FIELD,
    ORDER_FORM_BORDER,
    ORDER_SOURCE_BORDER,
    ORDER_VALUE,
    SELECTION,
    SUBMIT_BUTTON,
)

BORDERS = (ORDER_SOURCE_BORDER, ORDER_FORM_BORDER)


def plan(shot: Screenshot) -> dict[str, Any]:
    source = shot.window(ORDER_SOURCE_BORDER)
    form = shot.window(ORDER_FORM_BORDER)
    if source is None or form is None:
        return cannot("I cannot see both the holodesk order window and the returns form whole "
                      "on the screen (one is covered, off the screen or closed), and I act "
                      "only in them.")
    copied = shot.checklist(inside(source))
    fields = shot.checklist(inside(form))
    if len(copied) != 1 or len(fields) != 2:
        return cannot("I cannot read the order window's and the form's status marks.")
    field, sent = fields
    if sent is Status.DONE:
        return step("The form says it was sent.", {
            "action": "answer", "text": "Demo: the order number is copied into the returns "
                                        "form and the form is submitted."})
    if field is Status.DONE:
        submit = find_in(shot, SUBMIT_BUTTON, form)
        if submit is None:
            return cannot("I cannot see the form's Submit button.")
        return point_at(shot, submit, "Submit button",
                        "The order number field is filled; press Submit.")
    if copied[0] is not Status.DONE:
        if find_in(shot, SELECTION, source) is not None:
            return step("The order number is selected; copy it.",
                        {"action": "hotkey", "keys": ["ctrl", "c"]})
        number = find_in(shot, ORDER_VALUE, source)
        if number is None:
            return cannot("I cannot see the order number in the order window.")
        return point_at(shot, number, "the order number",
                        "Select the order number (a double click selects it all) to copy it.",
                        "double_click")
    if field is Status.ACTIVE:
        return step("The order number is copied and the form's field has the focus; paste.",
                    {"action": "hotkey", "keys": ["ctrl", "v"]})
    box = find_in(shot, ORDER_FIELD, form)
    if box is None:
        return cannot("I cannot see the form's order number field.")
    return point_at(shot, box, "Order number field of the returns form",
                    "The order number is copied; click the form's field to paste it there.")
