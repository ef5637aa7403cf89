"""A turn that typed a secret is sent back with its length only, in every place it shows."""

from __future__ import annotations

import datetime
import json

from model.coords import Convention
from model.prompt import PromptConfig, Turn, build_messages, secret_placeholder
from model.schema import Step

CONFIG = PromptConfig(Convention.NORM1000, 2048, 1152, datetime.date(2026, 3, 14))
SECRET = "correct horse battery staple"


def _turns(*, secret: bool) -> list[Turn]:
    typed = Step.model_validate(
        {"thought": "type it", "action": {"action": "type", "text": SECRET}}
    )
    return [Turn(1, b"\xff\xd8one", "image/jpeg", typed, "done", secret=secret),
            Turn(2, b"\xff\xd8two", "image/jpeg")]


def test_a_secret_turn_shows_only_its_length() -> None:
    messages = build_messages("sign in", _turns(secret=True), CONFIG)
    sent = json.dumps(messages)
    assert SECRET not in sent
    placeholder = secret_placeholder(SECRET)
    assert placeholder == "[secret typed, 28 characters]"
    assistant = json.loads(messages[3]["content"])
    assert assistant["action"]["text"] == placeholder
    assert f'type "{placeholder}" (done)' in messages[-1]["content"][-1]["text"]


def test_an_ordinary_turn_is_sent_as_typed() -> None:
    assert SECRET in json.dumps(build_messages("sign in", _turns(secret=False), CONFIG))
