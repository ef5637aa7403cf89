"""Streamed tool calls put back together: the pieces of a chat stream's ``tool_calls`` deltas
become whole :class:`~model.contracts.base.ToolCall`s for the native-tools contract's decode.

The OpenAI streaming format, as vLLM sends it (docs/vllm-protocol.md, "Tool calls"): each call
has an ``index``; its first piece carries the ``id``, ``type: "function"`` and the function's
``name`` with empty or partial ``arguments``; the later pieces of that index carry only more
``arguments`` text, to be concatenated. A piece that breaks this (a new call without a name, an
index that skips one, a name that changes, a type other than ``function``) is not a crash but
a problem in words, which the client turns into the contract's :class:`InvalidOutput` (an
invalid answer, asked again like any other).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from model.contracts.base import ToolCall
from model.stream_chunk import ToolCallPiece

__all__ = ["ToolCallAccumulator", "calls_text"]


@dataclass
class _Call:
    id: str
    name: str
    arguments: list[str] = field(default_factory=list)


class ToolCallAccumulator:
    """The calls of one streamed answer, added to piece by piece (see the module doc)."""

    def __init__(self) -> None:
        self._calls: list[_Call] = []
        #: The first thing wrong with the pieces, in words; None while they make sense.
        self.problem: str | None = None

    def add(self, pieces: Iterable[ToolCallPiece]) -> None:
        for piece in pieces:
            self._add(piece)

    def _add(self, piece: ToolCallPiece) -> None:
        if self.problem is not None:
            return  # the first problem is the one worth naming; the rest follows from it
        if piece.type is not None and piece.type != "function":
            self.problem = (f"tool call {piece.index} is of type {piece.type!r}, not a "
                            "function call")
            return
        if piece.index < len(self._calls):
            call = self._calls[piece.index]
            if piece.name and piece.name != call.name:
                self.problem = (f"tool call {piece.index} changed its name from {call.name!r} "
                                f"to {piece.name!r} while it streamed")
                return
            call.arguments.append(piece.arguments)
            return
        if piece.index > len(self._calls):
            self.problem = (f"tool call {piece.index} arrived before tool call "
                            f"{len(self._calls)}: the stream skipped an index")
            return
        if not piece.name:
            self.problem = f"tool call {piece.index} started without a function name"
            return
        self._calls.append(_Call(piece.id or "", piece.name, [piece.arguments]))

    def __bool__(self) -> bool:
        return bool(self._calls) or self.problem is not None

    def calls(self) -> tuple[ToolCall, ...]:
        """The calls so far, each with its arguments joined."""
        return tuple(ToolCall(c.id, c.name, "".join(c.arguments)) for c in self._calls)


def calls_text(calls: Sequence[ToolCall]) -> str:
    """Tool calls as text, one ``name(arguments)`` a line: how the live view, the action log
    and an invalid answer's report show them (the arguments as the model wrote them)."""
    return "\n".join(f"{c.name}({c.arguments})" for c in calls)
