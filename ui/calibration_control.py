"""Calibrate… in the desktop app: the app's windows out of the targets' way while it runs, the
report window when it ends, and "Use <convention>" saved to the settings."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from app.settings import Settings, load_settings
from model.problem import Problem
from ui.calibrate_flow import CalibrationFlow, CalibrationReportDialog
from ui.problem_view import view
from ui.reveal import reveal
from ui.workers import Background

__all__ = ["CalibrationControl"]

log = logging.getLogger(__name__)


class CalibrationControl(QObject):
    """Runs ``flow`` for the app.

    ``settings()`` gives the settings in effect; ``windows()`` the app's windows that may be
    open (the visible ones are hidden while the targets show); ``keep_out_of_capture(window)``
    is applied to the report window; ``tell(text)`` tells the person what went wrong.
    ``settings_saved(Settings)``: the convention chosen in the report was saved.
    """

    settings_saved = Signal(object)

    def __init__(
        self,
        flow: CalibrationFlow,
        *,
        settings: Callable[[], Settings],
        windows: Callable[[], Sequence[QWidget | None]],
        keep_out_of_capture: Callable[[QWidget], None],
        tell: Callable[[str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.flow = flow
        self._settings = settings
        self._windows = windows
        self._keep_out_of_capture = keep_out_of_capture
        self._tell = tell
        self._background = Background(self)
        self.dialog: CalibrationReportDialog | None = None
        self._hidden: list[QWidget] = []
        flow.finished.connect(self._on_calibrated)
        flow.failed.connect(self._on_failed)

    def start(self) -> bool:
        """Start calibrating and hide the app's windows; False when one is already running."""
        if not self.flow.start(self._settings()):
            return False
        # Our windows out of the way: the targets must be the only thing on the screen.
        windows = [*self._windows(), self.dialog]
        self._hidden = [w for w in windows if w is not None and w.isVisible()]
        for window in self._hidden:
            window.hide()
        return True

    def keep_hidden(self, window: QWidget) -> None:
        """Show ``window`` only once the calibration ends (not over the targets, where it would
        also take the focus Escape needs)."""
        if window not in self._hidden:
            self._hidden.append(window)

    def _restore(self) -> None:
        for window in self._hidden:
            window.show()
        self._hidden = []

    def _on_calibrated(self, report: Any) -> None:
        self._restore()
        if self.dialog is not None:
            self.dialog.close()
            self.dialog.deleteLater()
        dialog = CalibrationReportDialog(report, self._settings().convention)
        dialog.use_convention.connect(self._save_convention)
        self._keep_out_of_capture(dialog)
        self.dialog = dialog
        reveal(dialog, activate=False)

    def _on_failed(self, problem: Problem) -> None:
        self._restore()
        self._tell(view(problem).line())

    def _save_convention(self, value: str) -> None:
        from app.settings import set_value

        def save() -> Settings:
            set_value("convention", value)
            return load_settings()

        def saved(settings: Settings) -> None:
            log.info("convention set to %s by calibration", value)
            self.settings_saved.emit(settings)

        self._background.run(save, saved,
                             lambda e: self._tell(f"The convention was not saved: {e}"))
