"""Replay meets parameters, end to end on a private Xvfb (issue 14, parts 1 and 2).

An automation with a ``{name}`` placeholder runs once with the stand-in model and
``--set name=Ada``: click the blue field, type Ada, click the red Save button, answer. Its
steps are saved with the value it used. Then a fresh copy of the window opens elsewhere and
the run with ``--set name=Grace`` replays the click on the field and the typing without the
model, typing Grace where Ada was typed. Save is pressed by the model: what surrounds the
button (the field, now holding other text) is not as recorded, and a replay never acts where
it cannot tell that change from a changed question (docs/safety.md); the answer is always the
model's. A secret parameter replays the same way from the keyring's value of this run
(changed since the recording), which is in no file holodesk writes, the saved steps included.
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
RECORDED_AT = "1000x660+100+80"
MOVED_TO = "1000x660+820+390"
#: Look like nothing the secret rules recognize: only the declaration makes them secrets.
SECRET = "velvet-otter-lantern"
NEW_SECRET = "copper-heron-meadow"


def _ok(home: Home, *args: str, xvfb: Xvfb | None = None, stdin: str = "") -> str:
    result = run_holodesk(home, *args, xvfb=xvfb, stdin=stdin)
    assert result.returncode == 0, str(result)
    return result.stdout + result.stderr


def _policy(typed: str) -> SeeingPolicy:
    return SeeingPolicy([Target("text field", BLUE, type_text=typed),
                         Target("Save button", RED)])


def _record(home: Home, xvfb: Xvfb, tmp_path: Path, typed: str, *run_args: str) -> str:
    """Run automation ``fill`` once with the stand-in (it types ``typed``); what it printed."""
    app = RunningApp(xvfb, tmp_path / "first", geometry=RECORDED_AT)
    try:
        with FakeVLLM(_policy(typed)) as server:
            _ok(home, "config", "set", "endpoint", server.base_url)
            out = _ok(home, "automation", "run", "fill", *run_args, xvfb=xvfb)
            assert len(server.requests) == 4  # field, type, Save, answer
        assert app.wait_for(lambda: app.events("click", widget="save"), what="the click on Save")
        assert app.text("field") == typed
    finally:
        app.stop()
    return out


def _replay(home: Home, xvfb: Xvfb, tmp_path: Path, *run_args: str) -> tuple[str, str]:
    """Run ``fill`` again in a fresh window elsewhere, with a stand-in that can only press
    Save and answer (the model takes over where the replay cannot check a step, and always
    gives the answer): what it printed and what the field holds."""
    app = RunningApp(xvfb, tmp_path / "again", geometry=MOVED_TO)
    try:
        with FakeVLLM(SeeingPolicy([Target("Save button", RED)])) as server:
            _ok(home, "config", "set", "endpoint", server.base_url)
            out = _ok(home, "automation", "run", "fill", *run_args, xvfb=xvfb)
        assert app.wait_for(lambda: app.events("click", widget="save"), what="the click on Save")
        return out, app.text("field")
    finally:
        app.stop()


def _sources(home: Home) -> list[str]:
    shown = _ok(home, "log", "show", "last")
    return [line.rsplit(maxsplit=1)[-1] for line in shown.splitlines()
            if line.startswith("step ")]


def _trajectory(home: Home) -> dict[str, object]:
    saved = home.data / "holodesk" / "trajectories" / "fill" / "trajectory.json"
    data: dict[str, object] = json.loads(saved.read_text(encoding="utf-8"))
    return data


def test_a_run_with_another_value_replays_the_typing_with_it(
        xvfb: Xvfb, home: Home, tmp_path: Path) -> None:
    _ok(home, "config", "set", "confirm", "never")
    _ok(home, "automation", "add", "fill", "--task",
        "type {name} in the blue field and press save", "--param", "name")
    _record(home, xvfb, tmp_path, "Ada", "--set", "name=Ada")
    recorded = _trajectory(home)
    assert recorded["template"] == "type {name} in the blue field and press save"
    assert recorded["values"] == {"name": "Ada"}
    out, field = _replay(home, xvfb, tmp_path, "--set", "name=Grace")
    assert field == "Grace"
    assert "replayed" in out
    assert _sources(home) == ["replayed", "replayed", "model", "model"]
    assert _trajectory(home)["values"] == {"name": "Grace"}  # this run's steps now


def test_a_secret_parameter_replays_from_the_keyring(
        xvfb: Xvfb, home: Home, tmp_path: Path) -> None:
    _ok(home, "config", "set", "confirm", "never")
    _ok(home, "automation", "add", "fill", "--task",
        "type {password} in the blue field and press save", "--secret-param", "password")
    _ok(home, "automation", "set-secret", "fill", "password", stdin=SECRET + "\n")
    _record(home, xvfb, tmp_path, SECRET)
    steps = _trajectory(home)["steps"]
    assert isinstance(steps, list)
    assert steps[1]["secret"] and steps[1]["secret_parameter"] == "password"
    _ok(home, "automation", "set-secret", "fill", "password", stdin=NEW_SECRET + "\n")
    out, field = _replay(home, xvfb, tmp_path, "-v")
    assert field == NEW_SECRET  # this run's value, typed in full
    assert NEW_SECRET not in out and SECRET not in out
    assert _sources(home) == ["replayed", "replayed", "model", "model"]
    held = [str(p) for place in (home.config, home.data, home.state) for p in place.rglob("*")
            if p.is_file() and any(s.encode() in p.read_bytes() for s in (SECRET, NEW_SECRET))]
    assert held == []
