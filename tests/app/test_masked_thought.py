"""A typed secret's thought is never stored or shown unmasked (no display).

The quick tier's copy of tests/e2e/test_masked_secrets_x11.py's claim: the model types a
password, then quotes it in a later step's thought and note and in an answer cut short at the
length limit (the client logs that one at debug level). Over the core's real parts
(tests/support/agent_harness.py) with holodesk.log's own handler, every event goes through the
terminal front end (what `holodesk run` prints) and the desktop app's task window (offscreen),
as the two front ends receive them.
"""

from __future__ import annotations

import io
import json
from dataclasses import fields
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.cli.terminal import TerminalFrontEnd
from app.events import Outcome, StepProposed
from tests.support.agent_harness import HarnessFor
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, ScriptItem
from tests.support.home import isolate_home
from tests.support.leaks import holodesk_log

#: Looks like a password (three character classes); the quote is JSON-escaped in the raw
#: answer, so both forms must be masked. Checks look for its distinctive start.
PASSWORD = 'Quokka7!m"z'  # used by no other test: the log's mask is process-wide
MARK = "Quokka7"

SCRIPT: list[ScriptItem] = [
    {"note": "", "thought": "The password field has focus; type it.",
     "action": {"action": "type", "text": PASSWORD}},
    {"note": f"remember: {PASSWORD}", "thought": f"I used {PASSWORD}; wait for the page.",
     "action": {"action": "wait", "seconds": 0}},
    # Longer than the tokens a step may take: cut short at the length limit, not a step; the
    # client logs its start as a rejected answer and asks again.
    {"note": "", "thought": f"Sure! I used {PASSWORD} to sign in. " + "Then I wait. " * 600,
     "action": {"action": "wait", "seconds": 0}},
    {"note": "", "thought": f"Signed in with {PASSWORD}.",
     "action": {"action": "answer", "text": "signed in"}},
]


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def test_a_typed_secrets_thought_is_never_stored_or_shown_unmasked(
        harness_for: HarnessFor, qtbot: QtBot, tmp_path: Path) -> None:
    from ui.task_window import TaskWindow

    window = TaskWindow()
    qtbot.addWidget(window)
    printed = io.StringIO()
    terminal = TerminalFrontEnd(out=printed, verbose=True)
    log_path = tmp_path / "holodesk.log"
    with FakeVLLM(ScriptedPolicy(SCRIPT)) as server, holodesk_log(log_path):
        h = harness_for(server)
        finished = h.run("sign in")
    assert finished.outcome is Outcome.ANSWERED, finished
    assert h.backend.typed() == PASSWORD  # typed in full: only what is kept and shown is masked

    # Shown: the steps' thoughts and notes as the front ends get them, the terminal's lines,
    # the task window's thought after every event (the streamed text, then the step's).
    proposed = h.of(StepProposed)
    assert [e.step.thought for e in proposed][1:] == ["I used ***; wait for the page.",
                                                    "Signed in with ***."]
    assert proposed[1].step.note == "remember: ***"
    shown: list[str] = []
    for event in h.events:
        terminal.handle(event)
        window.on_event(event)
        shown.append(window.thought())
    assert any("I used ***" in text for text in shown)
    assert not [text for text in shown if MARK in text]
    assert "thinks: I used ***" in printed.getvalue()
    assert MARK not in printed.getvalue()

    # Stored: every field of every step in the action log (thought, note, raw answer).
    steps = h.store.steps(finished.run_id)
    stored = [str(getattr(s, f.name)) for s in steps for f in fields(s)]
    assert any("I used ***" in text for text in stored)
    assert not [text for text in stored if MARK in text]
    assert not [text for text in stored if json.dumps(PASSWORD)[1:-1] in text]

    # The log file: the client's line for the answer cut short quoted it.
    log = log_path.read_text(encoding="utf-8")
    assert 'rejected answer: {"note": "", "thought": "Sure! I used ***' in log
    assert MARK not in log
