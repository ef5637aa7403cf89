"""Before every screenshot the run asks its front end to take holodesk's windows out of where
it works (app/way.py), and looks only once they have gone and the screen settled.

Real parts (the stand-in model over HTTP, the capture code over a drawn screen, the dry-run
backend, a real log); the front end is a recorder of what it was asked and when.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.events import Outcome
from app.way import WorkArea
from control.settle_frames import SettleFrames
from model.coords import Point, Rect
from tests.support.agent_harness import AgentHarness, HarnessFor
from tests.support.fake_targets import FakeTargetFinder, window
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}
#: A click at (199, 149) on the 1280x800 drawn screen.
CLICK = {"thought": "click", "action": {"action": "click", "element": "Save", "x": 156, "y": 187}}
EDITOR = window("Editor", rect=Rect(40, 60, 700, 500))
DIALOG = window("Dialog", rect=Rect(150, 100, 300, 200))
OWN = window("holodesk", own=True, rect=Rect(0, 0, 640, 780))


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


class FrontEnd:
    """Records each request to make way beside the screenshots taken, in order; answers
    ``changed`` (a list: one answer per request, the last one repeated)."""

    def __init__(self, h: AgentHarness, changed: list[bool] | None = None,
                 fails: bool = False) -> None:
        self.h = h
        self.changed = changed or [False]
        self.fails = fails
        self.log: list[Any] = []
        self.areas: list[WorkArea] = []
        grab, small_grabber = h.capturer.grab, h.capturer.small_grabber

        def logged_grab() -> Any:
            self.log.append("grab")
            return grab()

        def logged_settle() -> SettleFrames:
            self.log.append("settle")
            return small_grabber()

        h.capturer.grab = logged_grab  # type: ignore[method-assign]
        h.capturer.small_grabber = logged_settle  # type: ignore[method-assign]
        h.parts.make_way = self

    def __call__(self, area: WorkArea) -> bool:
        self.log.append("way")
        self.areas.append(area)
        if self.fails:
            raise RuntimeError("the front end fell over")
        return self.changed[min(len(self.areas) - 1, len(self.changed) - 1)]


def _harness(harness_for: HarnessFor, server: FakeVLLM, finder: FakeTargetFinder,
             **options: Any) -> AgentHarness:
    h = harness_for(server, **options)
    h.parts.finder = finder
    return h


def test_the_way_is_made_before_every_screenshot(harness_for: HarnessFor) -> None:
    """Before the first look: the captured rectangle, then the focused window; after an
    action: the window it went to and where it landed, with the step and what it did."""
    finder = FakeTargetFinder(focus=EDITOR, placed=[EDITOR, DIALOG])
    with FakeVLLM(ScriptedPolicy([CLICK, ANSWER])) as server:
        h = _harness(harness_for, server, finder)
        front = FrontEnd(h)
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    grabs = [i for i, what in enumerate(front.log) if what == "grab"]
    assert len(grabs) == 2
    # Each screenshot comes after a request to make way, and none came before the first.
    assert front.log[:grabs[0]] == ["way", "way"]
    assert front.log[grabs[0] + 1:grabs[1]].count("way") == 1
    first, focused, after_click = front.areas
    screen = Rect(0, 0, 1280, 800)
    assert first == WorkArea(screen, step=1)
    assert focused == WorkArea(screen, (EDITOR.rect,), step=1)  # type: ignore[arg-type]
    assert after_click.capture == screen and after_click.step == 2
    assert after_click.windows == (DIALOG.rect,)  # the window under the click
    assert after_click.points == (Point(199, 149),)
    assert "Save" in after_click.doing


def test_holodesks_own_focused_window_is_not_where_the_run_works(
        harness_for: HarnessFor) -> None:
    """The task window may still have the focus as the run starts: the run does not work in
    it (the front end is only told the captured rectangle)."""
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        h = _harness(harness_for, server, FakeTargetFinder(focus=OWN))
        front = FrontEnd(h)
        h.run()
    assert front.areas == [WorkArea(Rect(0, 0, 1280, 800), step=1)]


def test_when_windows_moved_the_screen_settles_before_the_look(
        harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        h = _harness(harness_for, server, FakeTargetFinder(focus=EDITOR))
        front = FrontEnd(h, changed=[True, False])
        h.run()
    assert front.log == ["way", "way", "settle", "grab"]


def test_nothing_moved_no_wait(harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        h = _harness(harness_for, server, FakeTargetFinder(focus=EDITOR))
        front = FrontEnd(h, changed=[False])
        h.run()
    assert front.log == ["way", "way", "grab"]


def test_a_front_end_that_fails_does_not_end_the_run(harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([CLICK, ANSWER])) as server:
        h = _harness(harness_for, server, FakeTargetFinder(focus=EDITOR, placed=[EDITOR]))
        FrontEnd(h, fails=True)
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    assert h.backend.names().count("mouse_down") == 1  # the click was done
