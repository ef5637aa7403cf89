"""What a replay checks before it acts, against crafted files and screens that changed around
the target (the hostile review's cases): a point outside its patch, a reworded dialog around an
unchanged button, a small dialog before a keys-only step, a stale answer, a secret in any text,
a trajectory folder that links elsewhere."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from app.events import Outcome
from app.replay import MAX_STATE_DIFF, RECORDED_ANSWER_NOTE, STATE_BLOCK, Replayer
from app.store import Source
from app.trajectory import (
    STATE_FACTOR,
    Recorder,
    Trajectory,
    TrajectoryError,
    forget_trajectory,
    load_trajectory,
    save_trajectory,
    state_thumbnail,
    trajectory_dir,
)
from control import match
from model.coords import Convention
from tests.support.agent_harness import AgentHarness, HarnessFor
from tests.support.drawn_screens import BUTTON, busy_desktop, draw_dialog, window_screen
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, SeeingPolicy, Target
from tests.support.home import isolate_home

KEY = "sync it"
TASK = "press sync"
ANSWER = {"note": "", "thought": "done", "action": {"action": "answer", "text": "ok"}}
ASKED = "Upload 3 new photos to the shared album?"
DANGER = "Remote has 4812 fewer files: sync will DELETE them."


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, file_keyring: Any) -> None:
    """An isolated home with a keyring: the steps holodesk saves are signed there, and only
    those replay unasked (app/trajectory.py)."""
    isolate_home(monkeypatch, tmp_path)


def _record(harness_for: HarnessFor, tmp_path: Path, image: Image.Image,
            policy: SeeingPolicy | None = None, secrets: frozenset[str] = frozenset()
            ) -> Recorder:
    recorder = Recorder(KEY, KEY, TASK, Convention.NORM1000, root=tmp_path,
                        secrets=lambda: secrets)
    with FakeVLLM(policy or SeeingPolicy([Target("Sync button", BUTTON)])) as server:
        h = harness_for(server, screen=lambda: image)
        h.on_event = recorder
        assert h.run(TASK).outcome is Outcome.ANSWERED
    assert recorder.saved is not None
    return recorder


def _replay(harness_for: HarnessFor, tmp_path: Path, image: Image.Image,
            answers: int = 1) -> tuple[AgentHarness, list[Source], list[str]]:
    with FakeVLLM(ScriptedPolicy([ANSWER] * answers)) as server:
        h = harness_for(server, screen=lambda: image)
        replayer = Replayer.load(KEY, TASK, tmp_path)
        assert replayer.active, replayer.problem
        h.parts.replay = replayer
        finished = h.run(TASK)
    assert finished.outcome is Outcome.ANSWERED, finished
    steps = h.store.steps(finished.run_id)
    return h, [s.source for s in steps], [s.source_note or "" for s in steps]


def _edit(tmp_path: Path, change: dict[str, object]) -> None:
    """Change the first step's first anchor in the saved file, as a crafted file would."""
    path = trajectory_dir(KEY, tmp_path) / "trajectory.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    anchor = data["steps"][0]["anchors"][0]
    anchor.update(change)
    data["steps"][0]["anchors"][0] = {k: v for k, v in anchor.items() if v is not None}
    path.write_text(json.dumps(data), encoding="utf-8")


# -- #5: the point must lie inside its patch ------------------------------------------------

@pytest.mark.parametrize("change", [{"crop_x": -600}, {"crop_y": 5000}, {"x": -1},
                                    {"context_x": 9999}])
def test_a_point_outside_its_recorded_patch_is_a_damaged_file(
        harness_for: HarnessFor, tmp_path: Path, change: dict[str, object]) -> None:
    _record(harness_for, tmp_path, window_screen((0, 0)))
    _edit(tmp_path, change)
    with pytest.raises(TrajectoryError, match="lies outside"):
        load_trajectory(KEY, tmp_path)
    replayer = Replayer.load(KEY, TASK, tmp_path)
    assert not replayer.active and "lies outside" in replayer.problem


# -- the anchors a step has are the points its action acts on --------------------------------

@pytest.mark.parametrize("change", [
    {"action": {"action": "drag", "element": "Sync button", "x": 500, "y": 500,
                "to_x": 990, "to_y": 990}},  # one anchor: the destination would go unchecked
    {"anchors": []},  # a click with nothing to find
    {"action": {"action": "hotkey", "keys": ["ctrl", "s"]}},  # an anchor no action uses
])
def test_a_step_whose_anchors_do_not_match_its_points_is_a_damaged_file(
        harness_for: HarnessFor, tmp_path: Path, change: dict[str, object]) -> None:
    _record(harness_for, tmp_path, window_screen((0, 0)))
    path = trajectory_dir(KEY, tmp_path) / "trajectory.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["steps"][0].update(change)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TrajectoryError, match="anchors"):
        load_trajectory(KEY, tmp_path)
    replayer = Replayer.load(KEY, TASK, tmp_path)
    assert not replayer.active and "anchors" in replayer.problem


