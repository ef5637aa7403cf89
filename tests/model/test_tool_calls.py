"""Streamed tool calls are put back together by index, as the OpenAI format and vLLM send
them, and pieces that do not add up to calls are named, never a crash (model/tool_calls.py)."""

from __future__ import annotations

import pytest

from model.contracts import ToolCall
from model.stream_chunk import ToolCallPiece
from model.tool_calls import ToolCallAccumulator, calls_text


def _piece(index: int, arguments: str = "", *, name: str | None = None,
           id: str | None = None, type: str | None = None) -> ToolCallPiece:
    return ToolCallPiece(index, id, type, name, arguments)


def test_pieces_of_one_index_join_into_one_call() -> None:
    calls = ToolCallAccumulator()
    calls.add([_piece(0, "", name="click", id="chatcmpl-tool-a", type="function")])
    calls.add([_piece(0, '{"element": "OK", ')])
    calls.add([_piece(0, '"x": 10, "y": 990}')])
    assert calls.problem is None
    assert calls.calls() == (ToolCall("chatcmpl-tool-a", "click",
                                      '{"element": "OK", "x": 10, "y": 990}'),)
    assert calls_text(calls.calls()) == 'click({"element": "OK", "x": 10, "y": 990})'


def test_two_calls_stay_two() -> None:
    calls = ToolCallAccumulator()
    calls.add([_piece(0, "{}", name="wait", id="a"), _piece(1, "{}", name="answer", id="b")])
    assert [c.name for c in calls.calls()] == ["wait", "answer"]
    assert calls.problem is None  # the contract says how many it takes


def test_the_name_repeated_on_a_later_piece_is_the_same_call() -> None:
    calls = ToolCallAccumulator()
    calls.add([_piece(0, "{", name="click", id="a"), _piece(0, "}", name="click")])
    assert calls.calls() == (ToolCall("a", "click", "{}"),)


@pytest.mark.parametrize(("pieces", "problem"), [
    ([_piece(0, "{}")], "tool call 0 started without a function name"),
    ([_piece(1, "{}", name="click")], "tool call 1 arrived before tool call 0"),
    ([_piece(0, "{", name="click"), _piece(2, "{}", name="wait")], "skipped an index"),
    ([_piece(0, "{", name="click"), _piece(0, "}", name="wait")],
     "changed its name from 'click' to 'wait'"),
    ([_piece(0, "{}", name="click", type="code")], "of type 'code', not a function call"),
])
def test_pieces_that_do_not_add_up_are_named(pieces: list[ToolCallPiece], problem: str) -> None:
    calls = ToolCallAccumulator()
    calls.add(pieces)
    assert calls.problem is not None and problem in calls.problem
    calls.add([_piece(5, "{}")])  # the first problem is the one kept
    assert problem in calls.problem
