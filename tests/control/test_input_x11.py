"""Input execution: the executor on a DryRunBackend (unit) and on the real PyAutoGuiBackend
against the Tk target app on a private Xvfb (x11).

The real executor runs in a subprocess bound to the Xvfb (tests/support/input_worker.py):
pyautogui keeps the display it found at import, and this process must never hold one.
"""

from __future__ import annotations

import string
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from control.clipboard import ClipboardError, SystemClipboard, X11PasteServer
from control.input import DryRunBackend, Executor, InputTiming, split_text
from control.keys import UnknownKeyError, normalize_hotkey, normalize_key
from control.stop import StopLatch, StoppedError
from model.coords import Point
from model.schema import ACTION_ADAPTER, Action
from tests.support.fixtures import InputWorker
from tests.support.gui import poll
from tests.support.target_app import REPO_ROOT, RunningApp
from tests.support.xvfb import Xvfb

NO_WAIT = InputTiming(after_move_s=0, char_interval_s=0, key_interval_s=0, drag_hold_s=0,
                      drag_steps=4, drag_step_s=0, scroll_step_s=0, before_drop_s=0)


def act(**fields: Any) -> Action:
    return ACTION_ADAPTER.validate_python(fields)


def dry(latch: StopLatch | None = None) -> tuple[Executor, DryRunBackend, StopLatch]:
    latch = latch or StopLatch()
    backend = DryRunBackend()
    return Executor(backend, latch, timing=NO_WAIT, platform="linux"), backend, latch


# -- keys ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "linux", "mac"), [
    ("Control", "ctrl", "ctrl"), ("ctrl", "ctrl", "ctrl"), ("CMD", "win", "command"),
    ("super", "win", "command"), ("Meta", "win", "command"), ("win", "win", "command"),
    ("Return", "enter", "enter"), ("enter", "enter", "enter"), ("Esc", "esc", "esc"),
    ("escape", "esc", "esc"), ("PgUp", "pageup", "pageup"), ("Page Down", "pagedown", "pagedown"),
    ("ArrowLeft", "left", "left"), ("T", "t", "t"), ("option", "alt", "option"),
    ("F5", "f5", "f5"), ("plus", "+", "+"), ("Del", "delete", "delete"),
    ("space", "space", "space"), ("Tab", "tab", "tab"),
])
def test_key_names_are_normalized_per_platform(name: str, linux: str, mac: str) -> None:
    assert normalize_key(name, "linux") == linux
    assert normalize_key(name, "darwin") == mac


def test_hotkey_combos_are_split_and_unknown_keys_refused() -> None:
    assert normalize_hotkey(["ctrl+shift+T"], "linux") == ["ctrl", "shift", "t"]
    assert normalize_hotkey(["ctrl", "+"], "linux") == ["ctrl", "+"]
    assert normalize_hotkey(["Control", "ctrl", "c"], "linux") == ["ctrl", "c"]
    with pytest.raises(UnknownKeyError):
        normalize_hotkey(["ctrl", "hyperspace"], "linux")
    with pytest.raises(UnknownKeyError):
        normalize_key("é")


def test_text_is_split_into_typed_chars_keys_and_pastes() -> None:
    assert split_text("héllo\n日本!\t") == [
        ("char", "h"), ("paste", "é"), ("char", "l"), ("char", "l"), ("char", "o"),
        ("key", "enter"), ("paste", "日本"), ("char", "!"), ("key", "tab"),
    ]
    assert split_text("a\r\nb\x07") == [("char", "a"), ("key", "enter"), ("char", "b")]


# -- the executor on the dry-run backend ---------------------------------------------------


def test_the_pause_after_a_move_is_short_only_where_the_server_orders_the_events() -> None:
    """X11 hands the motion to the app before the press (the worker's clicks below run with
    the Linux default and land); Windows and macOS keep the longer pause, untested there."""
    latch = StopLatch()
    linux = Executor(DryRunBackend(), latch, platform="linux").timing
    assert linux == InputTiming.for_platform("linux") and linux.after_move_s <= 0.01
    assert linux.before_drop_s == 0.03  # a drop target answers the last motion first
    for other in ("win32", "darwin"):
        assert Executor(DryRunBackend(), latch, platform=other).timing.after_move_s == 0.03


