"""The agent loop with real parts and no display: the fake vLLM over HTTP, a fake screen,
the dry-run input backend (which records every primitive) and a real action log."""

from __future__ import annotations

import dataclasses
import itertools
import threading
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from app.agent import Agent, RunConfig
from app.events import (
    ActionExecuted,
    Answer,
    AwaitingConfirmation,
    ConfirmReply,
    Decision,
    Event,
    FrameCaptured,
    Outcome,
    RunStarted,
    StepDecided,
    StepProposed,
)
from app.store import StepResult
from control.policy import ConfirmMode
from model.problem import Remedy
from model.schema import MAX_TYPE_CHARS, Click
from model.structured import step_output_schema
from tests.support.agent_harness import AgentHarness, H, HarnessFor, W, red_box_screen
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, SeeingPolicy, Target
from tests.support.home import isolate_home


def _click(element: str = "Save button", x: int = 156, y: int = 187) -> dict[str, Any]:
    return {"thought": f"click {element}",
            "action": {"action": "click", "element": element, "x": x, "y": y}}


ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def test_a_seen_target_is_clicked_and_the_run_answers(harness_for: HarnessFor) -> None:
    with FakeVLLM(SeeingPolicy([Target("Save button", (255, 0, 0))])) as server:
        h = harness_for(server)
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    assert finished.steps == 2
    kinds = [type(e).__name__ for e in h.events if type(e).__name__ != "ModelText"]
    assert kinds == ["RunStarted", "FrameCaptured", "StepProposed", "StepDecided",
                     "ActionExecuted", "FrameCaptured", "StepProposed", "RunFinished"]
    # The centre of the red rectangle (100..299, 100..199), at full size and scale 1.
    downs = [c for c in h.backend.calls if c.name == "move_to"]
    assert downs and abs(downs[0].args[0] - 200) <= 1 and abs(downs[0].args[1] - 150) <= 1
    assert "mouse_down" in h.backend.names() and "mouse_up" in h.backend.names()
    run = h.store.get_run(finished.run_id)
    steps = h.store.steps(run.id)
    assert run.outcome == "answered"
    assert [s.result for s in steps] == [StepResult.OK, StepResult.OK]
    assert steps[0].element == "Save button"
    assert steps[0].geometry is not None and steps[0].geometry["sent_width"] == W
    # The stored record reads back as what the events said: the frame's geometry, the point.
    captured = next(e for e in h.events if isinstance(e, FrameCaptured))
    proposed = next(e for e in h.events if isinstance(e, StepProposed))
    assert steps[0].frame_geometry == captured.geometry
    assert steps[0].points == proposed.points and len(proposed.points) == 1
    assert Path(steps[0].screenshot_path or "").exists()
    # What vLLM is held to: the step schema made for constrained decoding, in its one field.
    assert [r.structured_outputs for r in server.requests] == [
        {"json": step_output_schema()}
    ] * 2
    assert not any(k.startswith("guided_") for r in server.requests for k in r.body)


def test_the_same_action_on_an_unchanged_screen_ends_as_a_loop(
    harness_for: HarnessFor,
) -> None:
    with FakeVLLM(ScriptedPolicy([_click()], repeat_last=True)) as server:
        h = harness_for(server)
        finished = h.run(loop_limit=3)
    assert finished.outcome is Outcome.LOOP
    assert len(h.of(ActionExecuted)) == 2  # the third repeat is not executed
    assert "unchanged screen" in finished.reason


def test_a_changing_screen_is_not_a_loop(harness_for: HarnessFor) -> None:
    shade = (i % 25 * 10 for i in itertools.count())  # a new shade at every look

    def changing() -> Image.Image:
        image = red_box_screen()
        ImageDraw.Draw(image).rectangle((600, 400, 900, 700), fill=(next(shade), 0, 200))
        return image

    with FakeVLLM(ScriptedPolicy([_click(), _click(), _click(), ANSWER])) as server:
        h = harness_for(server, screen=changing)
        finished = h.run(loop_limit=3)
    assert finished.outcome is Outcome.ANSWERED


