"""The desktop app's first start on a small screen (1366x768, openbox), no model server.

The task window opens whole on the screen with the first-run guide in it, and a window
manager asked to make it tiny stops at its minimum, which still fits the screen: its text
scrolls and wraps inside (tests/ui/test_first_run.py checks the wrapping at that size).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.app.test_serve import free_port
from tests.support.e2e import configure
from tests.support.fixtures import xvfb_fixture
from tests.support.gui import HolodeskGui, XWindow, poll
from tests.support.home import Home
from tests.support.wm import WindowManager
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

WIDTH, HEIGHT = 1366, 768
xvfb = xvfb_fixture(WIDTH, HEIGHT)
TIMEOUT = 60.0  # loose: a busy 2-core machine


def minimum_size(xvfb: Xvfb, window: XWindow) -> tuple[int, int]:
    """The minimum size the app asks of the window manager (WM_NORMAL_HINTS)."""
    out = subprocess.run(["xprop", "-id", window.wid, "WM_NORMAL_HINTS"], env=xvfb.env(),
                         capture_output=True, text=True, timeout=30).stdout
    found = re.search(r"minimum size: (\d+) by (\d+)", out)
    assert found, out
    return int(found[1]), int(found[2])


def on_screen(window: XWindow) -> bool:
    return (window.x >= 0 and window.y >= 0 and window.x + window.width <= WIDTH
            and window.y + window.height <= HEIGHT)


def test_the_task_window_fits_a_small_screen_at_its_smallest(
    xvfb: Xvfb, openbox: WindowManager, home: Home, tmp_path: Path
) -> None:
    configure(home, endpoint=f"http://127.0.0.1:{free_port()}/v1")  # nothing answers there
    with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
        task = gui.task
        assert on_screen(task), task
        width, height = minimum_size(xvfb, task)
        assert width <= WIDTH and height <= HEIGHT - 80, (width, height)  # a panel, a title

        gui.xdotool("windowsize", "--sync", task.wid, "100", "100")
        small = poll(lambda: (w if (w := gui.refresh(task)).width < task.width
                              or w.height < task.height else None),
                     TIMEOUT, "the task window to shrink", gui.died)
        # The window manager keeps to the app's minimum, which fits the screen.
        assert small.width >= width and small.height >= height, small
        assert on_screen(gui.refresh(task))
        assert gui.died() is None
