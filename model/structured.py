"""The JSON schema we send to vLLM for structured output, with every reference inlined.

Some of vLLM's grammar backends do not resolve ``$ref``, and a schema they cannot read is at
best ignored (the output is then silently unconstrained). So the schema we send is
self-contained: :func:`inline_refs` replaces every ``{"$ref": "#/$defs/Name"}`` with a copy of
the definition and drops ``$defs``.

:func:`step_output_schema` then adapts pydantic's Step schema to constrained decoding:

* the ``action`` tag is made required and listed first in every action variant. pydantic
  leaves it optional (it has a default), which lets a grammar produce an object with no tag
  that pydantic's discriminated union then rejects; and grammar backends emit properties in
  schema order, so tag-first makes the model commit to the kind of action before its fields;
* with the tag required the variants are mutually exclusive, so ``oneOf`` is rewritten as the
  equivalent ``anyOf``, which every backend supports (guidance only approximates ``oneOf``);
* the OpenAPI ``discriminator`` keyword and the ``title`` annotations are dropped: validators
  ignore them, and the schema is also printed in the system prompt, where they are noise.

The result accepts exactly what :class:`model.schema.Step` accepts for well-typed JSON (see
tests/model/test_schema.py), restricted to the actions of holodesk's own dialect
(:class:`LegacyStep`): the actions added for H's vocabularies (docs/contract.md) are spoken
only by the H codecs (model/contracts/), so the schema this dialect sends does not grow.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from model.schema import (
    Action,
    Answer,
    AskUser,
    Click,
    DoubleClick,
    Drag,
    Hotkey,
    Move,
    Scroll,
    Step,
    Type,
    Wait,
    _Action,
)

__all__ = [
    "LEGACY_ACTIONS",
    "LegacyStep",
    "RecursiveSchemaError",
    "inline_refs",
    "step_json",
    "step_output_schema",
    "step_output_schema_json",
]

_DEFS_PREFIXES = ("#/$defs/", "#/definitions/")

# Keywords whose value is a map of name -> subschema.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
# Keywords whose value is a list of subschemas.
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
# Keywords whose value is one subschema ("items" may also be a list in older drafts).
_SCHEMA_SINGLES = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
    }
)
# Keywords that only annotate: merging them next to an inlined definition changes no outcome.
_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
    }
)


class _LegacyHotkey(_Action):
    # The chord as holodesk's own dialect has it: no repeat count.
    action: Literal["hotkey"] = "hotkey"
    keys: list[str] = Field(min_length=1, max_length=5)


#: The actions holodesk's own dialect speaks (the legacy contract).
LEGACY_ACTIONS = (Click, DoubleClick, Move, Drag, Scroll, Type, Hotkey, Wait, AskUser, Answer)

_LegacyAction = Annotated[
    Click | DoubleClick | Move | Drag | Scroll | Type | _LegacyHotkey | Wait | AskUser | Answer,
    Field(discriminator="action"),
]


class LegacyStep(BaseModel):
    """One answer of the model: what to remember, why, and what to do next."""

    # The docstring above is Step's: it is the schema's description, sent to the model.
    model_config = ConfigDict(extra="forbid", frozen=True)

    note: str = Field(default="", description="Facts worth remembering, or empty")
    thought: str = Field(description="Short reasoning about the next step")
    action: _LegacyAction

    def to_step(self) -> Step:
        """The step in holodesk's action model."""
        said = self.action
        action: Action = Hotkey(keys=said.keys) if isinstance(said, _LegacyHotkey) else said
        return Step(note=self.note, thought=self.thought, action=action)


def is_legacy(action: Action) -> bool:
    """Whether holodesk's own dialect can say ``action`` (a chord pressed once, no newer kind)."""
    if isinstance(action, Hotkey):
        return action.repeat == 1
    return isinstance(action, LEGACY_ACTIONS)


