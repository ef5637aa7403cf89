"""The stand-in's native tool calls: what vLLM requires of a request with ``tools``, and how it
streams a call (docs/vllm-protocol.md, "Tool calls"; vLLM's chat protocol and serving).

The request, as vLLM's ``ChatCompletionRequest`` validators check it (a 400 whose message is
pydantic's, "Value error, ..."): ``tool_choice`` needs ``tools``; it is ``"none"``, ``"auto"``,
``"required"`` or a named function; each tool is ``{"type": "function", "function": {"name",
"description"?, "parameters"?}}``; ``structured_outputs`` and a required or named tool choice
do not mix. Then, as the serving layer does: ``"auto"`` needs a server started with
``--enable-auto-tool-choice --tool-call-parser`` (``FakeVLLM(tool_parser=...)``). The
history: an assistant message's ``tool_calls`` need an id and a function whose arguments are
JSON text of an object (vLLM parses them for the chat template), and a ``tool`` message needs
a ``tool_call_id``; that the id answers an earlier call is stricter than vLLM (see
:data:`STRICTER_THAN_VLLM`).

The answer: with ``tool_choice: "required"`` vLLM constrains the whole output (after the
reasoning) to a JSON list of ``{"name", "parameters"}`` objects of the request's tools, so the
answer has no content and its arguments fit the tool's schema; the stand-in compiles that
same schema with llguidance and holds every call to it, as it holds structured outputs. The
stream: the first piece of a call carries ``index``, ``id``, ``type: "function"`` and the
function's ``name`` with empty arguments, then the arguments in token-sized pieces, and the
last chunk ``finish_reason: "tool_calls"``: also when the budget ran out mid-arguments (vLLM
reports ``tool_calls`` once a call has streamed; only an answer cut before any call is
``length``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from model.contracts.base import H_VOCABULARIES
from model.contracts.h_native import function_tools
from model.contracts.tools import from_action
from model.schema import Step
from tests.support.fake_vllm_request import Answer, ToolCallAnswer

AUTO = "auto"
REQUIRED = "required"

#: Where the stand-in refuses what vLLM would take; each is a mistake worth a failing test.
STRICTER_THAN_VLLM = (
    "a tool message whose tool_call_id answers no earlier assistant tool call is a 400 (vLLM "
    "passes it to the chat template, which renders it without complaint)",
    "a tool call's arguments must be JSON text of an object, not just JSON",
)


class ToolRequestError(ValueError):
    """A request vLLM refuses for its tools: ``status``, vLLM's words, its error type."""

    def __init__(self, message: str, err_type: str = "BadRequestError",
                 param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.err_type = err_type
        self.param = param


def _validation(loc: tuple[str | int, ...], msg: str,
                kind: str = "value_error") -> ToolRequestError:
    """A request-model validation failure, as vLLM's 400 words pydantic's error."""
    return ToolRequestError(
        f"1 validation error:\n  {{'type': '{kind}', 'loc': {loc!r}, 'msg': {msg!r}}}",
        "Bad Request", ".".join(str(p) for p in loc))


def check_request(body: Mapping[str, Any]) -> None:
    """vLLM's request validators for ``tools`` and ``tool_choice``; raises ToolRequestError."""
    tools = body.get("tools")
    choice = body.get("tool_choice", AUTO if tools else None)
    if choice is None or choice == "none":
        return
    if tools is None:
        raise _validation(("body",), "Value error, When using `tool_choice`, `tools` must be "
                                     "set.")
    if choice not in (AUTO, REQUIRED) and not isinstance(choice, dict):
        raise _validation(("body",), f"Value error, Invalid value for `tool_choice`: {choice}! "
                                     'Only named tools, "none", "auto" or "required" are '
                                     "supported.")
    if not isinstance(tools, list):
        raise _validation(("body", "tools"), "Input should be a valid list", "list_type")
    for index, tool in enumerate(tools):
        where: tuple[str | int, ...] = ("body", "tools", index)
        if not isinstance(tool, dict):
            raise _validation(where, "Input should be a valid dictionary", "dict_type")
        if tool.get("type", "function") != "function":
            raise _validation((*where, "type"), "Input should be 'function'", "literal_error")
        function = tool.get("function")
        if not isinstance(function, dict):
            raise _validation((*where, "function"), "Field required", "missing")
        if not isinstance(function.get("name"), str):
            raise _validation((*where, "function", "name"), "Field required", "missing")
        if "parameters" in function and not isinstance(function["parameters"], dict | None):
            raise _validation((*where, "function", "parameters"),
                              "Input should be a valid dictionary", "dict_type")
    if body.get("structured_outputs") is not None and choice != AUTO:
        raise _validation(("body",), "Value error, You can only either use constraints for "
                                     "structured outputs or tools, not both.")
    problem = history_problem(body.get("messages"))
    if problem is not None:
        raise ToolRequestError(problem)


def check_served(body: Mapping[str, Any], tool_parser: str | None) -> None:
    """What the chat serving refuses for a server without a tool parser."""
    tools = body.get("tools")
    choice = body.get("tool_choice", AUTO if tools else None)
    if choice == AUTO and tools and tool_parser is None:
        raise ToolRequestError('"auto" tool choice requires --enable-auto-tool-choice and '
                               "--tool-call-parser to be set")


def history_problem(messages: object) -> str | None:
    """What is wrong with the tool calls and tool results of a conversation, or None."""
    if not isinstance(messages, list):
        return None
    called: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                    return f"message {index}: a tool call has no function name"
                if not isinstance(call.get("id"), str):
                    return f"message {index}: a tool call has no id"
                text = function.get("arguments")
                try:
                    arguments = json.loads(text) if isinstance(text, str) else None
                except json.JSONDecodeError:
                    arguments = None
                if not isinstance(arguments, dict):
                    return (f"message {index}: the arguments of tool call {call['id']!r} are "
                            "not JSON text of an object")
                called.add(call["id"])
        elif message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                return (f"1 validation error:\n  {{'type': 'missing', 'loc': ('body', "
                        f"'messages', {index}, 'tool_call_id'), 'msg': 'Field required'}}")
            if call_id not in called:
                return (f"message {index}: tool_call_id {call_id!r} answers no earlier "
                        "assistant tool call")
    return None


def required_schema(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The JSON schema vLLM constrains a ``tool_choice: "required"`` answer to: a non-empty
    list of ``{"name": one tool's, "parameters": its schema}``, every tool's ``$defs`` lifted
    to the top."""
    defs: dict[str, Any] = {}
    options = []
    for tool in tools:
        function = dict(tool["function"])
        parameters = dict(function.get("parameters") or {"type": "object", "properties": {}})
        for name, shape in parameters.pop("$defs", {}).items():
            if name in defs and defs[name] != shape:
                raise ToolRequestError(f"Tool definition '{name}' has multiple schemas, which "
                                       "is not supported.")
            defs[name] = shape
        options.append({"properties": {"name": {"type": "string", "enum": [function["name"]]},
                                       "parameters": parameters},
                        "required": ["name", "parameters"]})
    schema: dict[str, Any] = {"type": "array", "minItems": 1,
                              "items": {"type": "object", "anyOf": options}}
    if defs:
        schema["$defs"] = defs
    return schema


def required_text(call: ToolCallAnswer) -> str:
    """An answer's calls as the constrained text a required tool choice makes the model write."""
    return "[" + ", ".join(f'{{"name": {json.dumps(c.name)}, "parameters": {c.arguments_text}}}'
                           for c in call.calls) + "]"


def as_tool_call(answer: Answer, tools: Sequence[Mapping[str, Any]]) -> ToolCallAnswer:
    """A policy's answer to a request with ``tools`` as a call: a :class:`ToolCallAnswer` as it
    is; a step in holodesk's dialect (``action``) or H's (``tool_call``), as JSON text, said as
    the call of the request's tools (the vocabulary whose tool names they are), its note the
    content. Raises ValueError for anything else."""
    if isinstance(answer, ToolCallAnswer):
        return answer
    think = ""
    text = answer
    if text.lstrip().startswith("<think>") and "</think>" in text:
        think, text = text.lstrip()[len("<think>"):].split("</think>", 1)
    try:
        said = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the policy answered text that is no step ({exc.msg}) to a request "
                         "with tools: answer a ToolCallAnswer") from exc
    if not isinstance(said, dict):
        raise ValueError("the policy's answer is not a step object")
    names = {t["function"]["name"] for t in tools}
    note = said.get("note") or ""
    if "tool_call" in said:
        tool_call = dict(said["tool_call"])
        name = tool_call.pop("tool_name")
    else:
        vocabulary = next((v for v in H_VOCABULARIES
                           if {t["function"]["name"] for t in function_tools(v)} == names), None)
        if vocabulary is None:
            raise ValueError("the request's tools are no H vocabulary's: answer a "
                             "ToolCallAnswer")
        tool_call = from_action(Step.model_validate(said).action, vocabulary)
        name = tool_call.pop("tool_name")
    if name not in names:
        raise ValueError(f"the policy called {name!r}, which the request does not offer")
    return ToolCallAnswer(name, tool_call, content=note, reasoning=think.strip())


@dataclass(frozen=True)
class StreamedCall:
    """One call of an answer as it goes out: its id and its arguments' token-sized pieces."""

    index: int
    id: str
    name: str
    pieces: list[str]

    def header(self) -> dict[str, Any]:
        """The first piece: index, id, type and name, with empty arguments (as vLLM's)."""
        return {"tool_calls": [{"index": self.index, "id": self.id, "type": "function",
                                "function": {"name": self.name, "arguments": ""}}]}

    def piece(self, text: str) -> dict[str, Any]:
        return {"tool_calls": [{"index": self.index, "function": {"arguments": text}}]}
