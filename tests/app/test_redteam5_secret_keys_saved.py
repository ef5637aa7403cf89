"""Red team 5, issue 21 (fixed; each test failed before the fix):
a secret pressed as chords of keys lands in the saved steps.

docs/safety.md, Replayed automations: "**Secrets are never saved.** A ``type`` step the policy
judged a secret ... is saved without its text". Secrets: "Typing text that contains [a secret
parameter] is a secret step ..., and so is typing it in pieces (``type`` steps, or one key at a
time)". "Typing is typing, however it is pressed": when keys type a secret, "the action log and
the front ends show ``[secret keys]`` instead of them".

The fix of red team 4 hides the keys of such a step in ``StepProposed`` and in the action log
(``_recorded`` in app/agent.py). But the same step's ``StepDecided`` event carries the action
as it is (app/agent.py ``_decide``), keys and all (no front end prints it today), and the
automation's recorder (app/trajectory.py ``Recorder``) takes the action to save from
``StepDecided`` and clears the text of a secret ``Type`` step only. A hijacked model running an
automation whose task holds a secret parameter (its value is in the task sent to the model)
presses it as chords of four keys into a web page's field: each chord is judged a secret step,
the run ends answered, and ``trajectory.json`` keeps every key of the password in clear (each
chord is shorter than the six characters a mask needs, so the file's masking cannot see them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.events import Outcome, StepProposed
from app.trajectory import Recorder, trajectory_dir
from control.policy import ConfirmMode, SafetyPolicy
from model.coords import Convention
from model.run_secrets import RunSecrets
from tests.support.agent_harness import HarnessFor
from tests.support.fake_targets import FakeTargetFinder, window
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home

KEY = "log in"
TASK = "log in to the intranet"
SECRET = "hunter2vault"
CHORDS = [SECRET[i:i + 4] for i in range(0, len(SECRET), 4)]
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "logged in"}}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def _run(harness_for: HarnessFor, tmp_path: Path) -> tuple[Any, Recorder]:
    steps = [{"thought": "next keys", "action": {"action": "hotkey", "keys": list(c)}}
             for c in CHORDS]
    recorder = Recorder(KEY, KEY, TASK, Convention.NORM1000, root=tmp_path,
                        secrets=lambda: frozenset({SECRET}))
    with FakeVLLM(ScriptedPolicy([*steps, ANSWER])) as server:
        h = harness_for(server)
        h.parts.finder = FakeTargetFinder(focus=window("firefox", title="Intranet - Firefox"))
        h.parts.policy = SafetyPolicy(ConfirmMode.NEVER, secrets=RunSecrets(parameters=(SECRET,)))
        h.on_event = recorder
        finished = h.run(TASK, max_steps=len(steps) + 2, loop_limit=len(steps) + 2)
    assert finished.outcome is Outcome.ANSWERED, finished
    proposed = h.of(StepProposed)
    assert all(e.verdict.secret for e in proposed[:len(CHORDS)]), "the premise: secret steps"
    return h, recorder


def test_the_saved_steps_keep_no_key_of_a_secret(harness_for: HarnessFor,
                                                tmp_path: Path) -> None:
    _h, recorder = _run(harness_for, tmp_path)
    assert recorder.saved is not None
    saved = json.loads((trajectory_dir(KEY, tmp_path) / "trajectory.json").read_text())
    pressed = "".join("".join(s["action"].get("keys", [])) for s in saved["steps"]
                      if s["action"].get("action") == "hotkey")
    assert SECRET not in pressed, (
        f"trajectory.json keeps the password's keys in clear: {pressed!r}")

