"""The confirmation panel opens clear of the point it asks about, and the marker on that point
stays visible (Xvfb, the real app, the real panel size).

Reported: a click at 960,540 on a 1920x1080 desktop, the panel spanning x 915–1421 over it.
Here the target (the practice app's Save button) sits where the panel opens when nothing
places it (the top left, without a window manager); the panel must leave the point and the
marker around it free. tests/ui/test_panel_place.py tests the
placement over many geometries; this is the wiring with real windows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e import configure
from tests.support.fake_vllm import FakeVLLM, SeeingPolicy, Target
from tests.support.fixtures import target_app_fixture, xvfb_fixture
from tests.support.gui import HolodeskGui, colour_box, grab, poll
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb
from ui.marker import MARKER_RGB
from ui.panel_place import KEEP_OUT

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1920, 1080)

TIMEOUT = 60.0
RED = (255, 0, 0)  # the practice app's Save button, at (40, 40) inside it
app = target_app_fixture("1000x660+0+0", pointer=(1900, 1060))


def test_the_panel_leaves_the_target_and_its_marker_in_view(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    with FakeVLLM(SeeingPolicy([Target("Save button", RED)])) as server:
        configure(home, endpoint=server.base_url, confirm="always")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            # The app's own windows out of the target's way (no window manager moves them).
            task = gui.move(gui.task, 1250, 0)
            gui.move(gui.tray, 0, 1000)
            gui.click(*task.point(100, 40))
            gui.xdotool("type", "--delay", "15", "press the save button")
            gui.focus(task)
            gui.xdotool("key", "ctrl+Return")
            panel = gui.confirm_panel()
            overlay = gui.window("^holodesk target$")
            x, y = overlay.point(overlay.width // 2, overlay.height // 2)
            left, top, width, height = app.widgets["save"].rect
            assert left <= x < left + width and top <= y < top + height  # the middle of Save
            reach = round(KEEP_OUT)
            assert (x + reach <= panel.x or x - reach >= panel.x + panel.width
                    or y + reach <= panel.y or y - reach >= panel.y + panel.height), \
                f"the panel {panel} covers the target {x},{y}"
            # The marker is on the screen, at the point, not under the panel.
            around = (x - reach, y - reach, x + reach, y + reach)
            poll(lambda: colour_box(grab(xvfb).crop(around), MARKER_RGB, 30, 20),
                 TIMEOUT, "the marker to show on the target", gui.died)
            gui.xdotool("key", "Escape")  # stop: nothing is clicked
            gui.hidden(panel)
    assert not app.events("click")
