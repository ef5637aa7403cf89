"""The agent with H's tool vocabulary (issue 22): keys held by ``key_down`` are released as the
run ends however it ends, a ``drag_to`` starts where the pointer was when it was judged and
shown, and what keys type with Shift held is hidden like any typed secret.

Real parts as in test_agent.py (the stand-in model over HTTP, the dry-run backend, a real log).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.events import (
    ActionExecuted,
    Answer,
    AwaitingConfirmation,
    ConfirmReply,
    Decision,
    Outcome,
    StepDecided,
)
from control.policy import ConfirmMode
from model.contracts import codec_for
from model.coords import Point
from model.profiles import HOLOTRON_12B
from model.schema import Hotkey
from tests.support.agent_harness import HarnessFor
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home

#: The Holotron line's vocabulary (H's holo-nano tools): the one that has these actions.
NANO = HOLOTRON_12B.codec_config()
ANSWER = {"note": None, "thought": "done", "tool_call": {"tool_name": "answer",
                                                         "content": "finished"}}


def step(tool_name: str, **arguments: Any) -> dict[str, Any]:
    return {"note": None, "thought": "next", "tool_call": {"tool_name": tool_name, **arguments}}


def _harness(harness_for: HarnessFor, server: FakeVLLM, **options: Any) -> Any:
    return harness_for(server, codec=codec_for(NANO), **options)


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def test_a_key_held_across_steps_is_released_when_the_run_answers(
        harness_for: HarnessFor) -> None:
    script = [step("key_down_desktop", key="shift"),
              step("write_desktop", content="ab", press_enter=False, overwrite=False),
              step("update_plan", goals=[{"title": "type", "status": "done"}]), ANSWER]
    with FakeVLLM(ScriptedPolicy(script)) as server:
        h = _harness(harness_for, server)
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    calls = [str(c) for c in h.backend.calls]
    assert calls[0] == "key_down('shift')"
    assert "key_up('shift')" not in calls[:-1]  # down across the steps...
    assert calls[-1] == "key_up('shift')"  # ...and up once the run ended
    assert h.parts.executor.sticky_keys == ()


def test_a_key_held_is_released_when_the_run_hits_its_step_limit(
        harness_for: HarnessFor) -> None:
    script = [step("key_down_desktop", key="ctrl"), step("wait", seconds=0)] * 3
    with FakeVLLM(ScriptedPolicy(script)) as server:
        h = _harness(harness_for, server)
        finished = h.run(max_steps=2)
    assert finished.outcome is Outcome.LIMIT
    assert [str(c) for c in h.backend.calls] == ["key_down('ctrl')", "key_up('ctrl')"]


def test_a_drag_from_the_cursor_is_shown_and_done_from_where_the_pointer_was(
        harness_for: HarnessFor) -> None:
    asked: list[AwaitingConfirmation] = []

    def approve(event: AwaitingConfirmation) -> ConfirmReply:
        asked.append(event)
        h.backend.pointer = (1000, 700)  # the person's pointer goes to the Approve button
        return ConfirmReply(Answer.APPROVE)

    script = [step("drag_to_desktop", element="Delete handle", x=500, y=500), ANSWER]
    with FakeVLLM(ScriptedPolicy(script)) as server:
        h = _harness(harness_for, server, mode=ConfirmMode.RISKY, answer=approve)
        h.backend.pointer = (12, 34)
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    (event,) = asked
    start, end = event.request.points
    assert start == Point(12, 34)
    assert event.request.description.startswith(f"drag from {start} to \"Delete handle\" at {end}")
    calls = [str(c) for c in h.backend.calls]
    assert calls[:2] == ["move_to(12, 34)", "mouse_down('left')"]
    assert calls[-2:] == [f"move_to({end.x}, {end.y})", "mouse_up('left')"]


def test_keys_typed_with_shift_held_into_a_password_field_are_hidden(
        harness_for: HarnessFor) -> None:
    script = [step("click_desktop", element="Password", x=100, y=100, button="left"),
              step("key_down_desktop", key="shift"),
              step("hold_and_tap_key_desktop", hold_keys=["shift"], tap_keys=["h", "u", "n"]),
              step("write_desktop", content="terrible", press_enter=False, overwrite=False),
              ANSWER]
    with FakeVLLM(ScriptedPolicy(script)) as server:
        h = _harness(harness_for, server)
        finished = h.run()
    secrets = h.store.secrets().values()
    assert "HUN" in secrets and "TERRIBLE" in secrets and "terrible" in secrets
    actions = [s.action for s in h.store.steps(finished.run_id)]
    assert actions[2] == {"action": "hold_and_tap", "hold": ["shift"], "tap": ["[secret keys]"]}
    assert "terrible" not in str(actions[3]) and "TERRIBLE" not in str(actions[3])


def _edit_repeated_delete(harness_for: HarnessFor, edits: list[Hotkey]) -> Any:
    replies = iter([*(ConfirmReply(Answer.EDIT, e) for e in edits), ConfirmReply(Answer.SKIP)])
    script = [step("hotkey_desktop", keys=["delete"], repeat_count=20), ANSWER]
    with FakeVLLM(ScriptedPolicy(script)) as server:
        h = _harness(harness_for, server, mode=ConfirmMode.RISKY,
                     answer=lambda _e: next(replies))
        h.run()
    return h


def test_an_edited_repeated_chord_presses_as_many_times_as_the_edit_says(
        harness_for: HarnessFor) -> None:
    h = _edit_repeated_delete(harness_for, [Hotkey(keys=["backspace"], repeat=2)])
    (asked,) = h.of(AwaitingConfirmation)
    assert asked.request.description.startswith("press delete 20 times")
    assert [e.decision for e in h.of(StepDecided)] == [Decision.EDITED]
    pressed = [str(c) for c in h.backend.calls if "backspace" in str(c)]
    assert len(pressed) == 4 and not any("delete" in str(c) for c in h.backend.calls)
    (done,) = h.of(ActionExecuted)
    assert done.description.startswith("press backspace 2 times")


def test_an_edit_to_a_forbidden_repeated_chord_is_refused(harness_for: HarnessFor) -> None:
    h = _edit_repeated_delete(harness_for, [Hotkey(keys=["ctrl", "alt", "delete"], repeat=3)])
    asked = h.of(AwaitingConfirmation)
    assert len(asked) == 2 and asked[1].request.reasons[0].startswith("your edit was not used")
    assert [e.decision for e in h.of(StepDecided)] == [Decision.SKIPPED]
    assert h.backend.calls == []
