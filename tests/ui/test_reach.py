"""Never stranded, never blind, in the app as wired (offscreen): the confirmation panel keeps
clear of its target, the stand-in tray window cannot be lost, a second launch brings it back,
the task window's menu reaches everything the tray does, every window shows holodesk's icon."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home
from ui.overlay import logical_to_qt
from ui.panel_place import KEEP_OUT

# The click lands where the panel opens when nothing places it (the top left).
CLICK = {"thought": "delete it",
         "action": {"action": "click", "element": "Delete button", "x": 120, "y": 120}}
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def test_the_confirmation_panel_keeps_clear_of_the_point_it_asks_about(
    qtbot: QtBot, make_app: MakeApp
) -> None:
    with FakeVLLM(ScriptedPolicy([CLICK, ANSWER])) as server:
        app, _rig = make_app(server)
        assert app.start_task("delete the file", confirm="always")
        qtbot.waitUntil(lambda: app.controller.pending is not None, timeout=20000)
        request = app.controller.pending
        assert request is not None
        panel = app.confirm_panel
        assert panel.isVisible()
        frame = panel.frameGeometry()
        for point in request.points:
            spot = logical_to_qt(point.x, point.y)
            assert not frame.adjusted(-round(KEEP_OUT), -round(KEEP_OUT), round(KEEP_OUT),
                                      round(KEEP_OUT)).contains(spot.toPoint()), \
                f"the panel {frame} covers the target {point}"
        assert app.overlay.isVisible()  # the marker is on the point the panel leaves free
        app.controller.stop("test")
