"""Bounds of a run over real parts (the stand-in server, the dry-run backend, a real log): the
time limit inside one long action, and the screenshots the run keeps in memory."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import pytest
from PIL import Image, ImageDraw

from app import agent as agent_module
from app.events import Outcome, StepDecided, StepProposed
from app.store import StepResult
from model.prompt import Turn
from model.schema import Action
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


WAIT = {"thought": "wait", "action": {"action": "wait", "seconds": 0}}


@dataclasses.dataclass
class _Spied(agent_module._History):
    """The agent's history, remembered so the test can look at what it holds."""

    made: ClassVar[list[agent_module._History]] = []

    def __post_init__(self) -> None:
        _Spied.made.append(self)


class _KeepsEveryImage(agent_module._History):
    """The history as it was before screenshots were dropped: every image kept."""

    def add(self, turn: Turn, action: Action) -> None:
        self.turns.append(turn)
        self.previous = action


def _small_screen(shade: list[int]) -> Callable[[], Image.Image]:
    def screen() -> Image.Image:
        image = Image.new("RGB", (320, 200), (200, 200, 200))
        ImageDraw.Draw(image).rectangle((20, 20, 120, 80), fill=(shade[0] % 256, 0, 90))
        return image

    return screen


def test_a_long_run_keeps_only_the_screenshots_the_prompt_sends(
    harness_for: HarnessFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agent_module, "_History", _Spied)
    _Spied.made.clear()
    holding: list[int] = []
    with FakeVLLM(ScriptedPolicy([WAIT], repeat_last=True)) as server:
        server.keep_requests = False
        h = harness_for(server, screen=_small_screen([0]))

        def count(event: object) -> None:
            if isinstance(event, StepProposed):
                holding.append(sum(1 for t in _Spied.made[-1].turns if t.image))

        h.on_event = count
        finished = h.run(max_steps=200, loop_limit=1000)
    assert finished.outcome is Outcome.LIMIT and finished.steps == 200
    history = _Spied.made[-1]
    assert len(history.turns) == 200  # every step's text is kept
    # The prompt sends three screenshots: the current one and the two before it.
    assert max(holding) == 2 and holding[-1] == 2
    assert [bool(t.image) for t in history.turns[-3:]] == [False, True, True]


def test_what_is_sent_is_byte_identical_to_keeping_every_image(
    harness_for: HarnessFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies: list[list[str]] = []
    for history in (_KeepsEveryImage, agent_module._History):
        monkeypatch.setattr(agent_module, "_History", history)
        shade = [0]
        with FakeVLLM(ScriptedPolicy([WAIT], repeat_last=True)) as server:
            h = harness_for(server, screen=_small_screen(shade))

            def next_screen(event: object, shade: list[int] = shade) -> None:
                # A new screen at each action, so every step's screenshot differs.
                if isinstance(event, StepDecided):
                    shade[0] += 37

            h.on_event = next_screen
            finished = h.run(max_steps=8, loop_limit=1000)
            assert finished.outcome is Outcome.LIMIT
            bodies.append([json.dumps(r.body, sort_keys=True) for r in server.requests])
            assert len(server.requests) == 8
            assert len(server.requests[-1].images) == 3
    before, after = bodies
    assert after == before
