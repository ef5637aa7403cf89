"""The stand-in server's grammar engine: vLLM's ``structured_outputs`` compiled with llguidance.

vLLM (0.12 and later) turns ``structured_outputs`` into a grammar before it generates a token:
its default ``auto`` backend tries xgrammar first and falls back to guidance (llguidance), and
a constraint neither can compile is a 400 whose message is guidance's: ``"Grammar error: …"``.
The stand-in compiles with llguidance exactly as vLLM's guidance backend does (JSON schemas with
``whitespace_flexible``, no tokenizer for validation) and, where it matters, goes further on
purpose (see :data:`STRICTER_THAN_VLLM`).

The compiled grammar is also how the stand-in keeps a test honest: an answer the grammar would
never have let the model write (keys out of order, a missing tag, a ``<think>`` block before
the JSON, trailing text) is refused by :meth:`Grammar.check` instead of reaching the client.

Uses llguidance's built-in byte tokenizer: one token per byte, no model download.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import llguidance

#: The keys vLLM's ``StructuredOutputsParams`` accepts (0.12 to 0.34); 0.12 also had
#: ``disable_fallback``, which later releases drop silently.
KNOWN_KEYS = frozenset(
    {
        "json",
        "regex",
        "choice",
        "grammar",
        "json_object",
        "disable_any_whitespace",
        "disable_additional_properties",
        "whitespace_pattern",
        "structural_tag",
        "disable_fallback",
    }
)
#: The keys that each name one kind of constraint; exactly one may be given.
CONSTRAINT_KEYS = ("json", "regex", "choice", "grammar", "json_object", "structural_tag")

#: Where the stand-in refuses what vLLM would take; each is a mistake worth a failing test.
STRICTER_THAN_VLLM = (
    "an unknown key inside structured_outputs is a 400 (vLLM drops it silently, so a typo such "
    "as 'json_schema' for 'json' would leave the output unconstrained without a word)",
    "a schema llguidance cannot compile is refused even where xgrammar, tried first by vLLM's "
    "auto backend, would have taken it: holodesk must send schemas both engines accept",
    "structural_tag is refused (holodesk has no use for it; the stand-in does not model it)",
)


class ConstraintError(ValueError):
    """``structured_outputs`` is malformed or cannot be compiled; the message is vLLM's."""


@dataclass(frozen=True)
class Violation:
    """An answer the grammar would not have allowed: where it broke, in a few words."""

    answer: str
    problem: str


class Grammar:
    """One compiled constraint; :meth:`check` says whether a whole answer is in its language."""

    def __init__(self, kind: str, source: str, serialized: str) -> None:
        self.kind = kind  # "json", "regex", "choice", "grammar" or "json_object"
        self.source = source  # the constraint as sent (a schema as compact JSON)
        self._serialized = serialized

    def check(self, answer: str) -> Violation | None:
        """None when the grammar allows ``answer`` as a complete output, else the problem."""
        matcher = llguidance.LLMatcher(_tokenizer(), self._serialized, log_level=0)
        data = answer.encode()
        tokens = _tokenizer().tokenize_bytes(data)
        taken = matcher.try_consume_tokens(tokens)
        if taken == len(tokens) and matcher.is_accepting():
            return None
        if taken < len(tokens):
            # The byte tokenizer has one token per byte: ``taken`` is a byte offset.
            before = data[max(0, taken - 40) : taken].decode(errors="replace")
            after = data[taken : taken + 12].decode(errors="replace")
            return Violation(answer, f"byte {taken}: after {before!r} the grammar does not "
                                     f"allow {after!r}")
        return Violation(answer, "the answer ends where the grammar does not allow an end")

    def allows_prefix(self, answer: str) -> bool:
        """Whether ``answer`` can start an output of this grammar (a cut-short answer)."""
        matcher = llguidance.LLMatcher(_tokenizer(), self._serialized, log_level=0)
        return bool(matcher.consume_tokens(_tokenizer().tokenize_str(answer)))


_lock = threading.Lock()
_TOKENIZER: list[llguidance.LLTokenizer] = []


def _tokenizer() -> llguidance.LLTokenizer:
    with _lock:
        if not _TOKENIZER:
            _TOKENIZER.append(llguidance.LLTokenizer("byte"))
        return _TOKENIZER[0]


@dataclass(frozen=True)
class Constraint:
    """One kind of constraint and its spec, as a request's ``structured_outputs`` gives it."""

    kind: str
    spec: Any


