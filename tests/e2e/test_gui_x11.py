"""End to end through the desktop app on a private Xvfb, driven the way a person drives it.

`holodesk` (no arguments) runs as a subprocess on the xcb platform against the fake vLLM
server; the test types the task into the task window with xdotool, answers the confirmation
panel with the keyboard, presses the global stop hotkey, moves the mouse, clicks Resume, and
reads what the app shows from the screen (the tray stand-in's state colour). The target window
(tests/support/target_app.py) records what reaches it.

There is no window manager: the app's windows sit at the top left where they ask to be, the
target window at the bottom right, out of their way; the app sets the keyboard focus itself
(a click does not, so the test gives the task window the focus before Ctrl+Enter).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.e2e import configure, holodesk_argv, run_holodesk
from tests.support.fake_vllm import (
    ChatRequest,
    FakeVLLM,
    SeeingPolicy,
    Target,
    find_color,
    to_convention,
)
from tests.support.fixtures import target_app_fixture, xvfb_fixture
from tests.support.gui import (
    RUN_BAR,
    TRAY_DONE,
    TRAY_IDLE,
    TRAY_STOPPED,
    TRAY_WAITING,
    TRAY_WORKING,
    HolodeskGui,
    XWindow,
    grab,
    poll,
    tray_icon,
    windows,
)
from tests.support.home import REPO_ROOT, Home
from tests.support.stop_hotkey import LONG_TEXT
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1920, 1080)

RED = (255, 0, 0)  # the target's Save button
GREEN = (0, 255, 0)  # its Cancel button
BLUE = (0, 0, 255)  # its text field
TARGET_GEOMETRY = "1000x660+900+400"  # bottom right: the app's windows are at the top left
TARGET_RECT = (900, 400, 1000, 660)
TRAY_PLACE = (0, 1000)  # the tray stand-in, moved from under the task window to be seen
TIMEOUT = 60.0  # loose: a busy 2-core machine starts Qt, Tk and Python in parallel


app = target_app_fixture(TARGET_GEOMETRY, pointer=(600, 900))


def _ready(gui: HolodeskGui) -> XWindow:
    """Move the tray stand-in where it can be seen and wait until it shows idle: the server
    probe has answered, so no late status change repaints the tray in the middle of a test."""
    tray = tray_icon(gui.move(gui.tray, *TRAY_PLACE))
    gui.wait_shows(tray, TRAY_IDLE, "the tray to show idle (the model server is up)")
    return tray


def _start_task(gui: HolodeskGui, task: str) -> XWindow:
    """Click into the task box, type the task, Ctrl+Enter: the run starts, the task window and
    the stand-in collapse into the run bar (returned)."""
    gui.click(*gui.task.point(100, 30))
    gui.xdotool("type", "--delay", "15", task)
    gui.focus(gui.task)  # no window manager hands it the focus on the click
    gui.xdotool("key", "ctrl+Return")
    bar = gui.run_bar()
    assert gui.visible(gui.task) is None and gui.visible(gui.tray) is None, "not collapsed"
    return bar


def _back(gui: HolodeskGui, title: str) -> None:
    """Wait until the run is over: the task window back (showing ``title``), the bar gone."""
    poll(lambda: (w := gui.visible(gui.task)) is not None and w.name == title
         and not windows(gui.xvfb, RUN_BAR, gui.pid), TIMEOUT,
         "the task window back after the run", gui.died)


def _log_show(home: Home) -> str:
    result = run_holodesk(home, "log", "show", "last")
    assert result.returncode == 0, str(result)
    return result.stdout


def _log_text(home: Home) -> str:
    """The app's own log file(s)."""
    return "".join(p.read_text(errors="replace") for p in home.state.rglob("*.log"))


def _field_text(app: RunningApp, mark: int) -> str:
    changes = app.events_since(mark, "text", widget="field")
    return str(changes[-1]["value"]) if changes else ""


def _approve_with_enter(gui: HolodeskGui, app: RunningApp, panel: XWindow) -> None:
    """Press Enter until the click arrives; again only while the panel is still up (on a
    slow machine the first Enter may come before the panel is armed, and is ignored)."""
    deadline = time.monotonic() + TIMEOUT
    while not app.events("click", widget="save"):
        if time.monotonic() > deadline:
            raise AssertionError("the approved click on Save did not arrive")
        if any(w.wid == panel.wid for w in windows(gui.xvfb, ".*", gui.pid)):
            gui.xdotool("key", "Return")
        settle = time.monotonic() + 3.0
        while time.monotonic() < settle and not app.events("click", widget="save"):
            time.sleep(0.05)


