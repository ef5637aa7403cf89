"""The terminal's confirmation: answers read from a stream, edits of the text to type."""

from __future__ import annotations

import dataclasses
import io
import os
import select
import threading

from app.cli.terminal import TerminalFrontEnd
from app.events import (
    Answer,
    AwaitingConfirmation,
    ConfirmReply,
    ConfirmRequest,
    Outcome,
    RunFinished,
    RunStarted,
    StepFailed,
    StepProposed,
)
from app.result import RunResult
from control.policy import Verdict
from control.stop import StopLatch
from model.coords import FrameGeometry, Rect
from model.problem import Fix, Remedy
from model.prompt import describe_action
from model.schema import Action, Click, Step, Type

GEOMETRY = FrameGeometry(1280, 800, Rect(0, 0, 1280, 800), 1.0)


def _request(action: Action, description: str = "do it") -> ConfirmRequest:
    return ConfirmRequest(description=description, element="", points=(), reasons=("why",),
                          action=action, screenshot_path="", geometry=GEOMETRY)


def _ask(request: ConfirmRequest, typed: str) -> tuple[Answer, Action | None, str]:
    out = io.StringIO()
    reply = TerminalFrontEnd(out=out, answers=io.StringIO(typed)).ask(request)
    return reply.answer, reply.edited, out.getvalue()


def test_enter_alone_is_not_an_answer_and_a_approves() -> None:
    answer, _edited, shown = _ask(_request(Click(element="OK", x=1, y=2)), "\na\n")
    assert answer is Answer.APPROVE
    assert "please answer a, r, s or q" in shown
    assert "[e]dit" not in shown  # nothing to edit in a click


def test_the_text_to_type_can_be_edited() -> None:
    request = _request(Type(text="helo wrold", press_enter=True), 'type "helo wrold"')
    answer, edited, shown = _ask(request, "e\nhello world\n")
    assert answer is Answer.EDIT
    assert edited == Type(text="hello world", press_enter=True)
    assert "will type 'hello world' instead" in shown


def test_an_empty_edit_keeps_the_proposal_and_asks_again() -> None:
    answer, edited, shown = _ask(_request(Type(text="x")), "e\n\ns\n")
    assert (answer, edited) == (Answer.SKIP, None)
    assert "not edited" in shown


def test_hidden_text_is_not_editable_here() -> None:
    request = dataclasses.replace(_request(Type(text="hunter2")), secret=True)
    answer, _edited, shown = _ask(request, "e\nq\n")
    assert answer is Answer.STOP
    assert "[e]dit" not in shown and "please answer a, r, s or q" in shown


def test_end_of_input_stops() -> None:
    assert _ask(_request(Type(text="x")), "e\n")[0] is Answer.STOP
    assert _ask(_request(Type(text="x")), "")[0] is Answer.STOP


def test_an_edit_that_looks_like_a_password_is_not_repeated() -> None:
    answer, edited, shown = _ask(_request(Type(text="x")), "e\nHunter2!x9\n")
    assert answer is Answer.EDIT and edited == Type(text="Hunter2!x9")
    assert "will type 10 characters instead" in shown
    assert shown.count("Hunter2!x9") == 0  # the StringIO input is not echoed here


def test_a_run_ended_by_an_error_names_the_command_that_fixes_it() -> None:
    # The reason the action log keeps holds the fix's plain words; the terminal adds its terms.
    out = io.StringIO()
    fix = Fix("Start the model server.", remedy=Remedy.START_SERVER)
    TerminalFrontEnd(out=out).handle(RunFinished(
        "r1", Outcome.ERROR, "cannot reach the model server Fix: Start the model server.", 0,
        fix=fix, result=RunResult.FAILED))
    assert out.getvalue().strip() == (
        "run r1 ended: failed after 0 step(s): cannot reach the model server Fix: Start the "
        "model server. (`holodesk serve`)")


# -- what reaches the terminal -----------------------------------------------------------------

HOSTILE = "\x1b[2J\x1b]0;title\x07 \r over \u202e"


def test_model_text_never_reaches_the_terminal_as_escape_sequences() -> None:
    out = io.StringIO()
    front = TerminalFrontEnd(out=out, answers=io.StringIO("s\n"), verbose=True)
    action = Type(text="x" * 120 + HOSTILE + "END")
    step = Step(thought="think " + HOSTILE, note=HOSTILE, action=action)
    front.handle(RunStarted("r1", "task " + HOSTILE, "http://h/v1", "m" + HOSTILE, "1", False,
                            notice="no profile for m" + HOSTILE))
    front.handle(StepProposed("r1", 1, step, (), "type " + HOSTILE,
                                Verdict(True, False, ()), HOSTILE))
    request = ConfirmRequest(
        description=describe_action(action), element="field " + HOSTILE, points=(),
        reasons=("why " + HOSTILE,), action=action, screenshot_path="", geometry=GEOMETRY)
    front.handle(AwaitingConfirmation("r1", 1, request))
    assert request.wait(StopLatch()).answer is Answer.SKIP
    front.handle(StepFailed("r1", 1, "failed " + HOSTILE))
    front.handle(RunFinished("r1", Outcome.ANSWERED, "done " + HOSTILE, 1,
                             answer="answer " + HOSTILE, result=RunResult.DONE))
    shown = out.getvalue()
    for bad in ("\x1b", "\x07", "\r", "\u202e"):
        assert bad not in shown, repr(bad)
    assert "␛[2J␛]0;title␇ ␍ over ⟨U+202E⟩" in shown
    # The whole text to type, not the description's 80 characters.
    assert "  text:    " + "x" * 120 + "␛[2J" in shown and "END" in shown


def test_keys_typed_before_the_question_do_not_answer_it() -> None:
    master, slave = os.openpty()
    try:
        answers = os.fdopen(slave, "r", closefd=False)
        os.write(master, b"a\n")  # typed ahead, meant for something else
        # Readable once the line discipline holds the line: without the flush, it would approve.
        assert select.select([slave], [], [], 10)[0] == [slave]
        asked = threading.Event()

        class Out(io.StringIO):
            def write(self, s: str) -> int:
                n = super().write(s)
                if "[s]kip" in self.getvalue():
                    asked.set()
                return n

        out = Out()
        replies: list[ConfirmReply] = []
        front = TerminalFrontEnd(out=out, answers=answers)
        asking = threading.Thread(
            target=lambda: replies.append(front.ask(_request(Click(element="OK", x=1, y=2)))))
        asking.start()
        assert asked.wait(10)
        os.write(master, b"s\n")  # the answer given after seeing the question
        asking.join(10)
        assert [r.answer for r in replies] == [Answer.SKIP]
    finally:
        os.close(master)
        os.close(slave)


def test_the_question_names_the_application_the_action_goes_to() -> None:
    request = dataclasses.replace(_request(Type(text="ls")), target="XTerm \u2014 bash")
    _answer, _edited, shown = _ask(request, "s\n")
    assert "  in:      XTerm \u2014 bash\n" in shown


def test_the_contracts_notice_is_printed_under_the_runs_first_line() -> None:
    out = io.StringIO()
    TerminalFrontEnd(out=out).handle(RunStarted("r1", "t", "http://h/v1", "m", "1", False,
                                                notice="holodesk has no profile for m"))
    assert out.getvalue().splitlines()[1] == "note: holodesk has no profile for m"
