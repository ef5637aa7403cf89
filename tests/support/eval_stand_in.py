"""A stand-in model for `holodesk eval`'s practice task that plans from the screen.

:class:`SeeingPolicy` finds each part of the practice window by its colour in the newest
screenshot (app/demo/look.py), in the order the task needs them; :class:`InContract` says its
steps in H's structured contract (the demo model's :func:`app.demo.model.in_contract`, which
writes the tool call with the codec's own ``from_action``), so a stand-in that holds requests
to H's contract (``FakeVLLM(contract="h_structured")``) can serve the suite.
"""

from __future__ import annotations

import json

from app.demo.look import BLUE_SWATCH, DELETE_BUTTON, NAME, NAME_FIELD, SAVE_BUTTON
from app.demo.model import in_contract
from model.contracts import Vocabulary
from tests.support.fake_policies import SeeingPolicy, Target
from tests.support.fake_vllm_request import ChatRequest


def practice_policy() -> SeeingPolicy:
    """The practice task's plan: click the name field, type the name, Blue, Save, Delete."""
    return SeeingPolicy([
        Target("Name field", NAME_FIELD, type_text=NAME),
        Target("Blue in the colour list", BLUE_SWATCH),
        Target("Save button", SAVE_BUTTON),
        Target("Delete draft button", DELETE_BUTTON),
    ], then={"action": "answer", "text": "The practice task is done."}, on_missing="answer")


class InContract:
    """``policy``'s steps in H's structured contract of ``vocabulary``."""

    def __init__(self, policy: SeeingPolicy, vocabulary: Vocabulary) -> None:
        self.policy = policy
        self.vocabulary = vocabulary

    def __call__(self, request: ChatRequest) -> str:
        said = json.loads(self.policy(request))
        return json.dumps(in_contract(said, self.vocabulary), ensure_ascii=False)
