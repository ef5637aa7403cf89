"""The agent asks which application each action goes to, and the policy's answer holds.

Real parts as in test_agent.py (the stand-in model over HTTP, the dry-run backend, a real log),
with a fake target finder saying which window has the focus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.events import (
    Answer,
    AwaitingConfirmation,
    ConfirmReply,
    Decision,
    Outcome,
    StepDecided,
    StepProposed,
)
from control.policy import ConfirmMode, SafetyPolicy
from control.target import Target
from model.run_secrets import RunSecrets
from tests.support.agent_harness import AgentHarness, HarnessFor
from tests.support.fake_targets import FIREFOX, XTERM, FakeTargetFinder, terminal, window
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}
OWN = window("holodesk", own=True, title="holodesk")


def _type(text: str, press_enter: bool = False) -> dict[str, Any]:
    return {"thought": "type", "action": {"action": "type", "text": text,
                                          "press_enter": press_enter, "clear_first": False}}


def _keys(*keys: str) -> dict[str, Any]:
    return {"thought": "keys", "action": {"action": "hotkey", "keys": list(keys)}}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def _harness(harness_for: HarnessFor, server: FakeVLLM, finder: Any, **options: Any
             ) -> AgentHarness:
    h = harness_for(server, **options)
    h.parts.finder = finder
    return h


def test_typing_into_holodesks_own_window_is_refused_and_told_to_the_model(
        harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([_type("y"), ANSWER])) as server:
        h = _harness(harness_for, server, FakeTargetFinder(focus=OWN), mode=ConfirmMode.NEVER)
        finished = h.run()
        second_prompt = server.requests[1].text
    assert finished.outcome is Outcome.ANSWERED
    assert h.backend.calls == []
    assert [e.decision for e in h.of(StepDecided)] == [Decision.FORBIDDEN]
    assert "never acts on its own windows" in second_prompt
    (step, _answer) = h.store.steps(finished.run_id)
    assert step.target == "holodesk (holodesk's own)"


def test_a_terminal_submit_asks_with_the_line_typed_in_earlier_steps(
        harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([_type("find ~/x "), _type("-delete"), _keys("ctrl", "m"),
                                  ANSWER])) as server:
        h = _harness(harness_for, server, FakeTargetFinder(focus=XTERM), mode=ConfirmMode.RISKY,
                     answer=lambda e: ConfirmReply(
                         Answer.APPROVE if e.request.action.action == "type" else Answer.SKIP))
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    asked = h.of(AwaitingConfirmation)[-1]
    assert asked.request.target == "XTerm \u2014 bash"
    assert 'holodesk typed since the last submit: "find ~/x -delete"' in asked.request.reasons
    # In a terminal every action asks: the typing too, each time.
    assert [e.decision for e in h.of(StepDecided)] == [Decision.APPROVED, Decision.APPROVED,
                                                        Decision.SKIPPED]
    assert h.backend.typed() == "find ~/x -delete"  # and no Enter


class _Switching(FakeTargetFinder):
    """The focus moves to ``then`` after the first question: a window opened, or the person
    clicked elsewhere while deciding. ``can_activate``: whether the first window can get the
    focus back (it cannot once it is closed)."""

    def __init__(self, first: Target, then: Target, *, can_activate: bool = True) -> None:
        super().__init__(focus=first)
        self.then = then
        self.can_activate = can_activate

    def focused(self) -> Target:
        target = super().focused()
        self.focus = self.then
        return target

    def activate(self, target: Target) -> bool:
        self.asked.append(("activate", (target.window,)))
        if self.can_activate:
            self.then = target
        return self.can_activate


def test_an_action_whose_window_changed_after_the_check_is_not_done(
        harness_for: HarnessFor) -> None:
    # Enter in a browser with nothing typed needs no question; by the time it would be pressed
    # the focus is in a terminal, where it runs a line: not done, and the model is told.
    with FakeVLLM(ScriptedPolicy([_keys("enter"), ANSWER])) as server:
        h = _harness(harness_for, server, _Switching(FIREFOX, XTERM), mode=ConfirmMode.RISKY)
        finished = h.run()
        second_prompt = server.requests[1].text
    assert finished.outcome is Outcome.ANSWERED
    assert h.backend.calls == []
    assert "the window it goes to changed" in second_prompt
    assert h.store.steps(finished.run_id)[0].decision == Decision.FORBIDDEN.value


def test_after_an_approval_the_keys_go_back_to_the_approved_window(
        harness_for: HarnessFor) -> None:
    # Answering the confirmation gave holodesk's panel the focus: the typing waits for the focus
    # to go back to the window the person approved it for, then types there.
    finder = _Switching(FIREFOX, OWN)
    with FakeVLLM(ScriptedPolicy([_type("hello"), ANSWER])) as server:
        h = _harness(harness_for, server, finder, mode=ConfirmMode.ALWAYS,
                     answer=lambda _e: ConfirmReply(Answer.APPROVE))
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    assert ("activate", (FIREFOX.window,)) in finder.asked
    assert h.backend.typed() == "hello"


def test_an_approval_does_not_carry_over_to_another_window(harness_for: HarnessFor) -> None:
    # The approved window is gone (it cannot get the focus back) and another has it.
    finder = _Switching(FIREFOX, XTERM, can_activate=False)
    with FakeVLLM(ScriptedPolicy([_type("hello"), ANSWER])) as server:
        h = _harness(harness_for, server, finder, mode=ConfirmMode.ALWAYS,
                     answer=lambda _e: ConfirmReply(Answer.APPROVE))
        finished = h.run()
        second_prompt = server.requests[1].text
    assert finished.outcome is Outcome.ANSWERED
    assert h.backend.calls == []
    assert "the window it goes to changed" in second_prompt


def test_the_text_judged_logged_and_typed_is_one(harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([_type("r\u0000m -rf ~/x\r"), ANSWER])) as server:
        h = _harness(harness_for, server, FakeTargetFinder(focus=FIREFOX),
                     mode=ConfirmMode.RISKY, answer=lambda _e: ConfirmReply(Answer.APPROVE))
        finished = h.run()
    (asked,) = h.of(AwaitingConfirmation)
    assert asked.request.action.text == "rm -rf ~/x\n"
    assert any("(rm)" in r for r in asked.request.reasons)
    assert h.backend.typed() == "rm -rf ~/x\n"
    assert h.store.steps(finished.run_id)[0].action["text"] == "rm -rf ~/x\n"


def test_the_terminal_submits_question_masks_a_secret_typed_before(
        harness_for: HarnessFor) -> None:
    # The question quotes the line typed since the last submit: a secret in it is masked there
    # as in the log (found by a hostile review: shown in clear in the panel and the terminal).
    secret = "Sup3r-Secret-Value"
    with FakeVLLM(ScriptedPolicy([_type(f"mysql -u root -p{secret} prod"), _keys("enter"),
                                  ANSWER])) as server:
        h = _harness(harness_for, server, FakeTargetFinder(focus=XTERM), mode=ConfirmMode.RISKY,
                     answer=lambda e: ConfirmReply(
                         Answer.APPROVE if e.request.action.action == "type" else Answer.SKIP))
        h.parts.policy = SafetyPolicy(ConfirmMode.RISKY, secrets=RunSecrets(parameters={secret}))
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    asked = h.of(AwaitingConfirmation)
    assert asked, "the submit must ask"
    for event in asked:
        assert not any(secret in reason for reason in event.request.reasons), \
            event.request.reasons
    assert any("typed since the last submit" in r for e in asked for r in e.request.reasons)
    for proposed in h.of(StepProposed):
        assert not any(secret in reason for reason in proposed.verdict.reasons)


def test_in_a_terminal_every_action_asks_and_nothing_reaches_it_unanswered(
        harness_for: HarnessFor) -> None:
    # A program in front (mc, nano, a multiplexer) takes keys, clicks and scrolls as commands
    # without any submit: none of them runs without a yes, in a terminal known only by its pty.
    pterm = terminal("Pterm", inside="python3")
    steps = [_type("import shutil"), _keys("ctrl", "o"), _keys("ctrl", "k"),
             {"thought": "row", "action": {"action": "click", "element": "file list row",
                                           "x": 500, "y": 500}},
             {"thought": "page", "action": {"action": "scroll", "element": "list", "x": 500,
                                            "y": 500, "direction": "down", "amount": 3}},
             ANSWER]
    with FakeVLLM(ScriptedPolicy(steps)) as server:
        h = _harness(harness_for, server, FakeTargetFinder(focus=pterm, below=pterm),
                     mode=ConfirmMode.RISKY, answer=lambda _e: ConfirmReply(Answer.SKIP))
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    assert [e.decision for e in h.of(StepDecided)] == [Decision.SKIPPED] * 5
    assert h.backend.calls == []
    first = h.of(AwaitingConfirmation)[0].request
    assert first.target == "Pterm \u2014 python3"
    assert any("in front: python3" in r for r in first.reasons)


def test_escape_then_typing_asks_with_waits_between_until_the_person_answers(
        harness_for: HarnessFor) -> None:
    # Where no window was found the target may be a shell: typing after Escape (readline's
    # Meta prefix) asks, however many waits came between, and once the person answered, what
    # came before is theirs to have judged.
    wait = {"thought": "wait", "action": {"action": "wait", "seconds": 0.01}}
    steps = [_type("#rm -rf ~/x"), _keys("escape"), wait, wait, _type("1"), wait,
             _type("2"), ANSWER]
    with FakeVLLM(ScriptedPolicy(steps)) as server:
        h = _harness(harness_for, server, FakeTargetFinder(), mode=ConfirmMode.RISKY,
                     answer=lambda _e: ConfirmReply(Answer.APPROVE))
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    decisions = [e.decision for e in h.of(StepDecided)]
    assert decisions == [Decision.AUTO, Decision.AUTO, Decision.AUTO, Decision.AUTO,
                         Decision.APPROVED, Decision.AUTO, Decision.AUTO]
    (asked,) = h.of(AwaitingConfirmation)
    assert any("after Escape" in r for r in asked.request.reasons)


def test_text_meant_for_a_never_touched_application_is_masked_like_a_password(
        harness_for: HarnessFor) -> None:
    keepass = window("KeePassXC", title="Passwords.kdbx - KeePassXC")
    text = "my bank pin is 4711 and the vault word is hunter2"
    with FakeVLLM(ScriptedPolicy([{"thought": f"I will type {text}",
                                   "action": {"action": "type", "text": text,
                                              "press_enter": False, "clear_first": False}},
                                  ANSWER])) as server:
        h = _harness(harness_for, server, FakeTargetFinder(focus=keepass))
        h.parts.policy = SafetyPolicy(ConfirmMode.NEVER, never_touch=("keepassxc",))
        finished = h.run()
        second_prompt = server.requests[1].text
    assert h.backend.calls == []
    assert [e.decision for e in h.of(StepDecided)] == [Decision.FORBIDDEN]
    (proposed, _answer) = h.of(StepProposed)
    assert text not in proposed.description and text not in proposed.step.thought
    assert text not in proposed.raw
    (step, _answer_row) = h.store.steps(finished.run_id)
    stored = " ".join(str(v) for v in (step.action, step.thought, step.raw_output))
    assert text not in stored
    assert text not in second_prompt
