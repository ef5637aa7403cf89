"""Pause and resume: the gate itself, and the agent loop holding at its checkpoints.

The agent runs over real parts as in test_agent.py: the fake vLLM over HTTP, a fake screen,
the dry-run backend (which records every primitive) and a real action log.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw

from app.agent import OUTCOME_PAUSED
from app.events import (
    ActionExecuted,
    Event,
    FrameCaptured,
    Outcome,
    RunPaused,
    RunResumed,
    StepProposed,
)
from app.pause import PauseGate
from control.stop import StopLatch, StoppedError
from tests.support.agent_harness import H, HarnessFor, W
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}


def _click(element: str, x: int, y: int) -> dict[str, Any]:
    return {"thought": f"click {element}",
            "action": {"action": "click", "element": element, "x": x, "y": y}}


# -- the gate ----------------------------------------------------------------------------------


def test_pause_and_resume_report_whether_they_changed_anything() -> None:
    gate = PauseGate()
    seen: list[str | None] = []
    gate.add_listener(seen.append)
    assert gate.reason is None
    assert gate.pause("you moved the mouse")
    assert not gate.pause("again")  # the first reason stays
    assert gate.reason == "you moved the mouse"
    assert gate.resume()
    assert not gate.resume()
    assert seen == ["you moved the mouse", None]


def test_an_open_gate_does_not_wait() -> None:
    called: list[str] = []
    assert PauseGate().wait_if_paused(StopLatch(), on_pause=called.append) is False
    assert called == []


def test_wait_blocks_until_resumed() -> None:
    gate, latch = PauseGate(), StopLatch()
    gate.pause("test")
    threading.Timer(0.2, gate.resume).start()
    reasons: list[str] = []
    assert gate.wait_if_paused(latch, on_pause=reasons.append) is True
    assert reasons == ["test"]
    assert gate.reason is None


def test_a_stop_ends_the_wait_with_stopped_error() -> None:
    gate, latch = PauseGate(), StopLatch()
    gate.pause("test")
    threading.Timer(0.2, latch.stop, args=("hotkey", "test")).start()
    t0 = time.monotonic()
    with pytest.raises(StoppedError):
        gate.wait_if_paused(latch)
    assert time.monotonic() - t0 < 5  # woken by the stop, not by a long poll
    assert gate.reason is not None  # the stop does not resume


def test_a_stopped_run_never_waits() -> None:
    gate, latch = PauseGate(), StopLatch()
    latch.stop("user")
    with pytest.raises(StoppedError):
        gate.wait_if_paused(latch)  # open gate: the stop still counts


# -- the agent ---------------------------------------------------------------------------------


class Screen:
    """A fake screen whose picture changes when ``generation`` does."""

    def __init__(self) -> None:
        self.generation = 0

    def __call__(self) -> Image.Image:
        image = Image.new("RGB", (W, H), (200, 200, 200))
        draw = ImageDraw.Draw(image)
        draw.rectangle((100, 100, 299, 199), fill=(255, 0, 0))
        shade = (40 * self.generation) % 256
        draw.rectangle((600, 400, 900, 700), fill=(shade, 0, 200))
        return image


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def test_a_pause_before_the_action_discards_it_and_resumes_from_a_new_screenshot(
    harness_for: HarnessFor,
) -> None:
    script = ScriptedPolicy([_click("Save button", 156, 187), _click("Open button", 500, 500),
                             ANSWER])
    with FakeVLLM(script) as server:
        h = harness_for(server, screen=Screen())
        calls_while_paused: list[int] = []

        def on_event(event: Event) -> None:
            if isinstance(event, StepProposed) and event.step_no == 1:
                h.gate.pause("you moved the mouse")  # the person grabs the mouse
            elif isinstance(event, RunPaused):

                def later() -> None:
                    calls_while_paused.append(len(h.backend.calls))
                    h.screen.generation += 1  # the person changed the screen meanwhile
                    h.gate.resume()

                threading.Timer(0.3, later).start()

        h.on_event = on_event
        finished = h.run()
        requests = list(server.requests)
    assert finished.outcome is Outcome.ANSWERED, finished.reason
    assert calls_while_paused == [0]
    kinds = h.kinds()
    assert kinds[:5] == ["RunStarted", "FrameCaptured", "StepProposed", "StepDecided",
                         "RunPaused"]
    assert kinds[5] == "RunResumed"
    assert h.of(RunPaused)[0].reason == "you moved the mouse"
    # Only the second click ran: the first one was aimed at a screen the person changed.
    moves = [c.args for c in h.backend.calls if c.name == "move_to"]
    assert moves == [(W // 2, H // 2)]
    assert len(h.of(ActionExecuted)) == 1
    # The next request carries a screenshot taken after the resume, and says why.
    first, second = requests[0].latest_image, requests[1].latest_image
    assert first is not None and second is not None
    assert np.asarray(first.image).tobytes() != np.asarray(second.image).tobytes()
    assert OUTCOME_PAUSED in requests[1].text
    steps = h.store.steps(finished.run_id)
    assert (steps[0].result, steps[0].error) == ("skipped", "paused before execution")


def test_a_pause_holds_the_run_before_its_first_screenshot(
    harness_for: HarnessFor,
) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        h = harness_for(server, screen=Screen())
        h.gate.pause("paused by you")
        frames_while_paused: list[int] = []

        def on_event(event: Event) -> None:
            if isinstance(event, RunPaused):

                def later() -> None:
                    frames_while_paused.append(len(h.of(FrameCaptured)))
                    h.gate.resume()

                threading.Timer(0.2, later).start()

        h.on_event = on_event
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    assert frames_while_paused == [0]
    assert h.kinds()[:4] == ["RunStarted", "RunPaused", "RunResumed", "FrameCaptured"]


def test_a_stop_while_paused_ends_the_run_stopped_with_no_input(
    harness_for: HarnessFor,
) -> None:
    with FakeVLLM(ScriptedPolicy([_click("Save button", 156, 187), ANSWER])) as server:
        h = harness_for(server, screen=Screen())

        def on_event(event: Event) -> None:
            if isinstance(event, StepProposed):
                h.gate.pause("you typed")
            elif isinstance(event, RunPaused):
                threading.Timer(0.2, h.latch.stop, args=("hotkey", "test")).start()

        h.on_event = on_event
        finished = h.run()
    assert finished.outcome is Outcome.STOPPED
    assert "hotkey" in finished.reason
    assert h.backend.calls == []
    assert not h.of(RunResumed)
    steps = h.store.steps(finished.run_id)
    assert [s.result for s in steps] == ["stopped"]


def test_paused_time_does_not_count_against_the_time_limit(
    harness_for: HarnessFor,
) -> None:
    now = [1000.0]  # a clock that moves only when the test says so
    wait = {"thought": "wait", "action": {"action": "wait", "seconds": 0}}
    with FakeVLLM(ScriptedPolicy([wait, ANSWER])) as server:
        h = harness_for(server, screen=Screen(), clock=lambda: now[0])

        def on_event(event: Event) -> None:
            if isinstance(event, StepProposed) and event.step_no == 1:
                h.gate.pause("lunch")
            elif isinstance(event, RunPaused):

                def later() -> None:
                    now[0] += 3600.0  # an hour away from the desk
                    h.gate.resume()

                threading.Timer(0.1, later).start()

        h.on_event = on_event
        finished = h.run(max_seconds=60)
    assert finished.outcome is Outcome.ANSWERED, finished.reason


def test_without_a_gate_the_loop_is_unchanged(harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([_click("Save button", 156, 187), ANSWER])) as server:
        h = harness_for(server, screen=Screen())
        h.parts.pause = None
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    assert not h.of(RunPaused)
    assert len(h.of(ActionExecuted)) == 1
