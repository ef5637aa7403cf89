"""The step schema we send to vLLM: inlined, and agreeing with pydantic's parsing."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema  # a test dependency: missing, it is an error, never a skip
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from model import structured
from model.schema import MAX_COORDINATE, MAX_TYPE_CHARS, Step
from model.structured import (
    RecursiveSchemaError,
    inline_refs,
    step_json,
    step_output_schema,
    step_output_schema_json,
)


def _step(action: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"thought": "t", **top, "action": action}


VALID: list[dict[str, Any]] = [
    _step({"action": "click", "element": "Save button", "x": 932, "y": 880}),
    _step({"action": "click", "element": "Save", "x": 1, "y": 2}, note="remember 42"),
    _step({"action": "click", "element": "File", "x": 10, "y": 20, "button": "right", "clicks": 3}),
    _step({"action": "click", "element": "a", "x": 0.25, "y": 0.75, "button": "middle"}),
    _step({"action": "click", "element": "", "x": 0, "y": 1000, "clicks": 1}),
    _step({"action": "double_click", "element": "Report.pdf", "x": 100, "y": 200}),
    _step({"action": "move", "element": "Menu", "x": 5, "y": 6}),
    _step({"action": "drag", "element": "Slider", "x": 1, "y": 2, "to_x": 3, "to_y": 4}),
    _step({"action": "scroll", "element": "List", "x": 500, "y": 500, "direction": "down"}),
    _step(
        {"action": "scroll", "element": "List", "x": 1, "y": 1, "direction": "left", "amount": 50}
    ),
    _step({"action": "scroll", "element": "L", "x": 1, "y": 1, "direction": "up", "amount": 1}),
    _step({"action": "type", "text": "hello"}),
    _step({"action": "type", "text": "", "press_enter": True, "clear_first": True}),
    _step({"action": "hotkey", "keys": ["ctrl", "s"]}),
    _step({"action": "hotkey", "keys": ["enter"]}),
    _step({"action": "hotkey", "keys": ["ctrl", "alt", "shift", "super", "t"]}),
    _step({"action": "wait"}),
    _step({"action": "wait", "seconds": 0}),
    _step({"action": "wait", "seconds": 10}),
    _step({"action": "wait", "seconds": 2.5}),
    _step({"action": "ask_user", "question": "Which account?"}),
    _step({"action": "answer", "text": "Done: saved."}, note=""),
]

# Rejected by the original schema, the inlined one, the output schema and pydantic alike.
INVALID: list[Any] = [
    {"action": {"action": "wait"}},  # missing thought
    {"thought": "t"},  # missing action
    _step({"action": "tap", "element": "a", "x": 1, "y": 2}),  # wrong discriminator
    _step({"action": "CLICK", "element": "a", "x": 1, "y": 2}),  # case matters
    _step({"action": "click", "element": "a", "x": 1, "y": 2, "clicks": 4}),
    _step({"action": "click", "element": "a", "x": 1, "y": 2, "clicks": 0}),
    _step({"action": "click", "element": "a", "x": 1, "y": 2, "clicks": 1.5}),
    _step({"action": "click", "element": "a", "x": 1, "y": 2, "button": "back"}),
    _step({"action": "click", "element": "a", "x": 1}),  # missing y
    _step({"action": "click", "x": 1, "y": 2}),  # missing element
    _step({"action": "click", "element": "a", "x": 1, "y": 2, "text": "x"}),  # extra field
    _step({"action": "double_click", "element": "a", "x": 1, "y": 2, "button": "left"}),
    _step({"action": "move", "element": "a", "x": None, "y": 2}),
    _step({"action": "drag", "element": "a", "x": 1, "y": 2, "to_x": 3}),  # missing to_y
    _step({"action": "scroll", "element": "a", "x": 1, "y": 2}),  # missing direction
    _step({"action": "scroll", "element": "a", "x": 1, "y": 2, "direction": "sideways"}),
    _step({"action": "scroll", "element": "a", "x": 1, "y": 2, "direction": "up", "amount": 0}),
    _step({"action": "scroll", "element": "a", "x": 1, "y": 2, "direction": "up", "amount": 51}),
    _step({"action": "type"}),  # missing text
    _step({"action": "type", "text": 5}),
    _step({"action": "type", "text": "a", "press_enter": 3}),
    _step({"action": "hotkey", "keys": []}),
    _step({"action": "hotkey", "keys": ["a", "b", "c", "d", "e", "f"]}),
    _step({"action": "hotkey", "keys": "ctrl+s"}),
    _step({"action": "hotkey", "keys": [1]}),
    _step({"action": "wait", "seconds": 11}),
    _step({"action": "wait", "seconds": -1}),
    _step({"action": "wait", "seconds": 1, "extra": True}),
    _step({"action": "ask_user"}),
    _step({"action": "answer"}),
    _step({"action": "answer", "text": "x", "question": "y"}),
    {"thought": "t", "action": {"action": "wait"}, "confidence": 0.9},  # extra top-level field
    {"thought": None, "action": {"action": "wait"}},
    {"thought": "t", "note": None, "action": {"action": "wait"}},
    {"thought": "t", "action": None},
    {"thought": "t", "action": "click"},
    [],
    "click",
]

# No "action" tag. pydantic's discriminated union rejects these, but pydantic's schema lets the
# tag default, so the original schema accepts those that fit exactly one variant: the output
# schema requires the tag and agrees with pydantic.
UNTAGGED: list[dict[str, Any]] = [
    _step({}),
    _step({"question": "Which one?"}),
    _step({"element": "a", "x": 1, "y": 2, "to_x": 3, "to_y": 4}),
    _step({"text": "ambiguous between type and answer"}),
]

# pydantic's lax mode coerces these; the schemas reject them. The grammar never lets the model
# write them, so the difference does not matter in practice, but it is real and pinned here.
COERCED_BY_PYDANTIC: list[dict[str, Any]] = [
    _step({"action": "click", "element": "a", "x": "5", "y": 2}),
    _step({"action": "type", "text": "a", "press_enter": "true"}),
]


def _validator(schema: dict[str, Any]) -> Any:
    return jsonschema.Draft202012Validator(schema)


def _accepts(schema: dict[str, Any], instance: Any) -> bool:
    return bool(_validator(schema).is_valid(instance))


def _pydantic_accepts(instance: Any) -> bool:
    try:
        Step.model_validate(instance)
    except ValidationError:
        return False
    return True


def _walk(node: Any) -> list[Any]:
    found = [node]
    if isinstance(node, dict):
        for value in node.values():
            found.extend(_walk(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_walk(value))
    return found


def test_the_original_schema_really_uses_refs() -> None:
    # Otherwise the inlining tests below would prove nothing.
    text = json.dumps(Step.model_json_schema())
    assert "$ref" in text and "$defs" in text


@pytest.mark.parametrize("schema", [inline_refs(Step.model_json_schema()), step_output_schema()])
def test_no_ref_or_defs_left(schema: dict[str, Any]) -> None:
    for node in _walk(schema):
        if isinstance(node, dict):
            assert "$ref" not in node
            assert "$defs" not in node and "definitions" not in node
    assert "#/$defs" not in json.dumps(schema)
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("instance", VALID + INVALID + UNTAGGED + COERCED_BY_PYDANTIC)
def test_inlined_schema_judges_like_the_original(instance: Any) -> None:
    original = Step.model_json_schema()
    assert _accepts(inline_refs(original), instance) == _accepts(original, instance)


@pytest.mark.parametrize("instance", VALID)
def test_valid_examples_pass_everywhere(instance: dict[str, Any]) -> None:
    assert _accepts(Step.model_json_schema(), instance)
    assert _accepts(step_output_schema(), instance)
    step = Step.model_validate(instance)
    assert step.action.action == instance["action"]["action"]
    assert step.note == instance.get("note", "")


@pytest.mark.parametrize("instance", INVALID)
def test_invalid_examples_fail_everywhere(instance: Any) -> None:
    assert not _accepts(Step.model_json_schema(), instance)
    assert not _accepts(step_output_schema(), instance)
    assert not _pydantic_accepts(instance)


@pytest.mark.parametrize("instance", UNTAGGED)
def test_output_schema_requires_the_tag_like_pydantic(instance: dict[str, Any]) -> None:
    assert not _accepts(step_output_schema(), instance)
    assert not _pydantic_accepts(instance)


def test_untagged_examples_show_the_original_schema_gap() -> None:
    # Pins why step_output_schema adds the tag to "required": with pydantic's schema alone a
    # grammar could produce a step pydantic refuses.
    assert any(_accepts(Step.model_json_schema(), instance) for instance in UNTAGGED)


@pytest.mark.parametrize("instance", COERCED_BY_PYDANTIC)
def test_lax_coercions_are_rejected_by_the_schemas(instance: dict[str, Any]) -> None:
    assert _pydantic_accepts(instance)
    assert not _accepts(Step.model_json_schema(), instance)
    assert not _accepts(step_output_schema(), instance)


def test_non_finite_numbers_are_refused_by_pydantic() -> None:
    # JSON has no NaN, but Python's parsers accept it; no coordinate can be one.
    raw = '{"thought":"t","action":{"action":"click","element":"a","x":NaN,"y":1}}'
    with pytest.raises(ValidationError):
        Step.model_validate_json(raw)
    raw = '{"thought":"t","action":{"action":"wait","seconds":Infinity}}'
    with pytest.raises(ValidationError):
        Step.model_validate_json(raw)


def test_every_variant_requires_its_tag_and_lists_it_first() -> None:
    variants = step_output_schema()["properties"]["action"]["anyOf"]
    tags = []
    for variant in variants:
        assert next(iter(variant["properties"])) == "action"
        assert variant["required"][0] == "action"
        assert variant["additionalProperties"] is False
        tags.append(variant["properties"]["action"]["const"])
    expected = {"click", "double_click", "move", "drag", "scroll", "type", "hotkey", "wait"}
    assert set(tags) == expected | {"ask_user", "answer"}
    assert len(tags) == len(set(tags))


def test_output_schema_is_built_once_and_handed_out_as_copies() -> None:
    structured._build_step_output_schema.cache_clear()
    first = step_output_schema()
    first["properties"].clear()  # a careless caller
    second = step_output_schema()
    assert second["properties"]
    assert second is not first
    assert structured._build_step_output_schema.cache_info().misses == 1
    assert json.loads(step_output_schema_json()) == second


def test_output_schema_json_is_compact_and_stable() -> None:
    text = step_output_schema_json()
    assert text == step_output_schema_json()
    assert text == json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    assert '"title"' not in text


@pytest.mark.parametrize("instance", VALID)
def test_step_json_round_trips_and_fits_the_schema(instance: dict[str, Any]) -> None:
    step = Step.model_validate(instance)
    text = step_json(step)
    data = json.loads(text)
    assert data == step.dump()
    assert list(data) == ["note", "thought", "action"]
    assert next(iter(data["action"])) == "action"
    assert _accepts(step_output_schema(), data)
    assert Step.model_validate_json(text) == step
    assert text == json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def test_step_json_writes_whole_numbers_as_integers() -> None:
    step = Step.model_validate(_step({"action": "click", "element": "a", "x": 932, "y": 0.5}))
    assert '"x":932,' in step_json(step)
    assert '"y":0.5' in step_json(step)


@pytest.mark.parametrize("field", ["x", "y", "to_x", "to_y"])
@pytest.mark.parametrize("value", ["1e308", "-1e308", "1" + "0" * 30, "-100001", "100000.5"])
def test_absurd_coordinates_are_refused_by_pydantic(field: str, value: str) -> None:
    fields = {"x": "1", "y": "2", "to_x": "3", "to_y": "4", field: value}
    inner = ",".join(f'"{k}":{v}' for k, v in fields.items())
    raw = '{"thought":"t","action":{"action":"drag","element":"a",' + inner + "}}"
    with pytest.raises(ValidationError, match="at most 100000"):
        Step.model_validate_json(raw)


def test_coordinates_at_the_bound_are_accepted() -> None:
    action = {"action": "drag", "element": "a", "x": -MAX_COORDINATE, "y": MAX_COORDINATE,
              "to_x": 0, "to_y": 0}
    assert Step.model_validate({"thought": "t", "action": action})


def test_a_type_longer_than_the_limit_is_refused_by_pydantic() -> None:
    ok = {"thought": "t", "action": {"action": "type", "text": "é" * MAX_TYPE_CHARS}}
    assert Step.model_validate(ok)
    too_long = {"thought": "t", "action": {"action": "type", "text": "a" * (MAX_TYPE_CHARS + 1)}}
    with pytest.raises(ValidationError, match="at most 10000 characters"):
        Step.model_validate(too_long)


# -- property tests: random valid steps, and random corruptions of them ------------------------

_text = st.text(max_size=20)
_num = st.one_of(st.integers(-5000, 5000), st.floats(-5000, 5000, allow_nan=False))
_pointed = {"element": _text, "x": _num, "y": _num}

_actions = st.one_of(
    st.fixed_dictionaries(
        {"action": st.just("click"), **_pointed},
        optional={
            "button": st.sampled_from(["left", "right", "middle"]),
            "clicks": st.integers(1, 3),
        },
    ),
    st.fixed_dictionaries({"action": st.sampled_from(["double_click", "move"]), **_pointed}),
    st.fixed_dictionaries({"action": st.just("drag"), **_pointed, "to_x": _num, "to_y": _num}),
    st.fixed_dictionaries(
        {
            "action": st.just("scroll"),
            **_pointed,
            "direction": st.sampled_from(["up", "down", "left", "right"]),
        },
        optional={"amount": st.integers(1, 50)},
    ),
    st.fixed_dictionaries(
        {"action": st.just("type"), "text": _text},
        optional={"press_enter": st.booleans(), "clear_first": st.booleans()},
    ),
    st.fixed_dictionaries(
        {"action": st.just("hotkey"), "keys": st.lists(_text, min_size=1, max_size=5)}
    ),
    st.fixed_dictionaries(
        {"action": st.just("wait")},
        optional={"seconds": st.one_of(st.integers(0, 10), st.floats(0, 10, allow_nan=False))},
    ),
    st.fixed_dictionaries({"action": st.just("ask_user"), "question": _text}),
    st.fixed_dictionaries({"action": st.just("answer"), "text": _text}),
)
_steps = st.fixed_dictionaries({"thought": _text, "action": _actions}, optional={"note": _text})


@given(_steps)
def test_random_valid_steps_are_accepted_by_all(instance: dict[str, Any]) -> None:
    assert _pydantic_accepts(instance)
    assert _accepts(Step.model_json_schema(), instance)
    assert _accepts(step_output_schema(), instance)
    assert _accepts(step_output_schema(), json.loads(step_json(Step.model_validate(instance))))


def _corrupt(instance: dict[str, Any], how: str, data: st.DataObject) -> dict[str, Any]:
    bad = copy.deepcopy(instance)
    action = bad["action"]
    if how == "extra":
        action[data.draw(st.sampled_from(["confidence", "reason", "target", "z"]))] = 1
    elif how == "drop_required":
        required = [k for k in action if k not in {"button", "clicks", "amount", "seconds"}]
        required = [k for k in required if k not in {"press_enter", "clear_first", "action"}]
        if not required:
            action["seconds"] = 11  # wait has no required field but its tag: break a bound
        else:
            del action[data.draw(st.sampled_from(required))]
    elif how == "retag":
        others = ["click", "double_click", "move", "drag", "scroll", "type", "hotkey", "wait"]
        others += ["ask_user", "answer", "press", "key", ""]
        tag = data.draw(st.sampled_from([t for t in others if t != action["action"]]))
        # Retagging may by chance produce another valid action (move <-> double_click).
        action["action"] = tag
    elif how == "drop_thought":
        del bad["thought"]
    return bad


@given(_steps, st.sampled_from(["extra", "drop_required", "retag", "drop_thought"]), st.data())
def test_random_corruptions_are_judged_alike(
    instance: dict[str, Any], how: str, data: st.DataObject
) -> None:
    bad = _corrupt(instance, how, data)
    expected = _pydantic_accepts(bad)
    assert _accepts(step_output_schema(), bad) == expected
    inlined = inline_refs(Step.model_json_schema())
    assert _accepts(inlined, bad) == _accepts(Step.model_json_schema(), bad)
    if how != "retag":
        assert not expected


# -- inline_refs on hand-made schemas -----------------------------------------------------------


def test_nested_refs_are_inlined() -> None:
    schema = {
        "$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "array", "items": {"$ref": "#/$defs/C"}},
            "C": {"type": "integer", "minimum": 3},
        },
        "$ref": "#/$defs/A",
    }
    inlined = inline_refs(schema)
    assert inlined == {
        "type": "object",
        "properties": {"b": {"type": "array", "items": {"type": "integer", "minimum": 3}}},
    }
    assert _accepts(inlined, {"b": [3, 4]}) and not _accepts(inlined, {"b": [2]})


def test_input_is_not_modified() -> None:
    schema = Step.model_json_schema()
    before = copy.deepcopy(schema)
    inline_refs(schema)
    assert schema == before


def test_annotation_siblings_are_merged_and_others_kept_as_a_conjunction() -> None:
    defs = {"P": {"type": "object", "properties": {"a": {"type": "string"}}}}
    annotated = inline_refs({"$defs": defs, "$ref": "#/$defs/P", "description": "a point"})
    assert annotated == {**defs["P"], "description": "a point"}
    constrained = inline_refs(
        {"$defs": defs, "$ref": "#/$defs/P", "properties": {"b": {"type": "integer"}}}
    )
    assert constrained["allOf"] == [defs["P"]]
    original = {"$defs": defs, "$ref": "#/$defs/P", "properties": {"b": {"type": "integer"}}}
    for instance in ({"a": "x", "b": 1}, {"a": 1}, {"b": "no"}, {}):
        assert _accepts(constrained, instance) == _accepts(original, instance)


def test_data_keywords_are_not_mistaken_for_references() -> None:
    schema = {
        "$defs": {"S": {"type": "string"}},
        "type": "object",
        "properties": {"$ref": {"$ref": "#/$defs/S"}, "title": {"type": "string"}},
        "default": {"$ref": "#/$defs/S"},
        "examples": [{"$ref": "not a reference"}],
        "const": {"$ref": "x"},
    }
    inlined = inline_refs(schema)
    assert inlined["properties"]["$ref"] == {"type": "string"}
    assert inlined["default"] == {"$ref": "#/$defs/S"}
    assert inlined["examples"] == [{"$ref": "not a reference"}]
    assert inlined["const"] == {"$ref": "x"}


def test_older_definitions_keyword_is_supported() -> None:
    schema = {"definitions": {"N": {"type": "null"}}, "anyOf": [{"$ref": "#/definitions/N"}]}
    assert inline_refs(schema) == {"anyOf": [{"type": "null"}]}


def test_discriminator_mapping_is_dropped() -> None:
    inlined = inline_refs(Step.model_json_schema())
    assert inlined["properties"]["action"]["discriminator"] == {"propertyName": "action"}


def test_direct_recursion_is_refused() -> None:
    schema = {
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "$ref": "#/$defs/Node",
    }
    with pytest.raises(RecursiveSchemaError, match="Node -> Node"):
        inline_refs(schema)


def test_indirect_recursion_is_refused() -> None:
    schema = {
        "$defs": {
            "Tree": {"type": "object", "properties": {"kids": {"$ref": "#/$defs/Forest"}}},
            "Forest": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
        },
        "properties": {"root": {"$ref": "#/$defs/Tree"}},
    }
    with pytest.raises(RecursiveSchemaError, match="Tree -> Forest -> Tree"):
        inline_refs(schema)


def test_recursion_from_pydantic_is_refused() -> None:
    from pydantic import BaseModel

    class Folder(BaseModel):
        name: str
        children: list[Folder] = []

    with pytest.raises(RecursiveSchemaError, match="recursive"):
        inline_refs(Folder.model_json_schema())


def test_same_definition_used_twice_is_not_recursion() -> None:
    schema = {
        "$defs": {"S": {"type": "string"}},
        "properties": {"a": {"$ref": "#/$defs/S"}, "b": {"items": {"$ref": "#/$defs/S"}}},
    }
    assert inline_refs(schema)["properties"]["b"]["items"] == {"type": "string"}


@pytest.mark.parametrize(
    "ref", ["#/$defs/Missing", "https://example.com/s.json", "#", "#/properties/a", 3]
)
def test_unresolvable_refs_are_refused(ref: Any) -> None:
    schema = {"$defs": {"S": {"type": "string"}}, "properties": {"a": {"$ref": ref}}}
    with pytest.raises(ValueError, match=r"\$ref"):
        inline_refs(schema)
