"""holodesk's own dialect, exactly as it was before H's contract (docs/holotron.md): kept for
comparison and for servers that serve Holotron-12B as holodesk always drove it.

The messages are model/prompt.py's; the body is the one the client always sent (same keys,
same order, same bytes: tests/model/test_contracts_legacy.py); the schema is
:func:`model.structured.step_output_schema`, the ten actions this dialect has.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from model.contracts.base import ContractKind, ToolCall, validation_problem
from model.errors import InvalidOutput
from model.prompt import PromptConfig, Turn, legacy_messages, system_prompt
from model.schema import Step
from model.structured import LegacyStep, inline_refs, step_output_schema

__all__ = ["LegacyCodec", "clean_answer", "joined", "parse_step"]


@dataclass(frozen=True)
class LegacyCodec:
    """Today's contract: sampling as :class:`model.client.ClientConfig` sets it."""

    temperature: float = 0.0
    retry_temperature: float = 0.5
    answer_tokens: int = 1024

    @property
    def kind(self) -> ContractKind:
        return ContractKind.LEGACY

    @property
    def max_tokens(self) -> int:
        return self.answer_tokens

    def system_prompt(self, config: PromptConfig) -> str:
        return system_prompt(config)

    def messages(
        self, task: str, turns: Sequence[Turn], config: PromptConfig
    ) -> list[dict[str, Any]]:
        return legacy_messages(task, turns, config)

    def output_schema(self) -> dict[str, Any]:
        return step_output_schema()

    def body(
        self,
        model: str,
        messages: list[dict[str, Any]],
        *,
        schema: Mapping[str, Any] | None = None,
        retry: bool = False,
    ) -> dict[str, Any]:
        # Some vLLM grammar backends do not resolve $ref: a self-contained schema (an already
        # inlined one, like model.structured's, comes out the same).
        sent = inline_refs(dict(schema)) if schema is not None else step_output_schema()
        return {
            "model": model,
            "stream": True,
            "messages": messages,
            "max_tokens": self.answer_tokens,
            "stream_options": {"include_usage": True},
            "temperature": self.retry_temperature if retry else self.temperature,
            # Where the SDK's ``create`` merges its ``extra_body``: last.
            "structured_outputs": {"json": sent},
        }

    def decode(
        self,
        content: str,
        *,
        reasoning: str = "",
        finish_reason: str | None = None,
        tool_calls: Sequence[ToolCall] = (),
    ) -> Step:
        text = joined(reasoning, content)
        try:
            return parse_step(text, finish_reason, self.answer_tokens)
        except ValueError as exc:
            raise InvalidOutput(text, str(exc)) from exc


_THINK_BLOCK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def joined(reasoning: str, content: str) -> str:
    """One answer text from a reasoning parser's two streams, as a model without one writes
    it: the thinking in a leading ``<think>`` block (left open while it goes on), then the
    JSON. Everything downstream (the live view, the log, :func:`parse_step`) reads this form."""
    if not reasoning:
        return content
    if not content:
        return f"<think>{reasoning}"
    return f"<think>{reasoning}</think>\n{content}"


def clean_answer(raw: str) -> str:
    """The JSON part of an answer: without a leading ``<think>…</think>`` or a code fence."""
    text = _THINK_BLOCK.sub("", raw, count=1)
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    return text.strip()


def parse_step(raw: str, finish_reason: str | None = None, max_tokens: int | None = None) -> Step:
    """Validate an answer as a step of this dialect, or raise ``ValueError`` with the problem
    in a few words. A leading ``<think>`` block is dropped: this dialect's models (Holotron-12B
    without a reasoning parser) write their thinking there."""
    text = clean_answer(raw)
    if text.lstrip().startswith("<think>"):
        raise ValueError("the answer stopped inside its <think> block")
    try:
        return LegacyStep.model_validate_json(text).to_step()
    except ValidationError as exc:
        problem = validation_problem(exc)
        if finish_reason == "length":
            limit = f" of {max_tokens} tokens" if max_tokens else ""
            problem = f"the answer was cut off at the length limit{limit}; {problem}"
        raise ValueError(problem) from exc
