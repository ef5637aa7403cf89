"""H's native function-calling contract (Holo3.1; docs/contract.md, "Native tools").

The same tools as the structured contract, declared as OpenAI function definitions with
``tool_choice: "required"``; the model answers with one ``tool_calls`` entry. Each past step
is the assistant message (its content: what the model chose to remember) with its tool call,
then a ``tool`` message keyed by the call's id saying what happened. Observations, the image
budget, reasoning and sampling are the structured contract's.

Streaming: the client puts the streamed ``tool_calls`` deltas together by index
(model/tool_calls.py) and hands the calls to :meth:`HNativeToolsCodec.decode`. Under vLLM's
required tool choice the answer carries no content, so a self-hosted model's note and thought
are empty (docs/contract.md, "What vLLM does to the note"). Chosen by the Holo3.1 ``-tools``
profiles (model/profiles.py).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from model.contracts.base import (
    CodecConfig,
    ContractKind,
    ToolCall,
    Vocabulary,
    invalid,
    reject_inline_thinking,
    tool_result,
)
from model.contracts.h_structured import (
    HCodecBase,
    decode_tool,
    h_messages,
    h_system_prompt,
)
from model.contracts.tools import TOOLS, to_action
from model.prompt import PromptConfig, Turn
from model.schema import Step

__all__ = ["HNativeToolsCodec", "call_id", "function_tools"]


@functools.cache
def _tools_text(vocabulary: Vocabulary) -> str:
    tools = []
    for name, model in TOOLS[vocabulary].items():
        schema = model.model_json_schema()
        schema["properties"].pop("tool_name")
        schema["required"] = [r for r in schema.get("required", []) if r != "tool_name"]
        schema.pop("title", None)
        description = schema.pop("description", None) or f"The {name} tool."
        tools.append({"type": "function",
                      "function": {"name": name, "description": description,
                                   "parameters": schema}})
    return json.dumps(tools)


def function_tools(vocabulary: Vocabulary) -> list[dict[str, Any]]:
    """The vocabulary's tools as OpenAI function definitions (arguments without
    ``tool_name``: the function's name is the tool's)."""
    loaded: list[dict[str, Any]] = json.loads(_tools_text(vocabulary))
    return loaded


def call_id(turn: Turn) -> str:
    """The id the history gives a past step's call: stable from step to step, so the prompt
    prefix stays the same (the model's own ids are not kept in a turn)."""
    return f"call_{turn.step_no}"


@dataclass(frozen=True)
class HNativeToolsCodec(HCodecBase):
    """H's native function-calling contract (see the module doc)."""

    config: CodecConfig = field(default_factory=lambda: CodecConfig(
        contract=ContractKind.H_NATIVE_TOOLS))

    @property
    def kind(self) -> ContractKind:
        return ContractKind.H_NATIVE_TOOLS

    def system_prompt(self, config: PromptConfig) -> str:
        return h_system_prompt(self.vocabulary, config, block=False,
                               switch=self.config.system_switch_text())

    def messages(
        self, task: str, turns: Sequence[Turn], config: PromptConfig
    ) -> list[dict[str, Any]]:
        def after(turn: Turn, said: dict[str, Any]) -> list[dict[str, Any]]:
            arguments = {k: v for k, v in said["tool_call"].items() if k != "tool_name"}
            result = tool_result(turn)
            return [{
                "role": "assistant",
                "content": said["note"] or "",
                "tool_calls": [{"id": call_id(turn), "type": "function", "function": {
                    "name": said["tool_call"]["tool_name"],
                    "arguments": json.dumps(arguments, separators=(",", ":"),
                                            ensure_ascii=False)}}],
            }, {"role": "tool", "tool_call_id": call_id(turn),
                "content": f"error: {result.text}" if result.error else result.text}]

        return h_messages(self.system_prompt(config), task, turns, config, self.vocabulary,
                          after)

    def output_schema(self) -> None:
        return None

    def body(
        self,
        model: str,
        messages: list[dict[str, Any]],
        *,
        schema: Mapping[str, Any] | None = None,
        retry: bool = False,
    ) -> dict[str, Any]:
        if schema is not None:
            raise ValueError("the native-tools contract sends no structured output schema")
        return {
            "model": model,
            "stream": True,
            "messages": messages,
            "max_tokens": self.config.max_tokens,
            "stream_options": {"include_usage": True},
            **self.config.sampling(retry=retry),
            "tools": function_tools(self.vocabulary),
            "tool_choice": "required",
            **self.config.reasoning(),
        }

    def decode(
        self,
        content: str,
        *,
        reasoning: str = "",
        finish_reason: str | None = None,
        tool_calls: Sequence[ToolCall] = (),
    ) -> Step:
        """The step of one tool call; the content (what to remember) is its note and its
        thought."""
        def fail(problem: str) -> Exception:
            raw = content + "".join(f"\n{c.name}({c.arguments})" for c in tool_calls)
            return invalid(raw, problem, finish_reason, self.config.max_tokens)

        thinking = reject_inline_thinking(content)
        if thinking is not None:
            raise fail(thinking)
        if len(tool_calls) != 1:
            raise fail(f"the answer calls {len(tool_calls)} tools, not one")
        call = tool_calls[0]
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise fail(f"the arguments of {call.name!r} are not valid JSON ({exc.msg})") from exc
        except RecursionError as exc:  # nested past the parser's depth
            raise fail(f"the arguments of {call.name!r} are nested too deeply") from exc
        if not isinstance(arguments, dict) or "tool_name" in arguments:
            raise fail(f"the arguments of {call.name!r} are not an object of arguments")
        try:
            tool = decode_tool(self.vocabulary, {"tool_name": call.name, **arguments},
                               where=call.name)
            words = content.strip()
            return Step(note=words, thought=words, action=to_action(tool))
        except ValueError as exc:
            raise fail(str(exc)) from exc
