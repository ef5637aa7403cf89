"""What the log window's tables show, read as a person would: a row's texts by column title."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget
from pytestqt.qtbot import QtBot

from ui.log_window import RUN_COLUMNS, STEP_COLUMNS, LogWindow


def _texts(table: QTableWidget, row: int, titles: tuple[str, ...]) -> dict[str, str]:
    return {title: (item.text() if (item := table.item(row, col)) else "")
            for col, title in enumerate(titles)}


def step_row(window: LogWindow, step_no: int) -> dict[str, str]:
    """The texts of a step's row in the steps table; KeyError when it is not listed."""
    numbers = window.step_numbers()
    if step_no not in numbers:
        raise KeyError(step_no)
    return _texts(window.steps_table, numbers.index(step_no), STEP_COLUMNS)


def run_row(window: LogWindow, run_id: str) -> dict[str, str]:
    """The texts of a run's row in the runs table; KeyError when it is not listed."""
    table = window.runs_table
    for row in range(table.rowCount()):
        item = table.item(row, 0)
        if item is not None and item.data(Qt.ItemDataRole.UserRole) == run_id:
            return _texts(table, row, RUN_COLUMNS)
    raise KeyError(run_id)


def run_ids(window: LogWindow) -> list[str]:
    """The runs listed, top to bottom."""
    return [window._run_id_at(row) for row in range(window.runs_table.rowCount())]


def select(qtbot: QtBot, window: LogWindow, run_id: str) -> None:
    """Select the run's row, as a click would, and wait for its steps to be shown."""
    with qtbot.waitSignal(window.steps_loaded, timeout=10_000):
        assert window.select_run(run_id)
