"""What every contract shares: the codec's configuration, the Codec protocol, the outcome of
a step in the words a tool result uses, and the answer's failures as :class:`InvalidOutput`.

A contract (docs/contract.md) is how holodesk speaks to one family of models: the messages, the
request body and how an answer becomes a :class:`model.schema.Step`. The policy, the executor
and everything past the model see only holodesk's own action model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from pydantic import ValidationError

from model.errors import InvalidOutput
from model.prompt import (
    OUTCOME_DONE,
    OUTCOME_EDITED,
    OUTCOME_REFUSED,
    OUTCOME_SKIPPED,
    PromptConfig,
    Turn,
    describe_action,
)
from model.schema import Step

__all__ = [
    "H_VOCABULARIES",
    "Codec",
    "CodecConfig",
    "ContractKind",
    "ToolCall",
    "ToolResult",
    "Vocabulary",
    "invalid",
    "tool_result",
    "validation_problem",
]


class ContractKind(StrEnum):
    """Which contract a codec speaks (the same values as the model profiles' contract)."""

    H_STRUCTURED = "h_structured"  # one constrained JSON step: note, thought, tool_call
    H_NATIVE_TOOLS = "h_native_tools"  # OpenAI tools, tool_choice "required" (Holo3.1)
    LEGACY = "legacy"  # holodesk's own dialect, as before issue 22


class Vocabulary(StrEnum):
    """Which tool names and arguments an H contract uses (docs/contract.md, "Tools")."""

    HUB = "hub"  # H's developer hub: click, write, answer and the wider toolbox
    HOLO_NANO = "holo_nano"  # the holo-nano harness: the *_desktop tools
    HOLODESK = "holodesk"  # holodesk's own actions (type{text}, answer{text}): legacy only


#: The vocabularies of H's contracts (HOLODESK is the legacy contract's own).
H_VOCABULARIES: tuple[Vocabulary, ...] = (Vocabulary.HUB, Vocabulary.HOLO_NANO)


@dataclass(frozen=True)
class CodecConfig:
    """What a codec needs to know of the model, filled from its profile by the caller.

    ``thinking`` turns the model's reasoning on for agent steps through the chat template
    switch ``thinking_switch`` (``enable_thinking`` on Qwen-based and Nemotron-based H models;
    Holo2's template reads ``thinking``); ``reasoning_effort`` None leaves the field out.
    ``retry_temperature`` None retries an invalid answer at ``temperature``; ``top_p`` None
    leaves it out. The legacy codec reads only the sampling fields.
    """

    contract: ContractKind = ContractKind.H_STRUCTURED
    vocabulary: Vocabulary = Vocabulary.HUB
    thinking: bool = True
    thinking_switch: str | None = "enable_thinking"
    reasoning_effort: str | None = "medium"
    #: For a model whose template reads the switch in the system prompt instead (Nemotron
    #: Nano VL, the Holotron-12B base): the texts for on and off, appended to the prompt.
    system_switch: tuple[str, str] | None = None
    temperature: float = 0.8
    retry_temperature: float | None = None
    top_p: float | None = 0.95
    max_tokens: int = 4096

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if self.thinking_switch is not None and not self.thinking_switch:
            raise ValueError("thinking_switch must name the chat template's switch, or be None")

    def sampling(self, *, retry: bool) -> dict[str, Any]:
        """``temperature`` (and ``top_p``) for an attempt, as request fields."""
        temperature = self.temperature
        if retry and self.retry_temperature is not None:
            temperature = self.retry_temperature
        fields: dict[str, Any] = {"temperature": temperature}
        if self.top_p is not None:
            fields["top_p"] = self.top_p
        return fields

    def system_switch_text(self) -> str:
        """The system prompt's thinking switch, where the template reads it there ("" else)."""
        if self.system_switch is None:
            return ""
        return self.system_switch[0 if self.thinking else 1]

    def reasoning(self) -> dict[str, Any]:
        """The reasoning switch and effort, as request fields."""
        if self.thinking_switch is None:
            return {}
        fields: dict[str, Any] = {"chat_template_kwargs": {self.thinking_switch: self.thinking}}
        if self.thinking and self.reasoning_effort is not None:
            fields["reasoning_effort"] = self.reasoning_effort
        return fields


@dataclass(frozen=True)
class ToolCall:
    """One function call of a native-tools answer, as the server returned it."""

    id: str
    name: str
    arguments: str  # JSON text, as the OpenAI format carries it


class Codec(Protocol):
    """One contract: the request it builds and how its answer becomes a step."""

    @property
    def kind(self) -> ContractKind: ...

    @property
    def max_tokens(self) -> int:
        """The answer's token budget (the client reads it to tell a full window apart)."""
        ...

    def system_prompt(self, config: PromptConfig) -> str:
        """The system message: a pure function of ``config``, the same at every step."""
        ...

    def messages(
        self, task: str, turns: Sequence[Turn], config: PromptConfig
    ) -> list[dict[str, Any]]:
        """The chat messages for the current step (``turns`` as model.prompt.build_messages
        takes them). Never the model's reasoning, never a secret's text."""
        ...

    def output_schema(self) -> dict[str, Any] | None:
        """The JSON schema sent as structured outputs; None when the contract sends none."""
        ...

    def body(
        self,
        model: str,
        messages: list[dict[str, Any]],
        *,
        schema: Mapping[str, Any] | None = None,
        retry: bool = False,
    ) -> dict[str, Any]:
        """The whole streamed chat request, keys in the order they are sent. ``schema`` None
        is :meth:`output_schema`; ``retry`` says an earlier answer was invalid."""
        ...

    def decode(
        self,
        content: str,
        *,
        reasoning: str = "",
        finish_reason: str | None = None,
        tool_calls: Sequence[ToolCall] = (),
    ) -> Step:
        """The step an answer says, or :class:`InvalidOutput` saying what is wrong with it.
        ``reasoning`` is the reasoning parser's text, read only to report a cut answer."""
        ...


def invalid(raw: str, problem: str, finish_reason: str | None = None,
            max_tokens: int | None = None) -> InvalidOutput:
    """The error for an answer that is not a step (one attempt; the client counts them)."""
    if finish_reason == "length":
        limit = f" of {max_tokens} tokens" if max_tokens else ""
        problem = f"the answer was cut off at the length limit{limit}; {problem}"
    return InvalidOutput(raw, problem)


def validation_problem(exc: ValidationError, prefix: str = "") -> str:
    """A pydantic error in a few words: where and what, the first three."""
    errors = exc.errors(include_url=False)
    if errors and errors[0]["type"] == "json_invalid":
        return f"not valid JSON ({errors[0]['msg']})"
    parts = []
    for error in errors[:3]:
        where = ".".join(str(p) for p in error["loc"])
        where = ".".join(p for p in (prefix, where) if p) or "step"
        parts.append(f"{where}: {error['msg']}")
    more = f" and {len(errors) - 3} more" if len(errors) > 3 else ""
    return "; ".join(parts) + more


_THINK = re.compile(r"^\s*<think>", re.IGNORECASE)


def reject_inline_thinking(content: str) -> str | None:
    """The problem with a content that starts with a ``<think>`` block, else None.

    With the model's reasoning parser the server sends the reasoning apart; a ``<think>`` in
    the content means it runs without one (docs/contract.md, "Reasoning").
    """
    if _THINK.match(content):
        return ("the answer's content holds its <think> reasoning: the server runs without "
                "the model's reasoning parser (see docs/contract.md)")
    return None


@dataclass(frozen=True)
class ToolResult:
    """What a tool result message says about a past step."""

    error: bool  # an <error> rather than a <tool_output>: the action did not run as asked
    text: str


def tool_result(turn: Turn) -> ToolResult:
    """What became of ``turn``'s action, from its outcome (model.prompt's OUTCOME_* texts).

    Done, the person's edit (what ran, a secret's text hidden), refused by the safety policy
    and why, denied (skipped) by the person, failed, not done, or the person's own words.
    """
    outcome = turn.outcome
    if outcome is None:
        return ToolResult(False, "outcome unknown")
    if turn.proposed is not None or outcome == OUTCOME_EDITED:
        assert turn.step is not None
        ran = describe_action(turn.step.action, secret=turn.secret)
        return ToolResult(False, f"{OUTCOME_EDITED}, who changed it to: {ran}")
    if outcome == OUTCOME_DONE:
        return ToolResult(False, OUTCOME_DONE)
    if outcome == OUTCOME_SKIPPED:
        return ToolResult(True, "not done: the person denied this action")
    if outcome.startswith(OUTCOME_REFUSED):
        return ToolResult(True, f"not done: {outcome}")
    if outcome.startswith(("failed", "not done")):
        return ToolResult(True, outcome)
    return ToolResult(False, outcome)
