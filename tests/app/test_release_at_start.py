"""app.runner.release_after_abnormal_end: the desktop app's start after a run died abnormally.

The release itself is control/release.py's (tests/control/test_release_x11.py); here a recorder
stands in for it, and a run left ``running`` by a process that is gone is a real row.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app import runner
from app.store import ActionLog
from control import release
from tests.support.home import REPO_ROOT, isolate_home

# Starts a run in the action log and exits without finishing it (as a SIGKILL would leave it).
# The flush: os._exit skips it, and stdout to a pipe is buffered unless PYTHONUNBUFFERED is set
# (it was on the CI machine, not on a fresh one: `make fresh-check` found this).
_START_AND_DIE = (
    "from app.store import ActionLog\n"
    "log = ActionLog.open()\n"
    "print(log.start_run('drag the file', 'http://127.0.0.1:1/v1', None, {}).id, flush=True)\n"
    "import os; os._exit(0)\n"
)


@pytest.fixture
def releases(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """Each release asked for, as the platform it was asked on."""
    isolate_home(monkeypatch, tmp_path)
    asked: list[str] = []

    def record(platform: str = sys.platform) -> release.Released:
        asked.append(platform)
        return release.Released()

    monkeypatch.setattr(release, "release_everything", record)
    return asked


def _run_that_died() -> str:
    out = subprocess.run([sys.executable, "-c", _START_AND_DIE], cwd=REPO_ROOT, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def test_a_run_left_running_by_a_dead_process_is_closed_and_its_input_released(
    releases: list[str]
) -> None:
    run_id = _run_that_died()
    assert runner.release_after_abnormal_end() is True
    assert len(releases) == 1
    with ActionLog.open(mark_interrupted=False) as store:
        run = store.get_run(run_id)
    assert run.outcome == "interrupted"
    assert run.reason is not None and "ended before the run finished" in run.reason


def test_a_last_run_marked_interrupted_earlier_still_counts(releases: list[str]) -> None:
    _run_that_died()
    with ActionLog.open():  # e.g. `holodesk log` marked it before the app started
        pass
    assert runner.release_after_abnormal_end() is True
    assert len(releases) == 1


def test_a_run_that_ended_normally_releases_nothing(releases: list[str]) -> None:
    with ActionLog.open() as store:
        run = store.start_run("click Save", "http://127.0.0.1:1/v1", None, {})
        store.finish_run(run.id, "answered")
    assert runner.release_after_abnormal_end() is False
    assert releases == []


def test_a_run_driving_the_desktop_is_left_alone(releases: list[str]) -> None:
    _run_that_died()
    with runner.desktop_lock():  # another run holds the desktop: it released as it started
        assert runner.release_after_abnormal_end() is False
    assert releases == []
