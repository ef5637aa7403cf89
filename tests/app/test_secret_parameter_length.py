"""The shortest secret parameter holodesk accepts (six characters) is masked everywhere a longer
one is; a shorter one is refused (docs/safety.md, Secret parameters of automations).

Six is both bounds at once: the value check (app/parameter_values.py ``check_secret``) and the
masking (model/run_secrets.py ``RunSecrets.mask``, ``mask_unfinished``; app/secrets.py
``RedactingFilter``), so a bound off
by one on either side shows here: a six-character secret refused, or accepted and then left
in clear. The run is the core over real parts (tests/support/agent_harness.py), wired as the
front ends wire an automation's run (a :class:`Session` given the parameters), with the log file's
handler as holodesk installs it.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from app.automations import Automation, AutomationError
from app.events import ModelText, Outcome, RunStarted, StepProposed
from app.parameter_values import resolve, store_secret
from app.parameters import ParameterError
from app.session import Session
from app.settings import Settings
from model.run_secrets import MIN_REDACT_LEN
from tests.support.agent_harness import HarnessFor
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, ScriptItem
from tests.support.home import isolate_home
from tests.support.leaks import holodesk_log, strings
from tests.support.memory_secrets import MemoryStore

SIX = "Qv7#kz"  # the shortest value a secret parameter may have
FIVE = SIX[:5]


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def _login() -> Automation:
    return Automation.make("", name="log in", task="log in as {user} with {password}",
                           parameters={"user": {"default": "ann"},
                                       "password": {"secret": True}})


def test_six_characters_is_the_shortest_secret_and_five_are_refused() -> None:
    assert len(SIX) == MIN_REDACT_LEN == 6
    automation, store = _login(), MemoryStore()
    with pytest.raises(ParameterError, match="shorter than 6 characters"):
        store_secret(automation, "password", FIVE, store)
    store_secret(automation, "password", SIX, store)
    assert resolve(automation, {}, store=store).secrets() == [SIX]
    # Asked for one run (the terminal, the app's form): the same bound.
    with pytest.raises(AutomationError, match="shorter than 6 characters"):
        resolve(automation, {}, store=MemoryStore(), ask=lambda _name, _declared: FIVE)
    asked = resolve(automation, {}, store=MemoryStore(), ask=lambda _name, _declared: SIX)
    assert asked.secrets() == [SIX]


def _script() -> list[ScriptItem]:
    """Type the secret with a thought and note quoting it, then quote it in a later thought,
    in an answer cut short at the length limit (the client logs it at debug level), and in
    the final answer."""
    return [
        {"note": f"password: {SIX}", "thought": f"The password is {SIX}; type it.",
         "action": {"action": "type", "text": SIX}},
        {"note": "", "thought": f"Sure! I used {SIX} to sign in. " + "Then I wait. " * 600,
         "action": {"action": "wait", "seconds": 0}},
        {"note": "", "thought": f"I typed {SIX}; wait for the page.",
         "action": {"action": "wait", "seconds": 0}},
        {"note": "", "thought": "Signed in.",
         "action": {"action": "answer", "text": f"signed in with {SIX}"}},
    ]


def test_a_six_character_secret_parameter_is_masked_everywhere(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    automation, store = _login(), MemoryStore()
    store_secret(automation, "password", SIX, store)
    filled = resolve(automation, {}, store=store)
    log_path = tmp_path / "holodesk.log"
    with FakeVLLM(ScriptedPolicy(_script())) as server, holodesk_log(log_path):
        h = harness_for(server)
        session = Session(task=automation.task, settings=Settings(), dry_run=True,
                          parts=h.parts, parameters=filled)
        finished = h.run(session.task)
        requests = server.requests
    assert finished.outcome is Outcome.ANSWERED, finished
    assert h.backend.typed() == SIX  # typed in full: only what is written and shown is masked

    # The action log: the run's task, every field of every step (thought, note, raw answer,
    # the action typed).
    run = h.store.get_run(finished.run_id)
    stored = [str(getattr(run, f.name)) for f in fields(run)]
    stored += [str(getattr(s, f.name)) for s in h.store.steps(run.id) for f in fields(s)]
    assert not [text for text in stored if SIX in text]
    assert any("The password is ***" in text for text in stored)

    # What the front ends show: the task, each step's thought and note, the streamed thought,
    # the answer.
    (started,) = h.of(RunStarted)
    assert started.task == "log in as ann with ***"
    proposed = h.of(StepProposed)
    assert proposed[0].step.thought == "The password is ***; type it."
    assert not [p for p in proposed if SIX in p.step.thought + p.step.note + p.raw]
    streamed = [e.text for e in h.of(ModelText)]
    assert any("I typed ***" in text for text in streamed)
    assert not [text for text in streamed if SIX in text]
    assert finished.answer == "signed in with ***"

    # The log file: the client's line for the answer cut short quoted it.
    log = log_path.read_text(encoding="utf-8")
    assert "rejected answer" in log and "Sure! I used ***" in log
    assert SIX not in log

    # The prompt history: the model must know the secret to type it, so the task it is sent
    # holds it; nothing else of any request does once the step that types it is known.
    after = requests[1:]
    assert after
    for request in after:
        texts = [text.replace(filled.task, "") for text in strings(request.body)]
        assert not [text for text in texts if SIX in text or json.dumps(SIX)[1:-1] in text]
        assert f"[secret typed, {len(SIX)} characters]" in request.text