def test_every_action_maps_to_primitives() -> None:
    ex, be, _ = dry()
    p, q = Point(10, 20), Point(110, 220)
    ex.execute(act(action="click", element="b", x=0, y=0, button="right", clicks=2), [p])
    assert [str(c) for c in be.calls] == [
        "move_to(10, 20)", "mouse_down('right')", "mouse_up('right')", "mouse_down('right')",
        "mouse_up('right')",
    ]
    be.calls.clear()
    ex.execute(act(action="double_click", element="b", x=0, y=0), [p])
    assert be.names() == ["move_to", "mouse_down", "mouse_up", "mouse_down", "mouse_up"]
    be.calls.clear()
    ex.execute(act(action="move", element="b", x=0, y=0), [q])
    assert be.names() == ["move_to"] and be.position() == (110, 220)
    be.calls.clear()
    ex.execute(act(action="drag", element="b", x=0, y=0, to_x=1, to_y=1), [p, q])
    names = be.names()
    assert names[:2] == ["move_to", "mouse_down"] and names[-1] == "mouse_up"
    assert be.calls[-2] == be.calls[-2].__class__("move_to", (110, 220))
    be.calls.clear()
    ex.execute(act(action="scroll", element="b", x=0, y=0, direction="down", amount=3), [p])
    assert [str(c) for c in be.calls] == ["move_to(10, 20)"] + ["scroll(10, 20, -1, 0)"] * 3
    be.calls.clear()
    ex.execute(act(action="scroll", element="b", x=0, y=0, direction="left", amount=1), [p])
    assert str(be.calls[-1]) == "scroll(10, 20, 0, -1)"
    be.calls.clear()
    ex.execute(act(action="type", text="Hé!", clear_first=True, press_enter=True))
    assert [str(c) for c in be.calls] == [
        "key_down('ctrl')", "key_down('a')", "key_up('a')", "key_up('ctrl')",
        "key_down('backspace')", "key_up('backspace')", "write_char('H')", "paste('é')",
        "write_char('!')", "key_down('enter')", "key_up('enter')",
    ]
    be.calls.clear()
    ex.execute(act(action="hotkey", keys=["Control", "Shift", "T"]))
    assert [str(c) for c in be.calls] == [
        "key_down('ctrl')", "key_down('shift')", "key_down('t')", "key_up('t')",
        "key_up('shift')", "key_up('ctrl')",
    ]
    be.calls.clear()
    for quiet in (act(action="wait", seconds=0), act(action="ask_user", question="?"),
                  act(action="answer", text="done")):
        ex.execute(quiet)
    assert be.calls == []
    assert ex.held_keys == () and ex.held_buttons == ()


def test_select_all_is_command_a_on_macos() -> None:
    be = DryRunBackend()
    Executor(be, StopLatch(), timing=NO_WAIT, platform="darwin").execute(
        act(action="type", text="x", clear_first=True))
    assert [str(c) for c in be.calls[:2]] == ["key_down('command')", "key_down('a')"]


def test_missing_points_and_unknown_keys_fail_before_any_input() -> None:
    ex, be, _ = dry()
    with pytest.raises(ValueError, match="needs 2 point"):
        ex.execute(act(action="drag", element="b", x=0, y=0, to_x=1, to_y=1), [Point(1, 1)])
    with pytest.raises(UnknownKeyError):
        ex.execute(act(action="hotkey", keys=["ctrl", "nosuchkey"]))
    assert be.calls == []


def test_a_set_latch_refuses_everything() -> None:
    ex, be, latch = dry()
    latch.stop("user", "test")
    with pytest.raises(StoppedError):
        ex.execute(act(action="move", element="b", x=0, y=0), [Point(1, 1)])
    assert be.calls == []


def test_a_stop_mid_type_stops_at_the_next_primitive() -> None:
    ex, be, latch = dry()

    def hook(call: Any) -> None:
        if len(be.calls) == 5:
            latch.stop("user", "enough")

    be.hook = hook
    with pytest.raises(StoppedError) as info:
        ex.execute(act(action="type", text="abcdefghijklmnop"))
    assert info.value.info.source == "user"
    assert be.typed() == "abcde"


