"""Secrets stay out of the prompt: what the action log masks never goes back to the server.

Checked where it matters, at the HTTP boundary: every string of every request body the
stand-in server received after the secret was typed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.events import Outcome
from tests.support.agent_harness import HarnessFor
from tests.support.fake_vllm import ChatRequest, FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home
from tests.support.leaks import strings

PASSWORD = 'Hunter2!x9"q'  # a quote: JSON-escaped inside the assistant turn's JSON


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def _carries(request: ChatRequest, secret: str) -> bool:
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    return any(form in text for text in strings(request.body) for form in forms)


def _step(thought: str, action: dict[str, Any], note: str = "") -> dict[str, Any]:
    return {"note": note, "thought": thought, "action": action}


def test_a_typed_secret_never_goes_back_to_the_model(harness_for: HarnessFor) -> None:
    script = [
        # The model names the password before it types it: that request cannot know yet.
        _step(f"the password is {PASSWORD}; click its field",
              {"action": "click", "element": "Sign-in box", "x": 200, "y": 150}),
        _step(f"type {PASSWORD}", {"action": "type", "text": PASSWORD},
              note=f"password: {PASSWORD}"),
        _step(f"I typed {PASSWORD}", {"action": "wait", "seconds": 0}),
        _step("done", {"action": "answer", "text": "signed in"}),
    ]
    with FakeVLLM(ScriptedPolicy(script)) as server:
        h = harness_for(server)
        finished = h.run(task="sign in")
    assert finished.outcome is Outcome.ANSWERED
    typed = "".join(str(c.args[0]) for c in h.backend.calls if c.name == "write_char")
    assert typed == PASSWORD  # typed in full: only what is sent back is masked
    requests = server.requests
    assert len(requests) == 4
    assert _carries(requests[1], PASSWORD)  # the check sees it where it is (step 1's thought)
    after = requests[2:]  # every request after the step that typed it
    assert not any(_carries(r, PASSWORD) for r in after)
    # The model still hears what it did, as the log says it: a secret of that length.
    placeholder = f"[secret typed, {len(PASSWORD)} characters]"
    for request in after:
        assert placeholder in request.text
        assistant = [m["content"] for m in request.messages if m["role"] == "assistant"]
        assert json.loads(assistant[1])["action"] == {"action": "type", "text": placeholder,
                                                       "press_enter": False,
                                                       "clear_first": False}
