"""The "Check set-up" window: `holodesk doctor` in the desktop app.

The same checks as the command (:mod:`app.doctor`), in the same order, one row each: the status
as a coloured word (PASS, WARN, FAIL, SKIP: colour and text, never colour alone), what was found
and, on a failure or a warning, the fix; the text is selectable so a fix can be copied. A
summary line says how many passed (a WARN counts, as for the command's exit code) and "Copy
report" puts the plain-text report, as the command prints it, on the clipboard. The tray wires
it up like this::

    window = DoctorWindow(lambda: app.settings)
    check_action.triggered.connect(window.show_and_run)   # "Check set-up…"

Threads: the checks block (X11 round trips, the keyring, model requests of up to a minute), so
one run happens on a daemon thread. Each result crosses to the GUI thread as a queued signal of a
small courier object made for that run, which the worker keeps alive: the worker never emits on
the window, which may be deleted while it runs. A closed window drops the run: its late results
are ignored (each carries its run's number) and the worker finishes in the background within the
doctor's own timeouts; being a daemon it never holds up quitting the application.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.doctor import (
    CHECK_NAMES,
    CheckResult,
    Doctor,
    DoctorConfig,
    Status,
    fix_label,
    format_result,
    summary_text,
)
from app.settings import Settings
from app.version import version
from ui.colours import WHITE, Tone, fill_color, tone_color
from ui.problem_view import fix_text
from ui.reveal import reveal

__all__ = [
    "STATUS_COLORS",
    "DoctorFactory",
    "DoctorLike",
    "DoctorWindow",
    "RowView",
    "real_doctor",
    "summary_text",
]

_log = logging.getLogger(__name__)

#: The badge colour of each status (white text on it); the word is always shown too.
STATUS_COLORS: dict[str, str] = {
    Status.PASS.value: fill_color(Tone.OK).name(),
    Status.WARN.value: fill_color(Tone.WARNING).name(),
    Status.FAIL.value: fill_color(Tone.ERROR).name(),
    Status.SKIP.value: fill_color(Tone.MUTED).name(),
}
_WAITING = "waiting"
_CHECKING = "checking"
_BADGE_WIDTH = 76


class DoctorLike(Protocol):
    """What the window needs of a doctor: :class:`app.doctor.Doctor` is one."""

    def run(
        self, on_result: Callable[[CheckResult], None] | None = None
    ) -> list[CheckResult]: ...

    def close(self) -> None: ...


#: Builds the doctor of one run from the settings read when it starts (tests pass a fake).
DoctorFactory = Callable[[Settings], DoctorLike]


def real_doctor(settings: Settings) -> Doctor:
    """The real doctor for this process's environment (the default factory)."""
    return Doctor(DoctorConfig(settings=settings))


@dataclass(frozen=True)
class RowView:
    """What one row shows (for tests and accessibility): the badge word and colour, the texts.

    ``fix`` is the text under the detail as shown ("Fix: ..." or "Note: ..."), or "".
    """

    name: str
    status: str
    color: str
    detail: str
    fix: str


class _Courier(QObject):
    """The object one run's worker emits on; made on the GUI thread, kept alive by the worker.

    Connected to the window's bound slots, so delivery is queued onto the GUI thread and stops
    by itself when the window is deleted.
    """

    checked = Signal(int, object)  # (run number, CheckResult)
    done = Signal(int, object, object)  # (run number, list[CheckResult], error text or None)


def _work(courier: _Courier, run_id: int, factory: DoctorFactory, settings: Settings) -> None:
    """The worker thread: build the doctor, run every check, report each result as it comes."""

    def on_result(result: CheckResult) -> None:
        with contextlib.suppress(RuntimeError):  # the application is gone: nobody to tell
            courier.checked.emit(run_id, result)

    results: list[CheckResult] = []
    error: str | None = None
    try:
        doctor = factory(settings)
        try:
            results = list(doctor.run(on_result))
        finally:
            doctor.close()
    except Exception as exc:  # the doctor reports failed checks itself: this is the last net
        _log.exception("the set-up checks crashed")
        error = f"{type(exc).__name__}: {exc}"
    with contextlib.suppress(RuntimeError):
        courier.done.emit(run_id, results, error)


