"""The action log window against a real ActionLog in a temp home, offscreen."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from PySide6.QtWidgets import QFileDialog, QMessageBox
from pytestqt.qtbot import QtBot

from app.events import (
    ActionExecuted,
    Decision,
    FrameCaptured,
    Outcome,
    RunFinished,
    RunStarted,
    StepDecided,
    StepProposed,
)
from app.result import RunResult
from app.store import ActionLog, Source, StepRecord, geometry_from_dict, parse_points
from control.policy import Verdict
from model.coords import FrameGeometry, Point, Rect
from model.schema import Click, Step
from tests.support.home import Home, isolate_home
from tests.support.log_window_rows import run_ids, run_row, select, step_row
from ui.log_window import (
    MARKER_COLOR,
    LogWindow,
    ScreenshotDialog,
    marker_pixels,
)

ENDPOINT = "http://127.0.0.1:8000/v1"
# The monitor is 400x200 logical points at (100, 50); the screenshot sent was 200x100.
GEOMETRY = {
    "sent_width": 200,
    "sent_height": 100,
    "monitor": {"left": 100, "top": 50, "width": 400, "height": 200},
    "scale": 1.0,
}
FRAME_GEOMETRY = FrameGeometry(200, 100, Rect(100, 50, 400, 200), 1.0)


def png(
    width: int = 200, height: int = 100, color: tuple[int, int, int] = (255, 255, 255)
) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def writer(home: Home) -> Iterator[ActionLog]:
    """The agent's side: a separate connection that writes runs."""
    with ActionLog.open() as log:
        yield log


def add_step(log: ActionLog, run_id: str, step_no: int, **fields: object) -> None:
    shot, thumb = log.save_screenshot(run_id, step_no, png(), "image/png", png(64, 32))
    record = StepRecord(
        run_id=run_id,
        step_no=step_no,
        started_at=1_700_000_000.0,
        finished_at=1_700_000_002.5,
        screenshot_path=str(shot),
        thumbnail_path=str(thumb) if thumb else None,
        geometry=GEOMETRY,
        action={"action": "click", "element": "Save button", "x": 500, "y": 500},
        thought=f"thought {step_no}",
        element="Save button",
        screen_point="(300, 150)",
        decision="approved",
        result="ok",
    )
    for name, value in fields.items():
        setattr(record, name, value)
    log.add_step(record)


def finished_run(log: ActionLog, task: str, steps: int = 2) -> str:
    run = log.start_run(task, ENDPOINT, "holotron", {})
    for step_no in range(1, steps + 1):
        add_step(log, run.id, step_no, target="Firefox" if step_no == 1 else None)
    log.finish_run(run.id, "answered", "done")
    return run.id


@pytest.fixture
def window(qtbot: QtBot, home: Home) -> Iterator[LogWindow]:
    win = LogWindow(lambda: ActionLog.open(mark_interrupted=False))
    qtbot.addWidget(win)
    yield win
    win.shutdown()


def wait_runs(qtbot: QtBot, window: LogWindow) -> None:
    """Refresh and wait for that refresh (not an earlier one still in flight)."""
    qtbot.waitUntil(lambda: not window.busy, timeout=10_000)
    with qtbot.waitSignal(window.runs_loaded, timeout=10_000):
        window.refresh()


# --------------------------------------------------------------------------- pure helpers


def test_helpers_map_points_to_screenshot_pixels() -> None:
    geometry = geometry_from_dict(GEOMETRY)
    assert geometry == FRAME_GEOMETRY
    assert geometry_from_dict(None) is None
    assert geometry_from_dict({"sent_width": 1}) is None
    assert parse_points("(300, 150)") == (Point(300, 150),)
    assert parse_points("(10, -20) -> (30, 40)") == (Point(10, -20), Point(30, 40))
    assert parse_points(None) == ()
    # Logical (300, 150) is 200 px right of and 100 px below the monitor's origin: half of it
    # in a screenshot sent at half size; a thumbnail of 50x25 scales it again.
    assert marker_pixels([Point(300, 150)], FRAME_GEOMETRY) == [(100.0, 50.0)]
    assert marker_pixels([Point(300, 150)], FRAME_GEOMETRY, (50, 25)) == [(25.0, 12.5)]
    retina = FrameGeometry(200, 100, Rect(0, 0, 800, 400), 2.0)
    assert marker_pixels([Point(200, 100)], retina) == [(100.0, 50.0)]


