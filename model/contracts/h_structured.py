"""H's structured-output contract (docs/contract.md): one constrained JSON step per answer,
``{"note": str|null, "thought": str, "tool_call": {"tool_name": ..., args}}``.

The chat: the system prompt with the schema appended in an ``<output_format>`` block, the
task, then per step an ``<observation>`` user message (the screenshot, or past the newest
three a placeholder inside the same wrapper), the assistant's parsed JSON and a
``<tool_output>`` (or ``<error>``) user message saying what became of it. The same schema goes
as ``structured_outputs``; reasoning is on, read apart, never sent back.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from model.contracts.base import (
    CodecConfig,
    ContractKind,
    ToolCall,
    Vocabulary,
    invalid,
    reject_inline_thinking,
    tool_result,
    validation_problem,
)
from model.contracts.tools import TOOLS, Tool, from_action, to_action
from model.coords import Convention
from model.prompt import PromptConfig, Turn, check_turns, data_url, sent_step
from model.schema import Step

__all__ = [
    "PLACEHOLDER",
    "HStructuredCodec",
    "decode_tool",
    "h_system_prompt",
    "observation",
    "step_schema",
    "tool_message",
]

#: What stands for a screenshot no longer sent, inside its observation wrapper.
PLACEHOLDER = "[Image omitted by context cleaning]"

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@functools.cache
def step_model(vocabulary: Vocabulary) -> type[BaseModel]:
    """The step of ``vocabulary`` as a pydantic model (its schema is what is sent)."""
    union: Any = Union[tuple(TOOLS[vocabulary].values())]  # noqa: UP007
    return create_model(
        "Step",
        __config__=ConfigDict(extra="forbid", title="Step"),
        note=(str | None, Field(default=None, description=(
            "Facts from this screen that later steps need (values, names, places); null "
            "when nothing new"))),
        thought=(str, Field(description="A one-line plan for this step")),
        tool_call=(union, Field(description="The one tool to call")),
    )


@functools.cache
def _schema_text(vocabulary: Vocabulary) -> str:
    return json.dumps(step_model(vocabulary).model_json_schema())


def step_schema(vocabulary: Vocabulary) -> dict[str, Any]:
    """The step's JSON schema as pydantic writes it: sent as is in both copies."""
    loaded: dict[str, Any] = json.loads(_schema_text(vocabulary))
    return loaded


def output_format_block(vocabulary: Vocabulary) -> str:
    """The ``<output_format>`` block appended to the system prompt."""
    return f"\n<output_format>\n```json\n{_schema_text(vocabulary)}\n```\n</output_format>\n"


_INTRO = """\
You are a computer-use agent working on the person's desktop on their behalf. At each step \
you see the screen and choose one tool call; after it runs you are told what happened and \
see the screen again.

Rules:
"""

_JSON_STEP = """\
- One tool call per step. Each step is one JSON object with "note", "thought" and \
"tool_call".
- "note" is your only lasting memory: only the last few screenshots are kept. Before the \
screen changes, write there every fact you will need later (values, names, where things \
are). Set it to null when there is nothing new.
- "thought" is a one-line plan for this step. If an action had no effect, try another way.
"""

# The native-tools contract: the answer is the call alone (with tool_choice "required" vLLM
# lets the model write nothing else, docs/contract.md), so there is no note or thought.
_NATIVE_STEP = """\
- One tool call per step: call exactly one of the tools you are given.
- Only the last few screenshots are kept: earlier steps are remembered by the calls you \
made and what each returned. If an action had no effect, try another way.
"""

_RULES = """\
- Tools that point at the screen name their target in words ("element") and aim at its \
centre. Coordinates x and y are integers from 0 to 1000 relative to the screenshot: (0, 0) \
is its top-left corner, (1000, 1000) its bottom-right.
- Typing goes to the focused element: click the field first if it is not focused.
- Use "ask_user" when you are blocked, when the task is ambiguous, and before anything risky \
or hard to undo (sending, paying, deleting, installing, changing settings or permissions) \
that the task does not clearly ask for. Never enter passwords, card numbers or other \
credentials unless the task tells you to.
- Use "wait" when the screen is still changing.
- When the task is done, call "answer" with the result or a short summary of what you did.
"""


@functools.lru_cache(maxsize=16)
def h_system_prompt(vocabulary: Vocabulary, config: PromptConfig, *, block: bool = True,
                    switch: str = "") -> str:
    """The system prompt of a run: a pure function of its arguments, the same at every step.
    ``switch`` (the thinking switch of a template that reads it here) comes before the
    ``<output_format>`` block, which ``block`` appends and H wants last (the native-tools
    contract has none)."""
    today = config.today
    text = (
        _INTRO
        + (_JSON_STEP if block else _NATIVE_STEP)
        + _RULES
        + f"\nThe screenshot shows the whole screen at {config.sent_width}x"
        f"{config.sent_height} pixels.\n"
        + f"Today is {_WEEKDAYS[today.weekday()]} {today.isoformat()}.\n"
        + (f"{switch}\n" if switch else "")
    )
    return text + output_format_block(vocabulary) if block else text


def h_messages(system: str, task: str, turns: Sequence[Turn], config: PromptConfig,
               vocabulary: Vocabulary,
               after: Callable[[Turn, dict[str, Any]], list[dict[str, Any]]],
               ) -> list[dict[str, Any]]:
    """H's chat layout, shared by both H contracts: the system prompt, the task, then each
    turn's observation followed by what ``after`` makes of its step as the model said it
    (:func:`said_step`) and its result; the current observation last."""
    _check(turns, config)
    first_shown = len(turns) - config.max_images
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": f"Task: {task.strip()}"},
    ]
    for index, turn in enumerate(turns):
        messages.append(observation(turn, index >= first_shown))
        if turn.step is None:
            break
        messages += after(turn, said_step(turn, vocabulary))
    return messages


