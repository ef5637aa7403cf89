"""The terminal's confirmation: answers read from a stream, edits of the text to type."""

from __future__ import annotations

import dataclasses
import io

from app.cli.terminal import TerminalFrontEnd
from app.events import Answer, ConfirmRequest, Outcome, RunFinished
from model.coords import FrameGeometry, Rect
from model.problem import Fix, Remedy
from model.schema import Action, Click, Type

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
        fix=fix))
    assert out.getvalue().strip() == (
        "run r1 ended: error after 0 step(s): cannot reach the model server Fix: Start the "
        "model server. (`holodesk serve`)")
