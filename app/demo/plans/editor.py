"""edit-and-save: in the notes editor, select the status line's "draft" (a double click selects
the word), type "final" over it, save with Ctrl+S; done once the value shows "final" and the
status bar says there is nothing unsaved."""

from __future__ import annotations

from typing import Any

from app.demo.look import Screenshot, Status
from app.demo.plans.common import find_in, inside, point_at
from app.demo.steps import cannot, step
from app.demo.task_look import (
    DRAFT_VALUE,
    EDITOR_BORDER,
    FINAL_VALUE,
    NEW_STATUS,
    NOTES_FILE,
    SELECTION,
)

BORDERS = (EDITOR_BORDER,)


def plan(shot: Screenshot) -> dict[str, Any]:
    window = shot.window(EDITOR_BORDER)
    if window is None:
        return cannot("I cannot see the whole holodesk notes editor on the screen (it is "
                      "covered, off the screen or closed), and I act only in it.")
    saved = shot.checklist(inside(window))
    if len(saved) != 1:
        return cannot("I cannot read the notes editor's status bar (saved or not).")
    final = find_in(shot, FINAL_VALUE, window)
    if final is not None and saved[0] is Status.DONE:
        return step("The status line says final and the file is saved.", {
            "action": "answer",
            "text": f"Demo: the status line of {NOTES_FILE} says '{NEW_STATUS}' and the file "
                    "is saved."})
    if final is not None:
        return step("The status line says final but is not saved yet; save with Ctrl+S.",
                    {"action": "hotkey", "keys": ["ctrl", "s"]})
    draft = find_in(shot, DRAFT_VALUE, window)
    if draft is None and find_in(shot, SELECTION, window) is not None:
        return step("The word draft is selected; type the new value over it.",
                    {"action": "type", "text": NEW_STATUS})
    if draft is not None:
        return point_at(shot, draft, "draft, the status line's value",
                        "The status line says draft; double-click the word to select it.",
                        "double_click")
    return cannot("I cannot find the value of the status line in the notes editor.")
