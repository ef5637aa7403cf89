"""``log_screenshots`` off: the action log keeps thumbnails and text only, never a full
screenshot file; the log, its export and `holodesk log show` cope; a run still shows and
confirms over the bytes in memory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.events import (
    Answer,
    AwaitingConfirmation,
    ConfirmReply,
    FrameCaptured,
    Outcome,
)
from app.export import export_run, format_run
from app.settings import Settings, describe_settings, load_settings, set_value
from app.store import ActionLog, StepRecord
from control.policy import ConfirmMode
from tests.support.agent_harness import HarnessFor
from tests.support.fake_vllm import FakeVLLM, SeeingPolicy, Target
from tests.support.home import Home, isolate_home

JPEG = b"\xff\xd8\xff\xe0" + b"fake jpeg body" * 10
THUMB = b"\xff\xd8\xff\xe0" + b"small"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def log(home: Home) -> Iterator[ActionLog]:
    with ActionLog.open(keep_screenshots=False) as opened:
        yield opened


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_the_setting_defaults_on_and_is_shown_and_set_like_the_others(home: Home) -> None:
    assert Settings().log_screenshots is True
    assert "log_screenshots" in describe_settings(load_settings())
    set_value("log_screenshots", "false")
    assert load_settings().log_screenshots is False


def test_only_the_thumbnail_is_written(log: ActionLog, home: Home) -> None:
    run = log.start_run("t", "http://h/v1", None, {})
    shot, thumb = log.save_screenshot(run.id, 1, JPEG, "image/jpeg", THUMB)
    assert shot is None and thumb is not None and thumb.read_bytes() == THUMB
    assert _files(log.run_dir(run.id)) == ["step-001-thumb.jpg"]
    # Without a thumbnail nothing at all is written.
    assert log.save_screenshot(run.id, 2, JPEG, "image/jpeg") == (None, None)
    assert _files(log.run_dir(run.id)) == ["step-001-thumb.jpg"]


def test_export_and_log_show_cope_with_thumbnails_only(log: ActionLog, tmp_path: Path) -> None:
    run = log.start_run("t", "http://h/v1", None, {})
    _shot, thumb = log.save_screenshot(run.id, 1, JPEG, "image/jpeg", THUMB)
    log.add_step(StepRecord(run.id, 1, 1_700_000_000.0, thumbnail_path=str(thumb),
                            action={"action": "wait", "seconds": 1}, result="ok"))
    log.finish_run(run.id, "answered", "done")
    [step] = log.steps(run.id)
    assert step.screenshot_path is None and step.thumbnail_path == str(thumb)
    out = export_run(log, run.id, tmp_path / "exports")
    line = json.loads((out / "run.jsonl").read_text().splitlines()[1])
    assert line["screenshot"] is None and line["thumbnail"] == "step-001-thumb.jpg"
    assert _files(out) == ["run.jsonl", "step-001-thumb.jpg"]
    text = format_run(log.get_run(run.id), log.steps(run.id))
    assert f"thumbnail only: {thumb}" in text and "screenshot:" not in text


def test_a_run_keeps_no_screenshot_yet_shows_and_confirms_over_the_bytes(
    harness_for: HarnessFor, home: Home
) -> None:
    asked: list[AwaitingConfirmation] = []

    def approve(event: AwaitingConfirmation) -> ConfirmReply:
        asked.append(event)
        return ConfirmReply(Answer.APPROVE)

    with FakeVLLM(SeeingPolicy([Target("Save button", (255, 0, 0))])) as server:
        h = harness_for(server, mode=ConfirmMode.ALWAYS, answer=approve)
        h.store.keep_screenshots = False  # as build_session opens it with the setting off
        finished = h.run()
    assert finished.outcome is Outcome.ANSWERED
    steps = h.store.steps(finished.run_id)
    assert len(steps) == 2
    assert all(s.screenshot_path is None for s in steps)
    assert all(s.thumbnail_path and Path(s.thumbnail_path).exists() for s in steps)
    assert _files(h.store.run_dir(finished.run_id)) == ["step-001-thumb.jpg",
                                                         "step-002-thumb.jpg"]
    # The windows get the image in memory: the task window's screenshot, the confirmation's
    # crop around the target.
    frames = h.of(FrameCaptured)
    assert [f.screenshot_path for f in frames] == ["", ""]
    assert all(f.image.startswith(b"\xff\xd8") and f.thumbnail_path for f in frames)
    assert len(asked) == 1
    request = asked[0].request
    assert request.screenshot_path == "" and request.screenshot == frames[0].image
