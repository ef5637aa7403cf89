"""End to end: the target-aware rules of issue 10 on a real desktop (Xvfb and openbox).

Each rule is pinned where a person meets it, with real processes: the desktop app or
``holodesk run`` against the stand-in server, the Tk target app (tests/support/target_app.py)
recording what reaches it, a real xterm running bash (tests/support/terminal.py). The window
manager matters: it moves the focus on a click, frames the windows and answers holodesk's
requests to give the focus back.

* The person approves typing in the confirmation panel after looking at the task window: the
  keys still go to the window they were approved for (app/agent.py ``_after_confirmation``,
  ``X11TargetFinder.activate``).
* A click on holodesk's own task window is refused, and the model is told so.
* ``holodesk run`` in a terminal (``$WINDOWID``) never types into that terminal.
* A password manager (``never_touch``) is painted out of the screenshot and never clicked.
* ``--only-in`` refuses a click anywhere else.

One Xvfb and one openbox serve the module; every test starts its own windows.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.e2e import configure, run_holodesk
from tests.support.fake_vllm import ChatRequest, FakeVLLM, ScriptedPolicy, SeeingPolicy, Target
from tests.support.fixtures import xvfb_fixture
from tests.support.gui import TRAY_IDLE, HolodeskGui, XWindow, grab, poll, tray_icon, windows
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.wm import WindowManager
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

WIDTH, HEIGHT = 1920, 1080  # no downscale: the model's points are screen points
xvfb = xvfb_fixture(WIDTH, HEIGHT)

TIMEOUT = 60.0  # loose: a busy 2-core machine starts Qt, Tk and Python in parallel
BLUE = (0, 0, 255)  # the target app's text field
MASK_GREY = 128  # control/capture.py's MASK_BGRX
TARGET_GEOMETRY = "1000x660+880+380"  # bottom right: the app's windows open at the top left
REST = (860, 40)  # where the pointer waits: on no window, far from the failsafe corners
OWN = "never acts on its own windows"
ANSWER: dict[str, Any] = {"note": "", "thought": "That is all.",
                          "action": {"action": "answer", "text": "done"}}


def _xdotool(xvfb: Xvfb, *args: str) -> str:
    return subprocess.run(["xdotool", *args], env=xvfb.env(), check=True, capture_output=True,
                          text=True, timeout=30).stdout


def _start_app(xvfb: Xvfb, workdir: Path, geometry: str, class_name: str = "") -> RunningApp:
    extra = ("--class-name", class_name) if class_name else ()
    return RunningApp(xvfb, workdir, geometry=geometry, extra_args=extra)


@pytest.fixture
def app(xvfb: Xvfb, openbox: WindowManager, tmp_path: Path) -> Iterator[RunningApp]:
    """A fresh target app per test (so each test reads only its own events), framed by the
    manager, the pointer resting away from it."""
    _xdotool(xvfb, "mousemove", "--sync", *map(str, REST))
    running = _start_app(xvfb, tmp_path / "target", TARGET_GEOMETRY)
    yield running
    running.stop()


def _centre(rect: tuple[int, int, int, int]) -> tuple[int, int]:
    left, top, width, height = rect
    return left + width // 2, top + height // 2


def _norm(point: tuple[int, int]) -> dict[str, int]:
    """A screen point as the model gives it (norm1000 of the screenshot, the whole screen)."""
    return {"x": round(point[0] / WIDTH * 1000), "y": round(point[1] / HEIGHT * 1000)}


def _click(element: str, point: tuple[int, int]) -> dict[str, Any]:
    return {"note": "", "thought": f"Click the {element}.",
            "action": {"action": "click", "element": element, **_norm(point)}}


def _log_show(home: Home) -> str:
    result = run_holodesk(home, "log", "show", "last")
    assert result.returncode == 0, str(result)
    return result.stdout


def _pointer(xvfb: Xvfb) -> tuple[int, int]:
    fields = dict(line.split("=", 1) for line in
                  _xdotool(xvfb, "getmouselocation", "--shell").split() if "=" in line)
    return int(fields["X"]), int(fields["Y"])


# -- the desktop app ----------------------------------------------------------------------------


def _is_step(request: ChatRequest) -> bool:
    shot = request.latest_image
    return shot is not None and shot.width >= 200  # not the app's server probe (tiny images)


class StepScript:
    """Scripted answers for the desktop app's steps: its server probe (tiny images) gets an
    answer without using up the script. The first step waits for :meth:`play`: the test
    writes the script once the run shows where the app's windows and buttons are."""

    def __init__(self) -> None:
        self._script: ScriptedPolicy | None = None
        self._ready = threading.Event()

    def play(self, replies: list[dict[str, Any]]) -> None:
        self._script = ScriptedPolicy(replies)
        self._ready.set()

    def __call__(self, request: ChatRequest) -> str:
        if not _is_step(request):
            return json.dumps(ANSWER)
        if not self._ready.wait(TIMEOUT):
            raise AssertionError("the test never gave the script")
        assert self._script is not None
        return self._script(request)