class _Row:
    """The widgets of one check's row in the grid."""

    def __init__(self, grid: QGridLayout, index: int, name: str) -> None:
        parent = grid.parentWidget()
        self.name = name
        self.badge = QLabel(parent)
        self.badge.setTextFormat(Qt.TextFormat.PlainText)
        self.badge.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.badge.setFixedWidth(_BADGE_WIDTH)
        self.title = QLabel(name, parent)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setStyleSheet("font-weight: bold;")
        self.detail = _selectable(parent)
        self.fix = _selectable(parent)
        texts = QVBoxLayout()
        texts.setContentsMargins(0, 0, 0, 0)
        texts.setSpacing(2)
        texts.addWidget(self.detail)
        texts.addWidget(self.fix)
        top = Qt.AlignmentFlag.AlignTop
        grid.addWidget(self.badge, index, 0, top)
        grid.addWidget(self.title, index, 1, top)
        grid.addLayout(texts, index, 2)
        self.status = _WAITING
        self.color = tone_color(Tone.MUTED).name()
        self.reset()

    def reset(self) -> None:
        self._badge(_WAITING, tone_color(Tone.MUTED).name(), filled=False)
        self.detail.setText("")
        self.fix.setText("")
        self.fix.hide()

    def checking(self) -> None:
        self._badge(_CHECKING, tone_color(Tone.INFO).name(), filled=False)
        self.detail.setText("checking…")

    def show(self, result: CheckResult) -> None:
        status = result.status.value
        self._badge(status, STATUS_COLORS.get(status, fill_color(Tone.MUTED).name()),
                    filled=True)
        self.detail.setText(result.detail)
        if result.fix:
            self.fix.setText(f"{fix_label(result)}: {fix_text(result.fix)}")
            weight = "bold" if result.status in (Status.FAIL, Status.WARN) else "normal"
            self.fix.setStyleSheet(f"font-weight: {weight};")
            self.fix.show()
        else:
            self.fix.setText("")
            self.fix.hide()

    def view(self) -> RowView:
        return RowView(self.name, self.status, self.color, self.detail.text(),
                       self.fix.text() if not self.fix.isHidden() else "")

    def _badge(self, word: str, color: str, *, filled: bool) -> None:
        self.status = word
        self.color = color
        self.badge.setText(word)
        self.badge.setAccessibleName(f"{self.name}: {word}")
        if filled:
            style = (f"background-color: {color}; color: {WHITE}; font-weight: bold; "
                     "border-radius: 3px; padding: 2px 4px;")
        else:
            style = f"color: {color}; border: 1px solid {color}; border-radius: 3px; padding: 1px;"
        self.badge.setStyleSheet(style)


def _selectable(parent: QWidget | None) -> QLabel:
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)  # details quote servers: never rich text
    label.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextSelectableByMouse
        | Qt.TextInteractionFlag.TextSelectableByKeyboard
    )
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
    return label