def test_type_a_task_and_approve_the_click(xvfb: Xvfb, app: RunningApp, home: Home,
                                           tmp_path: Path) -> None:
    with FakeVLLM(SeeingPolicy([Target("Save button", RED)])) as server:
        configure(home, endpoint=server.base_url, confirm="always")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            tray = _ready(gui)
            _start_task(gui, "press the save button")

            panel = gui.confirm_panel()
            # The overlay marks the exact point on the real screen: the middle of Save.
            overlay = gui.window("^holodesk target$")
            left, top, width, height = app.widgets["save"].rect
            centre = overlay.point(overlay.width // 2, overlay.height // 2)
            assert left <= centre[0] < left + width and top <= centre[1] < top + height, (
                overlay, app.widgets["save"])
            app.sync()  # whatever the run sent before it asked has arrived now
            assert not app.events("pointer_press"), "clicked before the approval"
            # The panel took the focus itself; Enter approves once it is armed (350 ms).
            _approve_with_enter(gui, app, panel)
            gui.hidden(panel)
            _back(gui, "holodesk — press the save button")
            gui.wait_shows(tray, TRAY_DONE, "the tray to show the run done")
    assert [e["widget"] for e in app.events("click")] == ["save"]
    shown = _log_show(home)
    assert "answered" in shown
    assert "approved" in shown
    assert "Save button" in shown


def test_the_stop_hotkey_stops_a_long_type(xvfb: Xvfb, app: RunningApp, home: Home,
                                           tmp_path: Path) -> None:
    mark = app.mark()
    policy = SeeingPolicy([Target("Name field", BLUE, type_text=LONG_TEXT)])
    with FakeVLLM(policy) as server:
        configure(home, endpoint=server.base_url, confirm="never")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            tray = _ready(gui)
            stop = _start_task(gui, "type the digits")
            app.wait_for(lambda: len(_field_text(app, mark)) >= 20, timeout=TIMEOUT,
                         what="typing to start")
            # The run bar is up, clear of the window the run types into, on the screen.
            stop = gui.refresh(stop)
            assert not _overlap(stop, TARGET_RECT), (stop, TARGET_RECT)
            assert stop.x >= 0 and stop.x + stop.width <= xvfb.width
            gui.xdotool("key", "ctrl+alt+shift+Escape")
            gui.wait_shows(tray, TRAY_STOPPED, "the tray to show the run stopped")
            # The run's worker has ended (the run bar goes once it has), and
            # every key it sent has been handled: nothing more can come from it.
            gui.hidden(stop)
            app.sync()
            typed = _field_text(app, mark)
            app.sync()
            typed_later = _field_text(app, mark)
            assert gui.died() is None  # a stop ends the run, not the app
    assert LONG_TEXT.startswith(typed)
    assert 20 <= len(typed) < len(LONG_TEXT)
    assert typed_later == typed, "input arrived after the run had stopped"
    assert "stopped" in _log_show(home)


class SlowSecondAnswer:
    """Click Save; then think until released (the test moves the mouse meanwhile) and click
    Cancel; click Cancel again once asked afresh; then answer."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> str:
        shot = request.latest_image
        if shot is None or shot.width < 200:  # the app's server probe, not a step
            return '{"thought": "", "action": {"action": "answer", "text": "ok"}}'
        with self._lock:
            self.calls += 1
            n = self.calls
        if n == 2:
            self.release.wait(TIMEOUT)
        if n >= 4:
            return '{"thought": "done", "action": {"action": "answer", "text": "clicked both"}}'
        element, colour = ("Save button", RED) if n == 1 else ("Cancel button", GREEN)
        found = find_color(shot.image, colour)
        assert found is not None, f"{element} not visible"
        x, y = to_convention(found.x, found.y, shot.width, shot.height, "norm1000")
        step: dict[str, Any] = {"thought": f"click the {element}",
                                "action": {"action": "click", "element": element, "x": x, "y": y}}
        return json.dumps(step)


def _resume_button(xvfb: Xvfb, task: XWindow) -> tuple[int, int]:
    """The Pause/Resume button: just left of the task window's red Stop button (in the top
    half; the screenshot preview below it may hold red too)."""
    top = grab(xvfb).crop((task.x, task.y, task.x + task.width, task.y + task.height // 2))
    rgb = np.asarray(top, dtype=np.int16)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    # The style's gradient lightens #cf222e: "strongly red" rather than one colour.
    ys, xs = np.nonzero((r >= 190) & (r - g >= 90) & (r - b >= 80))
    assert len(xs) >= 200, "the task window's Stop button is not on screen"
    return task.x + int(xs.min()) - 30, task.y + int(ys.min() + ys.max()) // 2


def test_moving_the_mouse_pauses_and_resume_continues(xvfb: Xvfb, app: RunningApp, home: Home,
                                                      tmp_path: Path) -> None:
    policy = SlowSecondAnswer()
    with FakeVLLM(policy) as server:
        configure(home, endpoint=server.base_url, confirm="never")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            tray = _ready(gui)
            _start_task(gui, "click save then cancel")
            app.wait_for(lambda: app.events("click", widget="save"), timeout=TIMEOUT,
                         what="the click on Save")
            poll(lambda: policy.calls >= 2, TIMEOUT, "the second question", gui.died)
            # The person takes the mouse while the model thinks; the model answers once the
            # app's input listener has reported it (the run is told before the log says so).
            gui.xdotool("mousemove", "--sync", "600", "900")
            gui.xdotool("mousemove", "--sync", "620", "880")
            poll(lambda: "the person used the mouse" in _log_text(home), TIMEOUT,
                 "the app to notice the mouse", gui.died)
            policy.release.set()
            # Paused, the run waits for the person: its windows come back meanwhile.
            poll(lambda: gui.visible(gui.tray), TIMEOUT, "the stand-in back", gui.died)
            gui.wait_shows(tray, TRAY_WAITING, "the tray to show the run paused")
            app.sync()  # whatever the run sent before it paused has arrived now
            assert not app.events("click", widget="cancel"), "acted while paused"
            assert not app.events("pointer_press", widget="cancel")
            resumed_at = time.monotonic()
            gui.click(*_resume_button(xvfb, gui.refresh(gui.task)))
            app.wait_for(lambda: app.events("click", widget="cancel"), timeout=TIMEOUT,
                         what="the click on Cancel after Resume")
            gui.wait_shows(tray, TRAY_DONE, "the tray to show the run done")
    assert [e["widget"] for e in app.events("click")] == ["save", "cancel"]
    # Cancel was clicked once, after the Resume (the target app's ``t`` is this clock too).
    assert all(e["t"] > resumed_at for e in app.events("pointer_press", widget="cancel"))
    shown = _log_show(home)
    assert "paused before execution" in shown
    assert "answered" in shown


def test_one_instance_and_trigger_run(xvfb: Xvfb, app: RunningApp, home: Home,
                                      tmp_path: Path) -> None:
    with FakeVLLM(SeeingPolicy([Target("Save button", RED)])) as server:
        configure(home, endpoint=server.base_url, confirm="never")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            tray = _ready(gui)
            started = time.monotonic()
            second = subprocess.run(holodesk_argv(), env=gui.env(), cwd=REPO_ROOT,
                                    capture_output=True, text=True, timeout=TIMEOUT)
            took = time.monotonic() - started
            assert second.returncode == 0, second.stderr
            assert "already running" in second.stderr
            assert took < 30, f"the second launch took {took:.1f} s"  # loose: Qt's start-up
            # The first one stays, alone: its windows are the only ones.
            assert gui.died() is None
            assert [w.wid for w in windows(xvfb, "^holodesk — ")] == [gui.task.wid]
            # ... and it still answers: the socket was not taken over by the second launch.
            assert run_holodesk(home, "trigger", "show").returncode == 0
            triggered = subprocess.run(
                holodesk_argv("trigger", "run", "press the save button"), env=gui.env(),
                cwd=REPO_ROOT, capture_output=True, text=True, timeout=TIMEOUT,
            )
            assert triggered.returncode == 0, triggered.stderr
            app.wait_for(lambda: app.events("click", widget="save"), timeout=TIMEOUT,
                         what="the triggered run's click on Save")
            _back(gui, "holodesk — press the save button")
            gui.wait_shows(tray, TRAY_DONE, "the tray to show the run done")
            assert not gui.shows(tray, TRAY_WORKING)
    assert "answered" in _log_show(home)


def _overlap(a: XWindow, b: tuple[int, int, int, int]) -> bool:
    left, top, width, height = b
    return (a.x < left + width and left < a.x + a.width
            and a.y < top + height and top < a.y + a.height)
