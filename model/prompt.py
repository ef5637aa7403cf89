"""The prompt builder: the chat messages we send Holotron at each step.

Layout (see docs/holotron.md, "History and prefix caching"):

1. system: role, rules, the action list, the coordinate convention, the screen size, today's
   date, the output schema and ``/think`` or ``/no_think``. Built from the run's
   :class:`PromptConfig` only, so it is byte-identical at every step of a run.
2. user: the task.
3. per past step: a user message with its screenshot (or, past the newest ``max_images``, a
   short placeholder) and its step number, then the assistant turn: only the parsed step as
   compact JSON, never the raw reasoning.
4. last user message: the current screenshot, then the notes and the compact list of past
   actions with their outcomes, which change every step and so come last.

vLLM reuses cached work only for an identical prefix, so everything before the newest
messages is append-only: a turn's message depends only on that turn and the outcome of the
turn before it, and images are sent as the exact bytes the caller encoded once. The one
unavoidable change is a screenshot turning into a placeholder as it ages out of the window.

The base model's chat template moves the images of a user message to its front and joins text
parts with nothing between them, so each user message holds at most one image, placed first,
and every text part ends with a newline.
"""

from __future__ import annotations

import base64
import datetime
import functools
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from model.coords import Convention, Point
from model.schema import (
    Action,
    Answer,
    AskUser,
    Click,
    DoubleClick,
    Drag,
    DragTo,
    HoldAndTap,
    Hotkey,
    KeyDown,
    KeyUp,
    Move,
    Scroll,
    Step,
    Type,
    UpdatePlan,
    Wait,
)
from model.structured import step_json, step_output_schema_json

__all__ = [
    "OUTCOME_DONE",
    "OUTCOME_EDITED",
    "OUTCOME_REFUSED",
    "OUTCOME_SKIPPED",
    "SECRET_KEYS",
    "SECRET_WORDS",
    "PromptConfig",
    "Turn",
    "build_messages",
    "check_turns",
    "data_url",
    "describe_action",
    "failed_outcome",
    "hidden_key_step",
    "hidden_keys",
    "legacy_messages",
    "refused_outcome",
    "secret_placeholder",
    "sent_step",
    "system_prompt",
]

OUTCOME_DONE = "done"
OUTCOME_SKIPPED = "skipped by the person"
#: The person changed the action before it ran; what ran is the turn's step.
OUTCOME_EDITED = "done as edited by the person"
#: How the outcome of a step the safety policy refused begins (:func:`refused_outcome`).
OUTCOME_REFUSED = "refused by the safety policy"

# English names, not strftime("%A"): that follows the C locale, which Qt sets from the desktop.
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# Typed text longer than this is shortened in descriptions (the full text is in the JSON).
_MAX_QUOTED = 80


def failed_outcome(reason: str) -> str:
    """The outcome text of a step whose action failed."""
    return f"failed: {reason}"


def refused_outcome(why: str) -> str:
    """The outcome text of a step the safety policy refused, saying why."""
    return f"{OUTCOME_REFUSED}: {why}"


@dataclass(frozen=True)
class Turn:
    """One step of the run as the prompt shows it.

    ``image`` is the screenshot exactly as it was encoded and sent (never re-encoded, so the
    server's prefix cache recognises it); ``mime`` its type, e.g. ``image/jpeg``. ``step`` is
    the model's parsed answer, None for the current turn; ``outcome`` what became of its action
    (:data:`OUTCOME_DONE`, :data:`OUTCOME_SKIPPED`, :func:`failed_outcome`, or free text such
    as the person's reply to a question), None while unknown. ``secret`` says the step typed
    a secret (the safety policy's verdict): its text is never sent back to the model, only
    :func:`secret_placeholder` in its place, as the action log masks it. ``proposed`` is the
    model's own step when the person edited it (``step`` then holds what ran): the H contracts
    send the model its own answer back and say what the edit was (docs/contract.md).
    """

    step_no: int
    image: bytes
    mime: str
    step: Step | None = None
    outcome: str | None = None
    secret: bool = False
    proposed: Step | None = None


