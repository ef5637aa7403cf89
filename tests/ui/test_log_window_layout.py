"""The action log window as it opens (issue 24), offscreen: runs read apart (the whole id, when,
how it ended, the task's start and end), nothing cut without its whole text on hover, the
task and thought columns widenable, every column in view."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QHeaderView, QStyle, QTableWidget
from pytestqt.qtbot import QtBot

from app.demo.run import DEMO_TASK
from app.store import ActionLog, StepRecord, StepResult
from tests.support.home import isolate_home
from ui.log_window import RUN_COLUMNS, STEP_COLUMNS, LogWindow

ENDPOINT = "http://127.0.0.1:8000/v1"
TIMESHEET = ("Open the timesheet page in the browser and file today's hours on the project "
             "that the team agreed on at the start of the quarter, which is {}")
THOUGHT = ("The practice window is open at the centre of the screen. Its checklist says the "
           "name field comes first, then the colour list, then Save, and Delete draft last, "
           "which asks before it runs; the name field has the focus, so I type there. END")


@pytest.fixture
def window(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LogWindow]:
    isolate_home(monkeypatch, tmp_path)
    with ActionLog.open() as log:
        for outcome, task in (("answered", DEMO_TASK), ("error", DEMO_TASK),
                              ("stopped", DEMO_TASK), ("answered", TIMESHEET.format("Atlas")),
                              ("answered", TIMESHEET.format("Borealis"))):
            run = log.start_run(task, ENDPOINT, "holotron", {})
            log.add_step(StepRecord(run.id, 1, run.started_at, run.started_at + 1.5,
                                    thought=THOUGHT, decision="approved", result=StepResult.OK,
                                    action={"action": "type", "text": "Ada Lovelace"}))
            log.finish_run(run.id, outcome, "done")
    win = LogWindow(lambda: ActionLog.open(mark_interrupted=False))
    qtbot.addWidget(win)
    win.show()  # at the size it opens with
    qtbot.waitUntil(lambda: not win.busy and win.runs_table.rowCount() == 5, timeout=10_000)
    yield win
    win.shutdown()


def _shown(table: QTableWidget, row: int, column: int) -> str:
    """A cell's text as drawn: cut to its column the way the table cuts it."""
    item = table.item(row, column)
    assert item is not None
    margin = 2 * (table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None,
                                            table) + 1)
    return QFontMetrics(table.font()).elidedText(item.text(), table.textElideMode(),
                                                 table.columnWidth(column) - margin)


def _row(table: QTableWidget, row: int) -> dict[str, str]:
    return {title: _shown(table, row, column) for column, title in enumerate(RUN_COLUMNS)}


def test_runs_read_apart_with_whole_ids_times_outcomes_and_the_tasks_ends(
        qtbot: QtBot, window: LogWindow) -> None:
    table = window.runs_table
    qtbot.waitUntil(lambda: all(_row(table, r)["Run"] == window._run_id_at(r)
                                for r in range(table.rowCount())), timeout=5_000)
    rows = [_row(table, r) for r in range(table.rowCount())]
    for row in rows:
        for title in ("Run", "Started", "Result", "Steps"):
            assert "…" not in row[title], (title, row)  # whole, not "20261207-19…"
    assert len({tuple(row.values()) for row in rows}) == len(rows)
    # The three demo runs (one task) read apart by how they ended; the two timesheet runs,
    # alike until their last word, by the end of their task, which stays in view.
    demo = [row for row in rows if row["Task"].startswith("Demo: in the holodesk")]
    assert len({row["Result"] for row in demo}) == 3
    ends = sorted(row["Task"][-8:] for row in rows if row["Task"].startswith("Open the time"))
    assert ends == ["Borealis", "is Atlas"]
    # Whole on hover.
    for r in range(table.rowCount()):
        run_id = window._run_id_at(r)
        assert run_id in (table.item(r, 0) or pytest.fail()).toolTip()
        task = table.item(r, RUN_COLUMNS.index("Task"))
        assert task is not None and task.text().split()[-1] in task.toolTip()
    # Every column in view as it opens.
    assert sum(table.columnWidth(c) for c in range(table.columnCount())) <= \
        table.viewport().width() + 1


def test_the_task_thought_and_action_columns_can_be_widened(qtbot: QtBot,
                                                            window: LogWindow) -> None:
    assert window.select_run(window._run_id_at(0))
    qtbot.waitUntil(lambda: window.step_numbers() == [1], timeout=10_000)
    interactive = QHeaderView.ResizeMode.Interactive
    runs, steps = window.runs_table.horizontalHeader(), window.steps_table.horizontalHeader()
    assert runs.sectionResizeMode(RUN_COLUMNS.index("Task")) == interactive
    for title in ("Thought", "Action", "Outcome"):
        assert steps.sectionResizeMode(STEP_COLUMNS.index(title)) == interactive, title
    thought = window.steps_table.item(0, STEP_COLUMNS.index("Thought"))
    assert thought is not None and "END" in thought.toolTip()  # the whole thought on hover
    # The thought takes the width the others leave, and all of them are in view.
    table = window.steps_table
    assert table.columnWidth(STEP_COLUMNS.index("Thought")) >= 200
    assert sum(table.columnWidth(c) for c in range(table.columnCount())) <= \
        table.viewport().width() + 1
