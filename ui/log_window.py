"""The action log window: every run and its steps, live while a run goes on.

Above, the runs (newest first), one line each: the whole id, the task (cut in its middle, so
that its start and its end both show), when it started, what it came to (done, not done,
stopped, failed: app/result.py), its steps. Below, the selected run's result and why, then its
steps with a thumbnail, the model's thought, the action, the decision, the outcome and the time
taken. Both tables use the window's whole width; the task and the thought take what the other
columns leave and can be widened; a cut text shows whole on hover. Double-click a step for its
full screenshot with the point marked. Export, Open folder and Delete act on the selected runs.

Threads: the window opens its own :class:`ActionLog` (through the ``open_log`` factory) and uses
it only from a one-thread :class:`ui.workers.Background`, so every read, delete and export runs
off the GUI thread and in the order asked. SQLite's WAL lets it read while the agent writes
through its own connection. Live updates come from :meth:`LogWindow.on_event` (connect the run
controller's event signal to it): a step's row is written only when the step ends, so until
then the window shows what the events said, and re-reads the store as steps complete.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QPointF, QSize, Qt, QTimer, QUrl, Signal, Slot
from PySide6.QtGui import QColor, QDesktopServices, QIcon, QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.events import (
    ActionExecuted,
    FrameCaptured,
    RunFinished,
    RunStarted,
    StepDecided,
    StepFailed,
    StepProposed,
)
from app.export import export_run
from app.result import RunResult
from app.store import ActionLog, RunRecord, Source, StepRecord, StepResult
from model.coords import Convention, FrameGeometry, Point, from_screen
from model.prompt import describe_action
from model.schema import ACTION_ADAPTER
from ui.colours import Tone, text_style, tone_color
from ui.fit import FillColumn
from ui.plain import plain_label, shown, shown_line, wrapped_tooltip
from ui.result_view import RESULT_TONES
from ui.workers import Background

__all__ = [
    "MARKER_COLOR",
    "LogWindow",
    "ScreenshotDialog",
    "marker_pixels",
]

_log = logging.getLogger(__name__)

MARKER_COLOR = QColor(255, 0, 0)
THUMB_HEIGHT = 54
_RELOAD_DELAY_MS = 150  # coalesces the burst of events at the end of a step into one read

RUN_COLUMNS = ("Run", "Task", "Started", "Result", "Steps")
STEP_COLUMNS = ("Screen", "#", "Thought", "Action", "Decision", "Outcome", "Time")
#: The first widths of the steps' Action and Outcome columns (the person may change them).
_ACTION_WIDTH = 260
_STEP_OUTCOME_WIDTH = 110


# --------------------------------------------------------------------------- pure helpers


def marker_pixels(
    points: Iterable[Point], geometry: FrameGeometry, image_size: tuple[int, int] | None = None
) -> list[tuple[float, float]]:
    """Where logical screen ``points`` are in the screenshot that was sent (its pixels).

    ``image_size`` rescales for an image of another size than the one sent (a thumbnail).
    """
    sx = sy = 1.0
    if image_size is not None:
        sx = image_size[0] / geometry.sent_width
        sy = image_size[1] / geometry.sent_height
    result = []
    for point in points:
        x, y = from_screen(point.x, point.y, Convention.PIXELS, geometry)
        result.append((x * sx, y * sy))
    return result


def _action_text(action: dict[str, Any] | None, screen_point: str | None) -> str:
    if not action:
        return ""
    try:
        text = describe_action(ACTION_ADAPTER.validate_python(action))
    except ValueError:
        text = str(action.get("action", "?"))
    return f"{text} at {screen_point}" if screen_point else text


def _clock(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def _seconds(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds:.1f} s"


def _lay_out_runs(table: QTableWidget) -> FillColumn:
    """One line per run: the columns but the task's fit their text (an id, a time, a word,
    a number), the task takes the rest, cut in the middle."""
    table.setWordWrap(False)
    table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    # One line of text a row: more runs in view.
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 10)
    header = table.horizontalHeader()
    for column in range(table.columnCount()):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    return FillColumn(table, RUN_COLUMNS.index("Task"))


def _lay_out_steps(table: QTableWidget) -> FillColumn:
    """The thumbnail's width, the short columns fitting their text, the action and the outcome
    at a first width, the thought taking the rest; all but the thumbnail can be resized."""
    header = table.horizontalHeader()
    for column in range(table.columnCount()):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    screen = STEP_COLUMNS.index("Screen")
    header.setSectionResizeMode(screen, QHeaderView.ResizeMode.Fixed)
    table.setColumnWidth(screen, table.iconSize().width() + 12)
    for title, width in (("Action", _ACTION_WIDTH), ("Outcome", _STEP_OUTCOME_WIDTH)):
        column = STEP_COLUMNS.index(title)
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        table.setColumnWidth(column, width)
    return FillColumn(table, STEP_COLUMNS.index("Thought"), minimum=200)


# --------------------------------------------------------------------------- view models


@dataclass
class _StepView:
    """One row of the steps table: from the store, or from the events of a step in progress."""

    step_no: int
    screenshot_path: str | None = None
    thumbnail_path: str | None = None
    geometry: FrameGeometry | None = None
    points: tuple[Point, ...] = ()
    thought: str = ""
    action: str = ""
    decision: str = ""
    outcome: str = ""
    seconds: float | None = None
    started: float = field(default_factory=time.monotonic)
    #: Replayed from the automation's saved steps (not proposed by the model), and why.
    replayed: bool = False
    source_note: str = ""

    @classmethod
    def from_record(cls, record: StepRecord) -> _StepView:
        seconds = None
        if record.finished_at is not None:
            seconds = max(0.0, record.finished_at - record.started_at)
        outcome = str(record.result or "")
        if record.error:
            outcome = f"{outcome}: {record.error}" if outcome else record.error
        return cls(
            step_no=record.step_no,
            screenshot_path=record.screenshot_path,
            thumbnail_path=record.thumbnail_path,
            geometry=record.frame_geometry,
            points=record.points,
            thought=record.thought or "",
            action=_action_text(record.action, record.screen_point)
            + (f" (in {record.target})" if record.target and record.action else ""),
            decision=record.decision or "",
            outcome=outcome,
            seconds=seconds,
            replayed=record.source is Source.REPLAYED,
            source_note=record.source_note or "",
        )

    @property
    def decision_text(self) -> str:
        """The decision column: what was decided, and "replayed" for a step that came from the
        automation's saved steps rather than the model."""
        if not self.replayed:
            return self.decision
        return f"{self.decision}, replayed" if self.decision else "replayed"


