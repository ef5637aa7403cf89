"""What the stand-in model answers: scripted replies, garbage, or a model that looks.

A policy is a callable from :class:`~tests.support.fake_vllm_request.ChatRequest` to the
assistant's text (see :data:`~tests.support.fake_vllm_request.Policy`); it may raise
:class:`~tests.support.fake_vllm_request.FakeHTTPError` (or ``FakeStreamError``) to make the
server fail. With structured outputs enforced (the default), the server checks every answer
against the request's grammar, so a script must hold what the grammar lets a model write:
keys in schema order, the action tag first, nothing before or after the JSON. A ``<think>``
block is only possible with the server's reasoning parser on (or structured outputs ignored).
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from PIL import Image

from tests.support.fake_vllm_request import Answer, ChatRequest, FakeHTTPError, ToolCallAnswer

Convention = Literal["norm1000", "norm1", "pixels"]


class ScriptExhausted(RuntimeError):
    """A ScriptedPolicy was asked for more replies than it holds."""


ScriptItem = str | Mapping[str, Any] | FakeHTTPError | ToolCallAnswer


class ScriptedPolicy:
    """Replies from a list, in order: strings as they are, dicts as JSON, errors raised, a
    :class:`ToolCallAnswer` as a native tool call (for a request with ``tools``; a step dict
    is also said as the call of the request's tools there: tests/support/fake_vllm_tools.py).

    When the script is exhausted it raises :class:`ScriptExhausted` (the server then answers 500)
    unless ``repeat_last`` is set: a test that gets more requests than it scripted has a bug
    worth seeing, so repeating silently is opt-in.
    """

    def __init__(
        self, replies: Sequence[ScriptItem], *, repeat_last: bool = False, think: str | None = None
    ) -> None:
        if not replies:
            raise ValueError("a script needs at least one reply")
        self._replies = list(replies)
        self._repeat_last = repeat_last
        self._think = think
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Answer:
        with self._lock:
            index = self.calls
            self.calls += 1
        if index >= len(self._replies):
            if not self._repeat_last:
                raise ScriptExhausted(
                    f"ScriptedPolicy exhausted after {len(self._replies)} replies"
                )
            index = len(self._replies) - 1
        item = self._replies[index]
        if isinstance(item, FakeHTTPError):
            raise item
        if isinstance(item, ToolCallAnswer):
            if self._think and not item.reasoning:
                return dataclasses.replace(item, reasoning=self._think)
            return item
        text = item if isinstance(item, str) else json.dumps(dict(item), ensure_ascii=False)
        return _with_think(text, self._think)


class GarbagePolicy:
    """Always answers text that is not JSON (a model ignoring the schema)."""

    def __init__(self, text: str = "Sure! I will click the Save button for you.") -> None:
        self.text = text
        self.calls = 0

    def __call__(self, request: ChatRequest) -> str:
        self.calls += 1
        return self.text


@dataclass(frozen=True)
class Target:
    """Something SeeingPolicy looks for by colour and acts on.

    ``action`` is the pointing action at the target's centre; ``type_text``, when set, is typed
    in the next step (click the field, then type). ``tolerance`` is the largest per-channel
    difference still counted as the colour (JPEG shifts colours, most at edges).
    """

    element: str
    color: tuple[int, int, int]
    action: Literal["click", "double_click", "move"] = "click"
    button: Literal["left", "right", "middle"] = "left"
    type_text: str | None = None
    press_enter: bool = False
    tolerance: int = 48
    min_pixels: int = 30


@dataclass(frozen=True)
class Found:
    """Where a target's colour is in an image: centroid (pixel centres) and pixel count."""

    x: float
    y: float
    pixels: int


def find_color(
    image: Image.Image, color: tuple[int, int, int], tolerance: int = 48, min_pixels: int = 30
) -> Found | None:
    """The centroid of the pixels within ``tolerance`` of ``color``, or None when too few match."""
    pixels = np.asarray(image.convert("RGB"), dtype=np.int16)
    diff = np.abs(pixels - np.array(color, dtype=np.int16))
    mask = np.all(diff <= tolerance, axis=2)
    count = int(mask.sum())
    if count < min_pixels:
        return None
    ys, xs = np.nonzero(mask)
    # +0.5: pixel i covers [i, i+1), so its centre is i + 0.5
    return Found(float(xs.mean()) + 0.5, float(ys.mean()) + 0.5, count)


def to_convention(
    x: float, y: float, width: int, height: int, convention: Convention
) -> tuple[float, float]:
    """A pixel position of an image of ``width`` x ``height`` in a coordinate convention."""
    if convention == "norm1000":
        return float(round(x / width * 1000)), float(round(y / height * 1000))
    if convention == "norm1":
        return round(x / width, 4), round(y / height, 4)
    return float(round(x)), float(round(y))


class SeeingPolicy:
    """A model that really looks: finds each target by colour in the latest screenshot.

    The plan is the targets in order: a pointing action at each target's centre (in
    ``convention``, relative to the size of the image that was sent), followed by a ``type``
    step when the target has ``type_text``; when the plan is done it answers ``then`` (by
    default an ``answer``). A target whose colour is not visible gets ``on_missing`` (ask_user
    or answer with a failure text) and the plan does not advance, so it can go on once the
    target shows up.

    The plan advances by one step per request: retries and re-asks consume steps. ``think``
    prefixes a ``<think>…</think>`` block, as a reasoning model does.
    """

    def __init__(
        self,
        targets: Sequence[Target],
        convention: Convention = "norm1000",
        *,
        then: Mapping[str, Any] | None = None,
        on_missing: Literal["ask_user", "answer"] = "ask_user",
        think: bool = False,
    ) -> None:
        self.targets = list(targets)
        self.convention: Convention = convention
        self.then = dict(then) if then is not None else {"action": "answer", "text": "All done."}
        self.on_missing = on_missing
        self.think = think
        self.plan: list[tuple[Literal["point", "type"], Target]] = []
        for target in self.targets:
            self.plan.append(("point", target))
            if target.type_text is not None:
                self.plan.append(("type", target))
        self.position = 0
        self.missing: list[str] = []
        self._lock = threading.Lock()

    @property
    def done(self) -> bool:
        return self.position >= len(self.plan)

    def reset(self) -> None:
        with self._lock:
            self.position = 0
            self.missing.clear()

    def _localized(self, request: ChatRequest) -> dict[str, Any]:
        """H's element localization: the next target's point, 0-1000 of the image."""
        target = self.plan[min(self.position, len(self.plan) - 1)][1]
        shot = request.latest_image
        found = (find_color(shot.image, target.color, target.tolerance, target.min_pixels)
                 if shot else None)
        if shot is None or found is None:
            return {"x": 0, "y": 0}
        self.position += 1
        return {"x": round(found.x / shot.width * 1000), "y": round(found.y / shot.height * 1000)}

    def __call__(self, request: ChatRequest) -> str:
        with self._lock:
            step = self._next(request)
        text = json.dumps(step, ensure_ascii=False)
        return _with_think(
            text,
            "I look at the screenshot and find the target by its colour." if self.think else None,
        )

    def _next(self, request: ChatRequest) -> dict[str, Any]:
        if (request.schema or {}).get("title") == "VisualLocalizerOutput":
            return self._localized(request)
        if self.done:
            return {"note": "", "thought": "Every target is handled.", "action": dict(self.then)}
        kind, target = self.plan[self.position]
        if kind == "type":
            self.position += 1
            assert target.type_text is not None
            action: dict[str, Any] = {"action": "type", "text": target.type_text}
            if target.press_enter:
                action["press_enter"] = True
            return {
                "note": "",
                "thought": f"The {target.element} has focus; type the text.",
                "action": action,
            }
        shot = request.latest_image
        found = (
            find_color(shot.image, target.color, target.tolerance, target.min_pixels)
            if shot
            else None
        )
        if shot is None or found is None:
            self.missing.append(target.element)
            words = f"I cannot see the {target.element} on the screen."
            miss: dict[str, Any] = (
                {"action": "ask_user", "question": f"{words} Where is it?"}
                if self.on_missing == "ask_user"
                else {"action": "answer", "text": f"Failed: {words}"}
            )
            return {"note": "", "thought": words, "action": miss}
        self.position += 1
        x, y = to_convention(found.x, found.y, shot.width, shot.height, self.convention)
        pointed: dict[str, Any] = {
            "action": target.action,
            "element": target.element,
            "x": x,
            "y": y,
        }
        if target.action == "click" and target.button != "left":
            pointed["button"] = target.button
        return {
            "note": "",
            "thought": f"The {target.element} is visible; {target.action} it.",
            "action": pointed,
        }


def _with_think(text: str, think: str | None) -> str:
    return f"<think>{think}</think>\n{text}" if think else text


# --------------------------------------------------------------------------- images for tests


def jpeg_bytes(image: Image.Image, quality: int = 90) -> bytes:
    """Encode an image as JPEG (4:2:0 chroma, the harsher case for colour matching)."""
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def data_url(data: bytes, mime: str = "image/jpeg") -> str:
    """A ``data:`` URL as the client sends images."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def screenshot(
    size: tuple[int, int] = (1536, 864),
    rects: Sequence[tuple[tuple[int, int, int, int], tuple[int, int, int]]] = (),
    background: tuple[int, int, int] = (236, 236, 236),
) -> Image.Image:
    """A synthetic screenshot: a plain background with filled rectangles ``((l, t, r, b), rgb)``."""
    image = Image.new("RGB", size, background)
    pixels = np.array(image)
    for (left, top, right, bottom), color in rects:
        pixels[top:bottom, left:right] = color
    return Image.fromarray(pixels)


def image_message(image: Image.Image | bytes, text: str = "Step 1\n") -> dict[str, Any]:
    """One user message holding one screenshot and a text part, in OpenAI chat format."""
    data = image if isinstance(image, bytes) else jpeg_bytes(image)
    return {
        "role": "user",
        "content": [
            {"type": "image_url", "image_url": {"url": data_url(data)}},
            {"type": "text", "text": text},
        ],
    }
