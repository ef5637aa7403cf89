"""Replay with the model as fallback, end to end on a private Xvfb (issue 14, part 1).

An automation runs once with the stand-in model (it sees the target window by colour): click the
blue field, type, click the red Save button, answer. Its steps are saved. Then the model server
is stopped and a fresh copy of the window opens somewhere else: the automation runs again and
succeeds on its saved steps alone, each found where it is now, every step "replayed" in the
log. A copy whose Save button is relabelled hands over to the model exactly at the Save step,
and the stand-in gets the task with the two replayed steps in its prompt.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.e2e import run_holodesk
from tests.support.fake_vllm import FakeVLLM, SeeingPolicy, Target
from tests.support.fixtures import xvfb_fixture
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1920, 1080)

RED = (255, 0, 0)  # the Save button
BLUE = (0, 0, 255)  # the text field
NAME = "fill the form"
TASK = "type hello in the blue field and press save"
RECORDED_AT = "1000x660+100+80"
MOVED_TO = "1000x660+820+390"  # another place: every point of the run moves


def _ok(home: Home, *args: str, xvfb: Xvfb | None = None) -> str:
    result = run_holodesk(home, *args, xvfb=xvfb)
    assert result.returncode == 0, str(result)
    return result.stdout


def _policy() -> SeeingPolicy:
    return SeeingPolicy([Target("text field", BLUE, type_text="hello"),
                         Target("Save button", RED)])


def _pressed(app: RunningApp) -> list[str]:
    """The widgets the mouse pressed, in order (a button's label counts as its button)."""
    return [str(e["widget"]).removesuffix("_label") for e in app.events("pointer_press")]


def _step_lines(home: Home) -> list[str]:
    """`log show last`: one line per step, with its source at the end."""
    shown = _ok(home, "log", "show", "last")
    return [line for line in shown.splitlines() if line.startswith("step ")]


def _record(home: Home, xvfb: Xvfb, tmp_path: Path) -> dict[str, object]:
    app = RunningApp(xvfb, tmp_path / "first", geometry=RECORDED_AT)
    try:
        with FakeVLLM(_policy()) as server:
            _ok(home, "config", "set", "endpoint", server.base_url)
            _ok(home, "config", "set", "confirm", "never")
            _ok(home, "automation", "add", NAME, "--task", TASK)
            _ok(home, "automation", "run", NAME, xvfb=xvfb)
            assert len(server.requests) == 4  # field, type, Save, answer
        assert app.wait_for(lambda: app.events("click", widget="save"), what="the click on Save")
        assert app.text("field") == "hello"
    finally:
        app.stop()
    saved = home.data / "holodesk" / "trajectories" / NAME / "trajectory.json"
    assert saved.is_file()
    trajectory: dict[str, object] = json.loads(saved.read_text(encoding="utf-8"))
    return trajectory


def test_a_fresh_window_elsewhere_replays_without_the_model(
        xvfb: Xvfb, home: Home, tmp_path: Path) -> None:
    recorded = _record(home, xvfb, tmp_path)
    assert "hello" in json.dumps(recorded)  # not a secret: kept, to type it again
    # The server is gone (closed above): a single request to it would end the run in error.
    app = RunningApp(xvfb, tmp_path / "moved", geometry=MOVED_TO)
    try:
        out = _ok(home, "automation", "run", NAME, xvfb=xvfb)
        assert "replayed" in out
        assert app.wait_for(lambda: app.events("click", widget="save"), what="the click on Save")
        assert app.text("field") == "hello"
        assert _pressed(app) == ["field", "save"]
    finally:
        app.stop()
    lines = _step_lines(home)
    assert len(lines) == 4 and all(line.endswith("replayed") for line in lines), lines


def test_a_relabelled_button_hands_over_to_the_model_at_the_save_step(
        xvfb: Xvfb, home: Home, tmp_path: Path) -> None:
    _record(home, xvfb, tmp_path)
    app = RunningApp(xvfb, tmp_path / "changed", geometry=MOVED_TO,
                     extra_args=("--label", "save=Store"))
    try:
        # The model is back, and only has the Save button left to find.
        with FakeVLLM(SeeingPolicy([Target("Save button", RED)])) as server:
            _ok(home, "config", "set", "endpoint", server.base_url)
            out = _ok(home, "automation", "run", NAME, xvfb=xvfb)
            assert len(server.requests) == 2  # Save, answer
            first = server.requests[0]
        assert "the model takes over" in out
        assert app.wait_for(lambda: app.events("click", widget="save"), what="the click on Save")
        assert app.text("field") == "hello"
        assert _pressed(app) == ["field", "save"]
    finally:
        app.stop()
    # The stand-in got the task and the steps done so far (replayed), with their screenshots.
    assert TASK in first.text
    assert "Replaying saved step 1" in first.text and "Replaying saved step 2" in first.text
    assert len(first.images) == 3
    lines = _step_lines(home)
    assert [line.rsplit(maxsplit=1)[-1] for line in lines] == [
        "replayed", "replayed", "model", "model"], lines
    shown = _ok(home, "log", "show", "last")
    assert "model: replay handed over: saved step 3 (Save button)" in shown


def test_no_replay_asks_the_model_at_every_step(xvfb: Xvfb, home: Home, tmp_path: Path) -> None:
    _record(home, xvfb, tmp_path)
    app = RunningApp(xvfb, tmp_path / "again", geometry=MOVED_TO)
    try:
        with FakeVLLM(_policy()) as server:
            _ok(home, "config", "set", "endpoint", server.base_url)
            _ok(home, "automation", "run", NAME, "--no-replay", xvfb=xvfb)
            assert len(server.requests) == 4
        _ok(home, "automation", "forget", NAME)
        assert not (home.data / "holodesk" / "trajectories" / NAME).exists()
    finally:
        app.stop()
    assert all(line.endswith("model") for line in _step_lines(home))