def secret_placeholder(text: str) -> str:
    """What the history shows instead of a typed secret: its length only."""
    return f"[secret typed, {len(text)} characters]"


#: What stands for the keys of a step that typed (part of) a secret key by key: each key is a
#: character of it, too short to be masked wherever it appears, so the keys themselves go.
SECRET_KEYS = "[secret keys]"


#: Actions whose keys can type (part of) a secret key by key.
KeyAction = Hotkey | HoldAndTap | KeyDown


def hidden_keys(action: KeyAction) -> KeyAction:
    """``action`` with its keys replaced by :data:`SECRET_KEYS`, as logged and shown (a
    hold-and-tap keeps what it holds: Shift or Ctrl type nothing)."""
    if isinstance(action, HoldAndTap):
        return action.model_copy(update={"tap": [SECRET_KEYS]})
    if isinstance(action, KeyDown):
        return action.model_copy(update={"key": SECRET_KEYS})
    return action.model_copy(update={"keys": [SECRET_KEYS]})


#: What stands for the thought and the note of a step that typed a secret key by key: the
#: model's words spell out what its keys type, and a chord's few characters are too short to
#: be masked in them by their text.
SECRET_WORDS = "[hidden: this step presses keys that type a secret]"


def hidden_key_step(step: Step) -> Step:
    """``step`` (whose keys type a secret) as logged, shown and sent back: its keys, thought
    and note replaced (:data:`SECRET_KEYS`, :data:`SECRET_WORDS`)."""
    action = (hidden_keys(step.action) if isinstance(step.action, Hotkey | HoldAndTap | KeyDown)
              else step.action)
    return step.model_copy(update={"action": action, "thought": SECRET_WORDS,
                                   "note": SECRET_WORDS if step.note else step.note})


def sent_step(turn: Turn) -> Step | None:
    """The turn's step as the model sees it again: a secret's text replaced by its length.

    The model knew the text when it wrote it; sending it back at every later step would put
    it in every request (and in the server's logs and prefix cache) for nothing.
    """
    step = turn.step
    if step is None or not turn.secret:
        return step
    if isinstance(step.action, Hotkey | HoldAndTap | KeyDown):
        return hidden_key_step(step)
    if not isinstance(step.action, Type):
        return step
    hidden = step.action.model_copy(update={"text": secret_placeholder(step.action.text)})
    return step.model_copy(update={"action": hidden})


_sent_step = sent_step  # the name it had


@dataclass(frozen=True)
class PromptConfig:
    """What the system prompt depends on; fixed for a run so the prompt stays identical.

    ``sent_width`` x ``sent_height`` is the size of the screenshots as sent to the model.
    """

    convention: Convention
    sent_width: int
    sent_height: int
    today: datetime.date
    thinking: bool = False
    max_images: int = 3

    def __post_init__(self) -> None:
        if self.sent_width <= 0 or self.sent_height <= 0:
            size = f"{self.sent_width}x{self.sent_height}"
            raise ValueError(f"sent size must be positive, got {size}")
        if self.max_images < 1:
            raise ValueError(f"max_images must be at least 1, got {self.max_images}")


_ROLE = """\
You are a computer-use agent working on the person's desktop on their behalf. At each step \
you get the task, your notes, the actions taken so far and a screenshot of the screen, and \
you choose the single next action. After it runs you get a new screenshot.
"""

_RULES = """\
Rules:
- One action per step.
- Every action that points at the screen names its target element in words ("element"), \
e.g. "Save button" or "Search field", and aims at the centre of that element.
- "type" types at the focused element: click the field first if it is not focused.
- When the task is done, use "answer" with the result or a short summary of what you did.
- Use "ask_user" when you are blocked, when the task is ambiguous, and before anything risky \
or hard to undo (sending, paying, deleting, installing, changing settings or permissions) \
that the task does not clearly ask for.
- Never enter passwords, card numbers or other credentials unless the task tells you to; \
when a login is needed, use "ask_user".
- Put facts you will need later (values you read, where things are) in "note"; notes are \
kept for the whole task. Leave it empty otherwise. Keep "thought" short.
- If an action had no visible effect, do something different rather than repeat it.
"""

