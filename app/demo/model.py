"""The demo model: a stand-in for Holotron that plans each step from the screenshot it is sent.

It knows the practice window (:mod:`app.demo.look`) and its task, the rows window of `holodesk
eval`, and the eval's Tk task windows, each planned by its own module of :mod:`app.demo.plans`
(what follows is said of the practice window; they work alike). Each step it
looks at the newest screenshot: finds the window by its border, reads the checklist, and
points at the part the first unfinished item needs (the name field, then the Blue swatch, then
Save, then Delete draft), or types the name once the field shows it has the focus. It answers
that the task is done when the checklist says so. It never replays a script: what it does comes
from the pixels, so a window that is covered, moved away or not there gets no action at all,
only an answer saying it cannot see it. A point it found outside the window is refused the
same way. Points are in the norm1000 convention of the image it was sent (the demo run sets
that convention). The task windows of `holodesk eval` (app/demo/task_look.py) are planned by
their own modules (app/demo/plans), from the pixels and the task's words.

It answers in the contract it is asked in (docs/contract.md): holodesk's own dialect, H's
structured contract in either vocabulary when the request carries that contract's schema
(``structured_outputs``), or H's native function calling when it offers a vocabulary's tools
(``tools``). The plan is the same; H's answer is the planned step written as a tool call by the
codec's own :func:`model.contracts.tools.from_action`, so `holodesk eval --compare` can run one
task under every contract without a GPU.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.demo.look import (
    BLUE_SWATCH,
    DELETE_BUTTON,
    LIST_FRAME,
    NAME,
    NAME_FIELD,
    ROWS_BORDER,
    SAVE_BUTTON,
    STATUS_COLORS,
    STEPS,
    WANTED_ROW_MARK,
    Box,
    Screenshot,
    Status,
)
from app.demo.plans import route
from app.demo.steps import LABEL as LABEL
from app.demo.steps import cannot as cannot
from app.demo.steps import norm1000 as norm1000
from app.demo.steps import step as step
from model.contracts.base import H_VOCABULARIES, Vocabulary
from model.contracts.h_native import function_tools
from model.contracts.h_structured import step_schema
from model.contracts.tools import from_action
from model.schema import Step

_DATA_URL = re.compile(r"data:image/[\w.+-]+;base64,(?P<data>.*)", re.DOTALL)

#: What each unfinished checklist item needs: the part to point at and how to name it.
_TARGETS = {
    "name": (NAME_FIELD, "Name field", "The name field is empty; click it to type the name."),
    "colour": (BLUE_SWATCH, "Blue in the colour list", "Blue is not chosen yet; click it."),
    "saved": (SAVE_BUTTON, "Save button", "The form is filled in but not saved; click Save."),
    "deleted": (DELETE_BUTTON, "Delete draft button",
                "The entry is saved; the last item is to delete the draft."),
}


def plan(image: Any, goal: str = "") -> dict[str, Any]:
    """The next step for ``image`` (a PIL image, the newest screenshot) towards ``goal`` (the
    task's words, which the eval's task windows need: the level, invoice or number asked)."""
    shot = Screenshot(image)
    window = shot.window()
    if window is None and (rows := shot.window(ROWS_BORDER)) is not None:
        return plan_rows(shot, rows)
    if window is None:
        # `holodesk eval`'s Tk task windows, a planner each (app/demo/plans).
        routed = route(shot, goal)
        if routed is not None:
            return routed
        return cannot("I cannot see the whole holodesk practice window on the screen (it is "
                      "covered, off the screen or closed), and I act only in it.")
    inner = Box(window.left + 1, window.top + 1, window.right - 1, window.bottom - 1)
    checklist = shot.checklist(inner)
    if len(checklist) != len(STEPS):
        return cannot(f"I cannot read the practice window's checklist (I see "
                      f"{len(checklist)} of its {len(STEPS)} items).")
    pending = [(name, status) for name, status in zip(STEPS, checklist, strict=True)
               if status is not Status.DONE]
    if not pending:
        return step("Every item of the checklist is done.", {
            "action": "answer",
            "text": f"{LABEL}the practice task is done: the name is typed, Blue is chosen, the "
                    "entry is saved and the draft deleted."})
    name, status = pending[0]
    if name == "name" and status is Status.ACTIVE:
        return step("The name field has the focus; type the name.",
                    {"action": "type", "text": NAME})
    color, element, thought = _TARGETS[name]
    mark = shot.find(color, inner)
    if mark is None:
        return cannot(f"I cannot see the {element} in the practice window.")
    if not window.contains(mark.x, mark.y):
        return cannot(f"The {element} I found is outside the practice window.")
    x, y = norm1000(mark.x, mark.y, shot.width, shot.height)
    return step(thought, {"action": "click", "element": element, "x": x, "y": y})


def plan_rows(shot: Screenshot, window: Box) -> dict[str, Any]:
    """The next step in the rows window (`holodesk eval`'s scroll-to-row task): the wanted row
    is marked by its colour; scroll the list down until it shows, then click it."""
    inner = Box(window.left + 1, window.top + 1, window.right - 1, window.bottom - 1)
    if shot.find(STATUS_COLORS[Status.DONE], inner) is not None:
        return step("The wanted row is selected.", {
            "action": "answer", "text": f"{LABEL}the wanted row is selected."})
    mark = shot.find(WANTED_ROW_MARK, inner)
    if mark is not None:
        x, y = norm1000(mark.x, mark.y, shot.width, shot.height)
        return step("The wanted row shows; select it.",
                    {"action": "click", "element": "the wanted row", "x": x, "y": y})
    frame = shot.find(LIST_FRAME, inner)
    if frame is None:
        return cannot("I cannot see the list in the rows window.")
    x, y = norm1000(frame.x, frame.y, shot.width, shot.height)
    return step("The wanted row is not in view; scroll the list down.",
                {"action": "scroll", "element": "the list", "x": x, "y": y,
                 "direction": "down", "amount": 5})


def latest_image(messages: Sequence[Any]) -> Any | None:
    """The newest screenshot of a chat request's messages (a PIL image), or None.

    Raises ValueError for an image that cannot be decoded.
    """
    from PIL import Image

    for message in reversed(messages):
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for part in reversed(content):
            if not isinstance(part, Mapping) or part.get("type") != "image_url":
                continue
            url = part.get("image_url", {})
            url = url.get("url", "") if isinstance(url, Mapping) else ""
            match = _DATA_URL.match(str(url))
            if match is None:
                raise ValueError("only base64 data: image URLs are read")
            try:
                data = base64.b64decode(match["data"], validate=True)
                image = Image.open(io.BytesIO(data))
                image.load()
            except (binascii.Error, OSError) as e:
                raise ValueError(f"the image cannot be decoded: {e}") from e
            return image
    return None


def task_text(messages: Sequence[Any]) -> str:
    """The task of a chat request: its user message that starts "Task:" (both contracts say it
    so, before any step's results), else every user message's text, one per line."""
    texts: list[str] = []
    for message in messages:
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [str(part.get("text", "")) for part in content
                      if isinstance(part, Mapping) and part.get("type") == "text"]
    task = next((t for t in texts if t.startswith("Task:")), None)
    return task if task is not None else "\n".join(texts)


def answer(messages: Sequence[Any]) -> dict[str, Any]:
    """The demo model's step for a chat request's ``messages``."""
    image = latest_image(messages)
    if image is None:
        return cannot("I was sent no screenshot, so I cannot see the practice window.")
    planned = plan(image, task_text(messages))
    if _repeats_keys(planned["action"], last_action(messages)):
        # The keys it just sent may not show yet (a busy window redraws late): typing them
        # again would type them twice. It waits once; if they still do not show, it types again.
        return step("What I just typed may not show yet; wait for the window to catch up.",
                    {"action": "wait", "seconds": 1})
    return planned


def last_action(messages: Sequence[Any]) -> dict[str, Any] | None:
    """The model's previous action as it said it, in any contract (holodesk's ``action``, H's
    ``tool_call``, a native call's name and arguments); None before the first step."""
    for message in reversed(messages):
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls and isinstance(calls[0], Mapping):
            function = calls[0].get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except (json.JSONDecodeError, TypeError):
                return None
            return {"tool_name": function.get("name"), **(arguments if isinstance(
                arguments, dict) else {})}
        content = message.get("content")
        try:
            said = json.loads(content) if isinstance(content, str) else None
        except json.JSONDecodeError:
            return None
        if isinstance(said, dict):
            previous = said.get("action") or said.get("tool_call")
            return previous if isinstance(previous, dict) else None
        return None
    return None


def _repeats_keys(planned: Mapping[str, Any], previous: Mapping[str, Any] | None) -> bool:
    """Whether ``planned`` types the text or presses the keys ``previous`` just did."""
    if previous is None:
        return False
    if planned.get("action") == "type":
        return planned.get("text") in (previous.get("text"), previous.get("content"))
    if planned.get("action") == "hotkey":
        return planned.get("keys") == previous.get("keys")
    return False


def requested_vocabulary(body: Mapping[str, Any]) -> Vocabulary | None:
    """The H vocabulary a chat request asks for, by the schema it sends as
    ``structured_outputs`` (exactly that vocabulary's step schema); None for holodesk's own
    dialect (its schema, or none).

    Tool calls are :func:`requested_tools`' to read.
    """
    wanted = body.get("structured_outputs")
    schema = wanted.get("json") if isinstance(wanted, Mapping) else None
    if schema is None:
        return None
    for vocabulary in H_VOCABULARIES:
        if schema == step_schema(vocabulary):
            return vocabulary
    return None


def requested_tools(body: Mapping[str, Any]) -> Vocabulary | None:
    """The H vocabulary whose tools a native tool-call request offers (exactly that
    vocabulary's functions, as the native codec sends them); None for a request without tools.

    Raises ValueError for tools of no H vocabulary or a tool choice other than "required", the
    native contract's (docs/contract.md).
    """
    tools = body.get("tools")
    if not tools:
        return None
    if body.get("tool_choice") != "required":
        raise ValueError("the demo model answers tool calls only with tool_choice \"required\", "
                         "as H's native contract asks for them")
    for vocabulary in H_VOCABULARIES:
        if tools == function_tools(vocabulary):
            return vocabulary
    raise ValueError("the demo model calls only the tools of H's native contract; use a "
                     "profile in one of H's contracts or holodesk's own")


def as_tool_call(planned: Mapping[str, Any], vocabulary: Vocabulary) -> tuple[str, str]:
    """A planned step (holodesk's dialect) as one native call of ``vocabulary``'s tools: the
    function's name and its arguments as JSON text. The note is not said: under a required
    tool choice vLLM lets the model write the call only (docs/vllm-protocol.md)."""
    import json

    said = in_contract(planned, vocabulary)["tool_call"]
    name = said.pop("tool_name")
    return name, json.dumps(said, ensure_ascii=False)


def in_contract(planned: Mapping[str, Any], vocabulary: Vocabulary | None) -> dict[str, Any]:
    """A planned step (holodesk's dialect) as the contract ``vocabulary`` says it: unchanged
    for holodesk's own (None), else H's ``note``, ``thought``, ``tool_call``."""
    if vocabulary is None:
        return dict(planned)
    parsed = Step.model_validate(planned)
    return {"note": parsed.note or None, "thought": parsed.thought,
            "tool_call": from_action(parsed.action, vocabulary)}
