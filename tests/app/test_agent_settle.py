"""The agent's wait after each action, over real parts (the fake vLLM over HTTP, a fake screen,
the dry-run input, a real action log): a ``wait`` costs its own seconds and no more on a still
screen, yet a screen still changing at its end is waited for; a move is not held for the long
reaction time; a stop cuts the wait at once."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw

import app.agent as agent_module
from app.agent import Agent, RunConfig, RunLimits
from app.events import ActionExecuted, Outcome
from control.settle import QUIET_S, SettleResult, settle_for, wait_until_settled
from model.coords import Rect
from tests.support.agent_harness import HarnessFor, red_box_screen
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}


def _wait(seconds: float) -> dict[str, Any]:
    return {"thought": "wait", "action": {"action": "wait", "seconds": seconds}}


def _move(x: int) -> dict[str, Any]:
    return {"thought": "move", "action": {"action": "move", "element": "box", "x": x, "y": 300}}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


@dataclass
class SettleCall:
    """One settle wait the agent asked for: its arguments and how it went."""

    kwargs: dict[str, Any]
    result: SettleResult


@pytest.fixture
def settles(monkeypatch: pytest.MonkeyPatch) -> list[SettleCall]:
    """Every settle wait the agent runs (the real one), with what it was asked to watch: the
    tests assert what the agent asks for, not how long a loaded machine took to do it."""
    calls: list[SettleCall] = []

    def spy(*args: Any, **kwargs: Any) -> SettleResult:
        result = wait_until_settled(*args, **kwargs)
        calls.append(SettleCall(kwargs, result))
        return result

    monkeypatch.setattr(agent_module, "wait_until_settled", spy)
    return calls


def _run(h: Any, settle_max: float = 3.0) -> Any:
    config = RunConfig(task="wait a bit", limits=RunLimits(settle_max=settle_max))
    return Agent(h.parts, h.emit).run(config)


def test_a_wait_on_a_still_screen_costs_its_seconds_and_the_screen_is_watched_at_its_end(
        harness_for: HarnessFor, settles: list[SettleCall]) -> None:
    with FakeVLLM(ScriptedPolicy([_wait(0.6), ANSWER])) as server:
        h = harness_for(server)
        executed: list[Any] = []
        execute = h.parts.executor.execute
        h.parts.executor.execute = lambda action, *a, **k: (executed.append(action),
                                                            execute(action, *a, **k))[1]
        finished = _run(h)
    assert finished.outcome is Outcome.ANSWERED
    (done,) = h.of(ActionExecuted)
    assert done.settled
    # The executor slept all but the last quiet window, which the detector watched: no
    # reaction time after it (the old way slept 0.6 s, then gave the screen another 0.25 s to
    # react to nothing). Asserted as what was asked, not as a stopwatch.
    ((wait,),) = [[a for a in executed if a.action == "wait"]]
    assert wait.seconds == pytest.approx(0.6 - QUIET_S)
    (settle,) = settles
    assert settle.kwargs["min_s"] == pytest.approx(QUIET_S)
    assert settle.kwargs["reaction_s"] == 0.0
    assert settle.result.settled and settle.result.changes == 0
    # Never shorter than asked (a loaded machine only makes it longer).
    assert done.exec_ms / 1000 >= 0.6 - QUIET_S - 0.01
    assert done.settle_ms / 1000 >= QUIET_S - 0.01


def test_a_screen_still_changing_at_the_end_of_a_wait_is_waited_for(
        harness_for: HarnessFor) -> None:
    # An animation runs from the start of the wait until 0.5 s after its end.
    started: list[float] = []
    ends_after_s = 0.4 + 0.5

    def screen() -> Image.Image:
        image = red_box_screen()
        if started and time.monotonic() - started[0] < ends_after_s:
            shade = 0 if int((time.monotonic() - started[0]) / 0.04) % 2 else 255
            ImageDraw.Draw(image).rectangle((400, 400, 800, 600), fill=(shade, shade, shade))
        return image

    with FakeVLLM(ScriptedPolicy([_wait(0.4), ANSWER])) as server:
        h = harness_for(server, screen=screen)
        h.on_event = lambda e: started.append(time.monotonic()) if (
            type(e).__name__ == "StepDecided" and not started) else None
        finished = _run(h)
    assert finished.outcome is Outcome.ANSWERED
    (done,) = h.of(ActionExecuted)
    assert done.settled
    total = (done.exec_ms + done.settle_ms) / 1000
    assert total >= ends_after_s + QUIET_S - 0.05


def test_a_move_is_not_held_for_a_clicks_reaction_time(
        harness_for: HarnessFor, settles: list[SettleCall]) -> None:
    with FakeVLLM(ScriptedPolicy([_move(200), _move(400), _move(600), ANSWER])) as server:
        h = harness_for(server)
        finished = _run(h)
    assert finished.outcome is Outcome.ANSWERED
    waits = sorted(e.settle_ms for e in h.of(ActionExecuted))
    assert len(waits) == 3
    # Each move's wait is given a move's reaction time, shorter than a click's.
    assert settle_for("move").reaction_s < settle_for("click").reaction_s
    assert [c.kwargs["reaction_s"] for c in settles] == [settle_for("move").reaction_s] * 3
    assert all(c.result.settled for c in settles)
    assert settle_for("move").reaction_s * 1000 <= waits[0]


def test_a_stop_during_a_wait_ends_it_at_once(harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([_wait(8), ANSWER])) as server:
        h = harness_for(server)
        stopper = threading.Timer(0.5, lambda: h.latch.stop("hotkey", "now"))
        stopper.start()
        t0 = time.monotonic()
        finished = _run(h)
        took = time.monotonic() - t0
        stopper.cancel()
    assert finished.outcome is Outcome.STOPPED
    # Cut short: the run ended before the 8 s wait would have (measured against the wait, not
    # against how fast a machine stops, which a loaded one stretches).
    assert took < 8, f"the stop did not cut the 8 s wait short ({took:.1f} s)"


def test_an_animation_in_a_window_painted_out_does_not_hold_the_wait(
        harness_for: HarnessFor, settles: list[SettleCall]) -> None:
    """Holodesk's own windows (the streaming thought) are painted out of every look of the
    settle wait too: what changes inside them does not hold the wait."""
    box = Rect(400, 400, 400, 200)
    started: list[float] = []
    listed: list[float] = []

    def screen() -> Image.Image:
        image = red_box_screen()
        if started:  # holodesk's own window streams text all along
            shade = 0 if int((time.monotonic() - started[0]) / 0.02) % 2 else 255
            ImageDraw.Draw(image).rectangle((400, 400, 799, 599), fill=(shade, shade, shade))
        return image

    click = {"thought": "click", "action": {"action": "click", "element": "box",
                                           "x": 100, "y": 100}}
    with FakeVLLM(ScriptedPolicy([click, click, ANSWER])) as server:
        h = harness_for(server, screen=screen)
        h.capturer.exclude = lambda: listed.append(time.monotonic()) or [box]
        h.on_event = lambda e: started.append(time.monotonic()) if not started else None
        finished = _run(h)
    assert finished.outcome is Outcome.ANSWERED
    done = h.of(ActionExecuted)
    assert len(done) == 2 and all(e.settled for e in done)
    # Settled: the animation never stops, so a wait that saw it would run out unsettled
    # (a stopwatch bound on settle_ms said the same, and failed on a loaded machine).
    # Each wait looked again after its first look (how many more times depends on how fast
    # the machine is), and every look, a step's or a wait's, listed the windows to paint out.
    assert len(settles) == 2 and all(c.result.frames >= 2 for c in settles)
    assert len(listed) >= h.capturer.looks


def test_the_screenshot_after_an_action_shows_the_screen_as_it_settled(
        harness_for: HarnessFor) -> None:
    """The next step's screenshot is the screen after the action as it settled: here the click
    turns the box green for a few looks, then blue for good, and the model is sent the blue.

    Whether that screenshot was made during the settle wait from its last look or grabbed
    after it depends on how fast the machine is (a look older than 50 ms is not used), so this
    test does not count grabs; the frame made ahead is pinned with a fake clock in
    control/test_settle_frames.py."""
    looks_since_click: list[int] = []

    def screen() -> Image.Image:
        image = red_box_screen()
        if looks_since_click:
            looks_since_click[0] += 1
            fill = (0, 200, 0) if looks_since_click[0] <= 3 else (0, 0, 255)
            ImageDraw.Draw(image).rectangle((100, 100, 299, 199), fill=fill)
        return image

    def on_call(call: Any) -> None:
        if call.name == "mouse_up" and not looks_since_click:
            looks_since_click.append(0)

    click = {"thought": "click", "action": {"action": "click", "element": "box",
                                           "x": 100, "y": 100}}
    with FakeVLLM(ScriptedPolicy([click, ANSWER])) as server:
        h = harness_for(server, screen=screen)
        h.backend.hook = on_call
        finished = _run(h)
        sent = [r.images[-1] for r in server.requests]
    assert finished.outcome is Outcome.ANSWERED
    assert looks_since_click[0] > 3  # the screen went through green after the click
    first, second = (np.asarray(s.image.convert("RGB"))[150, 200] for s in sent)
    assert first[0] > 200 and first[2] < 60  # red before the click
    assert second[2] > 200 and second[0] < 60 and second[1] < 60  # blue as it settled
