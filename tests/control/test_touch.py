"""Hand back on touch: which input is the person's, decided on synthetic events, then on Xvfb
with real listeners, real pyautogui input (ours) and xdotool (the person)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from control.input import Call, DryRunBackend, Executor
from control.stop import StopLatch
from control.touch import TouchDetector
from model.coords import Point
from model.schema import Click, Type
from tests.support.target_app import REPO_ROOT
from tests.support.xvfb import Xvfb


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def touches() -> list[str]:
    return []


@pytest.fixture
def detector(clock: Clock, touches: list[str]) -> TouchDetector:
    return TouchDetector(touches.append, tolerance_px=2, grace_s=0.3, expect_window_s=2.0,
                         clock=clock)


# -- decisions on synthetic events ---------------------------------------------------------------


def test_a_key_outside_our_input_is_the_person_and_is_reported_once(
    detector: TouchDetector, touches: list[str]
) -> None:
    assert detector.key_pressed()
    assert detector.key_pressed()  # still the person's...
    assert touches == ["keyboard"]  # ...but reported once
    assert not detector.armed
    detector.rearm()
    assert detector.mouse_moved(500, 500)
    assert touches == ["keyboard", "mouse"]


def test_keys_inside_our_input_and_its_grace_are_ours(
    detector: TouchDetector, clock: Clock, touches: list[str]
) -> None:
    with detector.own_input():
        clock.now += 5.0  # a long paste
        assert not detector.key_pressed()
    clock.now += 0.25  # delivered late by the listener
    assert not detector.key_pressed()
    clock.now += 0.1
    assert detector.key_pressed()
    assert touches == ["keyboard"]


def test_pointer_events_at_our_points_are_ours_anywhere_else_the_person(
    detector: TouchDetector, clock: Clock, touches: list[str]
) -> None:
    with detector.own_input([(400, 300)]):
        assert not detector.mouse_moved(400, 300)
        assert not detector.mouse_moved(401, 299)  # within tolerance (rounding, scaling)
        assert not detector.mouse_clicked(400, 300, pressed=True)
    clock.now += 1.0
    assert not detector.mouse_moved(400, 300)  # a late delivery of our own move
    assert touches == []
    # The person's hand moves the pointer while we type: outside any point we set.
    with detector.own_input():
        assert detector.mouse_moved(640, 480)
    assert touches == ["mouse"]


def test_an_old_expected_point_no_longer_covers_the_person(
    detector: TouchDetector, clock: Clock, touches: list[str]
) -> None:
    detector.expect(10, 10)
    clock.now += 2.5
    assert detector.mouse_moved(10, 10)
    assert touches == ["mouse"]


def test_releases_injected_events_and_a_disabled_detector_never_count(
    detector: TouchDetector, touches: list[str]
) -> None:
    assert not detector.mouse_clicked(700, 700, pressed=False)
    assert not detector.key_pressed(injected=True)
    assert not detector.mouse_moved(700, 700, injected=True)
    assert not detector.mouse_scrolled(700, 700, injected=True)
    detector.enabled = False  # e.g. while a confirmation is open
    assert not detector.key_pressed()
    assert not detector.mouse_moved(700, 700)
    assert touches == []
    assert detector.armed  # nothing was spent
    detector.enabled = True
    assert detector.mouse_scrolled(700, 700)
    assert touches == ["mouse"]


def test_a_failing_callback_does_not_break_the_detector(clock: Clock) -> None:
    def boom(_kind: str) -> None:
        raise RuntimeError("ui gone")

    detector = TouchDetector(boom, clock=clock)
    assert detector.key_pressed()  # logged, not raised


def test_the_wrapped_backend_marks_every_primitive_as_ours(
    detector: TouchDetector, clock: Clock, touches: list[str]
) -> None:
    inner = DryRunBackend()
    seen_inside: list[bool] = []

    def during(call: Call) -> None:
        # What the listener would decide about an event arriving while the primitive runs.
        if call.name == "move_to":
            x, y = call.args
            seen_inside.append(detector.mouse_moved(x, y))
        else:
            seen_inside.append(detector.key_pressed())

    inner.hook = during
    backend = detector.wrap(inner)
    executor = Executor(backend, StopLatch())
    executor.execute(Click(element="Save", x=0, y=0), [Point(321, 123)])
    executor.execute(Type(text="hi there", press_enter=True))
    assert seen_inside and not any(seen_inside)
    assert touches == []
    assert backend.position() == (321, 123)
    assert backend.typed() == "hi there\n"  # anything else passes through to the backend


# -- real listeners on Xvfb ------------------------------------------------------------------------

_WORKER = """
import json, sys, threading, time
from control.input import PyAutoGuiBackend
from control.stop import StopLatch
from control.touch import TouchDetector


