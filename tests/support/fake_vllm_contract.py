"""The stand-in's strict reading of H's contracts (docs/contract.md): the structured-output
one and the native function-calling one.

vLLM serves whatever it is sent; H's models are trained on one layout, and holodesk must send
exactly it. With ``FakeVLLM(contract="h_structured")`` (or ``"h_native_tools"``) a request that
breaks it is a 400 whose message starts ``H contract:``. The structured answers are then H's
step JSON (the policy writes them), held to the request's schema by the same grammar engine as
every other answer; the native ones are tool calls, held to the required tool choice's grammar
(tests/support/fake_vllm_tools.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

H_STRUCTURED = "h_structured"
H_NATIVE_TOOLS = "h_native_tools"

_BLOCK = re.compile(r"\n<output_format>\n```json\n(?P<schema>.*)\n```\n</output_format>\n\Z",
                    re.DOTALL)
_RESULT = re.compile(r'<(?P<tag>tool_output|error) tool="[^"]+">\n.*\n</(?P=tag)>\Z', re.DOTALL)
_OPEN = {"type": "text", "text": "<observation>\n"}
_CLOSE = {"type": "text", "text": "\n</observation>"}


def _system_text(body: dict[str, Any]) -> str:
    messages = body.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    content = first.get("content") if isinstance(first, dict) else None
    return content if isinstance(content, str) else ""


def h_structured_problem(body: dict[str, Any]) -> str | None:
    """What in ``body`` breaks H's structured-output contract, or None."""
    kwargs = body.get("chat_template_kwargs")
    system_text = _system_text(body)
    if kwargs is None and ("/think" in system_text or "/no_think" in system_text):
        pass  # a template that reads the switch in the system prompt (Holotron-12B's base)
    elif not isinstance(kwargs, dict) or kwargs.get("enable_thinking") is not True:
        return "thinking is off for an agent request (chat_template_kwargs.enable_thinking)"
    outputs = body.get("structured_outputs")
    schema = outputs.get("json") if isinstance(outputs, dict) else None
    if not isinstance(schema, dict):
        return "no structured_outputs schema"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "no messages"
    system = messages[0]
    content = system.get("content") if isinstance(system, dict) else None
    if not isinstance(system, dict) or system.get("role") != "system" or not isinstance(
            content, str):
        return "the first message is not the system prompt"
    block = _BLOCK.search(content)
    if block is None:
        return "the system prompt does not end with the <output_format> block"
    try:
        copied = json.loads(block.group("schema"))
    except json.JSONDecodeError:
        return "the <output_format> block's schema is not JSON"
    if copied != schema:
        return "the <output_format> schema is not the structured_outputs schema"
    for index, message in enumerate(messages[1:], 1):
        problem = _message_problem(index, message)
        if problem is not None:
            return problem
    return None


def _message_problem(index: int, message: Any) -> str | None:
    role = message.get("role") if isinstance(message, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if role == "tool":
        return f"message {index} is a tool-role message where H wants a <tool_output>"
    if role == "assistant":
        try:
            said = json.loads(content) if isinstance(content, str) else None
        except json.JSONDecodeError:
            said = None
        if not isinstance(said, dict) or not {"thought", "tool_call"} <= set(said) or set(
                said) - {"note", "thought", "tool_call"}:
            return f"message {index} (assistant) is not a parsed step's JSON"
        return None
    if role != "user":
        return f"message {index} has role {role!r}"
    if index == 1:
        return None if isinstance(content, str) and content.startswith("Task: ") else (
            "the task is not the first user message")
    if isinstance(content, str):
        return None if _RESULT.match(content) else (
            f"message {index} is neither an observation nor a <tool_output>/<error>")
    if (not isinstance(content, list) or len(content) != 3 or content[0] != _OPEN
            or content[2] != _CLOSE):
        return f"message {index} is not an <observation> wrapper"
    return None


def h_native_problem(body: dict[str, Any]) -> str | None:
    """What in ``body`` breaks H's native function-calling contract, or None: its tools with
    ``tool_choice: "required"``, no structured outputs (the two do not mix), thinking on, the
    system prompt without the structured block, and each past step an assistant message with
    exactly one tool call answered by the ``tool`` message of its id, right after it."""
    kwargs = body.get("chat_template_kwargs")
    if not isinstance(kwargs, dict) or kwargs.get("enable_thinking") is not True:
        return "thinking is off for an agent request (chat_template_kwargs.enable_thinking)"
    if not body.get("tools"):
        return "no tools: the native contract declares its tools as functions"
    if body.get("tool_choice") != "required":
        return f"tool_choice is {body.get('tool_choice')!r}, not 'required'"
    if body.get("structured_outputs") is not None:
        return "structured_outputs in a native tool-call request (H: pick one mode per run)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "no messages"
    system = messages[0]
    content = system.get("content") if isinstance(system, dict) else None
    if not isinstance(system, dict) or system.get("role") != "system" or not isinstance(
            content, str):
        return "the first message is not the system prompt"
    if "<output_format>" in content:
        return "the system prompt carries the structured contract's <output_format> block"
    for index, message in enumerate(messages[1:], 1):
        problem = _native_message_problem(index, message, messages)
        if problem is not None:
            return problem
    return None


def _native_message_problem(index: int, message: Any, messages: list[Any]) -> str | None:
    role = message.get("role") if isinstance(message, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if role == "assistant":
        calls = message.get("tool_calls")
        if not isinstance(calls, list) or len(calls) != 1:
            return f"message {index} (assistant) does not hold exactly one tool call"
        following = messages[index + 1] if index + 1 < len(messages) else None
        if not isinstance(following, dict) or following.get("role") != "tool" or following.get(
                "tool_call_id") != calls[0].get("id"):
            return f"message {index}'s tool call is not answered by the next, a tool message"
        if not isinstance(content, str):
            return f"message {index} (assistant) has no text content (what to remember)"
        return None
    if role == "tool":
        return None if isinstance(content, str) else f"message {index} (tool) has no text"
    if role != "user":
        return f"message {index} has role {role!r}"
    if index == 1:
        return None if isinstance(content, str) and content.startswith("Task: ") else (
            "the task is not the first user message")
    if isinstance(content, str):
        return (f"message {index} is a user text where the native contract wants a tool "
                "message" if _RESULT.match(content) else
                f"message {index} is neither an observation nor a tool result")
    if (not isinstance(content, list) or len(content) != 3 or content[0] != _OPEN
            or content[2] != _CLOSE):
        return f"message {index} is not an <observation> wrapper"
    return None