# --------------------------------------------------------------------------- rows


def test_runs_newest_first_and_steps_of_the_selected_run(
    qtbot: QtBot, writer: ActionLog, home: Home
) -> None:
    first = finished_run(writer, "first task", steps=1)
    time.sleep(0.01)
    second = finished_run(writer, "second task\nwith two lines", steps=2)
    window = LogWindow()  # the default factory opens the (isolated) user's log
    qtbot.addWidget(window)
    try:
        with qtbot.waitSignal(window.runs_loaded, timeout=10_000):
            pass
        assert run_ids(window) == [second, first]
        row = run_row(window, second)
        assert row["Task"] == "second task⏎with two lines"  # shown, app/visible.py
        assert row["Result"] == "done"
        assert row["Steps"] == "2"
        select(qtbot, window, second)
        assert window.current_run_id() == second
        assert window.step_numbers() == [1, 2]
        step = step_row(window, 2)
        assert step["Thought"] == "thought 2"
        assert step["Action"] == 'click "Save button" at (300, 150)'
        assert step_row(window, 1)["Action"] == 'click "Save button" at (300, 150) (in Firefox)'
        assert step["Decision"] == "approved"
        assert step["Outcome"] == "ok"
        assert step["Time"] == "2.5 s"
        # The thumbnail is shown as the row's icon.
        icon_item = window.steps_table.item(0, 0)
        assert icon_item is not None and not icon_item.icon().isNull()
    finally:
        window.shutdown()


def test_failed_step_shows_its_error(qtbot: QtBot, writer: ActionLog, window: LogWindow) -> None:
    run = writer.start_run("fails", ENDPOINT, None, {})
    add_step(writer, run.id, 1, result="failed", error="the server broke")
    writer.finish_run(run.id, "error", "the server broke")
    wait_runs(qtbot, window)
    select(qtbot, window, run.id)
    assert step_row(window, 1)["Outcome"] == "failed: the server broke"
    assert run_row(window, run.id)["Result"] == "failed"
    # The detail over the steps: the result as the headline, the reason after it.
    assert window.run_detail.text() == "Failed: the server broke"
    assert window.run_detail.property("result") == "failed"


def test_a_replayed_step_says_so_and_why(qtbot: QtBot, writer: ActionLog,
                                         window: LogWindow) -> None:
    run = writer.start_run("replays", ENDPOINT, None, {})
    add_step(writer, run.id, 1, decision="auto", source=Source.REPLAYED,
             source_note="saved step 1: Save button found again")
    add_step(writer, run.id, 2, decision="auto",
             source_note="replay handed over: the screen changed")
    writer.finish_run(run.id, "answered", "done")
    wait_runs(qtbot, window)
    select(qtbot, window, run.id)
    assert step_row(window, 1)["Decision"] == "auto, replayed"
    assert step_row(window, 2)["Decision"] == "auto"
    tip = window.steps_table.item(0, 4).toolTip()
    assert "found again" in tip


# --------------------------------------------------------------------------- live


def test_live_events_then_the_store(qtbot: QtBot, writer: ActionLog, window: LogWindow) -> None:
    old = finished_run(writer, "old run", steps=1)
    wait_runs(qtbot, window)
    run = writer.start_run("live task", ENDPOINT, "holotron", {})

    window.on_event(RunStarted(run.id, "live task", ENDPOINT, "holotron", "1", False))
    # The row is there at once, before any store read.
    assert run_ids(window)[0] == run.id
    assert run_row(window, run.id)["Result"] == "running"
    select(qtbot, window, run.id)
    assert window.step_numbers() == []

    shot, _ = writer.save_screenshot(run.id, 1, png(), "image/png")
    window.on_event(FrameCaptured(run.id, 1, FRAME_GEOMETRY, str(shot), 5.0))
    assert window.step_numbers() == [1]
    assert step_row(window, 1)["Outcome"] == "thinking…"
    action = Click(element="OK button", x=500, y=500)
    step = Step(thought="press OK", action=action)
    verdict = Verdict(confirm=True, forbidden=False, reasons=("asks first",))
    window.on_event(
        StepProposed(run.id, 1, step, (Point(300, 150),), 'click "OK button"', verdict, "{}")
    )
    window.on_event(StepDecided(run.id, 1, Decision.APPROVED, action))
    window.on_event(ActionExecuted(run.id, 1, 'click "OK button"', 3.0, 10.0, True))
    row = step_row(window, 1)
    assert row["Thought"] == "press OK"
    assert row["Action"] == 'click "OK button"'
    assert row["Decision"] == "approved"
    assert row["Outcome"] == "ok"
    assert run_row(window, run.id)["Steps"] == "1"

    # The agent writes the row and finishes; the window re-reads the store.
    add_step(writer, run.id, 1, thought="press OK (stored)")
    writer.finish_run(run.id, "answered", "done")
    with qtbot.waitSignal(window.runs_loaded, timeout=10_000):
        window.on_event(RunFinished(run.id, Outcome.ANSWERED, "done", 1, "ok",
                                    result=RunResult.DONE))
    assert run_row(window, run.id)["Result"] == "done"
    qtbot.waitUntil(lambda: step_row(window, 1)["Thought"] == "press OK (stored)", timeout=10_000)
    assert run_ids(window) == [run.id, old]


