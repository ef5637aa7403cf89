"""H's element localization as a request and a decoded point (docs/contract.md)."""

from __future__ import annotations

import pytest

from model.contracts.localization import decode_point, localization_body, localization_schema
from model.errors import InvalidOutput


def test_the_request_is_hs() -> None:
    body = localization_body("holo", "data:image/png;base64,AAAA", "the Sign in button")
    assert list(body) == ["model", "messages", "temperature", "structured_outputs",
                          "chat_template_kwargs"]
    assert body["temperature"] == 0.0
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    schema = body["structured_outputs"]["json"]
    assert schema == localization_schema()
    assert schema["required"] == ["x", "y"]
    for axis in ("x", "y"):
        assert schema["properties"][axis] | {} == {
            "description": f"{axis.upper()} coordinate as integer in [0, 1000]",
            "maximum": 1000, "minimum": 0, "title": axis.upper(), "type": "integer"}
    image, text = body["messages"][0]["content"]
    assert image == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    assert text["text"] == (
        "Localize an element on the GUI image according to the provided target and output a "
        f"click position.\n * You must output a valid JSON following the format: {schema}\n"
        " Your target is:\nthe Sign in button")


def test_points_decode_and_bad_ones_are_invalid() -> None:
    assert decode_point('{"x": 12, "y": 1000}') == (12, 1000)
    for bad, problem in [('{"x": 12.5, "y": 3}', "point.x"), ('{"x": 1001, "y": 3}', "point.x"),
                         ('{"x": 1}', "point.y"), ("<think>hm</think>{}", "reasoning parser")]:
        with pytest.raises(InvalidOutput, match=problem):
            decode_point(bad)