_ACTIONS = """\
Actions:
- click: element, x, y; button left/right/middle (default left); clicks 1-3 (default 1).
- double_click, move: element, x, y.
- drag: element, x, y (start), to_x, to_y (end).
- scroll: element, x, y (where to scroll), direction up/down/left/right, amount in wheel \
steps (default 5).
- type: text; press_enter (default false); clear_first to replace the field's text \
(default false).
- hotkey: keys, lower-case key names pressed together, e.g. ["ctrl", "s"] or ["enter"].
- wait: seconds 0-10 (default 1), when the screen is still changing.
- ask_user: question, to hand control back to the person.
- answer: text, the task is done.
"""


def _convention_text(config: PromptConfig) -> str:
    w, h = config.sent_width, config.sent_height
    axes = "x grows to the right and y grows downwards"
    if config.convention is Convention.NORM1000:
        return (
            "Coordinates: x and y are integers from 0 to 1000, relative to the screenshot "
            "whatever its size in pixels: (0, 0) is its top-left corner and (1000, 1000) its "
            f"bottom-right corner; {axes}. (500, 500) is the centre of the screenshot.\n"
        )
    if config.convention is Convention.NORM1:
        return (
            "Coordinates: x and y are decimal numbers from 0 to 1, relative to the screenshot "
            "whatever its size in pixels: (0, 0) is its top-left corner and (1, 1) its "
            f"bottom-right corner; {axes}. (0.5, 0.5) is the centre of the screenshot.\n"
        )
    return (
        f"Coordinates: x and y are pixel positions in the screenshot, which is {w}x{h} pixels: "
        f"(0, 0) is its top-left pixel and ({w - 1}, {h - 1}) its bottom-right pixel; {axes}.\n"
    )


def _example_point(config: PromptConfig) -> tuple[str, str]:
    # The example points at the same spot in every convention, so only its notation differs.
    fx, fy = 0.932, 0.88
    if config.convention is Convention.NORM1000:
        return str(round(fx * 1000)), str(round(fy * 1000))
    if config.convention is Convention.NORM1:
        return f"{fx:g}", f"{fy:g}"
    return str(round(fx * (config.sent_width - 1))), str(round(fy * (config.sent_height - 1)))


@functools.lru_cache(maxsize=16)
def system_prompt(config: PromptConfig) -> str:
    """The system prompt of a run: a pure function of ``config``, identical at every step."""
    x, y = _example_point(config)
    example = (
        '{"note":"","thought":"The document is edited; save it.",'
        f'"action":{{"action":"click","element":"Save button","x":{x},"y":{y}}}}}'
    )
    today = config.today
    return (
        _ROLE
        + "\n"
        + _RULES
        + "\n"
        + _ACTIONS
        + "\n"
        + _convention_text(config)
        + f"The screenshot shows the whole screen at {config.sent_width}x{config.sent_height} "
        "pixels.\n"
        + f"Today is {_WEEKDAYS[today.weekday()]} {today.isoformat()}.\n"
        + "\n"
        + "Answer every step with one JSON object and nothing else, matching this JSON schema:\n"
        + step_output_schema_json()
        + "\nExample:\n"
        + example
        + "\n"
        + ("/think" if config.thinking else "/no_think")
    )


def _text(text: str) -> dict[str, Any]:
    # The template joins text parts with no separator: every part ends its own line.
    return {"type": "text", "text": text if text.endswith("\n") else text + "\n"}


def _image(turn: Turn) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": _data_url(turn.image, turn.mime)}}


def data_url(image: bytes, mime: str) -> str:
    """The screenshot as a data URL, the same string object each time it is sent again: every
    contract sends its screenshots through this."""
    return _data_url(image, mime)