def test_events_of_another_run_do_not_touch_the_shown_steps(
    qtbot: QtBot, writer: ActionLog, window: LogWindow
) -> None:
    shown = finished_run(writer, "shown", steps=1)
    wait_runs(qtbot, window)
    select(qtbot, window, shown)
    window.on_event(RunStarted("20990101-000000-beef", "other", ENDPOINT, "m", "1", False))
    window.on_event(FrameCaptured("20990101-000000-beef", 1, FRAME_GEOMETRY, "/nope.png", 1.0))
    assert window.current_run_id() == shown
    assert window.step_numbers() == [1]
    assert run_row(window, "20990101-000000-beef")["Steps"] == "1"


# --------------------------------------------------------------------------- actions


def test_delete_asks_then_removes_rows_and_files(
    qtbot: QtBot, writer: ActionLog, window: LogWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    keep = finished_run(writer, "keep")
    gone = finished_run(writer, "gone")
    folder = writer.run_dir(gone)
    assert folder.is_dir()
    wait_runs(qtbot, window)
    select(qtbot, window, gone)

    asked: list[str] = []

    def answer_no(*args: object, **_kw: object) -> QMessageBox.StandardButton:
        asked.append(str(args[2]))
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "question", answer_no)
    window.delete_button.click()
    assert asked and gone in asked[0]
    assert folder.is_dir()

    monkeypatch.setattr(QMessageBox, "question", lambda *_a, **_k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(window.deleted, timeout=10_000) as deleted:
        window.delete_button.click()
    assert deleted.args == [[gone]]
    assert not folder.exists()
    qtbot.waitUntil(lambda: run_ids(window) == [keep], timeout=10_000)
    assert [run.id for run in writer.list_runs()] == [keep]
    assert window.current_run_id() is None
    assert window.step_numbers() == []


def test_delete_of_a_running_run_is_refused_with_a_message(
    qtbot: QtBot, writer: ActionLog, window: LogWindow
) -> None:
    run = writer.start_run("still going", ENDPOINT, None, {})
    wait_runs(qtbot, window)
    with qtbot.waitSignal(window.failed, timeout=10_000) as failed:
        window.delete_runs([run.id], confirm=False)
    assert "still running" in failed.args[0]
    assert "still running" in window.status_label.text()
    assert writer.get_run(run.id).outcome == "running"


def test_export_writes_the_run(
    qtbot: QtBot,
    writer: ActionLog,
    window: LogWindow,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_id = finished_run(writer, "export me", steps=2)
    wait_runs(qtbot, window)
    select(qtbot, window, run_id)
    dest = tmp_path / "exports"
    dest.mkdir()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_a, **_k: str(dest))
    with qtbot.waitSignal(window.exported, timeout=10_000) as exported:
        window.export_button.click()
    folder = Path(exported.args[0])
    assert folder == dest / f"holodesk-run-{run_id}"
    lines = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()]
    assert [line["type"] for line in lines] == ["run", "step", "step"]
    assert (folder / "step-001.png").is_file()
    assert str(folder) in window.status_label.text()