def test_the_step_limit_ends_the_run(harness_for: HarnessFor) -> None:
    wait = {"thought": "wait", "action": {"action": "wait", "seconds": 0}}
    with FakeVLLM(ScriptedPolicy([wait], repeat_last=True)) as server:
        h = harness_for(server)
        finished = h.run(max_steps=2, loop_limit=10)
    assert finished.outcome is Outcome.LIMIT
    assert len(h.of(StepProposed)) == 2


def test_a_risky_click_waits_for_the_person_and_a_skip_is_told_to_the_model(
    harness_for: HarnessFor,
) -> None:
    script = ScriptedPolicy([_click("Delete button"), ANSWER])
    with FakeVLLM(script) as server:
        h = harness_for(server, mode=ConfirmMode.RISKY,
                        answer=lambda _e: ConfirmReply(Answer.SKIP))
        finished = h.run()
        second_prompt = server.requests[1].text
    assert finished.outcome is Outcome.ANSWERED
    asked = h.of(AwaitingConfirmation)
    assert len(asked) == 1
    assert "Delete" in asked[0].request.description
    assert asked[0].request.reasons
    assert [e.decision for e in h.of(StepDecided)] == [Decision.SKIPPED]
    assert h.backend.calls == []
    assert "skipped by the person" in second_prompt


