"""Calibrate from the desktop app: the target window, the calibration on a worker, the report.

The same core as `holodesk calibrate` (:func:`app.calibrate.open_calibrator`): the desktop lock
is held throughout (no run drives the mouse meanwhile), the targets are painted by
:class:`ui.calibrate_screen.QtTargetScreen` on the GUI thread while the worker shows, captures
and asks, and the report comes back as a signal. Escape on the target window stops it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase, QFontMetrics
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.calibrate import (
    CalibrationReport,
    CalibrationUnavailable,
    Calibrator,
    TargetScreen,
    format_report,
    open_calibrator,
    verdict_lines,
)
from app.lock import DesktopBusyError
from app.runner import desktop_lock
from app.settings import Settings
from control.stop import StopLatch
from model.coords import Convention
from model.problem import Fix, Problem, Remedy
from ui.calibrate_screen import QtTargetScreen
from ui.workers import Background

log = logging.getLogger(__name__)

#: Builds the calibrator for a settings and a latch (tests pass one over fake parts).
CalibratorOpener = Callable[[Settings, StopLatch], AbstractContextManager[Calibrator]]
#: Makes the target window; called on the GUI thread with the "closed by the person" callback.
ScreenMaker = Callable[[Callable[[], None]], TargetScreen]


def _open_real(settings: Settings, latch: StopLatch) -> AbstractContextManager[Calibrator]:
    return open_calibrator(settings, latch)


class CalibrationFlow(QObject):
    """One calibration at a time: :meth:`start`, then ``finished(report)`` or
    ``failed(problem)`` (a :class:`~model.problem.Problem`, worded by ui/problem_view.py).

    ``running_changed(bool)`` lets the app hide its own windows meanwhile.
    """

    finished = Signal(object)  # CalibrationReport
    failed = Signal(object)  # Problem
    running_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None, *,
                 opener: CalibratorOpener = _open_real,
                 screen_maker: ScreenMaker = QtTargetScreen) -> None:
        super().__init__(parent)
        self._opener = opener
        self._screen_maker = screen_maker
        self._background = Background(self, max_threads=1)
        self._latch: StopLatch | None = None
        self._screen: TargetScreen | None = None
        self._remove_listener: Callable[[], None] | None = None

    @property
    def running(self) -> bool:
        """Whether a calibration is under way."""
        return self._latch is not None

    def start(self, settings: Settings) -> bool:
        """Start calibrating the monitor of ``settings``; False when one is already running."""
        if self.running:
            return False
        latch = StopLatch()

        def closed_by_person() -> None:
            latch.stop("screen", "the window was closed")

        screen = self._screen_maker(closed_by_person)
        self._latch, self._screen = latch, screen
        self._remove_listener = latch.add_listener(lambda _info: screen.close())
        opener = self._opener

        def work() -> CalibrationReport:
            # The same lock as a run: nothing else drives the mouse while targets are shown.
            with desktop_lock(), opener(settings, latch) as calibrator:
                return calibrator.run(screen)

        self.running_changed.emit(True)
        self._background.run(work, self._done, self._error)
        return True

    def stop(self, reason: str = "stopped") -> None:
        """Stop the calibration under way (its report keeps what was measured); any thread
        (the stop hotkey's listener calls it)."""
        latch = self._latch  # read once: the GUI thread may clear it meanwhile
        if latch is not None:
            latch.stop("app", reason)

    def close(self) -> None:
        """Stop and wait for the worker (quit); bounded by the client's own timeouts."""
        self.stop("holodesk is quitting")
        self._background.close(10_000)
        self._finish()

    def _finish(self) -> None:
        if self._remove_listener is not None:
            self._remove_listener()
        if self._screen is not None:
            self._screen.close()
        was_running = self._latch is not None
        self._latch = self._screen = self._remove_listener = None
        if was_running:
            self.running_changed.emit(False)

    def _done(self, report: CalibrationReport) -> None:
        self._finish()
        self.finished.emit(report)

    def _error(self, exc: BaseException) -> None:
        self._finish()
        if isinstance(exc, CalibrationUnavailable):
            problem = Problem(f"Cannot calibrate: {exc.message}", exc.fix)
        elif isinstance(exc, DesktopBusyError):
            problem = Problem(f"Cannot calibrate now: {exc.message}", exc.fix)
        else:
            log.error("the calibration failed", exc_info=exc)
            problem = Problem(f"The calibration failed: {type(exc).__name__}: {exc}.",
                              Fix("Test the screen capture", remedy=Remedy.RUN_DOCTOR))
        self.failed.emit(problem)


class CalibrationReportDialog(QDialog):
    """The report as `holodesk calibrate` prints it, with "Use <convention>" when one fits.

    ``use_convention(str)``: the person chose to save the convention found.
    """

    use_convention = Signal(str)

    def __init__(self, report: CalibrationReport, current: Convention,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("holodesk — calibration")
        self.report = report
        self.verdict = QLabel("\n".join(verdict_lines(report)))
        self.verdict.setTextFormat(Qt.TextFormat.PlainText)  # it quotes the model
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # The table as the CLI prints it, without its closing verdict: the label above has it.
        lines = format_report(report).rstrip().splitlines()
        verdict = verdict_lines(report)
        if verdict and lines[-len(verdict):] == verdict:
            lines = lines[:-len(verdict)]
        text = "\n".join(lines).rstrip()
        self.table = QPlainTextEdit(text)
        self.table.setReadOnly(True)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.table.setFont(font)
        self.table.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        # Sized to the text, so no line hides behind a scroll bar (up to a sensible screen).
        metrics = QFontMetrics(font)
        shown = text.splitlines() or [""]
        width = max(metrics.horizontalAdvance(line) for line in shown) + 40
        height = metrics.lineSpacing() * (len(shown) + 1) + 24
        self.table.setMinimumSize(min(max(width, 560), 1400), min(max(height, 160), 700))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.use_button: QPushButton | None = None
        best = report.verdict.best
        if best is not None and not report.stopped:
            found = best.convention
            if found == current:
                self.verdict.setText(self.verdict.text()
                                     + f"\nThe settings already use {found.value}.")
            else:
                self.use_button = buttons.addButton(
                    f"Use {found.value}", QDialogButtonBox.ButtonRole.AcceptRole
                )
                self.use_button.clicked.connect(lambda: self.use_convention.emit(found.value))
                buttons.accepted.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(self.verdict)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
