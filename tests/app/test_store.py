"""The action log: SQLite in WAL mode, schema versions, round trips, export, kills, no secrets."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import paths, store
from app.events import Outcome
from app.export import export_run, format_run, format_run_list
from app.result import OUTCOME_RESULTS, RunResult
from app.secrets import KeyringStore, lookup_api_key
from app.settings import describe_settings, load_settings, set_value
from app.store import (
    SCHEMA_VERSION,
    ActionLog,
    AmbiguousRun,
    RunNotFound,
    SchemaTooNew,
    Source,
    StepRecord,
    StoreError,
)
from model.run_secrets import RunSecrets
from tests.support.home import REPO_ROOT, Home, isolate_home
from tests.support.keyring_backend import DIR_ENV, FileBackend

KEY = "sk-holodesk-test-0123456789abcdef"
JPEG = b"\xff\xd8\xff\xe0" + b"fake jpeg body" * 10
PNG = b"\x89PNG\r\n\x1a\n" + b"fake png body"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


def user_version(path: Path) -> int:
    """``PRAGMA user_version`` of the database at ``path``: its schema's version."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


@pytest.fixture
def log(home: Home) -> Iterator[ActionLog]:
    with ActionLog.open() as opened:
        yield opened


def full_step(log: ActionLog, run_id: str, step_no: int) -> StepRecord:
    shot, thumb = log.save_screenshot(run_id, step_no, JPEG, "image/jpeg", PNG)
    return StepRecord(
        run_id=run_id,
        step_no=step_no,
        started_at=1_700_000_000.0 + step_no,
        finished_at=1_700_000_001.5 + step_no,
        screenshot_path=str(shot),
        thumbnail_path=str(thumb) if thumb else None,
        geometry={
            "sent_width": 2048,
            "sent_height": 1152,
            "monitor": {"left": -1920, "top": 0, "width": 3840, "height": 2160},
            "scale": 2.0,
        },
        raw_output='{"thought": "t", "action": {"action": "click"}}',
        action={"action": "click", "element": "Save button", "x": 932, "y": 880},
        thought="The Save button is at the bottom right.",
        note="file is report.txt",
        element="Save button",
        screen_point="(932, 880)",
        decision="approved",
        reason_for_confirm="clicks an element named like Save",
        result="ok",
        error=None,
        timings={"capture_ms": 12.5, "model_ms": 800.0, "ttft_ms": 90.0, "exec_ms": 3.0},
        prompt_tokens=2400,
        completion_tokens=40,
    )


def fixed_ids(monkeypatch: pytest.MonkeyPatch, *ids: str) -> None:
    pending = list(ids)
    monkeypatch.setattr(store, "_new_run_id", lambda _now: pending.pop(0))


# --- the database itself --------------------------------------------------------------------


def test_open_creates_a_private_wal_database(log: ActionLog, home: Home) -> None:
    assert log.path == home.data / "holodesk" / "holodesk.db"
    assert user_version(log.path) == SCHEMA_VERSION == 5
    with sqlite3.connect(log.path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert other.execute("PRAGMA user_version").fetchone()[0] == 5
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.path.parent.stat().st_mode) & 0o077 == 0


def test_foreign_keys_are_enforced(log: ActionLog) -> None:
    with pytest.raises(StoreError, match="unknown run"):
        log.add_step(StepRecord(run_id="20260101-000000-abcd", step_no=1, started_at=0.0))


def test_reopening_keeps_data_and_version(home: Home) -> None:
    with ActionLog.open() as first:
        run = first.start_run("task", "http://h/v1", None, {})
    with ActionLog.open() as second:
        assert second.get_run(run.id).task == "task"
        assert user_version(second.path) == SCHEMA_VERSION


def test_a_version_0_database_is_migrated(home: Home, tmp_path: Path) -> None:
    path = tmp_path / "old" / "holodesk.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE unrelated (x)")  # version 0 but not empty
    with ActionLog.open(path) as log:
        assert user_version(log.path) == SCHEMA_VERSION
        log.start_run("t", "http://h/v1", None, {})


