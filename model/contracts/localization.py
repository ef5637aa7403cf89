"""H's element localization (docs/contract.md, "Localization"): one screenshot and a target
in words in, one point out. Single turn, no history, temperature 0, thinking off, the schema
``{x: int 0..1000, y: int 0..1000}``. For calibration and doctor, which need only a point.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, ValidationError

from model.contracts.base import invalid, reject_inline_thinking, validation_problem

__all__ = ["LocalizedPoint", "decode_point", "localization_body", "localization_schema"]


class VisualLocalizerOutput(BaseModel):
    # The class name is the schema's title, which the prompt shows the model as H's does.
    x: int = Field(ge=0, le=1000, description="X coordinate as integer in [0, 1000]")
    y: int = Field(ge=0, le=1000, description="Y coordinate as integer in [0, 1000]")


LocalizedPoint = VisualLocalizerOutput


def localization_schema() -> dict[str, Any]:
    """The point's JSON schema, as pydantic writes it."""
    return VisualLocalizerOutput.model_json_schema()


def localization_body(model: str, image_url: str, element: str, *,
                      thinking_switch: str | None = "enable_thinking",
                      max_tokens: int | None = None) -> dict[str, Any]:
    """The chat request (not streamed) that asks where ``element`` is in the screenshot
    ``image_url`` (a data URL, model.prompt.data_url). The prompt text is the one H's
    documentation gives, the schema in it as Python writes a dict."""
    schema = localization_schema()
    prompt = ("Localize an element on the GUI image according to the provided target and "
              "output a click position.\n"
              f" * You must output a valid JSON following the format: {schema}\n"
              f" Your target is:\n{element}")
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": image_url}},
            {"type": "text", "text": prompt},
        ]}],
        "temperature": 0.0,
    }
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    body["structured_outputs"] = {"json": schema}
    if thinking_switch is not None:  # a template without the switch thinks only when told
        body["chat_template_kwargs"] = {thinking_switch: False}
    return body


def decode_point(content: str) -> tuple[int, int]:
    """The point of a localization answer, in [0, 1000] of the image sent (holodesk's
    norm1000), or :class:`model.errors.InvalidOutput`."""
    problem = reject_inline_thinking(content)
    if problem is not None:
        raise invalid(content, problem)
    try:
        point = VisualLocalizerOutput.model_validate_json(content, strict=True)
    except ValidationError as exc:
        raise invalid(content, validation_problem(exc, "point")) from exc
    return point.x, point.y
