"""A masked secret never streams to a screen, not even its first characters (no display).

The model's answer streams in pieces of a few characters, and the task window shows the
thought as it grows (``ModelText``). A known secret (the API key, a password typed in an
earlier step) is masked in each text so far; a piece boundary inside the secret would leave
its start on show until the rest arrived, so that start is held back
(app/secrets.py ``redact_unfinished``). tests/e2e/test_masked_secrets_x11.py pins the same claim
through the real session builder, the terminal and ``holodesk.log``.
"""

from __future__ import annotations

import json

import pytest

from app.events import ModelText, Outcome
from app.secrets import redact, redact_unfinished
from tests.support.agent_harness import HarnessFor
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from ui.task_window import extract_thought

PASSWORD = 'Hunter2!x9"q'  # JSON-escaped in the raw answer: Hunter2!x9\"q
FORMS = {PASSWORD, json.dumps(PASSWORD)[1:-1]}


@pytest.mark.parametrize("text", [
    f"I used {PASSWORD} to sign in",
    json.dumps({"thought": f"I used {PASSWORD} and then {PASSWORD}."}),
    f"A look-alike: Hunter2!x9 is not it, {PASSWORD} is",
])
def test_every_text_so_far_shows_only_what_the_whole_text_shows_masked(text: str) -> None:
    final = redact(text, FORMS)
    for end in range(len(text) + 1):
        shown = redact_unfinished(text[:end], FORMS)
        # What shows is never taken back: a start of the secret is never shown, as it would
        # be masked (or, for a look-alike, shown on) in the whole text.
        assert final.startswith(shown), (text[:end], shown)
        assert not any(form in shown for form in FORMS)
    assert redact_unfinished(text, FORMS) == final  # nothing held back once it is all there


def test_the_streamed_thought_never_shows_part_of_a_typed_password(
    harness_for: HarnessFor,
) -> None:
    script = ScriptedPolicy([
        {"note": "", "thought": "The password field has focus; type it.",
         "action": {"action": "type", "text": PASSWORD}},
        {"note": "", "thought": f"I used {PASSWORD}; wait for the page.",
         "action": {"action": "wait", "seconds": 0.1}},
        {"note": "", "thought": "Signed in.", "action": {"action": "answer", "text": "ok"}},
    ])
    with FakeVLLM(script) as server:
        # A model writing a few characters at a time: the agent sees the answer grow piece by
        # piece, so a piece boundary falls inside the password as it streams.
        server.stream_chunk_delay = 0.005
        h = harness_for(server)
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED, finished
    thoughts = [extract_thought(e.text) for e in h.of(ModelText) if e.step_no == 2]
    assert len(thoughts) > 10  # it did stream in pieces
    assert thoughts[-1] == "I used ***; wait for the page."
    for thought in thoughts:
        assert thoughts[-1].startswith(thought), thought
