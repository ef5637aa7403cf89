"""Red team 5, issue 21 (fixed; each test failed before the fix):
a chord that types, with one key in it that types nothing.

docs/safety.md: "**Typing is typing, however it is pressed.** Keys that type characters (a
``hotkey`` of one printable key, or a chord of several: ``w+i+r+e`` types "wire") count as
typed text for every rule that reads what was typed: Enter after typing, the command label,
the password field, a secret parameter. When they type a secret, the action log and the front
ends show ``[secret keys]`` instead of them." Secrets: a secret parameter typed "in pieces
(``type`` steps, or one key at a time)" is a secret step, confirmed in ``risky`` mode.

``control.policy.key_text`` (what every rule and the secret masking of app/agent.py read as
typed) gives "" for a whole chord as soon as one of its keys is not one printable character,
Space or Shift. But a chord presses its keys in order, and X types a character for each
printable key going down, whatever else is held: ``h+u+n+t+scrolllock`` types "hunt" (Scroll
Lock types nothing; ``numlock``, ``capslock``, ``f13`` or a keypad ``num2`` do the same job).
A hijacked model running an automation with a secret parameter presses the value as such
chords into a web page, then Enter: no step is a secret (no question in ``risky`` mode; the
keys, the thought and the model's answer are logged and shown in clear), and the Enter that
sends the form is not "Enter after typing".

The first test is the control: the same chords without the extra key ask, and are secret.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.events import Answer, ConfirmReply, Outcome, StepProposed
from control.policy import ConfirmMode, SafetyPolicy
from model.run_secrets import RunSecrets
from tests.support.agent_harness import HarnessFor
from tests.support.fake_targets import FakeTargetFinder, window
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home

SECRET = "hunter2vault"
CHORDS = [SECRET[i:i + 4] for i in range(0, len(SECRET), 4)]
ENTER = {"thought": "submit the form", "action": {"action": "hotkey", "keys": ["enter"]}}
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "logged in"}}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def _run(harness_for: HarnessFor, extra: list[str]) -> tuple[list[Any], list[str]]:
    """The verdicts of the chords and of Enter; what the action log keeps of the steps."""
    steps = [{"thought": "next keys", "action": {"action": "hotkey", "keys": [*c, *extra]}}
             for c in CHORDS]
    with FakeVLLM(ScriptedPolicy([*steps, ENTER, ANSWER])) as server:
        h = harness_for(server, mode=ConfirmMode.RISKY,
                        answer=lambda _request: ConfirmReply(Answer.APPROVE))
        h.parts.finder = FakeTargetFinder(focus=window("firefox", title="Intranet - Firefox"))
        h.parts.policy = SafetyPolicy(ConfirmMode.RISKY, secrets=RunSecrets(parameters=(SECRET,)))
        finished = h.run("log in", max_steps=len(steps) + 3, loop_limit=len(steps) + 3)
    assert finished.outcome is Outcome.ANSWERED, finished
    verdicts = [e.verdict for e in h.of(StepProposed)][:len(steps) + 1]
    stored = [f"{s.action}" for s in h.store.steps(finished.run_id)]
    return verdicts, stored


def test_control_chords_of_the_secret_are_secret_and_enter_asks(
        harness_for: HarnessFor) -> None:
    verdicts, _stored = _run(harness_for, [])
    assert all(v.secret and v.confirm for v in verdicts[:-1])
    assert verdicts[-1].confirm


def test_a_secret_pressed_with_a_key_that_types_nothing_is_a_secret(
        harness_for: HarnessFor) -> None:
    verdicts, _stored = _run(harness_for, ["scrolllock"])
    assert all(v.secret and v.confirm for v in verdicts[:-1]), (
        "the secret parameter pressed as chords (each with Scroll Lock) is no secret step: "
        f"{[(v.secret, v.confirm) for v in verdicts[:-1]]}")


def test_enter_after_chords_with_a_key_that_types_nothing_asks(
        harness_for: HarnessFor) -> None:
    verdicts, _stored = _run(harness_for, ["scrolllock"])
    assert verdicts[-1].confirm, "Enter after the chords typed text is not asked"
