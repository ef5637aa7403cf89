"""Stand-in models for `holodesk eval`'s practice tasks that plan from the screen.

:func:`practice_policy` is a :class:`SeeingPolicy` that finds each part of the practice window
by its colour in the newest screenshot (app/demo/look.py), in the order the form task needs
them (a fixed order: it serves ``practice-form`` only); :class:`ReadsTheChecklist` plans each
step as the demo model does (its planner: the practice window's checklist, the rows window,
the Tk task windows), so it serves every task of the suite; :class:`InContract` says a
policy's steps in H's structured contract (the demo model's
:func:`app.demo.model.in_contract`, which writes the tool call with the codec's own
``from_action``), so a stand-in that holds requests to H's contract
(``FakeVLLM(contract="h_structured")``) can serve the suite.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from app.demo.look import BLUE_SWATCH, DELETE_BUTTON, NAME, NAME_FIELD, SAVE_BUTTON
from app.demo.model import answer, in_contract
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


class ReadsTheChecklist:
    """Each step planned from the newest screenshot's checklist (the demo model's planner)."""

    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, request: ChatRequest) -> str:
        self.requests += 1
        return json.dumps(answer(request.messages), ensure_ascii=False)


class InContract:
    """``policy``'s steps in H's structured contract of ``vocabulary``."""

    def __init__(self, policy: Callable[[ChatRequest], str], vocabulary: Vocabulary) -> None:
        self.policy = policy
        self.vocabulary = vocabulary

    def __call__(self, request: ChatRequest) -> str:
        said = json.loads(self.policy(request))
        return json.dumps(in_contract(said, self.vocabulary), ensure_ascii=False)