def _start_task(gui: HolodeskGui, task: str) -> None:
    """Wait for the server probe (the tray shows idle), type the task, Ctrl+Enter."""
    gui.wait_shows(tray_icon(gui.tray), TRAY_IDLE, "the tray to show the model server is up")
    gui.click(*gui.task.point(100, 30))
    gui.xdotool("type", "--delay", "15", task)
    gui.activate(gui.task)
    gui.xdotool("key", "ctrl+Return")
    poll(lambda: gui.refresh(gui.task).name == f"holodesk — {task}", TIMEOUT,
         "the task window to show the run", gui.died)


def _approve(gui: HolodeskGui, panel: XWindow) -> None:
    """Click the panel's Approve button (its first button, bottom left) until the panel goes:
    a click before the panel is armed (350 ms) is ignored, and one is clicked again only while
    the panel is still up."""
    approve = panel.point(70, -24)

    def gone() -> bool:
        return all(w.wid != panel.wid for w in windows(gui.xvfb, ".*", gui.pid))

    end = time.monotonic() + TIMEOUT
    while not gone():
        if time.monotonic() > end:
            raise AssertionError("the confirmation panel did not take the approval")
        gui.click(*approve)
        settle = time.monotonic() + 3.0
        while time.monotonic() < settle and not gone():
            time.sleep(0.05)


def test_keys_approved_in_the_panel_go_to_the_approved_window(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    """The model clicks the Tk app's field and types "hello", each approved in the panel; before
    approving the typing the person looks at the task window (it has the focus). The panel goes,
    the manager hands the focus to the task window, and holodesk takes it back to the field."""
    with FakeVLLM(SeeingPolicy([Target("Name field", BLUE, type_text="hello")])) as server:
        configure(home, endpoint=server.base_url, confirm="always")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            _start_task(gui, "write hello in the name field")
            panel = gui.confirm_panel()
            _approve(gui, panel)
            app.wait_for(lambda: app.events("pointer_press", widget="field"), TIMEOUT,
                         "the approved click on the field")
            panel = gui.confirm_panel()
            assert "hello" not in app.text("field")
            gui.activate(gui.task)  # the person reads the task window, then approves
            _approve(gui, panel)
            gui.wait_shows(tray_icon(gui.tray), TRAY_IDLE, "the run to end (the tray idle)")
    app.sync()  # every key the run sent has arrived
    shown = _log_show(home)
    assert app.text("field") == "hello", shown
    assert shown.count("[approved / ok]") == 2, shown
    assert "answered" in shown.splitlines()[0], shown


def test_a_click_on_holodesks_own_window_is_refused_and_the_model_is_told(
    xvfb: Xvfb, openbox: WindowManager, home: Home, tmp_path: Path
) -> None:
    """The model clicks the middle of the task window, then its Stop button, with nothing
    confirmed: neither click is made (the pointer never goes there, the run is not stopped but
    answers), the log says why, and the next request tells the model."""
    script = StepScript()
    _xdotool(xvfb, "mousemove", "--sync", *map(str, REST))
    with FakeVLLM(script) as server:
        configure(home, endpoint=server.base_url, confirm="never")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            _start_task(gui, "look at the task window")
            rest = _pointer(xvfb)  # where the test left it, typing the task
            # The run waits for its first answer: the task window shows it with its Stop.
            task = gui.refresh(gui.task)
            middle = _centre((task.x, task.y, task.width, task.height))
            script.play([_click("holodesk task window", middle),
                         _click("Stop button", _stop_button(xvfb, task)), ANSWER])
            gui.wait_shows(tray_icon(gui.tray), TRAY_IDLE, "the run to end (the tray idle)")
            assert _pointer(xvfb) == rest, "the pointer went to holodesk's own window"
    steps = [r for r in server.requests if _is_step(r)]
    shown = _log_show(home)
    assert len(steps) == 3, shown
    assert "answered" in shown.splitlines()[0], shown  # not stopped by its own Stop button
    assert shown.count("[forbidden / skipped]") == 2, shown
    refused = f"refused by the safety policy: aims at holodesk (holodesk's own): holodesk {OWN}"
    assert shown.count(f"error: {refused}") == 2, shown
    # The model hears why each click was not done, in the next request.
    assert f"after step 1: {refused}" in steps[1].text, steps[1].text
    assert f"after step 2: {refused}" in steps[2].text, steps[2].text


def _stop_button(xvfb: Xvfb, task: XWindow) -> tuple[int, int]:
    """The task window's red Stop button (in its top half; the preview below may hold red)."""
    top = grab(xvfb).crop((task.x, task.y, task.x + task.width, task.y + task.height // 2))
    rgb = np.asarray(top, dtype=np.int16)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    ys, xs = np.nonzero((r >= 190) & (r - g >= 90) & (r - b >= 80))
    assert len(xs) >= 200, "the task window's Stop button is not on screen"
    return task.x + int(xs.min() + xs.max()) // 2, task.y + int(ys.min() + ys.max()) // 2