def test_open_folder_opens_the_run_directory(
    qtbot: QtBot, writer: ActionLog, window: LogWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    run_id = finished_run(writer, "folder", steps=1)
    wait_runs(qtbot, window)
    select(qtbot, window, run_id)
    opened: list[str] = []

    def fake_open(url: QUrl) -> bool:
        opened.append(url.toLocalFile())
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", fake_open)
    window.folder_button.click()
    qtbot.waitUntil(lambda: bool(opened), timeout=10_000)
    assert Path(opened[0]) == writer.run_dir(run_id)


def test_prune_applies_retention(qtbot: QtBot, writer: ActionLog, window: LogWindow) -> None:
    old = finished_run(writer, "old")
    new = finished_run(writer, "new")
    with writer._lock:
        writer._conn.execute(
            "UPDATE runs SET started_at = started_at - 40 * 86400 WHERE id = ?", (old,)
        )
    with qtbot.waitSignal(window.deleted, timeout=10_000) as deleted:
        window.prune(30)
    assert deleted.args == [[old]]
    qtbot.waitUntil(lambda: run_ids(window) == [new], timeout=10_000)
    assert not writer.run_dir(old).exists()


def test_screenshot_dialog_marks_the_point(
    qtbot: QtBot, writer: ActionLog, window: LogWindow
) -> None:
    run_id = finished_run(writer, "marker", steps=1)
    wait_runs(qtbot, window)
    select(qtbot, window, run_id)
    with qtbot.waitSignal(window.screenshot_opened, timeout=10_000) as opened:
        window.steps_table.cellDoubleClicked.emit(0, 2)
    dialog = opened.args[0]
    assert isinstance(dialog, ScreenshotDialog)
    qtbot.addWidget(dialog)
    # Screen point (300, 150) on a 400x200 monitor at (100, 50), sent at 200x100: pixel (100, 50).
    assert dialog.pixels == [(100.0, 50.0)]
    assert dialog.marked.size().width() == 200
    assert dialog.marked.pixelColor(100, 50) == MARKER_COLOR
    assert dialog.marked.pixelColor(10, 10).getRgb()[:3] == (255, 255, 255)
    assert dialog.marked.pixelColor(190, 90).getRgb()[:3] == (255, 255, 255)
    dialog.close()


def test_a_step_logged_without_its_screenshot_shows_its_thumbnail(
    qtbot: QtBot, writer: ActionLog, window: LogWindow
) -> None:
    writer.keep_screenshots = False  # log_screenshots off
    run = writer.start_run("thumbnails only", ENDPOINT, "holotron", {})
    wait_runs(qtbot, window)
    window.on_event(RunStarted(run.id, "thumbnails only", ENDPOINT, "holotron", "1", False))
    select(qtbot, window, run.id)
    shot, thumb = writer.save_screenshot(run.id, 1, png(), "image/png", png(64, 32))
    assert shot is None and thumb is not None
    # Live: the event names no screenshot file, only the thumbnail.
    window.on_event(FrameCaptured(run.id, 1, FRAME_GEOMETRY, "", 5.0, str(thumb), png()))
    qtbot.waitUntil(lambda: not window.steps_table.item(0, 0).icon().isNull(), timeout=10_000)
    add_step(writer, run.id, 1, screenshot_path=None)  # as the agent records it
    writer.finish_run(run.id, "answered", "done")
    with qtbot.waitSignal(window.runs_loaded, timeout=10_000):
        window.on_event(RunFinished(run.id, Outcome.ANSWERED, "done", 1, "ok",
                                    result=RunResult.DONE))
    qtbot.waitUntil(lambda: step_row(window, 1)["Outcome"] == "ok", timeout=10_000)
    assert writer.steps(run.id)[0].screenshot_path is None
    icon_item = window.steps_table.item(0, 0)
    assert icon_item is not None and not icon_item.icon().isNull()
    # Opening the step shows the thumbnail, and says that is all there is.
    with qtbot.waitSignal(window.screenshot_opened, timeout=10_000) as opened:
        window.open_screenshot(1)
    dialog = opened.args[0]
    assert isinstance(dialog, ScreenshotDialog)
    qtbot.addWidget(dialog)
    assert dialog.marked.size().width() == 64
    assert "thumbnail only" in dialog.windowTitle()
    assert "Keep full screenshots" in dialog.windowTitle()
    dialog.close()


def test_missing_screenshot_is_reported(qtbot: QtBot, writer: ActionLog, window: LogWindow) -> None:
    run_id = finished_run(writer, "lost", steps=1)
    for path in writer.run_dir(run_id).iterdir():
        path.unlink()
    wait_runs(qtbot, window)
    select(qtbot, window, run_id)
    with qtbot.waitSignal(window.failed, timeout=10_000) as failed:
        window.open_screenshot(1)
    assert "cannot be read" in failed.args[0]
