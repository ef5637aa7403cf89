"""Bounds of a run over real parts (the stand-in server, the dry-run backend, a real log): the
time limit inside one long action, and the screenshots the run keeps in memory."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.events import Outcome, StepDecided
from app.store import StepResult
from tests.support.agent_harness import HarnessFor
from tests.support.fake_clock import FakeClock
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def test_a_long_type_stops_at_the_time_limit_and_the_run_ends_on_it(
    harness_for: HarnessFor,
) -> None:
    long_type = {"thought": "type it",
                 "action": {"action": "type", "text": "a" * 200, "press_enter": True}}
    clock = FakeClock()
    with FakeVLLM(ScriptedPolicy([long_type])) as server:
        h = harness_for(server, clock=clock)
        # Each character costs a second of the run's 30: the deadline falls mid-text.
        h.backend.hook = lambda call: clock.advance(1) if call.name == "write_char" else None
        finished = h.run(max_seconds=30)
    assert finished.outcome is Outcome.LIMIT
    assert "time limit of 30 s reached during the action" in finished.reason
    assert "internal error" not in finished.reason
    assert h.backend.typed() == "a" * 30  # nothing after the deadline, and no Enter
    assert h.parts.executor.held_keys == () and h.parts.executor.held_buttons == ()
    steps = h.store.steps(finished.run_id)
    assert [s.result for s in steps] == [StepResult.STOPPED]
    assert steps[0].error == "stopped by the time limit of 30 s"
    assert h.store.get_run(finished.run_id).outcome == "limit"


def test_a_wait_longer_than_the_time_left_ends_at_the_deadline(
    harness_for: HarnessFor,
) -> None:
    wait = {"thought": "let it load", "action": {"action": "wait", "seconds": 10}}
    clock = FakeClock(real=True)
    decided: list[float] = []

    def two_seconds_left(event: object) -> None:
        if isinstance(event, StepDecided):
            decided.append(time.monotonic())
            clock.advance(298)  # of the run's 300 s, as if the run had been going a while

    with FakeVLLM(ScriptedPolicy([wait])) as server:
        h = harness_for(server, clock=clock)
        h.on_event = two_seconds_left
        finished = h.run(max_seconds=300)
    assert finished.outcome is Outcome.LIMIT
    assert "during the action (wait 10 s)" in finished.reason
    # About the 2 s left, not the 10 asked (loose: a busy machine is slow).
    assert time.monotonic() - decided[0] < 8
    steps = h.store.steps(finished.run_id)
    assert [s.result for s in steps] == [StepResult.STOPPED]