def read_constraint(value: object, *, legacy: bool = False) -> Constraint | None:
    """Read a request's ``structured_outputs`` as vLLM's request model does.

    These checks come before any generation (a 400 even for a streamed request). None: no
    constraint, which vLLM 0.12 (``legacy``) accepts and later releases refuse.
    """
    if not isinstance(value, Mapping):
        raise ConstraintError(
            "1 validation error:\n  {'type': 'dataclass_type', 'loc': "
            "'body.structured_outputs', 'msg': 'Input should be a dictionary or an instance "
            "of StructuredOutputsParams'}"
        )
    unknown = sorted(set(value) - KNOWN_KEYS)
    if unknown:
        raise ConstraintError(
            f"structured_outputs has unknown key(s) {unknown}; vLLM would drop them silently "
            f"(stand-in: stricter than vLLM). Known keys: {sorted(KNOWN_KEYS)}"
        )
    given = [key for key in CONSTRAINT_KEYS if value.get(key) is not None]
    if not given:
        if legacy:
            return None
        raise ConstraintError(
            "You must use one kind of structured outputs constraint but none are specified: "
            f"{dict(value)!r}"
        )
    if len(given) > 1:
        if set(given) <= {"json", "regex", "choice"}:
            raise ConstraintError(
                "You can only use one kind of constraints for structured outputs "
                "('json', 'regex' or 'choice')."
            )
        raise ConstraintError(
            "You can only use one kind of structured outputs constraint but multiple are "
            f"specified: {dict(value)!r}"
        )
    return Constraint(given[0], value[given[0]])


def compile_constraint(constraint: Constraint) -> Grammar:
    """Compile like vLLM's guidance backend when the request is handed to the engine.

    Raises :class:`ConstraintError` with vLLM's message; vLLM 0.34 reports it inside a stream
    that already answered 200, 0.12 as a 400 before streaming (the caller decides).
    """
    kind, spec = constraint.kind, constraint.spec
    if kind == "structural_tag":
        raise ConstraintError("structural_tag is not supported by the stand-in server")
    if kind == "json_object":
        if spec is not True:
            raise ConstraintError(
                "structured_outputs.json_object must be True if set; omit structured_outputs "
                "to disable structured outputs"
            )
        return _compile("json_object", '{"type": "object"}')
    if kind == "json":
        if isinstance(spec, str):
            if not spec:
                raise ConstraintError("structured_outputs.json cannot be an empty string")
            return _compile("json", spec)
        if isinstance(spec, Mapping):
            return _compile("json", json.dumps(spec, separators=(",", ":"), ensure_ascii=False))
        raise ConstraintError(
            "1 validation error:\n  {'type': 'union_type', 'loc': "
            "'body.structured_outputs.json', 'msg': 'Input should be a valid string or "
            "a valid dictionary'}"
        )
    if kind == "choice":
        if not isinstance(spec, list) or not spec:
            raise ConstraintError(f"Choice '{spec!r}' cannot be an empty list")
        return _compile("choice", json.dumps(spec))
    if not isinstance(spec, str) or not spec:
        raise ConstraintError(f"structured_outputs.{kind} cannot be an empty string")
    return _compile(kind, spec)


@functools.lru_cache(maxsize=64)
def _compile(kind: str, source: str) -> Grammar:
    # Cached: every step of a run sends the same schema, and a bench sends thousands.
    try:
        if kind in ("json", "json_object"):
            # vLLM's guidance backend: whitespace is free unless the server disables it.
            serialized = llguidance.LLMatcher.grammar_from_json_schema(
                source, defaults={"whitespace_flexible": True}
            )
        else:
            serialized = llguidance.grammar_from(kind, source)  # type: ignore[arg-type]
    except (ValueError, KeyError, TypeError) as exc:
        raise ConstraintError(f"Invalid grammar specification: {exc}") from exc
    error = llguidance.LLMatcher.validate_grammar(serialized, None)
    if error:
        raise ConstraintError(f"Grammar error: {error}")
    return Grammar(kind, source, serialized)


def schema_of(value: Any) -> dict[str, Any] | None:
    """The JSON schema of a ``structured_outputs`` value, when it has one (for assertions)."""
    if not isinstance(value, Mapping):
        return None
    spec = value.get("json")
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except json.JSONDecodeError:
            return None
    return dict(spec) if isinstance(spec, Mapping) else None