def observation(turn: Turn, shown: bool) -> dict[str, Any]:
    """The observation user message of ``turn``: its screenshot, or the placeholder."""
    inside: dict[str, Any] = (
        {"type": "image_url", "image_url": {"url": data_url(turn.image, turn.mime)}}
        if shown else {"type": "text", "text": PLACEHOLDER}
    )
    return {"role": "user", "content": [{"type": "text", "text": "<observation>\n"}, inside,
                                        {"type": "text", "text": "\n</observation>"}]}


def tool_message(name: str, turn: Turn) -> dict[str, Any]:
    """The user message after an executed step: a ``<tool_output>`` or an ``<error>``."""
    result = tool_result(turn)
    tag = "error" if result.error else "tool_output"
    return {"role": "user", "content": f'<{tag} tool="{name}">\n{result.text}\n</{tag}>'}


def said_step(turn: Turn, vocabulary: Vocabulary) -> dict[str, Any]:
    """The assistant turn of a past step as the model wrote it (parsed): its own step when the
    person edited it, a secret's text and keys hidden (model.prompt.sent_step)."""
    shown = Turn(turn.step_no, b"", "", turn.proposed or turn.step, None, turn.secret)
    step = sent_step(shown)
    assert step is not None
    return {"note": step.note or None, "thought": step.thought,
            "tool_call": from_action(step.action, vocabulary)}


def decode_tool(vocabulary: Vocabulary, data: Any, where: str = "tool_call") -> Tool:
    """A tool call of ``vocabulary`` from parsed JSON, or ValueError in a few words."""
    if not isinstance(data, dict):
        raise ValueError(f"{where} is not an object")
    name = data.get("tool_name")
    tools = TOOLS[vocabulary]
    if not isinstance(name, str) or name not in tools:
        known = ", ".join(tools)
        raise ValueError(f"unknown tool {name!r} in {where} (the tools are: {known})")
    try:
        return tools[name].model_validate(data)
    except ValidationError as exc:
        raise ValueError(validation_problem(exc, f"{where}")) from exc


@dataclass(frozen=True)
class HCodecBase:
    """What both of H's contracts take from their config."""

    config: CodecConfig = field(default_factory=CodecConfig)

    @property
    def vocabulary(self) -> Vocabulary:
        return self.config.vocabulary

    @property
    def max_tokens(self) -> int:
        return self.config.max_tokens


@dataclass(frozen=True)
class HStructuredCodec(HCodecBase):
    """H's structured-output contract in one of its vocabularies (see the module doc)."""

    @property
    def kind(self) -> ContractKind:
        return ContractKind.H_STRUCTURED

    def system_prompt(self, config: PromptConfig) -> str:
        return h_system_prompt(self.vocabulary, config, switch=self.config.system_switch_text())

    def messages(
        self, task: str, turns: Sequence[Turn], config: PromptConfig
    ) -> list[dict[str, Any]]:
        def after(turn: Turn, said: dict[str, Any]) -> list[dict[str, Any]]:
            # The parsed step as compact JSON, the shape the schema makes the model write.
            return [{"role": "assistant",
                     "content": json.dumps(said, separators=(",", ":"), ensure_ascii=False)},
                    tool_message(said["tool_call"]["tool_name"], turn)]

        return h_messages(self.system_prompt(config), task, turns, config, self.vocabulary,
                          after)

    def output_schema(self) -> dict[str, Any]:
        return step_schema(self.vocabulary)

    def body(
        self,
        model: str,
        messages: list[dict[str, Any]],
        *,
        schema: Mapping[str, Any] | None = None,
        retry: bool = False,
    ) -> dict[str, Any]:
        return {
            "model": model,
            "stream": True,
            "messages": messages,
            "max_tokens": self.config.max_tokens,
            "stream_options": {"include_usage": True},
            **self.config.sampling(retry=retry),
            "structured_outputs": {"json": dict(schema) if schema else self.output_schema()},
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
        def fail(problem: str) -> Exception:
            return invalid(content, problem, finish_reason, self.config.max_tokens)

        thinking = reject_inline_thinking(content)
        if thinking is not None:
            raise fail(thinking)
        try:
            data = json.loads(content)
        except json.JSONDecodeError as exc:
            raise fail(f"not valid JSON ({exc.msg})") from exc
        except RecursionError as exc:  # nested past the parser's depth: not a step either
            raise fail("not valid JSON (nested too deeply)") from exc
        if not isinstance(data, dict):
            raise fail("the answer is not a JSON object")
        extra = sorted(set(data) - {"note", "thought", "tool_call"})
        if extra:
            raise fail(f"unexpected key(s) {', '.join(map(repr, extra))} (a step has note, "
                       "thought and tool_call)")
        for key in ("thought", "tool_call"):
            if key not in data:
                raise fail(f"the step has no {key!r}")
        note, thought = data.get("note"), data["thought"]
        if not isinstance(thought, str):
            raise fail("thought is not a string")
        if note is not None and not isinstance(note, str):
            raise fail("note is neither a string nor null")
        try:
            action = to_action(decode_tool(self.vocabulary, data["tool_call"]))
            return Step(note=note or "", thought=thought, action=action)
        except ValidationError as exc:
            raise fail(validation_problem(exc, "tool_call")) from exc
        except ValueError as exc:
            raise fail(str(exc)) from exc


def _check(turns: Sequence[Turn], config: PromptConfig) -> None:
    check_turns(turns, config.max_images)
    if config.convention is not Convention.NORM1000:
        raise ValueError("H's contracts speak integers in [0, 1000]: the run's convention must "
                         f"be norm1000, not {config.convention.value}")
