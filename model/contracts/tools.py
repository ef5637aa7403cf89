"""The tools of H's two vocabularies as pydantic models, and the way between each tool and
holodesk's own action (docs/contract.md, "Tools").

Names, argument names, types, bounds and defaults are H's; the descriptions are holodesk's.
Both vocabularies add ``wait`` and ``ask_user``: H's hub says real agents register a wider
toolbox, and holodesk's runs need both. Coordinates are integers in [0, 1000] of the image
sent; internally they stay in holodesk's norm1000 convention (model/coords.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from model.contracts.base import Vocabulary
from model.schema import (
    Action,
    Answer,
    AskUser,
    Click,
    DoubleClick,
    Drag,
    DragTo,
    Goal,
    HoldAndTap,
    Hotkey,
    KeyDown,
    KeyUp,
    Move,
    Scroll,
    Type,
    UpdatePlan,
    Wait,
)

__all__ = ["TOOLS", "Tool", "from_action", "to_action"]

#: The most wheel steps one scroll does in holodesk (model.schema.Scroll); more is done as this.
_MOST_WHEEL_STEPS = 50


class Tool(BaseModel):
    # Strict: an answer is JSON the grammar bound; 500.0 or "500" for an integer is off it.
    model_config = ConfigDict(extra="forbid", strict=True)
    tool_name: str


_ELEMENT = "The target, in words: its text, look and place"
_X = "X coordinate as integer in [0, 1000]"
_Y = "Y coordinate as integer in [0, 1000]"


class _Point(Tool):
    element: str = Field(description=_ELEMENT)
    x: int = Field(ge=0, le=1000, description=_X)
    y: int = Field(ge=0, le=1000, description=_Y)


class _Plan(Tool):
    goals: list[_PlanGoal] = Field(min_length=1, max_length=20,
                                   description="Every goal of the plan, in order")


class _PlanGoal(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, title="Goal")
    title: str = Field(description="What to do, starting with a verb")
    status: Literal["todo", "running", "done", "failed"] = Field(
        description="At most one goal is running")


class _Scroll(_Point):
    direction: Literal["up", "down", "left", "right"]
    scroll_size: int = Field(default=10, ge=1, le=100, description="Mouse wheel steps")


class _Hotkey(Tool):
    keys: list[str] = Field(min_length=1, max_length=5,
                            description="Keys pressed in order and released in reverse")
    repeat_count: int = Field(default=1, ge=1, le=20, description="Times the chord is pressed")


class _HoldAndTap(Tool):
    hold_keys: list[str] = Field(min_length=1, max_length=3, description="Keys held down")
    tap_keys: list[str] = Field(min_length=1, max_length=5,
                                description="Keys tapped once each, in order, while held")


class _Key(Tool):
    key: str = Field(description="One key, e.g. 'shift'")


class _Answer(Tool):
    content: str = Field(description="The final answer; it ends the task")


class _Wait(Tool):
    seconds: float = Field(default=1, ge=0, le=10, description="Seconds to wait, 0 to 10")


class _AskUser(Tool):
    question: str = Field(description="The question for the person; it hands control back")


# ------------------------------------------------------------------ holo-nano: *_desktop


class ClickDesktop(_Point):
    tool_name: Literal["click_desktop"]
    button: Literal["left", "right", "middle"] = "left"


class DoubleClickDesktop(_Point):
    tool_name: Literal["double_click_desktop"]


class MoveToDesktop(_Point):
    tool_name: Literal["move_to_desktop"]


class DragToDesktop(_Point):
    tool_name: Literal["drag_to_desktop"]


class ScrollDesktop(_Scroll):
    tool_name: Literal["scroll_desktop"]


class WriteDesktop(Tool):
    tool_name: Literal["write_desktop"]
    content: str = Field(description="The text to type at the focus")
    press_enter: bool = False
    overwrite: bool = Field(default=False, description="Select all and delete before typing")


class HotkeyDesktop(_Hotkey):
    tool_name: Literal["hotkey_desktop"]


class HoldAndTapKeyDesktop(_HoldAndTap):
    tool_name: Literal["hold_and_tap_key_desktop"]


class KeyDownDesktop(_Key):
    tool_name: Literal["key_down_desktop"]


class KeyUpDesktop(_Key):
    tool_name: Literal["key_up_desktop"]


# ------------------------------------------------------------------ the hub


class ClickTool(_Point):
    model_config = ConfigDict(title="Click")
    tool_name: Literal["click"]


class WriteTool(Tool):
    model_config = ConfigDict(title="Write")
    tool_name: Literal["write"]
    content: str = Field(description="The text to type at the focus")
    press_enter: bool = False


class DoubleClickTool(_Point):
    model_config = ConfigDict(title="DoubleClick")
    tool_name: Literal["double_click"]


class MoveToTool(_Point):
    model_config = ConfigDict(title="MoveTo")
    tool_name: Literal["move_to"]


class DragToTool(_Point):
    model_config = ConfigDict(title="DragTo")
    tool_name: Literal["drag_to"]


class ScrollTool(_Scroll):
    model_config = ConfigDict(title="Scroll")
    tool_name: Literal["scroll"]


class HotkeyTool(_Hotkey):
    model_config = ConfigDict(title="Hotkey")
    tool_name: Literal["hotkey"]


class HoldAndTapKeyTool(_HoldAndTap):
    model_config = ConfigDict(title="HoldAndTapKey")
    tool_name: Literal["hold_and_tap_key"]


class KeyDownTool(_Key):
    model_config = ConfigDict(title="KeyDown")
    tool_name: Literal["key_down"]


class KeyUpTool(_Key):
    model_config = ConfigDict(title="KeyUp")
    tool_name: Literal["key_up"]


# ------------------------------------------------------------------ in both


class UpdatePlanTool(_Plan):
    model_config = ConfigDict(title="UpdatePlan")
    tool_name: Literal["update_plan"]


class AnswerTool(_Answer):
    model_config = ConfigDict(title="Answer")
    tool_name: Literal["answer"]


class WaitTool(_Wait):
    model_config = ConfigDict(title="Wait")
    tool_name: Literal["wait"]


class AskUserTool(_AskUser):
    model_config = ConfigDict(title="AskUser")
    tool_name: Literal["ask_user"]


#: Each vocabulary's tools by name, in the order the schema lists them.
TOOLS: dict[Vocabulary, dict[str, type[Tool]]] = {
    Vocabulary.HOLO_NANO: {
        "update_plan": UpdatePlanTool,
        "write_desktop": WriteDesktop,
        "click_desktop": ClickDesktop,
        "double_click_desktop": DoubleClickDesktop,
        "drag_to_desktop": DragToDesktop,
        "scroll_desktop": ScrollDesktop,
        "move_to_desktop": MoveToDesktop,
        "key_down_desktop": KeyDownDesktop,
        "key_up_desktop": KeyUpDesktop,
        "hotkey_desktop": HotkeyDesktop,
        "hold_and_tap_key_desktop": HoldAndTapKeyDesktop,
        "answer": AnswerTool,
        "wait": WaitTool,
        "ask_user": AskUserTool,
    },
    Vocabulary.HUB: {
        "click": ClickTool,
        "write": WriteTool,
        "answer": AnswerTool,
        "double_click": DoubleClickTool,
        "move_to": MoveToTool,
        "drag_to": DragToTool,
        "scroll": ScrollTool,
        "hotkey": HotkeyTool,
        "hold_and_tap_key": HoldAndTapKeyTool,
        "key_down": KeyDownTool,
        "key_up": KeyUpTool,
        "update_plan": UpdatePlanTool,
        "wait": WaitTool,
        "ask_user": AskUserTool,
    },
}

_TO_GOAL = {"todo": "pending", "running": "in_progress", "done": "done", "failed": "failed"}
_FROM_GOAL = {internal: said for said, internal in _TO_GOAL.items()}
# The tools of the same kind in the two vocabularies, by the nano name's stem.
_KIND = {
    "click_desktop": "click", "click": "click",
    "double_click_desktop": "double_click", "double_click": "double_click",
    "move_to_desktop": "move_to", "move_to": "move_to",
    "drag_to_desktop": "drag_to", "drag_to": "drag_to",
    "scroll_desktop": "scroll", "scroll": "scroll",
    "write_desktop": "write", "write": "write",
    "hotkey_desktop": "hotkey", "hotkey": "hotkey",
    "hold_and_tap_key_desktop": "hold_and_tap", "hold_and_tap_key": "hold_and_tap",
    "key_down_desktop": "key_down", "key_down": "key_down",
    "key_up_desktop": "key_up", "key_up": "key_up",
    "update_plan": "update_plan", "answer": "answer", "wait": "wait", "ask_user": "ask_user",
}


def _name(vocabulary: Vocabulary, kind: str) -> str:
    return next(name for name in TOOLS[vocabulary] if _KIND[name] == kind)


def to_action(tool: Tool) -> Action:
    """holodesk's action for a validated tool call (ValueError past holodesk's own limits)."""
    kind = _KIND[tool.tool_name]
    data: dict[str, Any] = tool.model_dump(exclude={"tool_name"})
    if kind == "click":
        return Click(**data)
    if kind == "double_click":
        return DoubleClick(**data)
    if kind == "move_to":
        return Move(**data)
    if kind == "drag_to":
        return DragTo(**data)
    if kind == "scroll":
        steps = min(data.pop("scroll_size"), _MOST_WHEEL_STEPS)
        return Scroll(**data, amount=steps)
    if kind == "write":
        return Type(text=data["content"], press_enter=data["press_enter"],
                    clear_first=data.get("overwrite", False))
    if kind == "hotkey":
        return Hotkey(keys=data["keys"], repeat=data["repeat_count"])
    if kind == "hold_and_tap":
        return HoldAndTap(hold=data["hold_keys"], tap=data["tap_keys"])
    if kind == "key_down":
        return KeyDown(key=data["key"])
    if kind == "key_up":
        return KeyUp(key=data["key"])
    if kind == "update_plan":
        return UpdatePlan(goals=[Goal(title=g["title"], status=_TO_GOAL[g["status"]])  # type: ignore[arg-type]
                                 for g in data["goals"]])
    if kind == "answer":
        return Answer(text=data["content"])
    if kind == "wait":
        return Wait(seconds=data["seconds"])
    return AskUser(question=data["question"])


def from_action(action: Action, vocabulary: Vocabulary) -> dict[str, Any]:
    """``action`` as a tool call of ``vocabulary`` (``tool_name`` first, then the arguments
    with their defaults, as the model writes them). An action the vocabulary lacks becomes the
    nearest tool (a one-shot drag its end point, a triple click one click); those come only
    from a replayed older run, and the tool result says what was done."""
    def point(kind: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        assert isinstance(action, Click | DoubleClick | Move | Drag | DragTo | Scroll)
        x, y = (action.to_x, action.to_y) if isinstance(action, Drag) else (action.x, action.y)
        return {"tool_name": _name(vocabulary, kind), "element": action.element,
                "x": _int(x), "y": _int(y), **(extra or {})}

    hub = vocabulary is Vocabulary.HUB
    if isinstance(action, Click):
        if action.clicks == 2:
            return point("double_click")
        return point("click", None if hub else {"button": action.button})
    if isinstance(action, DoubleClick):
        return point("double_click")
    if isinstance(action, Move):
        return point("move_to")
    if isinstance(action, Drag | DragTo):
        return point("drag_to")
    if isinstance(action, Scroll):
        return point("scroll", {"direction": action.direction, "scroll_size": action.amount})
    name = _name(vocabulary, _kind_of(action))
    if isinstance(action, Type):
        out: dict[str, Any] = {"tool_name": name, "content": action.text,
                               "press_enter": action.press_enter}
        if not hub:
            out["overwrite"] = action.clear_first
        return out
    if isinstance(action, Hotkey):
        return {"tool_name": name, "keys": list(action.keys), "repeat_count": action.repeat}
    if isinstance(action, HoldAndTap):
        return {"tool_name": name, "hold_keys": list(action.hold), "tap_keys": list(action.tap)}
    if isinstance(action, KeyDown | KeyUp):
        return {"tool_name": name, "key": action.key}
    if isinstance(action, UpdatePlan):
        return {"tool_name": name, "goals": [{"title": g.title, "status": _FROM_GOAL[g.status]}
                                             for g in action.goals]}
    if isinstance(action, Answer):
        return {"tool_name": name, "content": action.text}
    if isinstance(action, Wait):
        return {"tool_name": name, "seconds": action.seconds}
    assert isinstance(action, AskUser)
    return {"tool_name": name, "question": action.question}


def _kind_of(action: Action) -> str:
    return {"type": "write", "hotkey": "hotkey", "hold_and_tap": "hold_and_tap",
            "key_down": "key_down", "key_up": "key_up", "update_plan": "update_plan",
            "answer": "answer", "wait": "wait", "ask_user": "ask_user"}[action.action]


def _int(value: float) -> int:
    # holodesk's norm1000 point as H writes it: an integer in [0, 1000].
    return min(max(round(value), 0), 1000)