def test_held_keys_and_buttons_are_released_after_a_stop() -> None:
    ex, be, latch = dry()

    def hook(call: Any) -> None:
        if call.name == "key_down" and call.args == ("shift",):
            latch.stop("user", "mid-hotkey")

    be.hook = hook
    with pytest.raises(StoppedError):
        ex.execute(act(action="hotkey", keys=["ctrl", "shift", "k"]))
    assert [str(c) for c in be.calls] == [
        "key_down('ctrl')", "key_down('shift')", "key_up('shift')", "key_up('ctrl')",
    ]
    assert ex.held_keys == ()

    latch.reset()
    be.calls.clear()

    def hook2(call: Any) -> None:
        if call.name == "mouse_down":
            latch.stop("user", "mid-drag")

    be.hook = hook2
    with pytest.raises(StoppedError):
        ex.execute(act(action="drag", element="b", x=0, y=0, to_x=1, to_y=1),
                   [Point(1, 1), Point(50, 50)])
    assert be.names() == ["move_to", "mouse_down", "mouse_up"]
    assert ex.held_buttons == ()


def test_an_error_in_the_backend_still_releases_what_is_held() -> None:
    ex, be, _ = dry()

    def hook(call: Any) -> None:
        if call.name == "key_down" and call.args == ("x",):
            raise OSError("display went away")

    be.hook = hook
    with pytest.raises(OSError):
        ex.execute(act(action="hotkey", keys=["alt", "x"]))
    # "x" may have gone down before the error: both are released, last pressed first.
    assert [str(c) for c in be.calls[-2:]] == ["key_up('x')", "key_up('alt')"]
    assert ex.held_keys == ()


def test_wait_ends_early_on_a_stop() -> None:
    ex, _, latch = dry()
    timer = threading.Timer(0.1, latch.stop, args=("user", "stop the wait"))
    timer.start()
    started = time.monotonic()
    with pytest.raises(StoppedError):
        ex.execute(act(action="wait", seconds=10))
    assert time.monotonic() - started < 5
    timer.join()


# -- the real backend on Xvfb --------------------------------------------------------------


def click_at(worker: InputWorker, point: tuple[int, int], **extra: Any) -> dict[str, Any]:
    return worker.execute({"action": "click", "element": "test", "x": 0, "y": 0, **extra},
                          [point])


def focus_field(worker: InputWorker, app: RunningApp, name: str = "field") -> None:
    mark = app.mark()
    assert click_at(worker, app.widgets[name].center)["ok"]
    app.wait_for(lambda: app.events_since(mark, "pointer_press", widget=name),
                 what=f"click on {name}")


def type_text(worker: InputWorker, app: RunningApp, text: str, **options: Any) -> dict[str, Any]:
    """Replace the focused field's text (clear_first) with ``text``."""
    return worker.execute({"action": "type", "text": text, "clear_first": True}, **options)


@pytest.fixture
def worker(input_worker: InputWorker) -> InputWorker:
    """The module's worker with a clear latch, after any test."""
    input_worker.send("reset")
    return input_worker


@pytest.mark.x11
def test_click_lands_on_the_button(worker: InputWorker, target_app: RunningApp) -> None:
    app = target_app
    for name, button, code in (("save", "left", 1), ("cancel", "right", 3),
                               ("open", "middle", 2)):
        x, y = app.widgets[name].solid_center
        mark = app.mark()
        reply = click_at(worker, (x, y), button=button)
        assert reply["ok"], reply
        click = app.wait_for(lambda n=name, m=mark: app.events_since(m, "click", widget=n),
                             what=f"click on {name}")[0]
        assert (click["button"], click["x"], click["y"]) == (code, x, y)
        assert [e["widget"] for e in app.events_since(mark, "press")] == [name]


@pytest.mark.x11
def test_double_click(worker: InputWorker, target_app: RunningApp) -> None:
    app = target_app
    mark = app.mark()
    reply = worker.execute({"action": "double_click", "element": "Open", "x": 0, "y": 0},
                           [app.widgets["open"].solid_center])
    assert reply["ok"], reply
    app.wait_for(lambda: len(app.events_since(mark, "release", widget="open")) == 2,
                 what="two releases")
    assert app.events_since(mark, "double_click", widget="open")