def test_a_point_outside_the_monitor_is_clamped_and_asked_about(harness_for: HarnessFor) -> None:
    """The model points past the image's right edge (norm1000 ends at 1000): the click is moved
    to the monitor's edge, and in `risky` mode the person is asked first, saying so, though
    nothing else about the click is risky (the same click inside the monitor is not asked)."""
    script = ScriptedPolicy([_click("Save button", 500, 500), _click("Save button", 1400, 500),
                             ANSWER])
    with FakeVLLM(script) as server:
        h = harness_for(server, mode=ConfirmMode.RISKY,
                        answer=lambda _e: ConfirmReply(Answer.APPROVE))
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    (asked,) = h.of(AwaitingConfirmation)
    assert asked.step_no == 2
    why = "aims outside the chosen monitor (the point was moved to its edge)"
    assert asked.request.reasons == (why,)
    assert [(p.x, p.y) for p in asked.request.points] == [(W - 1, H // 2)]
    assert [e.decision for e in h.of(StepDecided)] == [Decision.AUTO, Decision.APPROVED]
    moves = [c.args for c in h.backend.calls if c.name == "move_to"]
    assert moves == [(W // 2, H // 2), (W - 1, H // 2)]
    steps = h.store.steps(finished.run_id)
    assert steps[1].reason_for_confirm == why


def test_approve_the_rest_asks_only_once(harness_for: HarnessFor) -> None:
    script = ScriptedPolicy([_click("Delete button"), _click("Remove button", 400, 400), ANSWER])
    with FakeVLLM(script) as server:
        h = harness_for(server, mode=ConfirmMode.ALWAYS,
                        answer=lambda _e: ConfirmReply(Answer.APPROVE_REST))
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    assert len(h.of(AwaitingConfirmation)) == 1
    assert len(h.of(ActionExecuted)) == 2


def test_an_edited_action_is_what_runs(harness_for: HarnessFor) -> None:
    edited = Click(element="Cancel button", x=500, y=500)
    with FakeVLLM(ScriptedPolicy([_click("Delete button"), ANSWER])) as server:
        h = harness_for(server, mode=ConfirmMode.ALWAYS,
                        answer=lambda _e: ConfirmReply(Answer.EDIT, edited))
        h.run()
    assert [e.decision for e in h.of(StepDecided)] == [Decision.EDITED]
    moves = [c.args for c in h.backend.calls if c.name == "move_to"]
    assert moves[0] == (W // 2, H // 2)


def test_a_stop_during_the_confirmation_ends_the_run_with_no_input(
    harness_for: HarnessFor,
) -> None:
    with FakeVLLM(ScriptedPolicy([_click("Delete button"), ANSWER])) as server:
        h = harness_for(server, mode=ConfirmMode.ALWAYS)

        def pull_stop(event: Event) -> None:
            h.events.append(event)
            if isinstance(event, AwaitingConfirmation):
                threading.Timer(0.1, h.latch.stop, args=("hotkey", "test")).start()

        finished = Agent(h.parts, pull_stop).run(RunConfig(task="x"))
    assert finished.outcome is Outcome.STOPPED
    assert "hotkey" in finished.reason
    assert h.backend.calls == []


def test_a_forbidden_combination_is_never_pressed(harness_for: HarnessFor) -> None:
    bad = {"thought": "reboot", "action": {"action": "hotkey", "keys": ["ctrl", "alt", "delete"]}}
    with FakeVLLM(ScriptedPolicy([bad, ANSWER])) as server:
        h = harness_for(server, mode=ConfirmMode.NEVER)
        finished = h.run()
        second_prompt = server.requests[1].text
    assert finished.outcome is Outcome.ANSWERED
    assert h.backend.calls == []
    assert [e.decision for e in h.of(StepDecided)] == [Decision.FORBIDDEN]
    assert "refused by the safety policy" in second_prompt


def test_a_question_from_the_model_ends_the_run_with_it(
    harness_for: HarnessFor,
) -> None:
    ask = {"thought": "?", "action": {"action": "ask_user", "question": "Which file?"}}
    with FakeVLLM(ScriptedPolicy([ask])) as server:
        h = harness_for(server)
        finished = h.run()
    assert finished.outcome is Outcome.ASKED_USER
    assert "Which file?" in finished.reason


def test_an_unreachable_server_ends_the_run_with_the_fix(
    harness_for: HarnessFor,
) -> None:
    server = FakeVLLM(ScriptedPolicy([ANSWER]))
    server.start()
    server.stop()  # nothing listens on that port any more
    h = harness_for(server)
    finished = h.run()
    assert finished.outcome is Outcome.ERROR
    assert "Fix:" in finished.reason
    # The structured fix reaches the front ends, which say it in their own terms.
    assert finished.fix is not None and finished.fix.text in finished.reason
    assert finished.fix.remedy is Remedy.START_SERVER
    assert not h.of(RunStarted)
    assert not h.of(FrameCaptured)


def test_a_stop_while_the_screen_settles_keeps_the_done_step(
    harness_for: HarnessFor,
) -> None:
    with FakeVLLM(ScriptedPolicy([_click(), ANSWER])) as server:
        holder: list[AgentHarness] = []

        def screen() -> Image.Image:
            # Once the click went out, the person pulls the stop.
            if holder and holder[0].backend.calls:
                holder[0].latch.stop("hotkey", "after the click")
            return red_box_screen()

        h = harness_for(server, screen=screen)
        holder.append(h)
        finished = h.run()
    assert finished.outcome is Outcome.STOPPED
    steps = h.store.steps(finished.run_id)
    assert [s.result for s in steps] == ["ok"]
    assert "mouse_up" in h.backend.names()


def test_stop_at_the_confirmation_is_logged_as_the_steps_decision(
    harness_for: HarnessFor,
) -> None:
    with FakeVLLM(ScriptedPolicy([_click("Delete button"), ANSWER])) as server:
        h = harness_for(server, mode=ConfirmMode.RISKY,
                        answer=lambda _e: ConfirmReply(Answer.STOP))
        finished = h.run()
    assert finished.outcome is Outcome.STOPPED
    steps = h.store.steps(finished.run_id)
    assert [(s.decision, s.result) for s in steps] == [("stopped", "stopped")]
    assert h.backend.calls == []


def test_an_edit_into_a_forbidden_combination_is_refused_and_asked_again(
    harness_for: HarnessFor,
) -> None:
    from model.schema import Hotkey

    hotkey = {"thought": "close", "action": {"action": "hotkey", "keys": ["ctrl", "w"]}}
    forbidden = Hotkey(keys=["ctrl", "alt", "delete"])
    replies = iter([ConfirmReply(Answer.EDIT, forbidden), ConfirmReply(Answer.SKIP)])
    with FakeVLLM(ScriptedPolicy([hotkey, ANSWER])) as server:
        h = harness_for(server, mode=ConfirmMode.ALWAYS, answer=lambda _e: next(replies))
        h.run()
    asked = h.of(AwaitingConfirmation)
    assert len(asked) == 2  # the same proposal again, saying why the edit was not used
    assert asked[1].request.action == asked[0].request.action
    assert asked[1].request.reasons[0].startswith("your edit was not used")
    assert [e.decision for e in h.of(StepDecided)] == [Decision.SKIPPED]
    assert h.backend.calls == []


def test_a_front_end_repeating_a_refused_edit_still_gets_out(harness_for: HarnessFor) -> None:
    # Far more refusals than Python's recursion limit: asking again is a loop, and the
    # reason is said once, not piled up; Skip then ends the step as usual.
    from model.schema import Hotkey

    hotkey = {"thought": "close", "action": {"action": "hotkey", "keys": ["ctrl", "w"]}}
    forbidden = Hotkey(keys=["ctrl", "alt", "delete"])
    replies = iter([*[ConfirmReply(Answer.EDIT, forbidden)] * 1200, ConfirmReply(Answer.SKIP)])
    with FakeVLLM(ScriptedPolicy([hotkey, ANSWER])) as server:
        h = harness_for(server, mode=ConfirmMode.ALWAYS, answer=lambda _e: next(replies))
        finished = h.run()
    asked = h.of(AwaitingConfirmation)
    assert len(asked) == 1201
    assert sum(r.startswith("your edit was not used") for r in asked[-1].request.reasons) == 1
    assert [e.decision for e in h.of(StepDecided)] == [Decision.SKIPPED]
    assert h.backend.calls == []
    assert finished.outcome is Outcome.ANSWERED


@pytest.mark.parametrize("edited", [None, "answer"])
def test_an_empty_edit_or_one_of_another_kind_is_never_run(
    harness_for: HarnessFor, edited: str | None,
) -> None:
    from model.schema import Answer as AnswerAction

    edit = None if edited is None else AnswerAction(text="done")
    replies = iter([ConfirmReply(Answer.EDIT, edit), ConfirmReply(Answer.SKIP)])
    with FakeVLLM(ScriptedPolicy([_click("Delete button"), ANSWER])) as server:
        h = harness_for(server, mode=ConfirmMode.ALWAYS, answer=lambda _e: next(replies))
        finished = h.run()
    asked = h.of(AwaitingConfirmation)
    assert len(asked) == 2
    why = asked[1].request.reasons[0]
    assert why.startswith("your edit was not used") and (
        "empty" in why if edited is None else "kind of action" in why)
    assert [e.decision for e in h.of(StepDecided)] == [Decision.SKIPPED]
    assert h.backend.calls == []
    assert finished.outcome is Outcome.ANSWERED  # the model's own answer, not the edit


def test_an_edited_type_is_described_as_typed(harness_for: HarnessFor) -> None:
    from model.schema import Type

    typo = {"thought": "type", "action": {"action": "type", "text": "helo wrold"}}
    fixed = Type(text="hello world")
    with FakeVLLM(ScriptedPolicy([typo, ANSWER])) as server:
        h = harness_for(server, mode=ConfirmMode.ALWAYS,
                        answer=lambda _e: ConfirmReply(Answer.EDIT, fixed))
        h.run()
    done = h.of(ActionExecuted)
    assert len(done) == 1 and "hello world" in done[0].description
    assert "helo" not in done[0].description


def test_the_time_limit_holds_even_when_one_answer_is_slow(
    harness_for: HarnessFor,
) -> None:
    with FakeVLLM(ScriptedPolicy([_click(), ANSWER])) as server:
        server.delay = 1.0
        h = harness_for(server)
        finished = h.run(max_seconds=0.5)
    assert finished.outcome is Outcome.LIMIT
    assert h.backend.calls == []  # the late answer was not acted on
    assert [s.result for s in h.store.steps(finished.run_id)] == ["skipped"]


def test_typed_secrets_never_reach_the_action_log(harness_for: HarnessFor) -> None:
    password = 'Hunter2!x9"q'  # a quote: JSON-escaped in the stored action and raw answer
    typing = {"thought": "sign in", "action": {"action": "type", "text": password}}
    with FakeVLLM(ScriptedPolicy([typing, ANSWER])) as server:
        h = harness_for(server)
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    typed = "".join(str(c.args[0]) for c in h.backend.calls if c.name == "write_char")
    assert typed == password  # typed in full; only the log is masked
    steps = h.store.steps(h.store.get_run(finished.run_id).id)
    stored = " ".join(str(v) for s in steps for v in vars(s).values())
    assert "Hunter2" not in stored
    assert "***" in stored


@pytest.mark.parametrize(
    ("x", "y"),
    [(1e308, 500), (500, -1e308), (10**30, 500), (-2_000_000, 5)],
    ids=["overflow", "negative-overflow", "huge-int", "negative-beyond-reason"],
)
def test_an_absurd_coordinate_is_an_invalid_answer_not_an_internal_error(
    harness_for: HarnessFor, x: float, y: float
) -> None:
    click = {"thought": "click", "action": {"action": "click", "element": "Save", "x": x, "y": y}}
    with FakeVLLM(ScriptedPolicy([click], repeat_last=True)) as server:
        h = harness_for(server)
        finished = h.run()
    assert finished.outcome is Outcome.ERROR
    assert "internal error" not in finished.reason
    assert "not a valid step" in finished.reason
    assert not h.backend.calls  # nothing was clicked, nothing moved
    steps = h.store.steps(finished.run_id)
    assert [s.result for s in steps] == [StepResult.FAILED]
    # Recorded like any other malformed answer: the raw output is kept for the person.
    assert steps[0].raw_output is not None and '"click"' in steps[0].raw_output


def test_a_type_longer_than_the_limit_is_an_invalid_answer_never_typed(
    harness_for: HarnessFor,
) -> None:
    text = "a" * (MAX_TYPE_CHARS + 1)
    long_type = {"thought": "type it", "action": {"action": "type", "text": text}}
    with FakeVLLM(ScriptedPolicy([long_type], repeat_last=True)) as server:
        h = harness_for(server)
        finished = h.run()
    assert finished.outcome is Outcome.ERROR
    assert "not a valid step" in finished.reason
    assert not h.backend.calls
    steps = h.store.steps(finished.run_id)
    assert [s.result for s in steps] == [StepResult.FAILED]


def test_an_answer_past_the_byte_limit_ends_the_run_with_its_start_in_the_log(
    harness_for: HarnessFor,
) -> None:
    rambling = {"thought": "hmm " * 200, "action": {"action": "answer", "text": "done"}}
    with FakeVLLM(ScriptedPolicy([rambling])) as server:
        h = harness_for(server)
        # A small limit stands in for a server streaming without end (tests/model covers that).
        h.client.config = dataclasses.replace(h.client.config, max_answer_bytes=300)
        finished = h.run()
    assert finished.outcome is Outcome.ERROR
    assert "stopped reading" in finished.reason and "internal error" not in finished.reason
    assert finished.fix is not None and finished.fix.remedy is Remedy.SHOW_LOG
    steps = h.store.steps(finished.run_id)
    assert [s.result for s in steps] == [StepResult.FAILED]
    raw = steps[0].raw_output or ""
    assert raw.startswith('{"thought": "hmm hmm') and len(raw.encode()) <= 300