@dataclass
class _RunRow:
    """One row of the runs table: a stored run, with what the events said of it since."""

    run_id: str
    task: str
    started: float
    headline: str  # the result in words, or "running"
    steps: int
    reason: str = ""
    result: RunResult | None = None


@dataclass
class _LiveRun:
    task: str
    started_at: float
    #: The result in words once the run ended (the store's once it has it), "running" until.
    headline: str = "running"
    reason: str = ""
    result: RunResult | None = None
    steps: int = 0
    steps_view: dict[int, _StepView] = field(default_factory=dict)


class _LogHandle:
    """The window's own ActionLog, opened on first use on the worker thread."""

    def __init__(self, open_log: Callable[[], ActionLog]) -> None:
        self._open = open_log
        self._log: ActionLog | None = None
        self._lock = threading.Lock()

    def get(self) -> ActionLog:
        with self._lock:
            if self._log is None:
                self._log = self._open()
            return self._log

    def close(self) -> None:
        with self._lock:
            log, self._log = self._log, None
        if log is not None:
            log.close()


#: What the screenshot window says when a run kept thumbnails only.
THUMBNAIL_ONLY = (
    "thumbnail only: full screenshots were not kept; "
    "Settings > Runs > Keep full screenshots keeps them for later runs"
)


def _load_image(path: str | None, height: int | None = None) -> QImage | None:
    """Read an image on a worker thread (QImage, unlike QPixmap, may be used off the GUI)."""
    if not path:
        return None
    image = QImage(path)
    if image.isNull():
        return None
    if height is not None and image.height() > height:
        image = image.scaledToHeight(height, Qt.TransformationMode.SmoothTransformation)
    return image


# --------------------------------------------------------------------------- screenshot dialog