@pytest.mark.x11
def test_type_ascii_arrives_exactly(worker: InputWorker, target_app: RunningApp) -> None:
    app = target_app
    focus_field(worker, app)
    text = string.ascii_letters + string.digits + string.punctuation + " end"
    reply = type_text(worker, app, text)
    assert reply["ok"], reply
    app.wait_for(lambda: app.text() == text, what=f"text {text!r}, have {app.text()!r}")


@pytest.mark.x11
def test_non_ascii_arrives_exactly_and_the_clipboard_is_restored(
        worker: InputWorker, target_app: RunningApp) -> None:
    app = target_app
    focus_field(worker, app)
    assert worker.send("clipboard_set", text="what the person had copied")["ok"]
    text = "héllo wörld 日本"
    reply = type_text(worker, app, text)
    assert reply["ok"], reply
    assert reply["primitives"].count("paste") == 3
    app.wait_for(lambda: app.text() == text, what=f"text {text!r}, have {app.text()!r}")
    assert worker.send("clipboard_get")["text"] == "what the person had copied"


@pytest.mark.x11
def test_hotkey(worker: InputWorker, target_app: RunningApp) -> None:
    app = target_app
    focus_field(worker, app)
    assert type_text(worker, app, "select me")["ok"]
    app.wait_for(lambda: app.text() == "select me", what="typed text")
    mark = app.mark()
    reply = worker.execute({"action": "hotkey", "keys": ["Control", "A"]})
    assert reply["ok"], reply
    down = app.wait_for(lambda: app.events_since(mark, "key_down", keysym="a"), what="ctrl+a")
    assert down[0]["state"] & 4, "Control was not held when A went down"
    ups = app.wait_for(lambda: app.events_since(mark, "key_up", keysym="Control_L"),
                       what="ctrl released")
    assert ups
    # The selection is real: the next typed character replaces it.
    assert worker.execute({"action": "type", "text": "X"})["ok"]
    app.wait_for(lambda: app.text() == "X", what=f"replaced text, have {app.text()!r}")


@pytest.mark.x11
def test_scroll(worker: InputWorker, target_app: RunningApp) -> None:
    app = target_app
    point = app.widgets["list"].center
    mark = app.mark()
    reply = worker.execute({"action": "scroll", "element": "list", "x": 0, "y": 0,
                            "direction": "down", "amount": 4}, [point])
    assert reply["ok"], reply
    app.wait_for(lambda: len(app.events_since(mark, "scroll", direction="down")) == 4,
                 what="4 scroll-down events")
    view = app.wait_for(lambda: app.events_since(mark, "yview"), what="list scrolled")
    assert view[-1]["index"] > 0
    mark = app.mark()
    reply = worker.execute({"action": "scroll", "element": "list", "x": 0, "y": 0,
                            "direction": "right", "amount": 2}, [point])
    assert reply["ok"], reply
    events = app.wait_for(lambda: app.events_since(mark, "scroll", direction="right"),
                          what="scroll-right events")
    assert all(e["button"] == 7 for e in events)


@pytest.mark.x11
def test_drag(worker: InputWorker, target_app: RunningApp) -> None:
    app = target_app
    left, top, w, h = app.widgets["pad"].rect
    start, end = (left + 30, top + 30), (left + w - 40, top + h - 30)
    mark = app.mark()
    reply = worker.execute({"action": "drag", "element": "pad", "x": 0, "y": 0, "to_x": 1,
                            "to_y": 1}, [start, end])
    assert reply["ok"], reply
    # The app logs the motion count right after the release: wait for the last line.
    motions = app.wait_for(lambda: app.events_since(mark, "motion_count"), what="drag end")[0]
    press = app.events_since(mark, "press", widget="pad")[0]
    release = app.events_since(mark, "release", widget="pad")[0]
    assert (press["x"], press["y"]) == start
    assert (release["x"], release["y"]) == end
    assert motions["count"] >= 5