def test_a_version_1_log_keeps_its_steps_and_gains_the_target(home: Home,
                                                               tmp_path: Path) -> None:
    path = tmp_path / "v1" / "holodesk.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as conn:
        for statement in store._MIGRATIONS[1]:
            conn.execute(statement)
        conn.execute("INSERT INTO runs (id, task, started_at, endpoint) "
                     "VALUES ('20260101-000000-abcd', 'old', 0, 'http://h/v1')")
        conn.execute("INSERT INTO steps (run_id, step_no, started_at) "
                     "VALUES ('20260101-000000-abcd', 1, 0)")
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    with ActionLog.open(path) as log:
        assert user_version(log.path) == SCHEMA_VERSION
        (step,) = log.steps("20260101-000000-abcd")
        assert step.target is None
        run = log.start_run("new", "http://h/v1", None, {})
        log.add_step(StepRecord(run_id=run.id, step_no=1, started_at=1.0, target="xterm"))
        assert log.steps(run.id)[0].target == "xterm"


def test_a_version_2_log_reads_its_steps_as_from_the_model(home: Home, tmp_path: Path) -> None:
    path = tmp_path / "v2" / "holodesk.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as conn:
        for version in (1, 2):
            for statement in store._MIGRATIONS[version]:
                conn.execute(statement)
        conn.execute("INSERT INTO runs (id, task, started_at, endpoint) "
                     "VALUES ('20260101-000000-abcd', 'old', 0, 'http://h/v1')")
        conn.execute("INSERT INTO steps (run_id, step_no, started_at, target) "
                     "VALUES ('20260101-000000-abcd', 1, 0, 'xterm')")
        conn.execute("PRAGMA user_version = 2")
    conn.close()
    with ActionLog.open(path) as log:
        assert user_version(log.path) == SCHEMA_VERSION
        (step,) = log.steps("20260101-000000-abcd")
        assert (step.target, step.source, step.source_note) == ("xterm", Source.MODEL, None)
        run = log.start_run("new", "http://h/v1", None, {})
        log.add_step(StepRecord(run_id=run.id, step_no=1, started_at=1.0,
                                source=Source.REPLAYED, source_note="found at (1, 2)"))
        stored = log.steps(run.id)[0]
        assert (stored.source, stored.source_note) == (Source.REPLAYED, "found at (1, 2)")


def test_every_version_has_a_migration() -> None:
    assert sorted(store._MIGRATIONS) == list(range(1, SCHEMA_VERSION + 1))


