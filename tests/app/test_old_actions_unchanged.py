"""Action logs and saved steps written before issue 22's actions read, replay and are written
again unchanged (a chord's new repeat count, 1 by default, is written only when it is not 1).

tests/app/data/trajectory_hotkey_v2 and action_log_hotkey_v2.json were written by the code
before the change (commit 9a067ca): a run of ``press save and type hello``'s automation that
clicked Save, pressed ctrl+s and answered, recorded as saved steps, and its action log rows.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.events import Answer, ConfirmReply, Outcome
from app.replay import Replayer
from app.store import Source
from app.trajectory import Recorder, load_trajectory, steps_digest, trajectory_dir
from model.coords import Convention
from model.schema import ACTION_ADAPTER, Hotkey, Step
from tests.support.agent_harness import HarnessFor
from tests.support.drawn_screens import window_screen
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home

DATA = Path(__file__).parent / "data"
KEY = "save it"
TASK = "press save and type hello"
SCRIPT = [
    {"note": "", "thought": "click save", "action": {"action": "click", "element": "Save button",
                                                      "x": 142.0, "y": 183.0}},
    {"note": "", "thought": "save", "action": {"action": "hotkey", "keys": ["ctrl", "s"]}},
    {"note": "", "thought": "done", "action": {"action": "answer", "text": "Saved."}},
]


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, file_keyring: Any) -> None:
    isolate_home(monkeypatch, tmp_path)


def _old_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((DATA / "action_log_hotkey_v2.json").read_text())
    return rows


def test_old_action_log_rows_read_and_dump_as_they_were() -> None:
    for row in _old_rows():
        action = ACTION_ADAPTER.validate_python(row["action"])
        assert ACTION_ADAPTER.dump_python(action, mode="json") == row["action"]
        step = Step.model_validate_json(row["raw_output"])
        assert step.action == action
    hotkey = ACTION_ADAPTER.validate_python(_old_rows()[1]["action"])
    assert isinstance(hotkey, Hotkey) and hotkey.repeat == 1


def test_the_same_run_today_writes_the_same_actions_and_saved_steps(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    recorder = Recorder(KEY, KEY, TASK, Convention.NORM1000, root=tmp_path)
    with FakeVLLM(ScriptedPolicy(SCRIPT)) as server:
        h = harness_for(server, screen=lambda: window_screen((0, 0)))
        h.on_event = recorder
        finished = h.run(TASK)
    assert finished.outcome is Outcome.ANSWERED
    assert [s.action for s in h.store.steps(finished.run_id)] == [r["action"] for r in _old_rows()]
    # The saved steps hold the actions exactly as the older version wrote them (what their
    # digest, and the signature over it, is computed from).
    now = json.loads((trajectory_dir(KEY, tmp_path) / "trajectory.json").read_text())
    old = json.loads((DATA / "trajectory_hotkey_v2" / "trajectory.json").read_text())
    assert [s["action"] for s in now["steps"]] == [s["action"] for s in old["steps"]]
    assert json.dumps(now["steps"][1]["action"]) == json.dumps(old["steps"][1]["action"])


def test_old_saved_steps_load_with_their_digest_and_replay(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    folder = trajectory_dir(KEY, tmp_path)
    shutil.copytree(DATA / "trajectory_hotkey_v2", folder)
    raw = (folder / "trajectory.json").read_bytes()
    pictures = {p.name: p.read_bytes() for p in folder.glob("*.png")}
    trajectory = load_trajectory(KEY, tmp_path)
    assert trajectory is not None
    assert trajectory.steps[1].parsed() == Hotkey(keys=["ctrl", "s"])
    assert steps_digest(raw, pictures) == steps_digest(folder.joinpath("trajectory.json")
                                                       .read_bytes(), pictures)
    replayer = Replayer.load(KEY, TASK, tmp_path)
    assert replayer.active, replayer.problem
    with FakeVLLM(ScriptedPolicy([SCRIPT[-1]])) as server:
        # Copied in, the steps do not verify here: each replayed step is asked.
        h = harness_for(server, screen=lambda: window_screen((0, 0)),
                        answer=lambda _e: ConfirmReply(Answer.APPROVE))
        h.parts.replay = replayer
        finished = h.run(TASK)
    assert finished.outcome is Outcome.ANSWERED, finished
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps[:2]] == [Source.REPLAYED] * 2
    pressed = [str(c) for c in h.backend.calls if c.name == "key_down"]
    assert pressed == ["key_down('ctrl')", "key_down('s')"]