@pytest.mark.x11
def test_a_stop_from_another_thread_cuts_a_long_type_short(
        worker: InputWorker, target_app: RunningApp) -> None:
    app = target_app
    focus_field(worker, app)
    assert type_text(worker, app, "")["ok"]
    app.wait_for(lambda: app.text() == "", what="empty field")
    # Long enough (20 s of typing) to outlast the stop even when the target app, which the
    # stopping thread watches, handles the keys late on a loaded machine.
    text = "abcdefghij" * 300
    reply = type_text(worker, app, text,
                      stop_when_text={"events": str(app.events_path), "widget": "field",
                                      "min_len": 20})
    assert not reply["ok"] and reply["error"] == "StoppedError", reply
    assert reply["source"] == "test-thread"
    # At most the one character in flight when the stop landed got out after it.
    typed_after_stop = reply["calls"] - reply["calls_at_stop"]
    assert typed_after_stop <= 1, (reply["calls"], reply["calls_at_stop"], reply["primitives"][-5:])
    assert reply["held_keys"] == [] and reply["held_buttons"] == []
    # Exactly what was sent before the stop arrives, and nothing more later.
    typed = reply["primitives"].count("write_char")
    assert 20 <= typed < len(text)
    app.wait_for(lambda: app.text() == text[:typed], what=f"{typed} characters")
    app.sync()  # everything the worker sent has been handled
    assert app.text() == text[:typed]


@pytest.mark.x11
def test_keys_held_at_a_stop_are_released(worker: InputWorker, target_app: RunningApp) -> None:
    app = target_app
    focus_field(worker, app)
    mark = app.mark()
    # The stop lands right after Control went down, before Shift and K.
    reply = worker.execute({"action": "hotkey", "keys": ["ctrl", "shift", "k"]},
                           stop_after_calls=1)
    assert not reply["ok"] and reply["error"] == "StoppedError", reply
    assert reply["primitives"] == ["key_down", "key_up"]
    app.wait_for(lambda: app.events_since(mark, "key_up", keysym="Control_L"),
                 what="Control released")
    assert not app.events_since(mark, "key_down", keysym="k")
    assert not app.events_since(mark, "key_down", keysym="K")
    # A new action after reset types plain text: nothing is stuck down.
    worker.send("reset")
    assert type_text(worker, app, "ok")["ok"]
    app.wait_for(lambda: app.text() == "ok", what=f"plain text, have {app.text()!r}")


