"""Deleting runs (rows and files), retention pruning, and reading new steps for live views."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store import ActionLog, RunNotFound, StepRecord, StoreError
from tests.support.home import Home, isolate_home

JPEG = b"\xff\xd8\xff\xe0" + b"fake jpeg body" * 10
DAY = 86_400.0


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def log(home: Home) -> Iterator[ActionLog]:
    with ActionLog.open() as opened:
        yield opened


def add_steps(log: ActionLog, run_id: str, count: int) -> None:
    for step_no in range(1, count + 1):
        shot, thumb = log.save_screenshot(run_id, step_no, JPEG, "image/jpeg", JPEG)
        log.add_step(
            StepRecord(
                run_id=run_id,
                step_no=step_no,
                started_at=time.time(),
                finished_at=time.time(),
                screenshot_path=str(shot),
                thumbnail_path=str(thumb),
                result="ok",
            )
        )


def finished_run(log: ActionLog, task: str, steps: int = 2) -> str:
    run = log.start_run(task, "http://127.0.0.1:8000/v1", "holotron", {})
    add_steps(log, run.id, steps)
    log.finish_run(run.id, "answered")
    return run.id


def backdate(log: ActionLog, run_id: str, days: float) -> None:
    """Make a run look ``days`` old (the store has no public way to start runs in the past)."""
    with log._lock:
        log._conn.execute(
            "UPDATE runs SET started_at = started_at - ? WHERE id = ?", (days * DAY, run_id)
        )


def test_delete_run_removes_rows_and_files(log: ActionLog) -> None:
    keep = finished_run(log, "keep me")
    gone = finished_run(log, "delete me")
    folder = log.run_dir(gone)
    assert sorted(p.name for p in folder.iterdir()) == [
        "step-001-thumb.jpg",
        "step-001.jpg",
        "step-002-thumb.jpg",
        "step-002.jpg",
    ]
    log.delete_run(gone)
    assert not folder.exists()
    assert [run.id for run in log.list_runs()] == [keep]
    assert log.steps(gone) == []
    with pytest.raises(RunNotFound):
        log.get_run(gone)
    # The other run is untouched.
    assert len(log.steps(keep)) == 2
    assert log.run_dir(keep).is_dir()
    with log._lock:
        orphans = log._conn.execute(
            "SELECT count(*) FROM steps WHERE run_id = ?", (gone,)
        ).fetchone()[0]
    assert orphans == 0


def test_delete_unknown_run(log: ActionLog) -> None:
    with pytest.raises(RunNotFound):
        log.delete_run("20260101-000000-abcd")


def test_delete_refuses_a_bad_run_id(log: ActionLog) -> None:
    with pytest.raises(StoreError):
        log.delete_run("../../etc")


def test_delete_run_without_folder(log: ActionLog) -> None:
    run = log.start_run("no steps", "http://127.0.0.1:8000/v1", None, {})
    log.finish_run(run.id, "stopped")
    log.delete_run(run.id)
    assert log.list_runs() == []


def test_delete_refuses_a_run_still_running_here(log: ActionLog) -> None:
    run = log.start_run("in progress", "http://127.0.0.1:8000/v1", None, {})
    with pytest.raises(StoreError, match="still running"):
        log.delete_run(run.id)
    assert log.get_run(run.id).outcome == "running"


def test_delete_allows_a_running_run_whose_process_died(log: ActionLog, home: Home) -> None:
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "from app.store import ActionLog\n"
            "log = ActionLog.open()\n"
            "print(log.start_run('dies', 'http://127.0.0.1:8000/v1', None, {}).id)\n",
        ],
        env=home.env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    run_id = child.stdout.strip()
    assert log.get_run(run_id).outcome == "running"
    log.delete_run(run_id)
    assert log.list_runs() == []


def test_prune_deletes_old_runs_only(log: ActionLog) -> None:
    old = finished_run(log, "old")
    middle = finished_run(log, "middle")
    new = finished_run(log, "new")
    backdate(log, old, 40)
    backdate(log, middle, 29)
    old_folder = log.run_dir(old)
    assert log.prune(30) == [old]
    assert not old_folder.exists()
    assert {run.id for run in log.list_runs()} == {middle, new}


def test_prune_zero_keeps_everything(log: ActionLog) -> None:
    old = finished_run(log, "ancient")
    backdate(log, old, 10_000)
    assert log.prune(0) == []
    assert [run.id for run in log.list_runs()] == [old]


def test_prune_keeps_a_running_run_whatever_its_age(log: ActionLog) -> None:
    run = log.start_run("long", "http://127.0.0.1:8000/v1", None, {})
    backdate(log, run.id, 100)
    assert log.prune(1) == []
    assert log.get_run(run.id).outcome == "running"


def test_prune_with_explicit_now(log: ActionLog) -> None:
    run_id = finished_run(log, "x")
    assert log.prune(1, now=time.time() + 0.5 * DAY) == []
    assert log.prune(1, now=time.time() + 2 * DAY) == [run_id]