# -- #3: what surrounds the target ----------------------------------------------------------

def test_a_reworded_dialog_around_the_same_button_hands_over(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    recorded = busy_desktop()
    draw_dialog(recorded, ASKED)
    _record(harness_for, tmp_path, recorded)
    # The button alone is the same: matching the patch finds it with full confidence.
    trajectory = load_trajectory(KEY, tmp_path)
    assert trajectory is not None
    anchor = trajectory.steps[0].anchors[0]
    assert anchor.context is not None
    danger = busy_desktop()
    draw_dialog(danger, DANGER)
    crop = Image.open(trajectory_dir(KEY, tmp_path) / anchor.crop).convert("RGB")
    assert isinstance(match.find(danger, crop, focus=(anchor.crop_x, anchor.crop_y)),
                      match.Match)

    h, sources, notes = _replay(harness_for, tmp_path, danger)
    assert sources == [Source.MODEL]
    assert "what surrounds it changed" in notes[0]
    assert [c for c in h.backend.calls if c.name == "mouse_down"] == []


def test_the_same_window_and_dialog_moved_elsewhere_still_replay(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    recorded = busy_desktop()
    draw_dialog(recorded, ASKED)
    _record(harness_for, tmp_path, recorded)
    moved = busy_desktop(origin=(260, 150), clock="14:42")
    draw_dialog(moved, ASKED, at=(760 + 160, 420 + 70))
    _, sources, notes = _replay(harness_for, tmp_path, moved)
    assert sources == [Source.REPLAYED, Source.REPLAYED], notes  # the answer too: same screen
    assert "found again" in notes[0]


def test_a_trajectory_recorded_without_context_hands_over_at_pointing_steps(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    _record(harness_for, tmp_path, window_screen((0, 0)))
    _edit(tmp_path, {"context": None, "context_x": None, "context_y": None})
    _, sources, notes = _replay(harness_for, tmp_path, window_screen((0, 0)))
    assert sources == [Source.MODEL]
    assert "without the picture of what surrounds it" in notes[0]


# -- #4: keys-only steps see a new dialog; the answer is the model's --------------------------

def _state_difference(before: Image.Image, now: Image.Image, shift: tuple[int, int] = (0, 0)
                      ) -> float:
    return match.shifted_difference(state_thumbnail(before), now, *shift, STATE_FACTOR,
                                    block=STATE_BLOCK)


def test_the_screen_check_sees_a_small_dialog_but_not_noise_or_a_moved_window() -> None:
    recorded = busy_desktop()
    assert _state_difference(recorded, recorded) == 0.0
    # Noise: another minute on the clock, a blinking caret in a row of text.
    noisy = busy_desktop(clock="14:42")
    noisy.paste((0, 0, 0), (400, 108, 402, 126))
    assert _state_difference(recorded, noisy) <= MAX_STATE_DIFF
    # The window opened elsewhere: compared where it is now.
    moved = busy_desktop(origin=(260, 150))
    assert _state_difference(recorded, moved, (160, 70)) <= MAX_STATE_DIFF / 2
    # A 420x160 dialog on 1920x1080, over the window or over the plain desktop.
    for at in ((760, 420), (1480, 880)):
        dialog = busy_desktop()
        draw_dialog(dialog, "Replace existing file 'report.pdf'?", at, button="Yes")
        assert _state_difference(recorded, dialog) > MAX_STATE_DIFF, at
        # The whole-screen mean the check used before barely moves for it.
        assert match.shifted_difference(state_thumbnail(recorded), dialog, 0, 0,
                                        STATE_FACTOR) < 6.0


def test_a_small_dialog_before_a_keys_step_hands_over(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    recorded = busy_desktop()
    draw_dialog(recorded, ASKED)
    policy = SeeingPolicy([Target("Sync button", BUTTON, type_text="photos")])
    _record(harness_for, tmp_path, recorded, policy)
    # The click now opens a small dialog whose default button the typed text would answer.
    dialog = busy_desktop()
    draw_dialog(dialog, ASKED)
    draw_dialog(dialog, "Replace existing file 'report.pdf'?", (1400, 100), button="Yes",
                colour=(40, 90, 200))
    clicked: list[bool] = []
    typed = {"note": "", "thought": "t", "action": {"action": "type", "text": "photos"}}
    with FakeVLLM(ScriptedPolicy([typed, ANSWER])) as server:
        h = harness_for(server, screen=lambda: dialog if clicked else recorded)
        h.backend.hook = lambda call: clicked.append(True) if call.name == "mouse_up" else None
        h.parts.replay = Replayer.load(KEY, TASK, tmp_path)
        finished = h.run(TASK)
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps] == [Source.REPLAYED, Source.MODEL, Source.MODEL], [
        s.source_note for s in steps]
    assert "screen is not as it was" in (steps[1].source_note or "")


def test_the_recorded_answer_is_not_replayed_over_another_result(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    # A recorded "it worked" is never reported over a screen that says otherwise: the screen
    # before the answer is not as recorded, so the model reads it and answers.
    policy = SeeingPolicy([Target("Sync button", BUTTON)],
                          then={"action": "answer", "text": "The backup finished OK."})
    recorded = busy_desktop()
    draw_dialog(recorded, ASKED)
    _record(harness_for, tmp_path, recorded, policy)
    result = busy_desktop()
    draw_dialog(result, "Backup FAILED: 3 errors. See the log for details.", button="Log",
                colour=(40, 40, 40))
    clicked: list[bool] = []
    failed = {"note": "", "thought": "t",
              "action": {"action": "answer", "text": "The backup FAILED."}}
    with FakeVLLM(ScriptedPolicy([failed])) as server:
        h = harness_for(server, screen=lambda: result if clicked else recorded)
        h.backend.hook = lambda call: clicked.append(True) if call.name == "mouse_up" else None
        h.parts.replay = Replayer.load(KEY, TASK, tmp_path)
        finished = h.run(TASK)
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps] == [Source.REPLAYED, Source.MODEL]
    assert "before the answer" in (steps[1].source_note or "")
    assert len(server.requests) == 1 and server.requests[0].images
    assert (steps[1].action or {})["text"] == "The backup FAILED."


def test_the_recorded_answer_replays_over_the_same_screen_and_says_so(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    policy = SeeingPolicy([Target("Sync button", BUTTON)],
                          then={"action": "answer", "text": "The backup finished OK."})
    recorded = busy_desktop()
    draw_dialog(recorded, ASKED)
    _record(harness_for, tmp_path, recorded, policy)
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        h = harness_for(server, screen=lambda: recorded)
        h.parts.replay = Replayer.load(KEY, TASK, tmp_path)
        finished = h.run(TASK)
    assert finished.outcome is Outcome.ANSWERED, finished
    assert server.requests == []
    assert finished.answer == f"The backup finished OK. {RECORDED_ANSWER_NOTE}"


# -- #6: a secret never lands in the file ---------------------------------------------------

def test_a_secret_in_any_text_is_masked_in_the_saved_file(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    secret = "Hunter2-correct-horse"
    policy = SeeingPolicy([Target(f"Sync button of {secret}", BUTTON)],
                          then={"action": "answer", "text": f"Logged in with {secret}."})
    recorded = busy_desktop()
    draw_dialog(recorded, ASKED)
    _record(harness_for, tmp_path, recorded, policy, secrets=frozenset({secret}))
    text = (trajectory_dir(KEY, tmp_path) / "trajectory.json").read_text(encoding="utf-8")
    assert secret not in text
    assert "Logged in with ***." in text and "Sync button of ***" in text


# -- #8: a linked folder is never written into or cleaned ------------------------------------

def _empty() -> Trajectory:
    geometry = {"sent_width": 10, "sent_height": 10,
                "monitor": {"left": 0, "top": 0, "width": 10, "height": 10}}
    return Trajectory(automation=KEY, task=TASK, geometry=geometry, steps=())


def test_a_linked_trajectory_folder_is_refused_and_nothing_in_it_deleted(tmp_path: Path) -> None:
    victim = tmp_path / "Documents"
    victim.mkdir()
    (victim / "thesis.odt").write_text("years of work")
    (tmp_path / "trajectories").mkdir()
    os.symlink(victim, tmp_path / "trajectories" / KEY)
    with pytest.raises(TrajectoryError, match="link"):
        save_trajectory(KEY, _empty(), {}, tmp_path)
    with pytest.raises(TrajectoryError, match="link"):
        forget_trajectory(KEY, tmp_path)
    assert sorted(p.name for p in victim.iterdir()) == ["thesis.odt"]
    # A linked trajectories folder too.
    os.unlink(tmp_path / "trajectories" / KEY)
    (tmp_path / "trajectories").rmdir()
    os.symlink(victim, tmp_path / "trajectories")
    with pytest.raises(TrajectoryError, match="link"):
        save_trajectory(KEY, _empty(), {}, tmp_path)
    assert sorted(p.name for p in victim.iterdir()) == ["thesis.odt"]


def test_saving_deletes_only_its_own_old_pictures(tmp_path: Path) -> None:
    folder = trajectory_dir(KEY, tmp_path)
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("mine")
    (folder / "r1a2b-s01-p1.png").write_bytes(b"old picture")
    save_trajectory(KEY, _empty(), {}, tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "trajectory.json"]