def _keys_down(xvfb: Xvfb, keysyms: list[str]) -> list[str]:
    """Which of ``keysyms`` the X server holds down now (its keymap, whoever pressed them)."""
    from Xlib import XK
    from Xlib import display as xdisplay

    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)
        try:
            keymap = d.query_keymap()
            codes = {name: int(d.keysym_to_keycode(XK.string_to_keysym(name)))
                     for name in keysyms}
        finally:
            d.close()
    return [name for name, code in codes.items() if keymap[code // 8] >> (code % 8) & 1]


@pytest.mark.x11
def test_right_hand_modifiers_held_at_a_stop_are_released(
        worker: InputWorker, target_app: RunningApp, xvfb: Xvfb) -> None:
    right = ["Control_R", "Alt_R", "Shift_R", "Super_R"]
    app = target_app
    focus_field(worker, app)
    mark = app.mark()
    # The stop lands once the four right-hand modifiers are down, before the K.
    reply = worker.execute({"action": "hotkey",
                            "keys": ["ctrlright", "altright", "shiftright", "winright", "k"]},
                           stop_after_calls=4)
    assert not reply["ok"] and reply["error"] == "StoppedError", reply
    assert reply["primitives"] == ["key_down"] * 4 + ["key_up"] * 4
    assert reply["held_keys"] == []
    poll(lambda: not _keys_down(xvfb, right), 30, "the right-hand modifiers up")
    app.wait_for(lambda: app.events_since(mark, "key_up", keysym="Control_R"),
                 what="Control_R released in the window")
    assert not app.events_since(mark, "key_down", keysym="k")
    assert not app.events_since(mark, "key_down", keysym="K")


@pytest.mark.x11
def test_a_key_held_by_key_down_types_capitals_until_its_key_up(
        worker: InputWorker, target_app: RunningApp, xvfb: Xvfb) -> None:
    app = target_app
    focus_field(worker, app)
    assert type_text(worker, app, "")["ok"]
    reply = worker.execute({"action": "key_down", "key": "shift"})
    assert reply["ok"] and reply["sticky_keys"] == ["shift"], reply
    assert _keys_down(xvfb, ["Shift_L"]) == ["Shift_L"]
    assert worker.execute({"action": "type", "text": "ab1"})["ok"]
    assert worker.execute({"action": "hold_and_tap", "hold": ["shift"], "tap": ["c"]})["ok"]
    assert _keys_down(xvfb, ["Shift_L"]) == ["Shift_L"]  # the tap's hold left it down
    reply = worker.execute({"action": "key_up", "key": "Shift_L"})
    assert reply["ok"] and reply["sticky_keys"] == [], reply
    assert worker.execute({"action": "type", "text": "d"})["ok"]
    app.wait_for(lambda: app.text() == "AB!Cd", what=f"'AB!Cd', have {app.text()!r}")
    assert _keys_down(xvfb, ["Shift_L"]) == []


@pytest.mark.x11
@pytest.mark.parametrize("ending", ["stop", "end of run"])
def test_keys_held_by_key_down_are_released_in_the_window(
        worker: InputWorker, target_app: RunningApp, xvfb: Xvfb, ending: str) -> None:
    app = target_app
    focus_field(worker, app)
    mark = app.mark()
    assert worker.execute({"action": "key_down", "key": "ctrl"})["ok"]
    assert worker.execute({"action": "key_down", "key": "Alt_R"})["ok"]
    assert set(_keys_down(xvfb, ["Control_L", "Alt_R"])) == {"Control_L", "Alt_R"}
    if ending == "stop":
        # Stopped during a later action: it releases them with its own keys.
        reply = worker.execute({"action": "hotkey", "keys": ["down"], "repeat": 5},
                               stop_after_calls=1)
        assert not reply["ok"] and reply["error"] == "StoppedError", reply
        assert reply["sticky_keys"] == [] and reply["held_keys"] == []
    else:
        assert worker.send("release_all")["sticky_keys"] == []
    poll(lambda: not _keys_down(xvfb, ["Control_L", "Alt_R"]), 30, "the held keys up")
    app.wait_for(lambda: app.events_since(mark, "key_up", keysym="Control_L"),
                 what="Control released in the window")
    app.wait_for(lambda: app.events_since(mark, "key_up", keysym="Alt_R"),
                 what="Alt_R released in the window")


@pytest.mark.x11
def test_hold_and_tap_stopped_between_taps_releases_the_hold_in_the_window(
        worker: InputWorker, target_app: RunningApp, xvfb: Xvfb) -> None:
    app = target_app
    focus_field(worker, app)
    mark = app.mark()
    # Control down, then the first tap's down and up: the stop lands before the second tap.
    reply = worker.execute({"action": "hold_and_tap", "hold": ["ctrl"], "tap": ["left"] * 5},
                           stop_after_calls=3)
    assert not reply["ok"] and reply["error"] == "StoppedError", reply
    assert reply["primitives"] == ["key_down", "key_down", "key_up", "key_up"]
    assert reply["held_keys"] == []
    poll(lambda: not _keys_down(xvfb, ["Control_L"]), 30, "Control up")
    app.wait_for(lambda: app.events_since(mark, "key_up", keysym="Control_L"),
                 what="Control released in the window")


@pytest.mark.x11
def test_a_stop_mid_drag_releases_the_button(worker: InputWorker, target_app: RunningApp) -> None:
    app = target_app
    left, top, w, h = app.widgets["pad"].rect
    mark = app.mark()
    reply = worker.execute({"action": "drag", "element": "pad", "x": 0, "y": 0, "to_x": 1,
                            "to_y": 1}, [(left + 20, top + 20), (left + w - 20, top + h - 20)],
                           stop_after_calls=3)
    assert not reply["ok"] and reply["error"] == "StoppedError", reply
    assert reply["primitives"][-1] == "mouse_up" and reply["held_buttons"] == []
    app.wait_for(lambda: app.events_since(mark, "release", widget="pad"), what="button up")


@pytest.mark.x11
def test_the_failsafe_corner_is_an_emergency_stop(
        worker: InputWorker, target_app: RunningApp, xvfb: Xvfb) -> None:
    app = target_app
    # Our own moves never trigger it: a target on a corner lands one pixel inside.
    reply = worker.execute({"action": "move", "element": "corner", "x": 0, "y": 0}, [(0, 0)])
    assert reply["ok"], reply
    assert worker.send("position")["position"] == [1, 1]
    assert click_at(worker, app.widgets["save"].solid_center)["ok"]
    # The person slams the pointer into a corner: the next action is an emergency stop.
    subprocess.run(["xdotool", "mousemove", "0", "0"], env=xvfb.env(), check=True)
    mark = app.mark()
    reply = click_at(worker, app.widgets["cancel"].solid_center)
    assert not reply["ok"] and reply["error"] == "StoppedError", reply
    assert reply["source"] == "failsafe-corner"
    assert reply["held_keys"] == [] and reply["held_buttons"] == []
    app.sync()  # everything the worker sent has been handled
    assert not app.events_since(mark, "click")
    # Still stopped until someone resets the latch, and stopped again while the pointer
    # stays in the corner.
    reply = click_at(worker, app.widgets["cancel"].solid_center)
    assert reply["error"] == "StoppedError"
    worker.send("reset")
    reply = click_at(worker, app.widgets["cancel"].solid_center)
    assert reply["source"] == "failsafe-corner"
    subprocess.run(["xdotool", "mousemove", "400", "400"], env=xvfb.env(), check=True)
    worker.send("reset")
    assert click_at(worker, app.widgets["cancel"].solid_center)["ok"]
    app.wait_for(lambda: app.events_since(mark, "click", widget="cancel"), what="click after reset")


@pytest.mark.x11
def test_setting_the_clipboard_does_not_hold_our_output_open(xvfb: Xvfb) -> None:
    # xclip stays alive owning the selection; it must not keep the caller's pipes open, or
    # anyone reading holodesk's output to the end waits as long as the clipboard lives.
    # xclip takes the selection in the background after set() returns: read until it has.
    code = ("import time\n"
            "from control.clipboard import SystemClipboard\n"
            "c = SystemClipboard()\n"
            "c.set('kept')\n"
            "deadline = time.monotonic() + 10\n"
            "while c.get() != 'kept' and time.monotonic() < deadline:\n"
            "    time.sleep(0.01)\n"
            "print(c.get())\n")
    env = xvfb.env()
    env["PYTHONPATH"] = str(REPO_ROOT)
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "kept\n"


@pytest.mark.x11
def test_the_x11_paste_server_knows_when_its_text_was_taken(xvfb: Xvfb) -> None:
    fetched: list[str] = []

    def another_app_pastes() -> None:
        # xclip -o plays the application: it asks for the clipboard in UTF8_STRING.
        def read() -> None:
            fetched.append(subprocess.run(["xclip", "-selection", "clipboard", "-o"],
                                          env=xvfb.env(), capture_output=True, text=True,
                                          timeout=10).stdout)
        threading.Thread(target=read, daemon=True).start()

    with xvfb.activated():
        server = X11PasteServer(xvfb.display)
        try:
            assert server.offer("héllo 日本", another_app_pastes, timeout_s=10)
            deadline = time.monotonic() + 10
            while not fetched and time.monotonic() < deadline:
                time.sleep(0.01)
            assert fetched == ["héllo 日本"]
            # Nobody asks: the offer gives up after its timeout and says so.
            started = time.monotonic()
            assert not server.offer("unused", lambda: None, timeout_s=0.2)
            assert time.monotonic() - started < 5
            with pytest.raises(ClipboardError):
                server.offer("x" * (X11PasteServer.MAX_BYTES + 1), lambda: None)
            # Handing the clipboard back: another owner takes it, the wait sees it.
            SystemClipboard().set("given back")
            assert server.wait_released(timeout_s=10)
        finally:
            server.close()
