"""Report a problem: the dialog that gathers a problem report, shows every file in it, and
saves it where the person chooses (app/report.py does the work; `holodesk report` is the same).

The list names each file that goes in; selecting one shows its text as it will be saved
(masked), its lines as they are and wrapped to the window (control characters made visible).
The window says where the saved file goes (app/report.py :func:`~app.report.send_words`, as
`holodesk report` does). "Include screenshots of the last run" is off until the person ticks
it: screenshots cannot be masked. Gathering runs the set-up checks (up to a minute) and may
wait for the keyring, and writing may be slow on a network folder: both run on a
:class:`~ui.workers.Background` thread, so the window stays responsive and can be closed at
any time (a late result is then dropped).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent, QPixmap, QTextOption
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFileDialog,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.report import Report, ReportError, default_report_path, project_address, send_words
from ui.buttons import button_row
from ui.plain import plain_label, shown_lines
from ui.problem_view import view
from ui.reveal import reveal
from ui.workers import Background

__all__ = ["ReportDialog"]

_log = logging.getLogger(__name__)

INTRO = ("holodesk puts together what helps to find a problem: its version, the set-up "
         "checks, the settings, the end of its log and the last run's steps. Nothing is sent "
         "anywhere: you save a file. The API key, anything typed as a secret and anything that "
         "looks like a token are masked.")
GATHERING = "Gathering the report: the set-up checks take up to a minute…"
SCREENSHOTS_NOTE = ("Screenshots are not masked: whatever was on the screen is in them. "
                    "Look at them before you share the file.")

#: Asks where to save, given a suggested path; None when the person cancelled.
ChoosePath = Callable[[QWidget, str], str | None]


def _ask_path(parent: QWidget, suggested: str) -> str | None:
    path, _filter = QFileDialog.getSaveFileName(parent, "Save the problem report", suggested,
                                                "Zip archives (*.zip)")
    return path or None


class ReportDialog(QDialog):
    """Gathers with ``collect`` (called on a worker thread), shows, saves.

    ``saved(path)`` is emitted once a report is written. ``choose_path`` asks where to save
    (the file dialog; tests pass their own).
    """

    saved = Signal(str)

    def __init__(
        self,
        collect: Callable[[], Report],
        parent: QWidget | None = None,
        *,
        choose_path: ChoosePath = _ask_path,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Report a problem")
        self._collect = collect
        self._choose_path = choose_path
        self._tasks = Background(self)
        self.report: Report | None = None
        self.saving = False

        self._address = project_address()
        intro = plain_label(f"{INTRO} {send_words(self._address)}")
        intro.setWordWrap(True)
        self.status = plain_label(GATHERING)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.parts = QListWidget()
        self.parts.setAccessibleName("What the report holds")
        self.parts.currentItemChanged.connect(self._show_item)
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setAccessibleName("The selected file as it will be saved")
        # A log's long lines wrap to the window, inside a word too (a path, a token).
        self.preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.preview.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        # A screenshot is shown as the picture it is: that is what to check before sharing.
        self.image = plain_label()
        self.image.setAccessibleName("The selected screenshot as it will be saved")
        self.image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        image_area = QScrollArea()
        image_area.setWidget(self.image)
        image_area.setWidgetResizable(True)
        self.viewer = QStackedWidget()
        self.viewer.addWidget(self.preview)
        self.viewer.addWidget(image_area)
        split = QSplitter()
        split.addWidget(self.parts)
        split.addWidget(self.viewer)
        split.setStretchFactor(1, 3)
        self.screenshots = QCheckBox("Include screenshots of the last run")
        self.screenshots.setChecked(False)
        self.screenshots.toggled.connect(self._fill)
        note = plain_label(SCREENSHOTS_NOTE)
        note.setWordWrap(True)
        self.save_button = QPushButton("Save…")
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self.save)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons = button_row(self.save_button, close)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(split, 1)
        layout.addWidget(self.screenshots)
        layout.addWidget(note)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self.resize(820, 560)

    # --- gathering ---------------------------------------------------------------------

    def start(self) -> None:
        """Gather a fresh report (again, when the window was used before)."""
        self.report = None
        self.save_button.setEnabled(False)
        self.parts.clear()
        self.preview.clear()
        self.status.setText(GATHERING)
        self._tasks.forget_pending()
        self._tasks.run(self._collect, self._on_collected, self._on_collect_failed)

    def show_and_start(self) -> None:
        """Open (or raise) the window with a fresh report."""
        if not self.saving:
            self.start()
        reveal(self)

    def _on_collected(self, report: Report) -> None:
        self.report = report
        self._fill()
        self.save_button.setEnabled(True)
        self.status.setText("Select a file to see what it holds, then Save.")

    def _on_collect_failed(self, exc: BaseException) -> None:
        _log.error("the problem report could not be gathered", exc_info=exc)
        text = view(exc).text() if isinstance(exc, ReportError) else f"{type(exc).__name__}: {exc}"
        self.status.setText(f"The report could not be gathered: {text}")

    def _fill(self) -> None:
        report = self.report
        if report is None:
            return
        self.parts.clear()
        for part in report.parts:
            item = QListWidgetItem(part.name)
            item.setToolTip(part.title)
            item.setData(Qt.ItemDataRole.UserRole, shown_lines(part.text))
            self.parts.addItem(item)
        if self.screenshots.isChecked():
            for shot in report.screenshots:
                item = QListWidgetItem(shot.name)
                item.setToolTip(f"The screen at step {shot.step_no} of the last run. "
                                f"{SCREENSHOTS_NOTE}")
                item.setData(Qt.ItemDataRole.UserRole + 1, str(shot.path))
                self.parts.addItem(item)
        self.parts.setCurrentRow(0)

    def _show_item(self, item: QListWidgetItem | None, _previous: object = None) -> None:
        image = None if item is None else item.data(Qt.ItemDataRole.UserRole + 1)
        if image:
            pixmap = QPixmap(str(image))
            if pixmap.isNull():
                self.image.setText("This screenshot can no longer be read; it will be left "
                                   "out.")
            else:
                self.image.setPixmap(pixmap)
            self.viewer.setCurrentIndex(1)
            return
        self.preview.setPlainText("" if item is None else str(item.data(Qt.ItemDataRole.UserRole)))
        self.viewer.setCurrentIndex(0)

    # --- saving ------------------------------------------------------------------------

    def save(self) -> None:
        """Ask where, then write the report off the GUI thread."""
        report = self.report
        if report is None or self.saving:
            return
        suggested = str(default_report_path(Path.home(), report.created))
        chosen = self._choose_path(self, suggested)
        if not chosen:
            return
        path = Path(chosen)
        if path.suffix.lower() != ".zip":
            path = path.with_name(path.name + ".zip")
        screenshots = self.screenshots.isChecked()
        self.saving = True
        self.save_button.setEnabled(False)
        self.status.setText(f"Saving to {path}…")
        # The file dialog has asked before replacing a file.
        self._tasks.run(lambda: report.write(path, screenshots=screenshots, overwrite=True),
                        self._on_saved, self._on_save_failed)

    def _on_saved(self, path: Path) -> None:
        self.saving = False
        self.save_button.setEnabled(True)
        self.status.setText(f"Saved to {path}. {send_words(self._address)}")
        self.saved.emit(str(path))

    def _on_save_failed(self, exc: BaseException) -> None:
        self.saving = False
        self.save_button.setEnabled(True)
        if isinstance(exc, ReportError):
            self.status.setText(view(exc).text())
            return
        _log.error("the problem report could not be saved", exc_info=exc)
        self.status.setText(f"The report could not be saved: {type(exc).__name__}: {exc}")

    def closeEvent(self, event: QCloseEvent) -> None:
        # A gathering still running is dropped; a save in progress finishes on its own
        # (its file appears whole or not at all).
        if not self.saving:
            self._tasks.forget_pending()
        super().closeEvent(event)
