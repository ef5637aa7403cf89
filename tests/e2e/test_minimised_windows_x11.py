"""A holodesk window that is not on screen (minimised, or on another workspace) is not painted
out of what the model sees, while one on screen still is (Xvfb with openbox).

ui/overlay.py's WindowRects used to follow ``isVisible()``, which stays true for a minimised
window: its old place stayed mask grey in every screenshot (60% of the model's view in the
report). Here the app runs as a person has it, under a window manager; the task window is
minimised (then the tray's stand-in is sent to another workspace), a run is started from the
command line, and the screenshot the stand-in server received is looked at where the windows
were. tests/e2e/test_own_windows_x11.py shows the painting itself for windows on screen.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from tests.support.e2e import run_holodesk
from tests.support.fake_vllm import ChatRequest, FakeVLLM
from tests.support.fixtures import openbox, target_app_fixture, xvfb_fixture
from tests.support.gui import HolodeskGui, XWindow, poll
from tests.support.home import Home
from tests.support.wm import WindowManager
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

__all__ = ["openbox"]  # the module-scoped window manager fixture

xvfb = xvfb_fixture(1920, 1080)

TIMEOUT = 60.0
MASK_GREY = 128  # control/capture.py's MASK_BGRX
ANSWER = json.dumps({"note": "", "thought": "Nothing to do.",
                     "action": {"action": "answer", "text": "done"}})

# Under everything: the practice app's light grey, so a window's place shows it when the window
# is not painted out.
app = target_app_fixture("1900x1000+0+0", pointer=(1910, 1070))


def _is_step(request: ChatRequest) -> bool:
    shot = request.latest_image
    return shot is not None and shot.width >= 200  # not the app's server probe


def _grey_share(request: ChatRequest, window: XWindow) -> float:
    """The share of ``window``'s rectangle the screenshot has mask grey (JPEG moves it a bit)."""
    shot = request.latest_image
    assert shot is not None and shot.size == (1920, 1080)
    pixels = np.asarray(shot.image.convert("RGB"), dtype=np.int16)
    area = pixels[window.y:window.y + window.height, window.x:window.x + window.width]
    return float(np.mean(np.all(np.abs(area - MASK_GREY) <= 12, axis=2)))


def _unmapped(xvfb: Xvfb, window: XWindow) -> bool:
    """Whether the X server has ``window`` unmapped (an iconified window stays in the window
    manager's client list, so gui.hidden cannot tell)."""
    info = subprocess.run(["xwininfo", "-id", window.wid], env=xvfb.env(), capture_output=True,
                          text=True, timeout=30).stdout
    return "Map State: IsUnMapped" in info


def _run_once(home: Home, xvfb: Xvfb, server: FakeVLLM, gui: HolodeskGui) -> ChatRequest:
    """Start a run in the app from the command line; the first step's request."""
    before = len([r for r in server.requests if _is_step(r)])
    # Refused while the previous run is still ending: asked again until it starts.
    poll(lambda: run_holodesk(home, "trigger", "run", "look at the screen",
                              xvfb=xvfb).returncode == 0 or None,
         TIMEOUT, "the app to start a run", gui.died)
    server.wait_until(lambda s: len([r for r in s.requests if _is_step(r)]) > before,
                      "the run's first step", TIMEOUT)
    return [r for r in server.requests if _is_step(r)][before]


class HeldAnswer:
    """Answers a step only once the test has looked at the screen (``go``)."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def __call__(self, request: ChatRequest) -> str:
        if _is_step(request):
            assert self.go.wait(TIMEOUT), "the test never let the step be answered"
        return ANSWER


def test_windows_off_screen_are_not_painted_out_and_those_on_screen_are(
    xvfb: Xvfb, openbox: WindowManager, app: object, home: Home, tmp_path: Path
) -> None:
    policy = HeldAnswer()
    with FakeVLLM(policy) as server:
        for key, value in (("endpoint", server.base_url), ("confirm", "never")):
            assert run_holodesk(home, "config", "set", key, value).returncode == 0
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            task, tray = gui.refresh(gui.task), gui.refresh(gui.tray)
            gui.xdotool("windowminimize", "--sync", task.wid)
            poll(lambda: _unmapped(xvfb, task) or None, TIMEOUT, "the task window to go",
                 gui.died)

            first = _run_once(home, xvfb, server, gui)
            bar = gui.run_bar()  # on screen: where the run looked, while it waits
            policy.go.set()
            assert _grey_share(first, task) < 0.2, \
                "the minimised task window was painted out of the screenshot"
            # The stand-in collapsed into the run bar as the run started: not a hole either.
            assert _grey_share(first, tray) < 0.2, "the stand-in's place was painted out"
            assert _grey_share(first, bar) > 0.97, "the run bar reached the model"
            poll(lambda: gui.visible(tray), TIMEOUT, "the stand-in back", gui.died)

            # Another workspace: the window manager unmaps the window; Qt still calls it
            # visible and not minimised.
            gui.xdotool("set_desktop_for_window", tray.wid, "1")
            poll(lambda: _unmapped(xvfb, tray) or None, TIMEOUT,
                 "the tray's stand-in to leave the workspace", gui.died)
            second = _run_once(home, xvfb, server, gui)
            assert _grey_share(second, tray) < 0.2, \
                "the tray's stand-in on another workspace was painted out of the screenshot"
