"""tab-between-fields: click City, type the city, Tab to Postcode, type the postcode, Save; done
once the form says it was saved."""

from __future__ import annotations

from typing import Any

from app.demo.look import Screenshot, Status
from app.demo.plans.common import find_in, inside, point_at
from app.demo.steps import cannot, step
from app.demo.task_look import CITY, CITY_FIELD, DELIVERY_BORDER, POSTCODE, SUBMIT_BUTTON

BORDERS = (DELIVERY_BORDER,)


def plan(shot: Screenshot) -> dict[str, Any]:
    window = shot.window(DELIVERY_BORDER)
    if window is None:
        return cannot("I cannot see the whole holodesk delivery form on the screen (it is "
                      "covered, off the screen or closed), and I act only in it.")
    squares = shot.checklist(inside(window))
    if len(squares) != 3:
        return cannot("I cannot read the delivery form's status marks.")
    city, postcode, saved = squares
    if saved is Status.DONE:
        return step("The form says it was saved.", {
            "action": "answer", "text": f"Demo: the delivery address {CITY} {POSTCODE} is "
                                        "saved."})
    if city is Status.ACTIVE:
        return step("The City field has the focus; type the city.",
                    {"action": "type", "text": CITY})
    if city is Status.TODO:
        field = find_in(shot, CITY_FIELD, window)
        if field is None:
            return cannot("I cannot see the City field.")
        return point_at(shot, field, "City field", "Click the City field to type in it.")
    if postcode is Status.ACTIVE:
        return step("The Postcode field has the focus; type the postcode.",
                    {"action": "type", "text": POSTCODE})
    if postcode is Status.TODO:
        return step("The city is typed; Tab moves to the Postcode field.",
                    {"action": "hotkey", "keys": ["tab"]})
    save = find_in(shot, SUBMIT_BUTTON, window)
    if save is None:
        return cannot("I cannot see the delivery form's Save button.")
    return point_at(shot, save, "Save button", "Both fields are filled; press Save.")