@functools.lru_cache(maxsize=4)  # a request's three and the next step's new one
def _data_url(image: bytes, mime: str) -> str:
    # A screenshot goes out in up to three requests: encoded once, and the same string each
    # time. Looking the image up costs nothing after the first time: a bytes object keeps its
    # hash.
    data = base64.b64encode(image).decode("ascii")
    return f"data:{mime};base64,{data}"


def _outcome_text(outcome: str | None) -> str:
    return outcome if outcome else "outcome unknown"


def _turn_header(turn: Turn, previous: Turn | None, *, with_image: bool) -> str:
    head = f"Step {turn.step_no}: screenshot"
    if not with_image:
        head = f"Step {turn.step_no}: screenshot no longer shown"
    if previous is not None and previous.step is not None:
        head += f" (after step {previous.step_no}: {_outcome_text(previous.outcome)})"
    return head + ".\n"


def _history_text(turns: Sequence[Turn], current: Turn) -> str:
    notes: list[str] = []
    seen: set[str] = set()
    for t in turns:
        note = t.step.note.strip() if t.step else ""
        # Models often restate a note verbatim; once is enough.
        if note and note not in seen:
            seen.add(note)
            notes.append(f"- step {t.step_no}: {note}")
    actions = [
        f"- step {t.step_no}: {describe_action(step.action)} ({_outcome_text(t.outcome)})"
        for t in turns
        if (step := sent_step(t)) is not None
    ]
    lines = [
        "Notes so far:",
        *(notes or ["(none)"]),
        "Actions so far:",
        *(actions or ["(none)"]),
        f"This is step {current.step_no}. Answer with the next step as one JSON object.",
    ]
    return "\n".join(lines) + "\n"


def build_messages(
    task: str, turns: Sequence[Turn], config: PromptConfig, codec: MessageCodec | None = None
) -> list[dict[str, Any]]:
    """The chat messages for the current step, in the OpenAI format vLLM accepts.

    ``turns`` are the steps of the run in order; the last one is the current screenshot (its
    ``step`` is None), every earlier one carries the step the model answered. Only the newest
    ``config.max_images`` screenshots are sent; older ones become a one-line placeholder, so
    their ``image`` may be empty (a long run frees them); a sent one may not.

    ``codec`` is the contract that lays them out (model/contracts/, docs/contract.md); None is
    holodesk's own dialect, laid out as the module doc says.
    """
    if codec is not None:
        return codec.messages(task, turns, config)
    return legacy_messages(task, turns, config)


class MessageCodec(Protocol):
    """What :func:`build_messages` needs of a contract (model.contracts.Codec has more)."""

    def messages(
        self, task: str, turns: Sequence[Turn], config: PromptConfig
    ) -> list[dict[str, Any]]: ...


def check_turns(turns: Sequence[Turn], max_images: int) -> None:
    """Raise ValueError unless ``turns`` is a run's history as every contract needs it: past
    turns with their steps, the current one last without, numbers increasing, and an image
    for every screenshot still sent."""
    if not turns:
        raise ValueError("build_messages needs at least the current turn")
    *past, current = turns
    if current.step is not None:
        raise ValueError(f"the last turn (step {current.step_no}) must be the current one")
    for turn in past:
        if turn.step is None:
            raise ValueError(f"past turn {turn.step_no} has no step; only the last may lack one")
    first_shown = len(turns) - max_images
    for turn in turns[max(0, first_shown):]:
        if not turn.image:
            # A caller dropping old screenshots to save memory dropped one still sent.
            raise ValueError(f"turn {turn.step_no} has no image but its screenshot is sent")
    numbers = [t.step_no for t in turns]
    if any(b <= a for a, b in itertools.pairwise(numbers)):
        raise ValueError(f"turn step numbers must increase: {numbers}")