def test_a_newer_database_is_refused_untouched(home: Home, tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE runs (id TEXT, data TEXT)")
        conn.execute("INSERT INTO runs VALUES ('keep', 'me')")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(SchemaTooNew, match="newer holodesk") as err:
        ActionLog.open(path)
    assert "not changed" in str(err.value)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("SELECT * FROM runs").fetchall() == [("keep", "me")]
    conn.close()


def test_a_file_that_is_not_a_database(home: Home, tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a holodesk action log"):
        ActionLog.open(path)


def test_a_version_3_log_reads_its_token_figures_unchanged(home: Home, tmp_path: Path) -> None:
    # A log written before reasoning tokens were recorded: its figures read as they were, its
    # reasoning as not known; a new step keeps its reasoning figure and whether it is estimated.
    path = tmp_path / "v3" / "holodesk.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as conn:
        for version in (1, 2, 3):
            for statement in store._MIGRATIONS[version]:
                conn.execute(statement)
        conn.execute("INSERT INTO runs (id, task, started_at, endpoint) "
                     "VALUES ('20260101-000000-abcd', 'old', 0, 'http://h/v1')")
        conn.execute("INSERT INTO steps (run_id, step_no, started_at, prompt_tokens, "
                     "completion_tokens, source) "
                     "VALUES ('20260101-000000-abcd', 1, 0, 3000, 120, 'model')")
        conn.execute("PRAGMA user_version = 3")
    conn.close()
    with ActionLog.open(path) as log:
        assert user_version(log.path) == SCHEMA_VERSION
        (step,) = log.steps("20260101-000000-abcd")
        assert (step.prompt_tokens, step.completion_tokens) == (3000, 120)
        assert (step.reasoning_tokens, step.reasoning_estimated) == (None, False)
        run = log.start_run("new", "http://h/v1", None, {})
        log.add_step(StepRecord(run_id=run.id, step_no=1, started_at=1.0, completion_tokens=90,
                                reasoning_tokens=60, reasoning_estimated=True))
        log.add_step(StepRecord(run_id=run.id, step_no=2, started_at=2.0, reasoning_tokens=7))
        first, second = log.steps(run.id)
        assert (first.reasoning_tokens, first.reasoning_estimated) == (60, True)
        assert (second.reasoning_tokens, second.reasoning_estimated) == (7, False)


def test_a_version_4_log_gives_each_run_the_result_its_outcome_means(home: Home,
                                                                      tmp_path: Path) -> None:
    # Runs stored before results were: nothing better is known of them than their outcome;
    # one interrupted never finished (failed); one still running has none yet.
    path = tmp_path / "v4" / "holodesk.db"
    path.parent.mkdir()
    outcomes = {"answered": "done", "asked_user": "not done", "limit": "not done",
                "loop": "not done", "stopped": "stopped", "error": "failed",
                "interrupted": "failed", "running": "running"}
    with sqlite3.connect(path) as conn:
        for version in (1, 2, 3, 4):
            for statement in store._MIGRATIONS[version]:
                conn.execute(statement)
        for n, outcome in enumerate(outcomes):
            conn.execute("INSERT INTO runs (id, task, started_at, endpoint, outcome, reason, "
                         "pid, host) VALUES (?, ?, ?, 'http://h/v1', ?, 'why', ?, ?)",
                         (f"20260101-00000{n}-abcd", outcome, n, outcome, os.getpid(),
                          socket.gethostname()))
        conn.execute("PRAGMA user_version = 4")
    conn.close()
    with ActionLog.open(path) as log:
        assert user_version(log.path) == SCHEMA_VERSION
        read = {run.task: run for run in log.list_runs(20)}
        assert {task: run.headline for task, run in read.items()} == outcomes
        assert read["running"].result is None
        assert read["answered"].result is RunResult.DONE
        assert read["loop"].outcome == "loop" and read["loop"].reason == "why"


def test_every_outcome_has_a_result() -> None:
    assert set(OUTCOME_RESULTS) == store.OUTCOMES - {"running"}
    assert {outcome.value for outcome in Outcome} <= set(OUTCOME_RESULTS)
    assert {o: Outcome(o).result for o in ("answered", "asked_user", "limit", "loop",
                                           "stopped", "error")} == {
        "answered": RunResult.DONE, "asked_user": RunResult.NOT_DONE,
        "limit": RunResult.NOT_DONE, "loop": RunResult.NOT_DONE,
        "stopped": RunResult.STOPPED, "error": RunResult.FAILED}


# --- runs and steps ---------------------------------------------------------------------------


def test_round_trip(log: ActionLog) -> None:
    settings = load_settings().model_dump(mode="json")
    run = log.start_run("write a haiku", "http://127.0.0.1:8000/v1", "holotron", settings)
    assert run.outcome == "running" and run.pid == os.getpid() and run.steps == 0
    steps = [full_step(log, run.id, n) for n in (1, 2)]
    for step in steps:
        log.add_step(step)
    log.finish_run(run.id, "answered", "the model answered the task")

    stored = log.get_run(run.id)
    assert stored.outcome == "answered"
    assert stored.result is RunResult.DONE  # what the outcome means, given no other
    assert stored.reason == "the model answered the task"
    assert stored.steps == 2
    assert stored.finished_at is not None and stored.finished_at >= stored.started_at
    assert stored.settings == settings
    assert stored.model == "holotron"
    assert log.steps(run.id) == steps
    assert log.steps("20000101-000000-0000") == []


def test_screenshots_live_under_the_run_folder(log: ActionLog, home: Home) -> None:
    run = log.start_run("t", "http://h/v1", None, {})
    shot, thumb = log.save_screenshot(run.id, 7, JPEG, "image/jpeg", PNG)
    folder = home.data / "holodesk" / "runs" / run.id
    assert shot == folder / "step-007.jpg"
    assert thumb == folder / "step-007-thumb.png"
    assert shot.read_bytes() == JPEG and thumb.read_bytes() == PNG
    assert sorted(p.name for p in folder.iterdir()) == ["step-007-thumb.png", "step-007.jpg"]
    png_only, no_thumb = log.save_screenshot(run.id, 8, PNG, "image/png")
    assert png_only.name == "step-008.png" and no_thumb is None
    with pytest.raises(StoreError, match="unsupported"):
        log.save_screenshot(run.id, 9, b"GIF89a", "image/gif")
    with pytest.raises(StoreError, match="not a run id"):
        log.save_screenshot("../../etc", 1, JPEG, "image/jpeg")


def test_paths_are_stored_relative_to_the_data_folder(log: ActionLog) -> None:
    run = log.start_run("t", "http://h/v1", None, {})
    log.add_step(full_step(log, run.id, 1))
    with sqlite3.connect(log.path) as conn:
        stored = conn.execute("SELECT screenshot_path, thumbnail_path FROM steps").fetchone()
    conn.close()
    assert stored == (f"runs/{run.id}/step-001.jpg", f"runs/{run.id}/step-001-thumb.png")


def test_invalid_values_are_refused(log: ActionLog) -> None:
    run = log.start_run("t", "http://h/v1", None, {})
    with pytest.raises(StoreError, match="decision"):
        log.add_step(StepRecord(run.id, 1, 0.0, decision="maybe"))
    with pytest.raises(StoreError, match="result"):
        log.add_step(StepRecord(run.id, 1, 0.0, result="great"))
    with pytest.raises(StoreError, match="final outcome"):
        log.finish_run(run.id, "running")
    with pytest.raises(RunNotFound):
        log.finish_run("20000101-000000-0000", "stopped")
    log.add_step(StepRecord(run.id, 1, 0.0))
    with pytest.raises(StoreError, match="stored already"):
        log.add_step(StepRecord(run.id, 1, 0.0))


def test_every_outcome_the_agent_uses_is_accepted(log: ActionLog) -> None:
    for outcome in ("answered", "asked_user", "stopped", "limit", "loop", "error"):
        run = log.start_run(outcome, "http://h/v1", None, {})
        log.finish_run(run.id, outcome, "why")
        assert log.get_run(run.id).outcome == outcome


def test_the_result_given_is_the_one_kept_whatever_the_outcome(log: ActionLog) -> None:
    # A task's own check decided: the model answered, yet the task is not done.
    run = log.start_run("demo", "http://h/v1", None, {})
    log.finish_run(run.id, "answered", "the practice task is not done", RunResult.NOT_DONE)
    stored = log.get_run(run.id)
    assert (stored.outcome, stored.result, stored.headline) == (
        "answered", RunResult.NOT_DONE, "not done")
    assert f"{run.id}: not done: the practice task is not done" in format_run(stored, [])
    listed = format_run_list([stored])
    assert "RESULT" in listed and "not done" in listed and "answered" not in listed
    with pytest.raises(StoreError, match="unknown result"):
        log.finish_run(run.id, "answered", "why", "great")  # type: ignore[arg-type]


def test_settings_snapshot_never_keeps_a_secret(log: ActionLog) -> None:
    run = log.start_run("t", "http://h/v1", None, {"max_steps": 3, "api_key": KEY})
    assert run.settings == {"max_steps": 3}
    assert KEY not in log.path.read_bytes().decode("latin-1")


def test_known_secrets_are_masked_in_stored_text(home: Home) -> None:
    with ActionLog.open(secrets=RunSecrets(api_key=KEY)) as log:
        run = log.start_run("t", "http://h/v1", None, {})
        log.add_step(StepRecord(run.id, 1, 0.0, error=f"Illegal header b'Bearer {KEY}'"))
        log.finish_run(run.id, "error", f"server said {KEY}")
        assert log.steps(run.id)[0].error == "Illegal header b'Bearer ***'"
        assert log.get_run(run.id).reason == "server said ***"


# --- finding runs ---------------------------------------------------------------------------


def test_lookup_by_id_prefix_and_last(log: ActionLog, monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_ids(monkeypatch, "20261202-104858-ab12", "20261202-104858-ab34", "20261203-090000-cd56")
    first = log.start_run("one", "http://h/v1", None, {})
    second = log.start_run("two", "http://h/v1", None, {})
    third = log.start_run("three", "http://h/v1", None, {})
    assert log.get_run("20261202-104858-ab12") == first
    assert log.get_run("20261202-104858-ab3") == second
    assert log.get_run(" 20261203 ") == third
    assert log.get_run("last") == third
    with pytest.raises(AmbiguousRun, match="20261202-104858-ab12") as err:
        log.get_run("20261202")
    assert isinstance(err.value, RunNotFound)
    with pytest.raises(RunNotFound, match="no run matches '2027'"):
        log.get_run("2027")
    with pytest.raises(RunNotFound):
        log.get_run("")
    assert [r.id for r in log.list_runs(2)] == [third.id, second.id]


def test_run_ids_are_sortable_and_unique(log: ActionLog) -> None:
    ids = [log.start_run(str(n), "http://h/v1", None, {}).id for n in range(30)]
    assert len(set(ids)) == 30
    assert all(store._RUN_ID.match(run_id) for run_id in ids)
    assert ids[0][:8] == time.strftime("%Y%m%d")


# --- export -----------------------------------------------------------------------------------


def test_export_writes_jsonl_and_images(log: ActionLog, tmp_path: Path) -> None:
    run = log.start_run("export me", "http://h/v1", "holotron", {"max_steps": 3})
    for n in (1, 2, 3):
        log.add_step(full_step(log, run.id, n))
    log.finish_run(run.id, "limit", "step limit of 3 reached")
    dest = tmp_path / "exports"
    out = export_run(log, run.id[:12], dest)
    assert out == dest / f"holodesk-run-{run.id}"
    lines = [json.loads(line) for line in (out / "run.jsonl").read_text().splitlines()]
    assert [line["type"] for line in lines] == ["run", "step", "step", "step"]
    head = lines[0]
    assert head["id"] == run.id and head["outcome"] == "limit" and head["steps"] == 3
    assert head["result"] == "not_done"
    assert head["settings"] == {"max_steps": 3}
    assert head["started_at"].endswith("+00:00")
    for n, line in enumerate(lines[1:], start=1):
        assert line["step_no"] == n
        assert line["screenshot"] == f"step-{n:03d}.jpg"
        assert line["thumbnail"] == f"step-{n:03d}-thumb.png"
        assert (out / line["screenshot"]).read_bytes() == JPEG
        assert (out / line["thumbnail"]).read_bytes() == PNG
        assert line["action"]["element"] == "Save button"
        assert line["geometry"]["scale"] == 2.0
        assert line["timings"]["model_ms"] == 800.0
    assert sorted(p.name for p in dest.iterdir()) == [out.name]  # no temporary folder left
    with pytest.raises(StoreError, match="exists already"):
        export_run(log, run.id, dest)


def test_export_of_a_run_with_a_missing_image(log: ActionLog, tmp_path: Path) -> None:
    run = log.start_run("t", "http://h/v1", None, {})
    step = full_step(log, run.id, 1)
    log.add_step(step)
    assert step.screenshot_path is not None
    Path(step.screenshot_path).unlink()
    out = export_run(log, run.id, tmp_path)
    line = json.loads((out / "run.jsonl").read_text().splitlines()[1])
    assert line["screenshot"] is None and line["thumbnail"] == "step-001-thumb.png"


# --- the key never reaches the log, the log file or an export ----------------------------------


def test_a_keyring_key_never_reaches_db_log_or_export(
    home: Home, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(DIR_ENV, str(home.keyring))
    secrets_store = KeyringStore(backend=FileBackend())
    paths.ensure_private_dir(paths.log_dir())
    handler = logging.FileHandler(paths.log_path(), encoding="utf-8")
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        set_value("max_steps", "5")
        set_value("api_key", KEY, store=secrets_store)
        settings = load_settings()
        found = lookup_api_key(settings.endpoint, secrets_store, environ={})
        assert found.key == KEY  # the key is really there to leak
        describe_settings(settings, store=secrets_store)
        with ActionLog.open() as log:
            run = log.start_run(
                "task", settings.endpoint, "holotron", settings.model_dump(mode="json")
            )
            for n in (1, 2):
                log.add_step(full_step(log, run.id, n))
            log.finish_run(run.id, "answered", "done")
            export = export_run(log, run.id, tmp_path / "export")
            logging.getLogger("holodesk.test").info("run %s exported to %s", run.id, export)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()

    needle = KEY.encode()
    scanned = 0
    for folder in (home.config, home.data, home.state, export):
        for path in folder.rglob("*"):
            if path.is_file():
                scanned += 1
                assert needle not in path.read_bytes(), f"the API key leaked into {path}"
    assert scanned >= 8
    assert paths.log_path().stat().st_size > 0
    # Control: the scan would have found it where it belongs.
    assert needle in (home.keyring / "keyring.json").read_bytes()


# --- a killed process -----------------------------------------------------------------------------

CHILD = """
import sys, time
from app.store import ActionLog, StepRecord
log = ActionLog.open()
run = log.start_run("killed mid-run", "http://127.0.0.1:8000/v1", None, {"max_steps": 500})
print("run", run.id, flush=True)
step_no = 0
while True:
    step_no += 1
    data = b"\\xff\\xd8\\xff" + bytes(2000)
    shot, thumb = log.save_screenshot(run.id, step_no, data, "image/jpeg")
    log.add_step(StepRecord(run.id, step_no, time.time(), time.time(), str(shot),
                            action={"action": "wait", "seconds": 0}, decision="auto",
                            result="ok", thought="x" * 500))
    print("step", step_no, flush=True)
    if step_no >= 5:
        time.sleep(0.005)
"""


def test_sigkill_mid_run_keeps_every_finished_step(home: Home) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        env=home.env(),
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        first = child.stdout.readline().split()
        assert first[:1] == ["run"], child.stderr.read() if child.stderr else ""
        run_id = first[1]
        reported: list[int] = []
        while len(reported) < 8:
            line = child.stdout.readline()
            assert line, child.stderr.read() if child.stderr else "child ended"
            reported.append(int(line.split()[1]))
        # While the writer lives, its run is not "interrupted" by another process opening the log.
        with ActionLog.open() as watcher:
            assert watcher.get_run(run_id).outcome == "running"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL

    with ActionLog.open() as log:
        run = log.get_run(run_id)
        steps = log.steps(run_id)
        integrity = log._conn.execute("PRAGMA integrity_check").fetchone()[0]
    assert integrity == "ok"
    assert run.outcome == "interrupted"
    assert run.reason is not None and str(child.pid) in run.reason
    numbers = [s.step_no for s in steps]
    assert numbers == list(range(1, len(numbers) + 1))  # no gaps, nothing half-written
    assert set(reported) <= set(numbers)  # every step reported as stored survived
    assert run.steps == len(numbers)
    for step in steps:
        assert step.screenshot_path is not None and Path(step.screenshot_path).is_file()
        assert step.thought == "x" * 500


def test_a_live_run_of_this_process_is_not_interrupted(home: Home) -> None:
    with ActionLog.open() as first:
        run = first.start_run("alive", "http://h/v1", None, {})
        with ActionLog.open() as second:
            assert second.mark_interrupted() == []
            assert second.get_run(run.id).outcome == "running"


def test_a_dead_pid_is_interrupted_and_a_reused_pid_is_recognised(log: ActionLog) -> None:
    run = log.start_run("t", "http://h/v1", None, {})
    log.add_step(StepRecord(run.id, 1, 100.0, 150.0))
    # This process's pid but another start time: the pid was reused by someone else.
    log._conn.execute("UPDATE runs SET proc_start = '1' WHERE id = ?", (run.id,))
    assert log.mark_interrupted() == [run.id]
    interrupted = log.get_run(run.id)
    assert interrupted.outcome == "interrupted"
    assert interrupted.result is RunResult.FAILED  # it never finished
    assert interrupted.finished_at == 150.0  # the last sign of life, not the time we noticed
    other = log.start_run("elsewhere", "http://h/v1", None, {})
    log._conn.execute("UPDATE runs SET host = 'another-machine', pid = 1 WHERE id = ?", (other.id,))
    assert log.mark_interrupted() == []  # a pid on another host says nothing here


# --- text for the terminal ---------------------------------------------------------------------


def test_format_run_list_and_run(log: ActionLog) -> None:
    assert format_run_list([]) == "no runs yet"
    run = log.start_run("open the\nDownloads folder", "http://h/v1", "holotron", {})
    step = full_step(log, run.id, 1)
    step.thought = "evil \x1b]0;pwned\x07 title \u202e"
    log.add_step(step)
    log.add_step(
        StepRecord(
            run.id,
            2,
            time.time(),
            action={"action": "type", "text": "hello", "press_enter": True},
            result="ok",
            target="XTerm \u2014 bash",
        )
    )
    log.finish_run(run.id, "answered", "done")
    listing = format_run_list(log.list_runs())
    assert run.id in listing and "done" in listing and "open the⏎Downloads folder" in listing
    text = format_run(log.get_run(run.id), log.steps(run.id))
    assert 'click "Save button" at (932, 880)' in text
    assert 'type "hello" + Enter' in text
    assert "\n    in: XTerm \u2014 bash" in text
    assert "approved / ok" in text
    assert "model 0.80 s" in text
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "␛]0;pwned␇ title ⟨U+202E⟩" in text  # shown, as app/visible.py spells it
