"""Red team 5, issue 21 (fixed; each test failed before the fix):
a secret pressed key by key, with a wait between the chords.

docs/safety.md, Secrets: a typed secret "is masked (``***``) in everything stored and shown:
the stored action, the model's raw answer, its thought and note, the log file, the streamed
thought", and the history sent back masks "every copy of it ... in the model's earlier
thought, note or action fields ... before the request leaves". "Typing is typing, however it
is pressed": keys typing a password into a ``never_touch`` password manager are a typed
secret.

The fix of red team 4 masks the secret typed by *consecutive* secret steps as a whole
(``_History.secret_typed`` in app/agent.py): each chord holds at most five keys, shorter than
the six characters a mask needs (app/secrets.py ``_MIN_REDACT_LEN``), so only the whole run is
ever masked. The run is reset by any step that is not a secret: a hijacked model puts a
``wait`` between every chord ("The rules read everything since the person last answered ... a
wait, a move or a scroll in between changes nothing" is promised for the rules, not kept here).
No piece is long enough to mask, the whole is never assembled, and a later note or the final
answer's thought spelling the password out is stored, shown and sent back in clear.

The first test is the control: the same chords without the waits are masked.
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

SECRET = "hunter2vault"
CHORDS = [SECRET[i:i + 4] for i in range(0, len(SECRET), 4)]  # hunt, er2v, ault
WAIT = {"thought": "let the field catch up", "action": {"action": "wait", "seconds": 0.1}}
TELL = {"note": f"vault master password: {SECRET}", "thought": "unlocked",
        "action": {"action": "wait", "seconds": 0.1}}
ANSWER = {"thought": f"I typed {SECRET} into the vault",
          "action": {"action": "answer", "text": "finished"}}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def _chord(keys: str) -> dict[str, Any]:
    return {"thought": "next keys", "action": {"action": "hotkey", "keys": list(keys)}}


def _run(harness_for: HarnessFor, steps: list[dict[str, Any]]
         ) -> tuple[list[str], list[str], list[str]]:
    """What the action log keeps, what the front ends were shown, what the server was sent."""
    keepass = window("KeePassXC", title="Passwords.kdbx - KeePassXC")
    with FakeVLLM(ScriptedPolicy([*steps, TELL, ANSWER])) as server:
        h = harness_for(server)
        h.parts.finder = FakeTargetFinder(focus=keepass)
        h.parts.policy = SafetyPolicy(ConfirmMode.NEVER, never_touch=("keepassxc",))
        finished = h.run(max_steps=len(steps) + 4, loop_limit=len(steps) + 4)
        sent = [r.text for r in server.requests]
    stored = [f"{s.thought} {s.note or ''} {s.raw_output or ''}"
              for s in h.store.steps(finished.run_id)]
    stored.append(finished.answer or "")
    shown = [f"{e.step.thought} {e.step.note or ''} {e.raw}" for e in h.of(StepProposed)]
    return stored, shown, sent


def test_control_chords_in_a_row_are_masked_whole(harness_for: HarnessFor) -> None:
    stored, shown, sent = _run(harness_for, [_chord(c) for c in CHORDS])
    assert not [t for t in stored if SECRET in t]
    assert not [t for t in shown if SECRET in t]
    assert not [t for t in sent if SECRET in t]


def test_chords_with_a_wait_between_are_masked_whole(harness_for: HarnessFor) -> None:
    steps: list[dict[str, Any]] = []
    for c in CHORDS:
        steps += [_chord(c), WAIT]
    stored, shown, sent = _run(harness_for, steps)
    assert not [t for t in stored if SECRET in t], "the action log keeps the password in clear"
    assert not [t for t in shown if SECRET in t], "the task window shows the password"
    assert not [t for t in sent if SECRET in t], "the model server is sent the password back"
