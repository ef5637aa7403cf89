"""The plain words of H's tool vocabulary (issue 22), for the confirmation, the log and the
history, and its keys hidden when they type a secret."""

from __future__ import annotations

from typing import Any

from model.coords import Point
from model.prompt import SECRET_KEYS, describe_action, hidden_keys
from model.schema import ACTION_ADAPTER, Action, HoldAndTap, Hotkey, KeyDown


def act(**fields: Any) -> Action:
    return ACTION_ADAPTER.validate_python(fields)


def test_each_new_action_in_words() -> None:
    drag = act(action="drag_to", element="file", x=1, y=2)
    assert describe_action(drag, Point(5, 6), end=Point(40, 60)) == \
        'drag from (5, 6) to "file" at (40, 60)'
    assert describe_action(drag, Point(40, 60)) == 'drag from the pointer to "file" at (40, 60)'
    repeated = act(action="hotkey", keys=["ctrl", "tab"], repeat=3)
    assert describe_action(repeated) == "press ctrl+tab 3 times"
    assert describe_action(act(action="hotkey", keys=["enter"])) == "press enter"
    assert describe_action(repeated, secret=True) == "press [hidden keys] 3 times"
    tap = act(action="hold_and_tap", hold=["alt"], tap=["tab", "tab"])
    assert describe_action(tap) == "hold alt and tap tab, tab, then release"
    assert "tab" not in describe_action(tap, secret=True).split("tap ")[1]
    assert describe_action(act(action="key_down", key="shift")) == \
        "hold shift down (until released)"
    assert describe_action(act(action="key_down", key="a"), secret=True) == \
        "hold [hidden key] down (until released)"
    assert describe_action(act(action="key_up", key="shift")) == "release shift"
    plan = act(action="update_plan", goals=[{"title": "open", "status": "done"},
                                           {"title": "save", "status": "in_progress"}])
    assert describe_action(plan) == "update the plan: [done] open; [in progress] save"


def test_hidden_keys_hide_what_types() -> None:
    tap = hidden_keys(HoldAndTap(hold=["shift"], tap=["a", "b"]))
    assert isinstance(tap, HoldAndTap) and tap.hold == ["shift"] and tap.tap == [SECRET_KEYS]
    down = hidden_keys(KeyDown(key="a"))
    assert isinstance(down, KeyDown) and down.key == SECRET_KEYS
    chord = hidden_keys(Hotkey(keys=["a"], repeat=2))
    assert isinstance(chord, Hotkey) and chord.keys == [SECRET_KEYS] and chord.repeat == 2
