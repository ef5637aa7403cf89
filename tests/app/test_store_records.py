"""The step record's stored forms: results, geometry and screen points read as they always were."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.export import export_run
from app.store import (
    RESULTS,
    ActionLog,
    StepRecord,
    StepResult,
    StoreError,
    geometry_from_dict,
    parse_points,
    points_text,
)
from model.coords import FrameGeometry, Point, Rect
from tests.support.home import Home, isolate_home

# geometry_json exactly as holodesk wrote it before FrameGeometry.to_dict existed (json.dumps
# with sort_keys of the agent's hand-built dict).
STORED_GEOMETRY = (
    '{"monitor": {"height": 2160, "left": -1920, "top": 0, "width": 3840}, '
    '"scale": 2.0, "sent_height": 1152, "sent_width": 2048}'
)
GEOMETRY = FrameGeometry(2048, 1152, Rect(-1920, 0, 3840, 2160), 2.0)


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def log(home: Home) -> Iterator[ActionLog]:
    with ActionLog.open() as opened:
        yield opened


def raw_step(path: Path, run_id: str, step_no: int, result: str | None, **columns: object) -> None:
    """Insert a step row with plain SQL and plain strings, as an older holodesk wrote it."""
    values: dict[str, object] = {
        "run_id": run_id, "step_no": step_no, "started_at": 1_700_000_000.0 + step_no,
        "finished_at": 1_700_000_001.0 + step_no, "result": result, **columns,
    }  # fmt: skip
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    with sqlite3.connect(path) as conn:
        conn.execute(f"INSERT INTO steps ({names}) VALUES ({marks})", tuple(values.values()))


def test_step_results_are_the_stored_strings() -> None:
    assert {r.value for r in StepResult} == {"ok", "failed", "stopped", "skipped"}
    assert set(RESULTS) == {"ok", "failed", "stopped", "skipped"}
    assert StepResult.OK == "ok" and f"{StepResult.FAILED}: x" == "failed: x"
    assert json.dumps({"result": StepResult.SKIPPED}) == '{"result": "skipped"}'


def test_a_log_written_with_raw_strings_reads_as_records(log: ActionLog, tmp_path: Path) -> None:
    run = log.start_run("old run", "http://h/v1", None, {})
    for n, result in enumerate(("ok", "failed", "stopped", "skipped", None), start=1):
        raw_step(
            log.path,
            run.id,
            n,
            result,
            geometry_json=STORED_GEOMETRY,
            decision="auto",
            screen_point="(10, -20) -> (30, 40)",
            action_json='{"action": "drag"}',
        )
    steps = log.steps(run.id)
    assert [s.result for s in steps] == [
        StepResult.OK,
        StepResult.FAILED,
        StepResult.STOPPED,
        StepResult.SKIPPED,
        None,
    ]
    assert all(isinstance(s.result, StepResult) for s in steps[:4])
    assert steps[0].geometry == json.loads(STORED_GEOMETRY)
    assert steps[0].frame_geometry == GEOMETRY
    assert steps[0].points == (Point(10, -20), Point(30, 40))
    # The export says what it always said.
    out = export_run(log, run.id, tmp_path / "export")
    lines = [json.loads(line) for line in (out / "run.jsonl").read_text().splitlines()[1:]]
    assert [line["result"] for line in lines] == ["ok", "failed", "stopped", "skipped", None]
    assert lines[0]["geometry"] == json.loads(STORED_GEOMETRY)


def test_a_hand_edited_result_leaves_the_run_readable(
    log: ActionLog, caplog: pytest.LogCaptureFixture
) -> None:
    run = log.start_run("edited", "http://h/v1", None, {})
    raw_step(log.path, run.id, 1, "great")
    raw_step(log.path, run.id, 2, "ok")
    with caplog.at_level(logging.WARNING, logger="app.store"):
        steps = log.steps(run.id)
    assert [s.result for s in steps] == [None, StepResult.OK]
    assert "'great'" in caplog.text
    with pytest.raises(StoreError, match="unknown result 'great'"):
        log.add_step(StepRecord(run.id, 3, 0.0, result="great"))  # type: ignore[arg-type]


def test_a_stored_record_round_trips_unchanged(log: ActionLog) -> None:
    run = log.start_run("round trip", "http://h/v1", None, {})
    points = (Point(932, 880),)
    record = StepRecord(
        run.id,
        1,
        1.0,
        2.0,
        geometry=GEOMETRY.to_dict(),
        screen_point=points_text(points),
        result=StepResult.OK,
    )
    log.add_step(record)
    with sqlite3.connect(log.path) as conn:
        row = conn.execute(
            "SELECT geometry_json, screen_point, result FROM steps WHERE run_id = ?", (run.id,)
        ).fetchone()
    assert row == (STORED_GEOMETRY, "(932, 880)", "ok")  # the stored format did not change
    (back,) = log.steps(run.id)
    assert back == record
    assert back.frame_geometry == GEOMETRY and back.points == points


def test_frame_geometry_dict_round_trip() -> None:
    assert GEOMETRY.to_dict() == json.loads(STORED_GEOMETRY)
    assert FrameGeometry.from_dict(json.loads(STORED_GEOMETRY)) == GEOMETRY
    no_scale = {
        "sent_width": 10,
        "sent_height": 5,
        "monitor": {"left": 0, "top": 0, "width": 20, "height": 10},
    }
    assert FrameGeometry.from_dict(no_scale).scale == 1.0
    for bad in ({"sent_width": 1}, {**no_scale, "sent_width": "wide"}, {**no_scale, "monitor": 3}):
        with pytest.raises(ValueError, match="not a frame geometry"):
            FrameGeometry.from_dict(bad)
        assert geometry_from_dict(bad) is None
    assert geometry_from_dict(None) is None and geometry_from_dict({}) is None


def test_screen_point_text_round_trip() -> None:
    assert points_text(()) is None
    assert points_text((Point(1, 2),)) == "(1, 2)"
    drag = (Point(10, -20), Point(30, 40))
    assert points_text(drag) == "(10, -20) -> (30, 40)" == " -> ".join(str(p) for p in drag)
    assert parse_points(points_text(drag)) == drag
    assert parse_points(None) == () and parse_points("") == ()