class ScreenshotDialog(QDialog):
    """A step's full screenshot with its point(s) marked: a ring and a dot in MARKER_COLOR."""

    def __init__(
        self,
        image: QImage,
        pixels: Sequence[tuple[float, float]],
        title: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.pixels = list(pixels)
        #: The screenshot with the markers painted on it, as shown.
        self.marked = image.convertToFormat(QImage.Format.Format_RGB32)
        self._paint_markers()
        label = plain_label()
        label.setPixmap(QPixmap.fromImage(self.marked))
        scroll = QScrollArea()
        scroll.setWidget(label)
        scroll.setWidgetResizable(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll)
        if not self.pixels:
            layout.addWidget(QLabel("This step has no screen point to mark."))
        layout.addWidget(buttons)
        self.resize(min(self.marked.width() + 40, 1400), min(self.marked.height() + 80, 900))

    def _paint_markers(self) -> None:
        painter = QPainter(self.marked)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            for x, y in self.pixels:
                painter.setPen(QPen(MARKER_COLOR, 3))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawEllipse(QPointF(x, y), 14, 14)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(MARKER_COLOR)
                painter.drawEllipse(QPointF(x, y), 4, 4)
        finally:
            painter.end()


# --------------------------------------------------------------------------- the window


class LogWindow(QWidget):
    """The action log window (see the module doc).

    ``open_log`` returns a new :class:`ActionLog` that the window owns and closes in
    :meth:`shutdown` (default: the user's log, without marking runs interrupted). It is called
    on a worker thread. Signals report finished background work (for the app and for tests).
    """

    runs_loaded = Signal(list)  # list[RunRecord], after the runs table was refreshed
    steps_loaded = Signal(str)  # run id whose steps the table now shows
    exported = Signal(str)  # the export folder
    deleted = Signal(list)  # ids of the runs deleted (delete or prune)
    failed = Signal(str)  # a readable error (also shown in the window)
    screenshot_opened = Signal(object)  # the ScreenshotDialog shown

    def __init__(
        self,
        open_log: Callable[[], ActionLog] | None = None,
        parent: QWidget | None = None,
        *,
        limit: int = 500,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("holodesk — action log")
        self._handle = _LogHandle(open_log or (lambda: ActionLog.open(mark_interrupted=False)))
        self._tasks = Background(self, max_threads=1)
        self._limit = limit
        self._runs: list[RunRecord] = []
        self._live: dict[str, _LiveRun] = {}
        self._shown_run: str | None = None
        self._steps: list[_StepView] = []
        self._thumbs: dict[str, QPixmap] = {}
        self._closed = False

        self.runs_table = QTableWidget(0, len(RUN_COLUMNS))
        self.runs_table.setHorizontalHeaderLabels(list(RUN_COLUMNS))
        self.runs_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.runs_table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.runs_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.runs_table.verticalHeader().setVisible(False)
        self._runs_fill = _lay_out_runs(self.runs_table)
        self.runs_table.itemSelectionChanged.connect(self._on_run_selection)

        self.steps_table = QTableWidget(0, len(STEP_COLUMNS))
        self.steps_table.setHorizontalHeaderLabels(list(STEP_COLUMNS))
        self.steps_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.steps_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.steps_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.steps_table.verticalHeader().setVisible(False)
        self.steps_table.setIconSize(QSize(THUMB_HEIGHT * 16 // 9, THUMB_HEIGHT))
        self.steps_table.setWordWrap(True)
        self._steps_fill = _lay_out_steps(self.steps_table)
        self.steps_table.cellDoubleClicked.connect(self._on_step_double_clicked)

        self.refresh_button = QPushButton("Refresh")
        self.export_button = QPushButton("Export…")
        self.folder_button = QPushButton("Open folder")
        self.delete_button = QPushButton("Delete…")
        self.refresh_button.clicked.connect(self.refresh)
        self.export_button.clicked.connect(self._export_clicked)
        self.folder_button.clicked.connect(self._folder_clicked)
        self.delete_button.clicked.connect(self._delete_clicked)
        self.status_label = plain_label("")  # errors quote stored and server text
        self.status_label.setObjectName("status")
        self.status_label.setWordWrap(True)

        buttons = QHBoxLayout()
        for button in (
            self.refresh_button,
            self.export_button,
            self.folder_button,
            self.delete_button,
        ):
            buttons.addWidget(button)
        buttons.addStretch(1)
        # The shown run's result and why, over its steps (selectable: it may be copied).
        self.run_detail = plain_label("")
        self.run_detail.setObjectName("run_detail")
        self.run_detail.setWordWrap(True)
        self.run_detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        detail = QWidget()
        detail_layout = QVBoxLayout(detail)
        detail_layout.setContentsMargins(0, 0, 0, 0)
        detail_layout.addWidget(self.run_detail)
        detail_layout.addWidget(self.steps_table, 1)
        # One above the other, each the window's width: side by side, the runs' tasks were
        # cut to "Demo: in the …" and every row looked the same.
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.runs_table)
        splitter.addWidget(detail)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.status_label)
        self.resize(1200, 700)

        self._steps_timer = QTimer(self)
        self._steps_timer.setSingleShot(True)
        self._steps_timer.setInterval(_RELOAD_DELAY_MS)
        self._steps_timer.timeout.connect(self._reload_steps)
        self._runs_timer = QTimer(self)
        self._runs_timer.setSingleShot(True)
        self._runs_timer.setInterval(_RELOAD_DELAY_MS)
        self._runs_timer.timeout.connect(self.refresh)
        self._update_buttons()
        self.refresh()

    # ------------------------------------------------------------------ public API

    def refresh(self) -> None:
        """Re-read the runs list (and the shown run's steps) in the background."""
        if self._closed:
            return
        limit = self._limit
        self._tasks.run(lambda: self._handle.get().list_runs(limit), self._runs_read, self._fail)
        if self._shown_run is not None:
            self._steps_timer.start()

    @property
    def busy(self) -> bool:
        """Whether background work (reads, deletes, exports) has results still to deliver."""
        return self._tasks.pending > 0

    def current_run_id(self) -> str | None:
        """The run whose steps are shown (the current row of the runs table)."""
        return self._shown_run

    def selected_run_ids(self) -> list[str]:
        """The runs selected in the runs table, top to bottom."""
        rows = sorted({index.row() for index in self.runs_table.selectedIndexes()})
        return [self._run_id_at(row) for row in rows if self._run_id_at(row)]

    def select_run(self, run_id: str) -> bool:
        """Select the run's row (its steps load in the background); False when not listed."""
        for row in range(self.runs_table.rowCount()):
            if self._run_id_at(row) == run_id:
                self.runs_table.selectRow(row)
                return True
        return False

    def step_numbers(self) -> list[int]:
        """The step numbers in the steps table, in order."""
        return [view.step_no for view in self._steps]

    def export_run(self, run_id: str, dest: Path) -> None:
        """Export a run into ``dest`` in the background; ``exported`` gives the folder."""

        def done(folder: Path) -> None:
            self._say(f"Exported to {folder}")
            self.exported.emit(str(folder))

        self._tasks.run(lambda: export_run(self._handle.get(), run_id, dest), done, self._fail)

    def open_run_folder(self, run_id: str) -> None:
        """Open the run's screenshot folder in the file manager."""

        def folder() -> Path:
            return self._handle.get().run_dir(run_id)

        def show(path: Path) -> None:
            if not path.is_dir():
                self._fail(f"Run {run_id} has no screenshot folder ({path}).")
                return
            if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
                self._fail(f"Could not open {path}; no file manager answered.")

        self._tasks.run(folder, show, self._fail)

    def delete_runs(self, run_ids: Sequence[str], *, confirm: bool = True) -> None:
        """Delete runs with their screenshots (asking first unless ``confirm`` is False)."""
        ids = list(run_ids)
        if not ids:
            return
        if confirm and not self._confirm_delete(ids):
            return

        def work() -> tuple[list[str], list[str]]:
            log = self._handle.get()
            done: list[str] = []
            problems: list[str] = []
            for run_id in ids:
                try:
                    log.delete_run(run_id)
                    done.append(run_id)
                except Exception as exc:
                    problems.append(str(exc))
            return done, problems

        def finished(result: tuple[list[str], list[str]]) -> None:
            done, problems = result
            for run_id in done:
                self._live.pop(run_id, None)
            if self._shown_run in done:
                self._show_steps(None, [])
            if problems:
                self._fail("; ".join(problems))
            else:
                self._say(f"Deleted {len(done)} run(s).")
            self.deleted.emit(done)
            self.refresh()

        self._tasks.run(work, finished, self._fail)

    def prune(self, retention_days: float) -> None:
        """Apply the retention setting (``ActionLog.prune``) in the background, then refresh."""

        def finished(ids: list[str]) -> None:
            if ids:
                self._say(f"Deleted {len(ids)} run(s) older than {retention_days:g} days.")
                self.deleted.emit(ids)
            self.refresh()

        self._tasks.run(lambda: self._handle.get().prune(retention_days), finished, self._fail)

    def open_screenshot(self, step_no: int) -> None:
        """Open the step's full screenshot with its point marked (loaded in the background)."""
        view = next((v for v in self._steps if v.step_no == step_no), None)
        if view is None or not (view.screenshot_path or view.thumbnail_path):
            self._fail(f"Step {step_no} has no screenshot.")
            return
        # With log_screenshots off only the thumbnail was kept: show that, and say so.
        path = view.screenshot_path or view.thumbnail_path or ""
        title = f"Step {step_no}: {view.action}"
        if not view.screenshot_path:
            title += f" ({THUMBNAIL_ONLY})"

        def show(image: QImage | None) -> None:
            if image is None:
                self._fail(f"The screenshot {path} cannot be read (deleted?).")
                return
            pixels: list[tuple[float, float]] = []
            if view.geometry is not None:
                pixels = marker_pixels(view.points, view.geometry, (image.width(), image.height()))
            dialog = ScreenshotDialog(image, pixels, title, self)
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dialog.show()
            self.screenshot_opened.emit(dialog)

        self._tasks.run(lambda: _load_image(path), show, self._fail)

    def shutdown(self, msecs: int = 5000) -> None:
        """Finish background work and close the window's ActionLog (at application exit)."""
        self._closed = True
        self._steps_timer.stop()
        self._runs_timer.stop()
        self._tasks.close(msecs)
        self._handle.close()

    @Slot(object)
    def on_event(self, event: object) -> None:
        """Update from one of the agent's events (``app.events``); others are ignored."""
        if isinstance(event, RunStarted):
            self._live[event.run_id] = _LiveRun(event.task, time.time())
            self._render_runs()
            self._runs_timer.start()
            return
        run_id = getattr(event, "run_id", None)
        if not isinstance(run_id, str):
            return
        live = self._live.setdefault(run_id, _LiveRun("", time.time()))
        step_no = getattr(event, "step_no", None)
        view: _StepView | None = None
        if isinstance(step_no, int):
            view = live.steps_view.setdefault(step_no, _StepView(step_no))
            live.steps = max(live.steps, step_no)
        if isinstance(event, FrameCaptured) and view is not None:
            view.screenshot_path = event.screenshot_path or None
            view.thumbnail_path = event.thumbnail_path or None
            view.geometry = event.geometry
            view.outcome = "thinking…"
            # The same key _render_steps looks the picture up by.
            shown = view.thumbnail_path or view.screenshot_path
            if shown:
                self._load_thumbnail(shown)
        elif isinstance(event, StepProposed) and view is not None:
            view.thought = event.step.thought
            view.points = event.points
            view.action = event.description
            view.outcome = "proposed"
            view.replayed = event.source is Source.REPLAYED
            view.source_note = event.source_note
        elif isinstance(event, StepDecided) and view is not None:
            view.decision = event.decision.value
        elif isinstance(event, ActionExecuted) and view is not None:
            view.outcome = StepResult.OK.value
            view.seconds = time.monotonic() - view.started
        elif isinstance(event, StepFailed) and view is not None:
            view.outcome = f"{StepResult.FAILED}: {event.error}"
            view.seconds = time.monotonic() - view.started
        elif isinstance(event, RunFinished):
            live.headline, live.reason = event.result.words, event.reason
            live.result = event.result
            self._runs_timer.start()
        else:
            return
        self._render_runs()
        if run_id == self._shown_run:
            self._render_steps()
            self._steps_timer.start()

    # ------------------------------------------------------------------ runs table

    def _runs_read(self, runs: list[RunRecord]) -> None:
        self._runs = runs
        listed = {run.id for run in runs}
        # The store is the truth once it has a run's result.
        for run in runs:
            live = self._live.get(run.id)
            if live is not None and run.result is not None:
                live.headline, live.reason, live.result = run.headline, run.reason or "", \
                    run.result
        self._render_runs()
        if self._shown_run is not None and self._shown_run not in listed | set(self._live):
            self._show_steps(None, [])
        self.runs_loaded.emit(runs)

    def _run_rows(self) -> list[_RunRow]:
        rows = []
        stored = {run.id for run in self._runs}
        for run_id, pending in self._live.items():
            if run_id not in stored and pending.task:
                rows.append(_RunRow(run_id, pending.task, pending.started_at, pending.headline,
                                    pending.steps, pending.reason, pending.result))
        for run in self._runs:
            live = self._live.get(run.id)
            row = _RunRow(run.id, run.task, run.started_at, run.headline, run.steps,
                          run.reason or "", run.result)
            if live is not None:
                if run.result is None:  # the store has not got its end yet: the events' word
                    row.headline, row.reason, row.result = live.headline, live.reason, \
                        live.result
                row.steps = max(row.steps, live.steps)
            rows.append(row)
        rows.sort(key=lambda r: (r.started, r.run_id), reverse=True)
        return rows

    def _render_runs(self) -> None:
        selected = set(self.selected_run_ids())
        current = self._shown_run
        table = self.runs_table
        table.blockSignals(True)
        try:
            rows = self._run_rows()
            table.setRowCount(len(rows))
            for row, run in enumerate(rows):
                texts = (run.run_id, shown_line(run.task), _clock(run.started), run.headline,
                         str(run.steps))
                for col, text in enumerate(texts):
                    item = QTableWidgetItem(text)
                    if col == 0:
                        item.setData(Qt.ItemDataRole.UserRole, run.run_id)
                        item.setToolTip(f"Run {run.run_id}")
                    if col == 1:
                        item.setToolTip(wrapped_tooltip(run.task))
                    if col == 3 and run.result is not None:
                        item.setForeground(tone_color(RESULT_TONES[run.result]))
                        if run.reason:
                            item.setToolTip(wrapped_tooltip(run.reason))
                    table.setItem(row, col, item)
            # Rows move as runs come and go: select the same runs again, by id.
            table.clearSelection()
            model = table.selectionModel()
            flags = QItemSelectionModel.SelectionFlag
            for row, run in enumerate(rows):
                if run.run_id in selected or (not selected and run.run_id == current):
                    model.select(table.model().index(row, 0), flags.Select | flags.Rows)
            self._show_detail({run.run_id: run for run in rows}.get(current or ""))
        finally:
            table.blockSignals(False)
        self._update_buttons()

    def _show_detail(self, run: _RunRow | None) -> None:
        """The shown run's result as the headline and why after it, over its steps."""
        if run is None or run.result is None:
            self.run_detail.setText("Running" if run is not None else "")
            self.run_detail.setStyleSheet("")
            self.run_detail.setProperty("result", "")
            return
        reason = f": {shown(run.reason)}" if run.reason else ""
        self.run_detail.setText(f"{run.result.heading}{reason}")
        self.run_detail.setStyleSheet(text_style(RESULT_TONES[run.result]))
        self.run_detail.setProperty("result", run.result.value)

    def _run_id_at(self, row: int) -> str:
        item = self.runs_table.item(row, 0)
        value = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return value if isinstance(value, str) else ""

    @Slot()
    def _on_run_selection(self) -> None:
        ids = self.selected_run_ids()
        self._update_buttons()
        run_id = ids[0] if len(ids) == 1 else None
        if run_id is None or run_id == self._shown_run:
            return
        self._shown_run = run_id
        self._steps = []
        self._show_detail(next((r for r in self._run_rows() if r.run_id == run_id), None))
        self._render_steps()
        self._reload_steps()

    def _update_buttons(self) -> None:
        count = len(self.selected_run_ids())
        self.export_button.setEnabled(count == 1)
        self.folder_button.setEnabled(count == 1)
        self.delete_button.setEnabled(count >= 1)

    # ------------------------------------------------------------------ steps table

    @Slot()
    def _reload_steps(self) -> None:
        run_id = self._shown_run
        if run_id is None or self._closed:
            return

        known = set(self._thumbs)  # read here: the worker must not touch GUI-side state

        def work() -> tuple[list[StepRecord], dict[str, QImage]]:
            records = self._handle.get().steps(run_id)
            images: dict[str, QImage] = {}
            for record in records:
                path = record.thumbnail_path or record.screenshot_path
                if path and path not in known:
                    image = _load_image(path, THUMB_HEIGHT)
                    if image is not None:
                        images[path] = image
            return records, images

        def done(result: tuple[list[StepRecord], dict[str, QImage]]) -> None:
            records, images = result
            for path, image in images.items():
                self._thumbs[path] = QPixmap.fromImage(image)
            if run_id == self._shown_run:
                self._show_steps(run_id, records)

        self._tasks.run(work, done, self._fail)

    def _show_steps(self, run_id: str | None, records: list[StepRecord]) -> None:
        self._shown_run = run_id
        views = {record.step_no: _StepView.from_record(record) for record in records}
        live = self._live.get(run_id) if run_id is not None else None
        if live is not None:
            for step_no, view in live.steps_view.items():
                views.setdefault(step_no, view)  # a stored row wins over what events said
        self._steps = [views[n] for n in sorted(views)]
        self._render_steps()
        if run_id is not None:
            self.steps_loaded.emit(run_id)

    def _render_steps(self) -> None:
        if self._shown_run is not None:
            live = self._live.get(self._shown_run)
            if live is not None:
                have = {view.step_no for view in self._steps}
                extra = [v for n, v in live.steps_view.items() if n not in have]
                if extra:
                    self._steps = sorted([*self._steps, *extra], key=lambda v: v.step_no)
        table = self.steps_table
        table.setRowCount(len(self._steps))
        for row, view in enumerate(self._steps):
            texts = (
                "",
                str(view.step_no),
                shown_line(view.thought),
                shown_line(view.action),
                view.decision_text,
                shown_line(view.outcome),
                _seconds(view.seconds),
            )
            for col, text in enumerate(texts):
                item = QTableWidgetItem(text)
                raw = {2: view.thought, 3: view.action, 4: view.source_note,
                       5: view.outcome}.get(col)
                if raw:
                    item.setToolTip(wrapped_tooltip(raw))
                table.setItem(row, col, item)
            thumb = self._thumbs.get(view.thumbnail_path or view.screenshot_path or "")
            if thumb is not None:
                icon_item = QTableWidgetItem()
                icon_item.setIcon(QIcon(thumb))
                icon_item.setToolTip("Double-click for the full screenshot")
                table.setItem(row, 0, icon_item)
            table.setRowHeight(row, THUMB_HEIGHT + 6)

    def _load_thumbnail(self, path: str) -> None:
        if path in self._thumbs:
            return

        def done(image: QImage | None) -> None:
            if image is not None:
                self._thumbs[path] = QPixmap.fromImage(image)
                self._render_steps()

        self._tasks.run(lambda: _load_image(path, THUMB_HEIGHT), done, self._fail)

    @Slot(int, int)
    def _on_step_double_clicked(self, row: int, _column: int) -> None:
        if 0 <= row < len(self._steps):
            self.open_screenshot(self._steps[row].step_no)

    # ------------------------------------------------------------------ buttons

    def _confirm_delete(self, ids: list[str]) -> bool:
        what = f"run {ids[0]}" if len(ids) == 1 else f"{len(ids)} runs"
        answer = QMessageBox.question(
            self,
            "Delete runs",
            f"Delete {what} with all screenshots? This cannot be undone.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    @Slot()
    def _export_clicked(self) -> None:
        ids = self.selected_run_ids()
        if len(ids) != 1:
            return
        folder = QFileDialog.getExistingDirectory(self, "Export the run into folder")
        if folder:
            self.export_run(ids[0], Path(folder))

    @Slot()
    def _folder_clicked(self) -> None:
        ids = self.selected_run_ids()
        if len(ids) == 1:
            self.open_run_folder(ids[0])

    @Slot()
    def _delete_clicked(self) -> None:
        self.delete_runs(self.selected_run_ids())

    # ------------------------------------------------------------------ messages

    def _say(self, text: str) -> None:
        self.status_label.setStyleSheet("")
        self.status_label.setText(shown(text))

    def _fail(self, error: BaseException | str) -> None:
        text = error if isinstance(error, str) else str(error) or type(error).__name__
        if isinstance(error, BaseException):
            _log.warning("action log window: %s", text, exc_info=error)
        self.status_label.setStyleSheet(text_style(Tone.ERROR))
        self.status_label.setText(shown(text))
        self.failed.emit(text)
