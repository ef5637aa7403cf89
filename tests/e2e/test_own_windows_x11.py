"""The desktop app's own windows never reach the model: painted out of the screenshots its real
runs send (Xvfb).

tests/control/test_capture_mask.py pins the painting and tests/ui/test_app.py the list of the app's
windows; this pins the wiring between them in the app as it runs (ui/app.py hands the list to
ui/bridge.py's ``real_session``): the screenshot of a run started from the task window, as the
stand-in server received it, is plain mask grey where the run bar is, while the target window
beside it is sent as it is. The task window and the tray's stand-in, collapsed into the bar as
the run started, are not even holes in it: what is under them shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.support.e2e import run_holodesk
from tests.support.fake_vllm import ChatRequest, FakeVLLM
from tests.support.fixtures import target_app_fixture, xvfb_fixture
from tests.support.gui import TRAY_IDLE, HolodeskGui, XWindow, poll, tray_icon
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1920, 1080)

TIMEOUT = 60.0
TARGET_GEOMETRY = "1000x660+900+400"  # bottom right: the app's windows are at the top left
TRAY_PLACE = (0, 1000)
MASK_GREY = 128  # control/capture.py's MASK_BGRX
ANSWER = json.dumps({"note": "", "thought": "Nothing to do.",
                     "action": {"action": "answer", "text": "done"}})


app = target_app_fixture(TARGET_GEOMETRY, pointer=(600, 900))


def _is_step(request: ChatRequest) -> bool:
    shot = request.latest_image
    return shot is not None and shot.width >= 200  # not the app's server probe


def _grey_share(pixels: np.ndarray, window: XWindow) -> float:
    """The share of ``window``'s rectangle that is mask grey (JPEG moves it a little)."""
    area = pixels[window.y:window.y + window.height, window.x:window.x + window.width]
    return float(np.mean(np.all(np.abs(area - MASK_GREY) <= 12, axis=2)))


def test_the_app_paints_its_own_windows_out_of_what_the_model_sees(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    with FakeVLLM(lambda _request: ANSWER) as server:
        for key, value in (("endpoint", server.base_url), ("confirm", "never")):
            assert run_holodesk(home, "config", "set", key, value).returncode == 0
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            tray = gui.move(gui.tray, *TRAY_PLACE)
            gui.wait_shows(tray_icon(tray), TRAY_IDLE, "the tray to show idle")
            task = gui.refresh(gui.task)
            gui.click(*task.point(100, 30))
            gui.xdotool("type", "--delay", "15", "look at the screen")
            gui.focus(task)
            gui.xdotool("key", "ctrl+Return")
            server.wait_until(lambda s: any(_is_step(r) for r in s.requests),
                              "the run's first step", TIMEOUT)
            bar = gui.run_bar()  # where the run placed it before its first look
            poll(lambda: gui.visible(gui.task), TIMEOUT, "the task window back", gui.died)
    shot = next(r for r in server.requests if _is_step(r)).latest_image
    assert shot is not None and shot.size == (1920, 1080)  # no downscale: screen coordinates
    pixels = np.asarray(shot.image.convert("RGB"), dtype=np.int16)
    assert _grey_share(pixels, bar) > 0.97, "the run bar reached the model"
    # Collapsed before the first look: neither a window nor a hole in the screenshot.
    assert _grey_share(pixels, task) < 0.03, "the task window stayed over the screen"
    assert _grey_share(pixels, tray) < 0.03, "the tray's stand-in stayed over the screen"
    # The rest is sent as it is: the target window's red Save button is there.
    left, top, width, height = app.widgets["save"].rect
    save = pixels[top:top + height, left:left + width]
    assert float(np.mean(np.all(np.abs(save - (255, 0, 0)) <= 48, axis=2))) > 0.5