def legacy_messages(
    task: str, turns: Sequence[Turn], config: PromptConfig
) -> list[dict[str, Any]]:
    """holodesk's own dialect (see the module doc and :func:`build_messages`)."""
    check_turns(turns, config.max_images)
    *past, current = turns
    first_shown = len(turns) - config.max_images
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(config)},
        {"role": "user", "content": [_text(f"Task: {task.strip()}")]},
    ]
    previous: Turn | None = None
    for index, turn in enumerate(turns):
        shown = index >= first_shown
        header = _text(_turn_header(turn, previous, with_image=shown))
        content = [_image(turn), header] if shown else [header]
        if turn is current:
            content.append(_text(_history_text(past, current)))
        messages.append({"role": "user", "content": content})
        sent = sent_step(turn)
        if sent is not None:
            messages.append({"role": "assistant", "content": step_json(sent)})
        previous = turn
    return messages


def _quote(text: str) -> str:
    if len(text) > _MAX_QUOTED:
        text = text[: _MAX_QUOTED - 3] + "..."
    # JSON quoting shows line breaks and quotes inside the text unambiguously.
    return json.dumps(text, ensure_ascii=False)


def _at(point: Point | None) -> str:
    return f" at {point}" if point is not None else ""


def describe_action(
    action: Action, point: Point | None = None, *, end: Point | None = None, secret: bool = False
) -> str:
    """The action in plain words, for the confirmation prompt, the log and the history.

    ``point`` is where it lands on the screen (logical points), ``end`` where a drag ends
    (a ``drag_to``: ``point`` its start, the pointer, and ``end`` the point; given ``point``
    alone, that is where it ends); both are left out when None. ``secret`` hides typed text
    (e.g. when the safety policy says it looks like a password), giving only its length.
    """
    if isinstance(action, Click):
        verb = {1: "click", 2: "double-click", 3: "triple-click"}.get(action.clicks, "click")
        button = "" if action.button == "left" else f" with the {action.button} button"
        return f"{verb} {_quote(action.element)}{_at(point)}{button}"
    if isinstance(action, DoubleClick):
        return f"double-click {_quote(action.element)}{_at(point)}"
    if isinstance(action, Move):
        return f"move the pointer to {_quote(action.element)}{_at(point)}"
    if isinstance(action, Drag):
        start = f" from {point}" if point is not None else ""
        stop = f" to {end}" if end is not None else ""
        return f"drag {_quote(action.element)}{start}{stop}"
    if isinstance(action, DragTo):
        if end is None:
            return f"drag from the pointer to {_quote(action.element)}{_at(point)}"
        start = f" from {point}" if point is not None else " from the pointer"
        return f"drag{start} to {_quote(action.element)} at {end}"
    if isinstance(action, Scroll):
        where = f"{_quote(action.element)}{_at(point)}"
        return f"scroll {action.direction} {action.amount} over {where}"
    if isinstance(action, Type):
        shown = f"[hidden text, {len(action.text)} characters]" if secret else _quote(action.text)
        text = f"clear the field and type {shown}" if action.clear_first else f"type {shown}"
        return text + (" then Enter" if action.press_enter else "")
    if isinstance(action, Hotkey):
        times = f" {action.repeat} times" if action.repeat > 1 else ""
        return "press " + ("[hidden keys]" if secret else "+".join(action.keys)) + times
    if isinstance(action, HoldAndTap):
        taps = "[hidden keys]" if secret else ", ".join(action.tap)
        return f"hold {'+'.join(action.hold)} and tap {taps}, then release"
    if isinstance(action, KeyDown):
        key = "[hidden key]" if secret else action.key
        return f"hold {key} down (until released)"
    if isinstance(action, KeyUp):
        return f"release {action.key}"
    if isinstance(action, UpdatePlan):
        goals = "; ".join(f"[{g.status.replace('_', ' ')}] {g.title}" for g in action.goals)
        return f"update the plan: {goals or 'no goals'}"
    if isinstance(action, Wait):
        return f"wait {action.seconds:g} s"
    if isinstance(action, AskUser):
        return f"ask: {action.question}"
    if isinstance(action, Answer):
        return f"answer: {action.text}"
    raise TypeError(f"unknown action {action!r}")