class DoctorWindow(QWidget):
    """Runs the set-up checks off the GUI thread and shows each as it finishes.

    ``settings`` is called on the GUI thread when a run starts (a changed endpoint applies to
    the next run); ``doctor_factory`` builds the doctor from them (default :func:`real_doctor`).
    The first time the window is shown it runs the checks by itself.

    Signals: ``started()``; ``checked(CheckResult)`` per check as it finishes;
    ``finished(list[CheckResult])`` when a run completes (not for a run dropped by closing).
    Slots: :meth:`run_checks`, :meth:`show_and_run`, :meth:`copy_report`.
    """

    started = Signal()
    checked = Signal(object)
    finished = Signal(list)

    def __init__(
        self,
        settings: Callable[[], Settings],
        parent: QWidget | None = None,
        *,
        doctor_factory: DoctorFactory = real_doctor,
        check_names: Sequence[str] = CHECK_NAMES,
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self._factory = doctor_factory
        self._run_id = 0
        self._running = False
        self._run_on_show = True
        self._endpoint = ""
        self._error: str | None = None
        self._results: list[CheckResult] = []
        # Every run's courier with its worker: a courier is let go only here, on the GUI
        # thread, once its worker has ended (a QObject must not be deleted on another thread).
        self._couriers: list[tuple[_Courier, threading.Thread]] = []
        self._thread: threading.Thread | None = None

        self.setWindowTitle("holodesk: check set-up")
        self.resize(820, 600)

        self.intro = QLabel(self)
        self.intro.setWordWrap(True)
        self.intro.setTextFormat(Qt.TextFormat.PlainText)

        rows = QWidget()
        stack = QVBoxLayout(rows)
        self._grid = QGridLayout()
        stack.addLayout(self._grid)
        stack.addStretch(1)  # rows keep their height; spare room goes below them
        self._grid.setHorizontalSpacing(12)
        self._grid.setVerticalSpacing(10)
        self._grid.setColumnStretch(2, 1)
        self._rows: list[_Row] = []
        for name in check_names:
            self._add_row(name)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.StyledPanel)
        scroll.setWidget(rows)

        self.summary_label = QLabel(self)
        self.summary_label.setTextFormat(Qt.TextFormat.PlainText)
        self.summary_label.setWordWrap(True)
        self.summary_label.setStyleSheet("font-weight: bold;")
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.run_button = QPushButton("Run checks", self)
        self.run_button.clicked.connect(self.run_checks)
        self.copy_button = QPushButton("Copy report", self)
        self.copy_button.setToolTip("Copy the checks as plain text, as `holodesk doctor` prints")
        self.copy_button.clicked.connect(self.copy_report)
        self.copy_button.setEnabled(False)
        close_button = QPushButton("Close", self)
        close_button.clicked.connect(self.close)

        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.copy_button)
        buttons.addStretch(1)
        buttons.addWidget(close_button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.summary_label)
        layout.addLayout(buttons)
        self._set_intro()
        self.summary_label.setText("Not checked yet.")

    # ------------------------------------------------------------------ queries

    @property
    def running(self) -> bool:
        """Whether a run is in progress (a run dropped by closing the window is not)."""
        return self._running

    @property
    def results(self) -> list[CheckResult]:
        """The results of the current or last run so far, in order."""
        return list(self._results)

    def rows(self) -> list[RowView]:
        """What each row shows, in order."""
        return [row.view() for row in self._rows]

    def summary(self) -> str:
        """The summary line as shown."""
        return self.summary_label.text()

    def report_text(self) -> str:
        """The report as plain text, laid out as `holodesk doctor` prints it (what Copy report
        copies); the fixes in the app's own terms, as the window shows them."""
        names = [row.name for row in self._rows] + [r.name for r in self._results]
        width = max((len(n) for n in names), default=18)
        lines = [f"holodesk {version()} doctor: checking this desktop and {self._endpoint}"]
        lines += [format_result(r, width, say=fix_text) for r in self._results]
        lines += ["", self._summary_for_report()]
        return "\n".join(lines) + "\n"

    def wait(self, timeout: float | None = None) -> bool:
        """Join the latest run's worker (tests and shutdown only); True when it has ended.

        Results still reach the window through its event loop afterwards.
        """
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    # ------------------------------------------------------------------ slots

    @Slot()
    def run_checks(self) -> None:
        """Start a run on a worker thread; ignored while one is running."""
        if self._running:
            return
        self._run_on_show = False
        try:
            settings = self._settings()
        except Exception as exc:  # a settings provider that fails must not take the app down
            _log.warning("cannot read the settings for the checks", exc_info=True)
            self.summary_label.setText(f"Cannot read the settings: {exc}")
            return
        self._run_id += 1
        self._running = True
        self._error = None
        self._results = []
        self._endpoint = settings.endpoint
        self._set_intro()
        for row in self._rows:
            row.reset()
        self._mark_next()
        self.run_button.setEnabled(False)
        self.copy_button.setEnabled(False)
        self.summary_label.setText("Checking…")

        courier = _Courier()
        courier.checked.connect(self._on_checked, Qt.ConnectionType.QueuedConnection)
        courier.done.connect(self._on_done, Qt.ConnectionType.QueuedConnection)
        self._thread = threading.Thread(
            target=_work, args=(courier, self._run_id, self._factory, settings),
            name="doctor-window", daemon=True,
        )
        self._couriers = [(c, t) for c, t in self._couriers if t.is_alive()]
        self._couriers.append((courier, self._thread))
        self._thread.start()
        self.started.emit()

    @Slot()
    def show_and_run(self) -> None:
        """Show and raise the window; run the checks unless a run is in progress.

        For the tray entry: each "Check set-up…" checks afresh.
        """
        self._run_on_show = False
        reveal(self)
        self.run_checks()

    @Slot()
    def copy_report(self) -> None:
        """Put :meth:`report_text` on the clipboard."""
        QGuiApplication.clipboard().setText(self.report_text())
        self.summary_label.setText(f"{self._summary_line()} The report is on the clipboard.")

    # ------------------------------------------------------------------ events

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._run_on_show and not self._running:
            self._run_on_show = False
            # After the window has painted: the first row then visibly turns to "checking".
            QTimer.singleShot(0, self, self.run_checks)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._running:
            self._drop_run()
        super().closeEvent(event)

    # ------------------------------------------------------------------ the run's results

    @Slot(int, object)
    def _on_checked(self, run_id: int, result: CheckResult) -> None:
        if run_id != self._run_id or not self._running:
            return  # a run dropped by closing the window
        self._show_result(result)
        self._mark_next()
        self.summary_label.setText(
            f"Checking… {len(self._results)} of {len(self._rows)} checks done."
        )
        self.copy_button.setEnabled(True)
        self.checked.emit(result)

    @Slot(int, object, object)
    def _on_done(self, run_id: int, results: list[CheckResult], error: str | None) -> None:
        if run_id != self._run_id or not self._running:
            return
        # Queued signals from one thread keep their order: every result shown came first. A
        # doctor that returned results without reporting them still gets them shown.
        for result in results[len(self._results):]:
            self._show_result(result)
        self._running = False
        self._error = error
        for row in self._rows:
            if row.status == _CHECKING:
                row.reset()
        self.run_button.setEnabled(True)
        self.copy_button.setEnabled(bool(self._results) or error is not None)
        self.summary_label.setText(self._summary_line())
        self.finished.emit(list(self._results))

    # ------------------------------------------------------------------ helpers

    def _add_row(self, name: str) -> _Row:
        row = _Row(self._grid, len(self._rows), name)
        self._rows.append(row)
        return row

    def _show_result(self, result: CheckResult) -> None:
        self._results.append(result)
        row = next((r for r in self._rows if r.name == result.name and r.status in
                    (_WAITING, _CHECKING)), None)
        if row is None:  # a check this window did not list: shown after the others
            row = self._add_row(result.name)
        row.show(result)

    def _mark_next(self) -> None:
        for row in self._rows:
            if row.status == _CHECKING:
                return
            if row.status == _WAITING:
                row.checking()
                return

    def _drop_run(self) -> None:
        """Forget the running run: its late results are ignored, its worker ends by itself."""
        _log.info("set-up checks dropped: the window was closed while they ran")
        self._run_id += 1
        self._running = False
        self._run_on_show = True  # shown again, the window checks afresh
        for row in self._rows:
            if row.status == _CHECKING:
                row.reset()
        self.run_button.setEnabled(True)
        self.summary_label.setText("The checks were stopped when the window was closed.")

    def _summary_line(self) -> str:
        if self._error is not None:
            done = len(self._results)
            return (f"The checks stopped after {done} of {len(self._rows)}: {self._error}. "
                    "See the log file.")
        if self._running:
            return f"Checking… {len(self._results)} of {len(self._rows)} checks done."
        return summary_text(self._results)

    def _summary_for_report(self) -> str:
        if self._running:
            return f"Still checking: {len(self._results)} of {len(self._rows)} checks done."
        return self._summary_line()

    def _set_intro(self) -> None:
        server = f"the model server at {self._endpoint}" if self._endpoint else "the model server"
        self.intro.setText(
            f"holodesk {version()}. Checks, in order, what holodesk needs: this desktop "
            f"(display, capture, input, hotkeys, tray), the keyring, then {server}, and a "
            "one-step dry run. Nothing is clicked or typed."
        )
