"""The step schema: what Holotron answers at every step (see docs/holotron.md).

One JSON object per step: ``note``, ``thought`` and ``action``, the action being a union
discriminated by its ``action`` field. These pydantic models validate the model's output at
the edge; everything past the edge works with the parsed, typed objects.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)

# The largest coordinate, either sign, in any convention. A legitimate one is at most a pixel of
# the sent image (a few thousand); a sloppy one a little past the edge is clamped to the monitor.
# Past this the answer is nonsense, and 1e308 would overflow the mapping to the screen. Checked
# by a validator, not in the JSON schema: the schema we send and print stays as it was.
MAX_COORDINATE = 100_000.0

# The longest text one ``type`` may type. A step types a field's worth (a search, a message, an
# address); 10,000 characters is pages of it, and typing more keystroke by keystroke would hold
# the desktop for minutes. Checked by a validator, not as ``maxLength``: a grammar backend
# unrolls a bounded repeat into that many states.
MAX_TYPE_CHARS = 10_000

# The most presses one step may repeat (a chord's repeat count, the keys tapped while others are
# held): enough to move through a list or a set of tabs, not enough to hold the desktop.
MAX_REPEAT = 20


def _reasonable(value: float) -> float:
    if not -MAX_COORDINATE <= value <= MAX_COORDINATE:
        raise ValueError(f"a coordinate is at most {MAX_COORDINATE:g} either way")
    return value


def _typeable(text: str) -> str:
    if len(text) > MAX_TYPE_CHARS:
        raise ValueError(f"at most {MAX_TYPE_CHARS} characters can be typed in one step")
    return text


Coordinate = Annotated[float, AfterValidator(_reasonable)]


class _Action(BaseModel):
    # Unknown fields are an error: a model inventing fields is a model off the schema.
    # NaN and Infinity parse from JSON by default; no coordinate or duration can be one.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class _Pointed(_Action):
    """An action aimed at one point of the screenshot, naming its target in words."""

    element: str = Field(description="The target element, in words, e.g. 'Save button'")
    x: Coordinate = Field(description="Horizontal coordinate in the configured convention")
    y: Coordinate = Field(description="Vertical coordinate in the configured convention")


class Click(_Pointed):
    action: Literal["click"] = "click"
    button: Literal["left", "right", "middle"] = "left"
    clicks: int = Field(default=1, ge=1, le=3)


class DoubleClick(_Pointed):
    action: Literal["double_click"] = "double_click"


class Move(_Pointed):
    action: Literal["move"] = "move"


class Drag(_Pointed):
    action: Literal["drag"] = "drag"
    to_x: Coordinate
    to_y: Coordinate


class Scroll(_Pointed):
    action: Literal["scroll"] = "scroll"
    direction: Literal["up", "down", "left", "right"]
    amount: int = Field(default=5, ge=1, le=50)


class Type(_Action):
    action: Literal["type"] = "type"
    text: Annotated[str, AfterValidator(_typeable)]
    press_enter: bool = False
    clear_first: bool = False


class DragTo(_Pointed):
    """Press the left button where the pointer is now and release it at the point (H's
    ``drag_to_desktop``: the drag starts from the cursor a ``move`` put there)."""

    action: Literal["drag_to"] = "drag_to"


class Hotkey(_Action):
    action: Literal["hotkey"] = "hotkey"
    keys: list[str] = Field(min_length=1, max_length=5)
    #: How many times the chord is pressed (H's ``repeat_count``); 1 in every older log.
    repeat: int = Field(default=1, ge=1, le=MAX_REPEAT)

    @model_serializer(mode="wrap")
    def _as_before(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A chord pressed once is written as before the count existed: the action log, saved
        # steps, the history sent back to the model and anything digested from them stay
        # byte for byte what the older version wrote for the same action.
        data: dict[str, Any] = handler(self)
        if data.get("repeat") == 1:
            del data["repeat"]
        return data


class HoldAndTap(_Action):
    """Hold ``hold`` down, tap each of ``tap`` in turn, release ``hold`` (alt held, tab
    tapped twice). Released at the end of the step whatever happens."""

    action: Literal["hold_and_tap"] = "hold_and_tap"
    hold: list[str] = Field(min_length=1, max_length=4)
    tap: list[str] = Field(min_length=1, max_length=MAX_REPEAT)


class KeyDown(_Action):
    """Press ``key`` and keep it down across steps until a ``key_up`` of it; every key still
    down is released at the end of the run, however it ends."""

    action: Literal["key_down"] = "key_down"
    key: str = Field(min_length=1)


class KeyUp(_Action):
    action: Literal["key_up"] = "key_up"
    key: str = Field(min_length=1)


class Goal(BaseModel):
    """One goal of the model's plan."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    #: ``failed``: a goal given up (holo-nano's plan has it; docs/contract.md).
    status: Literal["pending", "in_progress", "done", "failed"] = "pending"


class UpdatePlan(_Action):
    """The model writes down its plan; nothing happens on the screen."""

    action: Literal["update_plan"] = "update_plan"
    goals: list[Goal] = Field(max_length=30)


class Wait(_Action):
    action: Literal["wait"] = "wait"
    seconds: float = Field(default=1, ge=0, le=10)


class AskUser(_Action):
    action: Literal["ask_user"] = "ask_user"
    question: str


class Answer(_Action):
    action: Literal["answer"] = "answer"
    text: str


Action = Annotated[
    Click | DoubleClick | Move | Drag | DragTo | Scroll | Type | Hotkey | HoldAndTap | KeyDown
    | KeyUp | Wait | UpdatePlan | AskUser | Answer,
    Field(discriminator="action"),
]
PointedAction = Click | DoubleClick | Move | Drag | DragTo | Scroll

ACTION_ADAPTER: TypeAdapter[Action] = TypeAdapter(Action)


class Step(BaseModel):
    """One answer of the model: what to remember, why, and what to do next."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    note: str = Field(default="", description="Facts worth remembering, or empty")
    thought: str = Field(description="Short reasoning about the next step")
    action: Action

    def dump(self) -> dict[str, Any]:
        """The step as the plain JSON object we push back as the assistant turn."""
        return self.model_dump(mode="json")
