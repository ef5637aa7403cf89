"""Text fits its widget in the windows a newcomer sees (issue 24): Settings (as it opens and
after Test connection), the tray's stand-in window, Report a problem and the action log, at
1366x768 and 1920x1080, measured by tests/support/text_fit.py.

The windows are built and measured in a process of their own (tests/support/fit_windows.py:
Qt fixes the screen's size when the application starts, and this process's offscreen screen is
800x600). The checker itself is checked here, in this process: each kind of text it measures is
caught when cut and passes when it fits.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from pytestqt.qtbot import QtBot

from tests.support.home import REPO_ROOT
from tests.support.text_fit import Clipped, clipped_text, off_screen

LONG = "a sentence long enough to need far more room than the widget was given here"


def _window(qtbot: QtBot, widget: QWidget, size: QSize | None = None) -> QWidget:
    """``widget`` alone in a window, at its own size or ``size``, shown and laid out."""
    window = QWidget()
    window.setWindowTitle("fit")
    layout = QVBoxLayout(window)
    layout.addWidget(widget)
    qtbot.addWidget(window)
    if size is not None:
        widget.setFixedSize(size)
    window.show()
    qtbot.waitExposed(window)
    return window


def _kinds(found: list[Clipped]) -> list[str]:
    return [c.kind for c in found]


def _label(text: str, wrap: bool) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(wrap)
    return label


@pytest.mark.parametrize("wrap", [False, True], ids=["one line", "wrapped"])
def test_a_label_cut_short_is_caught_and_one_at_its_size_is_not(qtbot: QtBot,
                                                                 wrap: bool) -> None:
    fits = _label(LONG, wrap)
    assert clipped_text(_window(qtbot, fits)) == []
    cut = _label(LONG, wrap)
    # Wrapped, it is cut in height (top and bottom, as Qt centres it): the width it has would
    # need several lines.
    window = _window(qtbot, cut, QSize(160, 20))
    assert _kinds(clipped_text(window)) == ["text"], clipped_text(window)


def test_a_cut_placeholder_is_caught(qtbot: QtBot) -> None:
    edit = QLineEdit()
    edit.setPlaceholderText("leave empty to keep the stored key")
    assert clipped_text(_window(qtbot, edit, QSize(400, 24))) == []
    edit = QLineEdit()
    edit.setPlaceholderText("leave empty to keep the stored key")
    window = _window(qtbot, edit, QSize(120, 24))
    assert _kinds(clipped_text(window)) == ["placeholder"]
    # Typed text scrolls in its field: only the placeholder is measured.
    edit.setText(LONG)
    assert clipped_text(window) == []


def _tool_button(text: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    return button


@pytest.mark.parametrize("make", [lambda: QPushButton("Report a problem…"),
                                  lambda: QCheckBox("Forget the stored key"),
                                  lambda: _tool_button("Start model server")],
                         ids=["push button", "check box", "tool button"])
def test_a_cut_button_text_is_caught(qtbot: QtBot, make: Callable[[], QWidget]) -> None:
    assert clipped_text(_window(qtbot, make())) == []
    assert _kinds(clipped_text(_window(qtbot, make(), QSize(50, 24)))) == ["text"]


def test_a_group_box_title_wider_than_the_box_is_caught(qtbot: QtBot) -> None:
    box = QGroupBox("Model server")
    QVBoxLayout(box).addWidget(QLabel("x"))
    assert clipped_text(_window(qtbot, box)) == []
    box = QGroupBox("Model server and everything about it that one could want")
    QVBoxLayout(box).addWidget(QLabel("x"))
    assert _kinds(clipped_text(_window(qtbot, box, QSize(120, 60)))) == ["title"]


def test_a_cut_cell_needs_its_whole_text_on_hover(qtbot: QtBot) -> None:
    table = QTableWidget(1, 1)
    table.setHorizontalHeaderLabels(["Run"])
    table.setColumnWidth(0, 60)
    table.setItem(0, 0, QTableWidgetItem("20260115-104233-ab12"))
    window = _window(qtbot, table, QSize(300, 120))
    assert [c.text for c in clipped_text(window)] == ["20260115-104233-ab12"]
    item = table.item(0, 0)
    assert item is not None
    item.setToolTip("20260115-104233-ab12")
    assert clipped_text(window) == []
    table.setHorizontalHeaderLabels(["A title far wider than its column"])
    assert _kinds(clipped_text(window)) == ["column title"]
    table.setHorizontalHeaderLabels(["Run"])
    table.setColumnWidth(0, 600)  # scrolled out of view as it opens
    assert _kinds(clipped_text(window)) == ["columns wider than the table"]


def test_long_lines_must_wrap_or_scroll_sideways(qtbot: QtBot) -> None:
    view = QPlainTextEdit(LONG * 3)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    window = _window(qtbot, view, QSize(200, 100))
    assert clipped_text(window) == []  # it scrolls sideways
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    assert _kinds(clipped_text(window)) == ["unwrapped line without a scroll bar"]
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    assert clipped_text(window) == []


def test_a_scroll_area_cannot_hide_a_wide_content(qtbot: QtBot) -> None:
    area = QScrollArea()
    inner = QLabel("x")
    inner.setMinimumWidth(500)
    area.setWidget(inner)
    area.setWidgetResizable(True)
    window = _window(qtbot, area, QSize(200, 100))
    assert clipped_text(window) == []
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    assert [c.kind.split(",")[0] for c in clipped_text(window)] == [
        "content wider than its scroll area"]


def test_a_window_taller_than_the_screen_is_caught(qtbot: QtBot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.resize(300, 200)
    window.show()
    assert off_screen([window]) == []
    screen = window.screen().availableGeometry()
    window.resize(300, screen.height())  # with the title bar it no longer fits
    assert _kinds(off_screen([window])) == ["window"]


@pytest.mark.parametrize("screen", ["1366x768", "1920x1080"])
def test_the_newcomers_windows_show_every_text_whole(screen: str) -> None:
    done = subprocess.run([sys.executable, "-m", "tests.support.fit_windows", screen],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["screen"] == [int(n) for n in screen.split("x")]
    assert found["clipped"] == [], "\n".join(found["clipped"])
