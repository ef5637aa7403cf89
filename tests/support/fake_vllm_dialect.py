"""The stand-in model answers in the contract it is asked in.

Tests script the model's steps in holodesk's own dialect (``{"note", "thought", "action":
{"action": "click", ...}}``), which reads well and is what the action log keeps. A real model
answers in the contract of the request, and since issue 22 holodesk asks every model it knows
in H's structured contract (docs/contract.md): so before the server checks an answer against
the request's grammar, :func:`in_request_contract` rewrites a step in holodesk's dialect as the
tool call of the request's vocabulary, with the codec's own ``from_action`` (the demo model's
:func:`app.demo.model.in_contract`). Coordinates are taken as they are (rounded to integers):
H's contract fixes them to 0-1000 of the image, which is also holodesk's default convention.

Anything else is left alone: a text that is not a step of holodesk's dialect (garbage, a step
already in H's shape, a localization answer), and any answer to a request that does not carry
H's step schema (the legacy contract, a probe). So a test that scripts an answer breaking H's
contract still gets the grammar's refusal.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from model.contracts import Vocabulary
from tests.support.fake_vllm_request import ChatRequest

_THINK = re.compile(r"\A\s*<think>.*?</think>\s*", re.DOTALL)


def request_vocabulary(schema: dict[str, Any] | None) -> Vocabulary | None:
    """The vocabulary of an H step schema (None for any other schema, or none)."""
    if not schema or "tool_call" not in (schema.get("properties") or {}):
        return None
    text = json.dumps(schema)
    return Vocabulary.HOLO_NANO if '"click_desktop"' in text else Vocabulary.HUB


def in_request_contract(text: str, request: ChatRequest) -> str:
    """``text`` as the request's contract says it (unchanged when there is nothing to say)."""
    vocabulary = request_vocabulary(request.schema)
    if vocabulary is None:
        return text
    think = _THINK.match(text)
    head, rest = (text[: think.end()], text[think.end():]) if think else ("", text)
    try:
        said = json.loads(rest)
    except json.JSONDecodeError:
        return text
    if not isinstance(said, dict) or not isinstance(said.get("action"), dict):
        return text
    from app.demo.model import in_contract

    try:
        step = in_contract(said, vocabulary)
    except (ValidationError, ValueError):
        return text  # not a step holodesk could read either: let the grammar refuse it
    return head + json.dumps(step, ensure_ascii=False)
