"""The desktop app runs an automation's saved steps even while the model server is down (the
replay needs no model), and still refuses a run that would need it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.automations import Automation, add_automation
from app.events import Outcome, RunFinished, StepProposed
from app.status import ServerStatus
from app.store import Source
from app.trajectory import Recorder
from model.coords import Convention
from tests.support.agent_harness import HarnessFor, red_box_screen
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, SeeingPolicy, Target
from tests.support.home import isolate_home

TASK = "press the red box"


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, file_keyring: Any) -> None:
    """An isolated home with a keyring: the steps holodesk saves are signed there, and only
    those replay unasked (app/trajectory.py)."""
    isolate_home(monkeypatch, tmp_path)


def test_an_automation_with_saved_steps_replays_while_the_server_is_down(
        qtbot: QtBot, make_app: MakeApp, harness_for: HarnessFor) -> None:
    saved = Automation.make(name="press it", task=TASK)
    unsaved = Automation.make(name="other", task="something else")
    for automation in (saved, unsaved):  # made with holodesk: approved as they are
        add_automation(automation)
    # Recorded once with the model, on the screen the app's runs see.
    recorder = Recorder(saved.key, saved.name, TASK, Convention.NORM1000)
    with FakeVLLM(SeeingPolicy([Target("red box", (255, 0, 0))])) as server:
        h = harness_for(server, screen=red_box_screen)
        h.on_event = recorder
        assert h.run(TASK).outcome is Outcome.ANSWERED
    assert recorder.saved is not None

    down = FakeVLLM(SeeingPolicy([]))
    down.start()
    down.stop()
    app, rig = make_app(down)
    app.set_automations([saved, unsaved])
    app.status = ServerStatus("down", "no model server answers")
    assert not app.run_automation("other", "hotkey")
    assert "not ready" in app.teller.told[-1]
    assert app.run_automation("press it", "hotkey")
    qtbot.waitUntil(lambda: rig.finished() == 1, timeout=20_000)
    finished = next(e for e in rig.events if isinstance(e, RunFinished))
    assert finished.outcome is Outcome.ANSWERED, finished
    proposed = [e for e in rig.events if isinstance(e, StepProposed)]
    assert [e.source for e in proposed] == [Source.REPLAYED, Source.REPLAYED]
    assert "mouse_down" in rig.backends[0].names()