class Watched(TouchDetector):
    # Notes each event its listeners delivered, once it has been decided on: the test waits
    # on these, never on time for the listeners to catch up.
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = threading.Condition()
        self.moves = []
        self.keys = 0

    def mouse_moved(self, x, y, injected=False):
        try:
            return super().mouse_moved(x, y, injected)
        finally:
            with self.seen:
                self.moves.append((x, y))
                self.seen.notify_all()

    def key_pressed(self, injected=False):
        try:
            return super().key_pressed(injected)
        finally:
            with self.seen:
                self.keys += 1
                self.seen.notify_all()


touches = []
detector = Watched(touches.append)
inner = PyAutoGuiBackend(StopLatch())
backend = detector.wrap(inner)
detector.start()
own_keys = 0  # key presses we sent
marks = []  # the marker moves we made


def caught_up(person_keys):
    # The pointer listener delivers in order: once it has delivered a marker move of ours,
    # it has delivered every pointer event before it. The marker is announced as ours with
    # expect() alone: an own-input window would hide a key the person presses next. Keys
    # have no such marker (any key of ours opens that window), so the keyboard listener is
    # waited on by count: every press we sent and the person's presses the test names.
    marks.append((40 + len(marks) % 2, 700))  # never where the pointer is now
    detector.expect(*marks[-1])
    inner.move_to(*marks[-1])
    with detector.seen:
        return detector.seen.wait_for(
            lambda: detector.moves.count(marks[-1]) >= marks.count(marks[-1])
            and detector.keys >= own_keys + person_keys, timeout=30)


print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    cmd = json.loads(line)
    op = cmd["op"]
    reply = {}
    if op == "move":
        for x, y in cmd["points"]:
            backend.move_to(x, y)
            time.sleep(0.02)
    elif op == "click":
        backend.mouse_down("left")
        backend.mouse_up("left")
    elif op == "type":
        for ch in cmd["text"]:
            backend.write_char(ch)
            own_keys += 1
    elif op == "touches":
        reply["caught_up"] = caught_up(cmd.get("person_keys", 0))
        reply["seen"] = {"moves": len(detector.moves), "keys": detector.keys,
                         "own_keys": own_keys}
    elif op == "rearm":
        # Also past the grace after our last own input: a key pressed in it counts as ours.
        while detector._in_own_window(detector.clock()):
            time.sleep(0.01)
        touches.clear()
        detector.rearm()
    elif op == "quit":
        break
    reply["touches"] = touches
    print(json.dumps(reply), flush=True)
detector.stop()
"""


class Worker:
    def __init__(self, xvfb: Xvfb) -> None:
        env = xvfb.env()
        env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER], env=env, cwd=REPO_ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        hello = self._read()
        assert hello.get("ready"), hello

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"touch worker died: {err}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def send(self, op: str, **fields: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def touches(self, person_keys: int = 0) -> list[str]:
        """The touches reported once the listeners have delivered everything sent so far
        (``person_keys``: how many keys the person, xdotool, has pressed in all)."""
        reply = self.send("touches", person_keys=person_keys)
        assert reply["caught_up"], f"the listeners fell behind: {reply}"
        return list(reply["touches"])

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(5)
            except Exception:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture
def worker(xvfb: Xvfb) -> Iterator[Worker]:
    subprocess.run(["xdotool", "mousemove", "640", "400"], env=xvfb.env(), check=True)
    w = Worker(xvfb)
    yield w
    w.close()


def _xdotool(xvfb: Xvfb, *args: str) -> None:
    subprocess.run(["xdotool", *args], env=xvfb.env(), check=True)


@pytest.mark.x11
def test_our_own_input_is_not_a_touch_but_xdotool_is(xvfb: Xvfb, worker: Worker) -> None:
    # Ours: pointer jumps, a click, typing (there is no window: the keys go nowhere).
    worker.send("move", points=[[100, 100], [700, 500], [300, 600]])
    worker.send("click")
    worker.send("type", text="hello")
    assert worker.touches() == []
    # The person's: the pointer moves somewhere holodesk did not put it.
    _xdotool(xvfb, "mousemove", "900", "200")
    assert worker.touches() == ["mouse"]
    worker.send("rearm")
    _xdotool(xvfb, "key", "a")
    assert worker.touches(person_keys=1) == ["keyboard"]
    # Once re-armed, our own input is still ours.
    worker.send("rearm")
    worker.send("move", points=[[200, 200], [250, 260]])
    assert worker.touches(person_keys=1) == []
