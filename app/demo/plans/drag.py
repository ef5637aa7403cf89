"""The drag-an-item task (ui/practice/tasks/drag.py): the card into the Done box, in two steps
that both contracts can say: ``move`` onto the card (it lights up), then a ``drag`` from the
card to the box. H's contract has no drag with a start, only ``drag_to`` from the pointer
(app/demo/model.py ``in_contract`` writes the drag as one), which is why the pointer is put
on the card first and the drag planned only once the card shows it is there."""

from __future__ import annotations

from typing import Any

from app.demo.look import Box, Screenshot
from app.demo.plans.common import cannot, done, inside, point_at
from app.demo.steps import norm1000
from app.demo.task_look import CARD, CARD_HOVER, DROP_BOX


def plan(shot: Screenshot, window: Box, _goal: str) -> dict[str, Any]:
    area = inside(window)
    drop = shot.extent(DROP_BOX, area)
    if drop is None:
        return cannot("I cannot see the Done box in the board window.")
    held = shot.find(CARD_HOVER, area)
    card = held or shot.find(CARD, area)
    if card is None:
        return cannot("I cannot see the card in the board window.")
    if drop.contains(card.x, card.y):
        return done("The card is in the Done box.", "the card is in the Done box.")
    if held is None:
        return point_at(shot, card, "the card", "The card is in To do; put the pointer on it.",
                        "move")
    drag = point_at(shot, card, "the card",
                    "The pointer is on the card; drag it into the Done box.", "drag")
    to = norm1000((drop.left + drop.right) / 2, (drop.top + drop.bottom) / 2, shot.width,
                  shot.height)
    drag["action"].update(to_x=to[0], to_y=to[1])
    return drag
