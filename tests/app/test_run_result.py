"""A run's result (app/result.py): decided once as the run ends, by the task's own check when it
has one, else by what its outcome means; the same in the event, the action log and the request
a front end builds (app/run_request.py -> app/session.py -> the agent's parts)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from app.agent import Agent, RunConfig
from app.events import AwaitingConfirmation, Event, Outcome, RunFinished
from app.result import Check, RunResult
from app.run_request import make_run_request
from app.session import build_session
from app.settings import Settings
from app.store import ActionLog
from control.policy import ConfirmMode
from tests.support.agent_harness import AgentHarness, HarnessFor
from tests.support.app_rig import Rig
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home

NOTHING = {"thought": "I cannot see it", "action": {"action": "answer",
                                                     "text": "I cannot see it. I did nothing."}}
WAIT = {"thought": "wait", "action": {"action": "wait", "seconds": 0}}
CLICK = {"thought": "click", "action": {"action": "click", "element": "Delete button",
                                         "x": 156, "y": 187}}
ABSURD = {"thought": "click", "action": {"action": "click", "element": "Save",
                                          "x": 1e308, "y": 5}}


class Checker:
    """A task's check that records what it was asked, and what the run had said by then."""

    def __init__(self, h: AgentHarness, passed: bool, detail: str) -> None:
        self.h, self.passed, self.detail = h, passed, detail
        self.asked: list[str | None] = []
        self.seen: list[tuple[bool, RunResult | None]] = []

    def __call__(self, answer: str | None) -> Check:
        self.asked.append(answer)
        # Asked before the run's end is stored or told: both then say its verdict.
        ended = any(isinstance(e, RunFinished) for e in self.h.events)
        stored = self.h.store.list_runs(1)[0].result
        self.seen.append((ended, stored))
        return Check(self.passed, self.detail)


def checked(harness_for: HarnessFor, server: FakeVLLM, passed: bool,
            detail: str = "the window says so", **options: Any) -> tuple[AgentHarness, Checker]:
    h = harness_for(server, **options)
    check = Checker(h, passed, detail)
    h.parts.check = check
    return h, check


def test_without_a_check_the_outcome_decides(harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([NOTHING])) as server:
        answered = harness_for(server).run()
    with FakeVLLM(ScriptedPolicy([WAIT], repeat_last=True)) as server:
        h = harness_for(server)
        limited = h.run(max_steps=2, loop_limit=10)
    assert (answered.outcome, answered.result) == (Outcome.ANSWERED, RunResult.DONE)
    assert (limited.outcome, limited.result) == (Outcome.LIMIT, RunResult.NOT_DONE)
    assert h.store.get_run(limited.run_id).result is RunResult.NOT_DONE


def test_an_answer_the_check_denies_is_not_done_everywhere(harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([NOTHING])) as server:
        h, check = checked(harness_for, server, False, "the checklist still has 4 steps to do")
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED  # why it ended: the model answered
    assert finished.result is RunResult.NOT_DONE  # what it came to: the check's verdict
    assert finished.reason == "the checklist still has 4 steps to do"
    assert finished.answer == "I cannot see it. I did nothing."
    assert check.asked == ["I cannot see it. I did nothing."]
    assert check.seen == [(False, None)]  # nothing said before the verdict
    stored = h.store.get_run(finished.run_id)
    assert (stored.outcome, stored.result, stored.reason) == (
        "answered", RunResult.NOT_DONE, "the checklist still has 4 steps to do")
    assert [e.result for e in h.of(RunFinished)] == [RunResult.NOT_DONE]


def test_a_check_that_passes_makes_a_run_done_however_it_ended(
    harness_for: HarnessFor,
) -> None:
    with FakeVLLM(ScriptedPolicy([WAIT], repeat_last=True)) as server:
        h, check = checked(harness_for, server, True, "the checklist is done")
        finished = h.run(max_steps=2, loop_limit=10)
    assert (finished.outcome, finished.result) == (Outcome.LIMIT, RunResult.DONE)
    # The check's words, then how the run got there; no answer to give the check.
    assert finished.reason == "the checklist is done (step limit of 2 reached)"
    assert check.asked == [None]
    assert h.store.get_run(finished.run_id).result is RunResult.DONE


def test_a_stopped_run_stays_stopped_whatever_the_check_would_say(
    harness_for: HarnessFor,
) -> None:
    with FakeVLLM(ScriptedPolicy([CLICK, NOTHING])) as server:
        h, check = checked(harness_for, server, True, mode=ConfirmMode.ALWAYS)

        def stop_at_the_question(event: Event) -> None:
            h.events.append(event)
            if isinstance(event, AwaitingConfirmation):
                threading.Timer(0.05, h.latch.stop, args=("hotkey", "test")).start()

        finished = Agent(h.parts, stop_at_the_question).run(RunConfig(task="x"))
    assert (finished.outcome, finished.result) == (Outcome.STOPPED, RunResult.STOPPED)
    assert check.asked == []
    assert h.store.get_run(finished.run_id).result is RunResult.STOPPED


def test_a_failed_run_stays_failed_whatever_the_check_would_say(
    harness_for: HarnessFor,
) -> None:
    with FakeVLLM(ScriptedPolicy([ABSURD], repeat_last=True)) as server:
        h, check = checked(harness_for, server, True)
        finished = h.run()
    assert (finished.outcome, finished.result) == (Outcome.ERROR, RunResult.FAILED)
    assert check.asked == []
    assert h.store.get_run(finished.run_id).result is RunResult.FAILED


def test_a_check_that_cannot_tell_never_makes_a_run_done(harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([NOTHING])) as server:
        h = harness_for(server)

        def broken(_answer: str | None) -> Check:
            raise OSError("the state file is gone")

        h.parts.check = broken
        finished = h.run()
    assert finished.result is RunResult.FAILED
    assert "could not be checked: OSError: the state file is gone" in finished.reason
    assert h.store.get_run(finished.run_id).result is RunResult.FAILED


def test_the_check_a_request_carries_reaches_the_run(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    """The one way a front end builds a run (make_run_request, then build_session) hands the
    request's check to the agent: the run's result is its verdict."""
    isolate_home(monkeypatch, tmp_path)
    asked: list[str | None] = []

    def check(answer: str | None) -> Check:
        asked.append(answer)
        return Check(False, "the practice task is not done")

    with FakeVLLM(ScriptedPolicy([NOTHING])) as server:
        request = make_run_request(Settings(endpoint=server.base_url), "fill in the form",
                                   check=check)
        assert request.check is check
        session = build_session(request, Rig(server).parts)
        try:
            finished = session.run(lambda _event: None)
        finally:
            session.close()
    assert asked == ["I cannot see it. I did nothing."]
    assert finished.result is RunResult.NOT_DONE
    with ActionLog.open() as log:
        assert log.get_run(finished.run_id).headline == "not done"