class RecursiveSchemaError(ValueError):
    """The schema refers to itself; it cannot be inlined into a finite schema."""


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` with every local ``$ref`` replaced by its definition, no ``$defs``.

    References must point into the root's ``$defs`` (or the older ``definitions``). A ``$ref``
    with sibling keywords keeps them: merged in when they are mere annotations, otherwise the
    definition goes into an ``allOf`` next to them so the meaning stays a conjunction. The
    ``mapping`` of an OpenAPI ``discriminator`` is dropped because it names definitions that no
    longer exist (its ``propertyName`` stays).

    Raises :class:`RecursiveSchemaError` on a definition that reaches itself, and
    ``ValueError`` on a reference this function cannot resolve (remote, or to a missing name).
    The input is not modified.
    """
    defs: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        found = schema.get(key, {})
        if not isinstance(found, dict):
            raise ValueError(f"{key} must be an object, got {type(found).__name__}")
        defs.update(found)
    return _inline_dict(schema, defs, ())


def _inline(node: Any, defs: dict[str, Any], stack: tuple[str, ...]) -> Any:
    # A subschema is an object or a boolean; anything else is data and is copied as is.
    if isinstance(node, dict):
        return _inline_dict(node, defs, stack)
    return copy.deepcopy(node)


def _inline_dict(
    node: dict[str, Any], defs: dict[str, Any], stack: tuple[str, ...]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("$defs", "definitions"):
            # Only reference targets; nested ones cannot be referred to by #/$defs/<name>.
            continue
        if key == "$ref":
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _inline(sub, defs, stack) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_inline(sub, defs, stack) for sub in value]
        elif key in _SCHEMA_SINGLES:
            if isinstance(value, list):
                out[key] = [_inline(sub, defs, stack) for sub in value]
            else:
                out[key] = _inline(value, defs, stack)
        elif key == "discriminator" and isinstance(value, dict):
            out[key] = {k: copy.deepcopy(v) for k, v in value.items() if k != "mapping"}
        else:
            # Data keywords (const, enum, default, examples, ...) are copied verbatim: a "$ref"
            # key inside an example is data, not a reference.
            out[key] = copy.deepcopy(value)
    if "$ref" not in node:
        return out
    target = _resolve(node["$ref"], defs, stack)
    if all(key in _ANNOTATIONS for key in out):
        if isinstance(target, bool):
            return {"allOf": [target], **out} if out else _bool_schema(target)
        return {**target, **out}
    return {"allOf": [target], **out}


def _resolve(ref: Any, defs: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if not isinstance(ref, str):
        raise ValueError(f"$ref must be a string, got {ref!r}")
    name = next((ref[len(p) :] for p in _DEFS_PREFIXES if ref.startswith(p)), None)
    if name is None or "/" in name:
        raise ValueError(f"cannot inline $ref {ref!r}: only #/$defs/<name> can be inlined")
    name = name.replace("~1", "/").replace("~0", "~")
    if name not in defs:
        raise ValueError(f"$ref {ref!r} names a definition that does not exist")
    if name in stack:
        cycle = " -> ".join((*stack[stack.index(name) :], name))
        raise RecursiveSchemaError(f"recursive schema cannot be inlined: {cycle}")
    return _inline(defs[name], defs, (*stack, name))


def _bool_schema(value: bool) -> dict[str, Any]:
    # A boolean definition referenced alone: express it as an equivalent object schema.
    return {} if value else {"not": {}}


@functools.cache
def _build_step_output_schema() -> dict[str, Any]:
    schema: dict[str, Any] = _strip_titles(inline_refs(LegacyStep.model_json_schema()))
    action = schema["properties"]["action"]
    variants = action.pop("oneOf")
    action.pop("discriminator", None)
    tagged: list[dict[str, Any]] = []
    for variant in variants:
        props = variant["properties"]
        tag = props.pop("action")
        tag.pop("default", None)  # a const needs no default; one line less in the prompt
        variant["properties"] = {"action": tag, **props}
        variant["required"] = ["action", *(r for r in variant.get("required", []) if r != "action")]
        tagged.append(variant)
    action["anyOf"] = tagged
    return schema


def _strip_titles(node: Any) -> Any:
    # Only schema positions are walked: a property *named* "title" under "properties" stays.
    if isinstance(node, list):
        return [_strip_titles(sub) for sub in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS or key in _SCHEMA_SINGLES:
            out[key] = _strip_titles(value)
        else:
            out[key] = value
    return out


def step_output_schema() -> dict[str, Any]:
    """The self-contained JSON schema of a step, for vLLM's ``structured_outputs``.

    Built once per process (it goes with every request); each call returns a fresh copy so a
    caller editing it cannot corrupt the next request.
    """
    return copy.deepcopy(_build_step_output_schema())


@functools.cache
def step_output_schema_json() -> str:
    """:func:`step_output_schema` as compact JSON text, identical on every call."""
    return json.dumps(_build_step_output_schema(), separators=(",", ":"), ensure_ascii=False)


def step_json(step: Step) -> str:
    """A parsed step as compact JSON, keys in the order of :func:`step_output_schema`.

    This is what we push back as the assistant turn: the same shape the grammar makes the
    model write (action tag first), never the raw text the model produced; a step this dialect
    cannot say (:func:`is_legacy`) is a ValueError. Whole numbers are
    written without ".0" (pydantic stores coordinates as floats), so a norm1000 history shows
    the integers the model is asked for.
    """
    if not is_legacy(step.action):
        raise ValueError(f"holodesk's own dialect has no {step.action.action!r} action")
    data = step.dump()
    action = {k: _plain_number(v) for k, v in data["action"].items()}
    tag_first = {"action": action["action"], **{k: v for k, v in action.items() if k != "action"}}
    ordered = {"note": data["note"], "thought": data["thought"], "action": tag_first}
    return json.dumps(ordered, separators=(",", ":"), ensure_ascii=False)


def _plain_number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
