"""How the demo model writes a step (model/schema.py's note, thought, action), shared by its
planners (app/demo/model.py and app/demo/plans): every text opens with :data:`LABEL`, points
are in norm1000 of the image sent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The answers' opening: every text the demo model writes says it is the demo.
LABEL = "Demo: "


def step(thought: str, action: Mapping[str, Any], note: str = "") -> dict[str, Any]:
    """One step as Holotron answers it (model/schema.py): note, thought, action."""
    return {"note": note, "thought": LABEL + thought, "action": dict(action)}


def cannot(why: str) -> dict[str, Any]:
    """The answer when the model may not act: no action, the reason in words."""
    return step(why, {"action": "answer", "text": f"{LABEL}{why} I did nothing."})


def norm1000(x: float, y: float, width: int, height: int) -> tuple[int, int]:
    """A pixel position of a ``width`` x ``height`` image in the norm1000 convention."""
    return round(x / width * 1000), round(y / height * 1000)
