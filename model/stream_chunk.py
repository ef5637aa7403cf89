"""What holodesk reads of one streamed chat chunk, from the JSON object the server sent.

The SDK's chunk is read back as that JSON (``to_dict``, model/sdk_adapter.py), so vLLM's own
fields (``reasoning``) are there as sent, and only the parts holodesk uses are taken, each
checked for its type. A chunk of another shape is the
server's error (:class:`MalformedChunk`), reported like any other broken answer.
"""

from __future__ import annotations

from dataclasses import dataclass


class MalformedChunk(ValueError):
    """A streamed chunk that is not a chat completion chunk."""


@dataclass(frozen=True)
class ToolCallPiece:
    """One entry of a delta's ``tool_calls``: a piece of one function call, as the OpenAI
    streaming format carries it (docs/vllm-protocol.md, "Tool calls"). The first piece of a
    call has its ``id``, ``type`` and the function's ``name``; the later ones only more of
    its ``arguments``, which are JSON text in pieces. None: the field was absent or null."""

    index: int
    id: str | None
    type: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True)
class Delta:
    thought: str  # the reasoning parser's text (see reasoning_of)
    content: str
    finish: str | None
    tool_calls: tuple[ToolCallPiece, ...] = ()


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    reasoning_tokens: int | None = None
    """``completion_tokens_details.reasoning_tokens``: sent by vLLM run with a reasoning parser,
    from the release that counts them (docs/vllm-protocol.md, "Reasoning tokens"); None when
    the server sent no such figure."""


@dataclass(frozen=True)
class Chunk:
    deltas: tuple[Delta, ...]
    usage: Usage | None


def read_chunk(data: object) -> Chunk:
    """The parts of ``data`` (one ``data:`` line of the stream, decoded) holodesk reads."""
    if not isinstance(data, dict):
        raise MalformedChunk(f"a stream chunk is not a JSON object: {_brief(data)}")
    choices = data.get("choices")
    if choices is None:
        choices = []
    if not isinstance(choices, list):
        raise MalformedChunk(f"a stream chunk's choices are not a list: {_brief(choices)}")
    deltas = tuple(_delta(choice) for choice in choices)
    usage = data.get("usage")
    if usage is None:
        return Chunk(deltas, None)
    if not isinstance(usage, dict):
        raise MalformedChunk(f"a stream chunk's usage is not an object: {_brief(usage)}")
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    answer = usage.get("completion_tokens_details")
    reasoning = answer.get("reasoning_tokens") if isinstance(answer, dict) else None
    return Chunk(deltas, Usage(_count(usage.get("prompt_tokens")),
                               _count(usage.get("completion_tokens")), _count(cached),
                               _count(reasoning)))


def reasoning_of(delta: dict[str, object]) -> str:
    """The reasoning text of a streamed delta, when the server runs a reasoning parser.

    vLLM sends it as ``reasoning`` (0.12 also mirrors it into the deprecated
    ``reasoning_content``; read one, never both, or it would count twice; see
    docs/vllm-protocol.md).
    """
    for name in ("reasoning", "reasoning_content"):
        value = delta.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _delta(choice: object) -> Delta:
    if not isinstance(choice, dict):
        raise MalformedChunk(f"a stream chunk's choice is not an object: {_brief(choice)}")
    delta = choice.get("delta")
    if delta is None:
        delta = {}
    if not isinstance(delta, dict):
        raise MalformedChunk(f"a stream chunk's delta is not an object: {_brief(delta)}")
    content = delta.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise MalformedChunk(f"a stream chunk's content is not text: {_brief(content)}")
    finish = choice.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise MalformedChunk(f"a stream chunk's finish_reason is not text: {_brief(finish)}")
    return Delta(reasoning_of(delta), content, finish, _tool_calls(delta.get("tool_calls")))


def _tool_calls(value: object) -> tuple[ToolCallPiece, ...]:
    """The pieces of a delta's ``tool_calls``. Only their shape is checked here; what they add
    up to (one call, a name, JSON arguments) is the contract's to judge (model/tool_calls.py)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise MalformedChunk(f"a stream chunk's tool_calls are not a list: {_brief(value)}")
    pieces = []
    for entry in value:
        if not isinstance(entry, dict):
            raise MalformedChunk(f"a streamed tool call is not an object: {_brief(entry)}")
        index = entry.get("index")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise MalformedChunk(f"a streamed tool call has no index: {_brief(entry)}")
        function = entry.get("function")
        if function is None:
            function = {}
        if not isinstance(function, dict):
            raise MalformedChunk(f"a streamed tool call's function is not an object: "
                                 f"{_brief(function)}")
        texts = {"id": entry.get("id"), "type": entry.get("type"), "name": function.get("name"),
                 "arguments": function.get("arguments")}
        for name, text in texts.items():
            if text is not None and not isinstance(text, str):
                raise MalformedChunk(f"a streamed tool call's {name} is not text: {_brief(text)}")
        pieces.append(ToolCallPiece(index, texts["id"], texts["type"], texts["name"],
                                    texts["arguments"] or ""))
    return tuple(pieces)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _brief(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
