"""Red team (issue 23): an answer cut off inside a secret keeps no part of the secret.

Attack: an automation types its secret parameter. The model's answer is cut off while it
writes the value (the server's length limit, ``max_tokens``, falls inside the ``text`` of its
``type`` action; or the client's own byte limit, model/errors.py ``AnswerTooLong``). The answer
is not a step: the client retries, then gives up with ``InvalidOutput``, and the agent keeps
the raw answer for the person (``raw_output`` of the step's row, "the raw answer is in the run
log"). The answer ends with the start of the secret, all of it but its last characters, which
is no form of it (model/run_secrets.py ``forms_of``): the run's mask leaves it in the action
log, and from there in `holodesk log show`, an export and a problem report. The same start is
written to ``holodesk.log`` (model/client.py logs each rejected answer).

Property: no secret of the run is kept, whole or in part, where the run's secrets are masked.

This predates issue 23 (the old ``redact`` masked whole forms only, as ``RunSecrets.mask``
does). While the answer streams, the task window never shows the start
(``RunSecrets.mask_unfinished``); what is kept once it is over is masked as a whole text.

Fixed for the action log: the agent keeps an answer that is not a step masked as an
unfinished text (``mask_unfinished``), since it may have been cut anywhere. Fixed for
``holodesk.log`` too: the client, which knows nothing of the run's secrets, marks the answer it
logs as ``Unfinished`` (model/run_secrets.py), and the log's filter, which knows them, holds
back an end that may be a secret's start.
"""

from __future__ import annotations

import uuid
from dataclasses import fields
from pathlib import Path

import pytest

from app.automations import Automation
from app.events import Outcome
from app.parameter_values import resolve, store_secret
from app.session import Session
from app.settings import Settings
from control.policy import ConfirmMode
from tests.support.agent_harness import AgentHarness, HarnessFor
from tests.support.fake_policies import GarbagePolicy
from tests.support.fake_vllm import FakeVLLM, StructuredOutputs
from tests.support.home import isolate_home
from tests.support.leaks import holodesk_log
from tests.support.memory_secrets import MemoryStore

#: How much of the secret the cut answer holds (of its 20 characters).
SHOWN = 14


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def _cut_run(harness_for: HarnessFor, log_path: Path) -> tuple[AgentHarness, str, str]:
    """A run of an automation with a secret parameter whose every answer is cut off inside
    the value; the harness, the secret and the run's id."""
    secret = f"Tr0ub4dor&3{uuid.uuid4().hex[:9]}"  # new each run: the log's mask outlives it
    automation = Automation.make("", name="log in", task="log in with {password}",
                                 parameters={"password": {"secret": True}})
    keyring = MemoryStore()
    store_secret(automation, "password", secret, keyring)
    filled = resolve(automation, {}, store=keyring)
    # What the model wrote before the server's length limit stopped it.
    cut = ('{"note": "", "thought": "The password field has focus; type the password.", '
           f'"action": {{"action": "type", "text": "{secret[:SHOWN]}')
    with FakeVLLM(GarbagePolicy(cut), structured_outputs=StructuredOutputs.IGNORED) as server, \
            holodesk_log(log_path):
        h = harness_for(server, mode=ConfirmMode.NEVER)
        session = Session(task=automation.task, settings=Settings(), dry_run=True,
                          parts=h.parts, parameters=filled)
        finished = h.run(session.task)
    assert finished.outcome is Outcome.ERROR, finished
    return h, secret, finished.run_id


def test_an_answer_cut_inside_a_secret_parameter_keeps_none_of_it_in_the_action_log(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    h, secret, run_id = _cut_run(harness_for, tmp_path / "holodesk.log")
    stored = [str(getattr(s, f.name)) for s in h.store.steps(run_id) for f in fields(s)]
    assert any('"action": "type"' in text for text in stored), stored  # the answer is kept
    assert not [text for text in stored if secret[:SHOWN] in text]


def test_an_answer_cut_inside_a_secret_parameter_keeps_none_of_it_in_the_log_file(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    log_path = tmp_path / "holodesk.log"
    _h, secret, _run_id = _cut_run(harness_for, log_path)
    written = log_path.read_text(encoding="utf-8")
    assert "rejected answer" in written
    assert secret[:SHOWN] not in written
