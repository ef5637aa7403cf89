"""Red team 4, issue 21: keys that type a secret vs the secret masking.

docs/safety.md: "Text the model tries to type into an application holodesk never touches (a
password manager) is refused, and treated as a typed password all the same ... masked in the
run's output, the action log, the prompt history and a report", and "Typing is typing, however
it is pressed": keys that type characters count as typed text for every rule. A typed secret
is masked "in everything stored and shown: the stored action, the model's raw answer, its
thought and note, the log file, the streamed thought".

A ``type`` step does all of that: its text becomes one of the secrets the log masks, so the
model's thought quoting it is masked too. Red team 4 pressed the same text as ``hotkey``
chords (``h+u+n+t+e``, then ``r+2+v+a+u``...): judged as typing, its keys hidden, but the
model's thought and note (which spell out what it is about to type) were stored, shown and
sent back in clear. Now such a step's words are hidden with its keys, and the secret typed
by steps in a row is masked whole from then on.

Real parts as in test_agent_target.py, a fake target finder saying the password manager has
the focus. The first test is the control.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.events import StepProposed
from control.policy import ConfirmMode, SafetyPolicy
from tests.support.agent_harness import HarnessFor
from tests.support.fake_targets import FakeTargetFinder, window
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}
SECRET = "hunter2vault"
THOUGHT = f"The vault's master password is {SECRET}; I enter it to unlock the database."


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def _run(harness_for: HarnessFor, *steps: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The thoughts as the action log keeps them and as the front ends were shown them."""
    keepass = window("KeePassXC", title="Passwords.kdbx - KeePassXC")
    with FakeVLLM(ScriptedPolicy([*steps, ANSWER])) as server:
        h = harness_for(server)
        h.parts.finder = FakeTargetFinder(focus=keepass)
        h.parts.policy = SafetyPolicy(ConfirmMode.NEVER, never_touch=("keepassxc",))
        finished = h.run(max_steps=len(steps) + 2, loop_limit=len(steps) + 2)
    stored = [f"{s.thought} {s.note or ''} {s.raw_output or ''}"
              for s in h.store.steps(finished.run_id)]
    shown = [f"{e.step.thought} {e.raw}" for e in h.of(StepProposed)]
    return stored, shown


def test_control_a_typed_password_is_masked_in_the_thought(harness_for: HarnessFor) -> None:
    stored, shown = _run(harness_for, {"thought": THOUGHT,
                                       "action": {"action": "type", "text": SECRET}})
    assert not [t for t in stored + shown if SECRET in t]


def test_a_password_pressed_as_chords_is_masked_in_the_thought(
        harness_for: HarnessFor) -> None:
    # A chord holds at most five keys (the answer grammar): three chords, the first one's
    # thought saying what they spell.
    chords = [SECRET[i:i + 5] for i in range(0, len(SECRET), 5)]
    stored, shown = _run(harness_for, *({"thought": THOUGHT if i == 0 else "next keys",
                                         "action": {"action": "hotkey", "keys": list(c)}}
                                        for i, c in enumerate(chords)))
    assert not [t for t in stored if SECRET in t], "the action log keeps it in clear"
    assert not [t for t in shown if SECRET in t], "the task window and the terminal show it"
