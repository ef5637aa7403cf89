"""The task window: type a task, pick the confirmation mode and the monitor, Start; then watch
the run (the model's thought as it streams, the current step, the last screenshot with the last
action marked) and Pause / Resume / Stop it.

The window holds no run logic: it emits requests (``start_requested`` ...) and renders the
core's events (``on_event``), which the controller delivers on the GUI thread. Screenshots are
decoded on a thread pool (:class:`ui.marker.ImageLoader`), never on the GUI thread.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence

from PySide6.QtCore import QSize, Qt, Signal, Slot
from PySide6.QtGui import QFont, QImage, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.doctor import session_kind, session_notice
from app.events import (
    ActionExecuted,
    AwaitingConfirmation,
    Decision,
    FrameCaptured,
    ModelText,
    RunFinished,
    RunStarted,
    StepDecided,
    StepFailed,
    StepProposed,
)
from app.result import RunResult
from app.settings import normalize_monitor
from control.policy import ConfirmMode
from model.coords import FrameGeometry, Point
from model.problem import Fix
from ui.colours import SCREEN_STYLE, Tone, danger_button_style, text_style
from ui.first_run import FirstRunGuide
from ui.marker import ImageLoader, ImageSource, image_points, mark_image, read_scaled
from ui.next_steps import NextStepsNote
from ui.plain import plain_label, plain_tooltip, shown, shown_line
from ui.problem_view import fix_text, plain_words, reason_text
from ui.result_view import RESULT_TONES
from ui.run_options import DEFAULT_MONITORS, confirm_combo, monitor_combo

SCREENSHOT_BOUNDS = QSize(640, 400)
NEW_TASK_TITLE = "holodesk — new task"
#: Small enough for a 1366x768 screen with a panel and a title bar; the content scrolls.
MINIMUM_SIZE = QSize(420, 420)
STATE_TONES = {
    "online": Tone.OK,
    "ready": Tone.OK,
    "offline": Tone.ERROR,
    "error": Tone.ERROR,
    "checking": Tone.WARNING,
    "loading": Tone.WARNING,
}

_THOUGHT_KEY = re.compile(r'"thought"\s*:\s*"')
_DECODER = json.JSONDecoder(strict=False)  # raw newlines inside strings: take them as they are


def extract_thought(text: str) -> str:
    """The ``thought`` of a step answer that may still be streaming in.

    ``text`` is the whole answer so far: complete JSON, JSON cut anywhere (inside the thought,
    inside an escape sequence), or no JSON at all. The thought is read up to its closing quote
    or to the end; escapes are decoded, a half-received one at the end is dropped. Text that
    is not JSON is returned as it is; JSON without a thought yet gives "". A leading
    ``<think>`` block still open is shown as the thought while it streams.
    """
    match = _THOUGHT_KEY.search(text)
    if match is None:
        stripped = text.strip()
        if stripped.startswith("<think>"):
            # A reasoning model's thinking, still streaming (or done, with no step yet).
            thinking, closed, _ = stripped[len("<think>") :].partition("</think>")
            return "" if closed else thinking.strip()
        return "" if stripped.startswith(("{", "```")) else stripped
    body = text[match.end() :]
    end = len(body)
    i = 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
            continue
        if body[i] == '"':
            end = i
            break
        i += 1
    raw = body[:end]
    # At most 5 characters of a cut escape (\uXXX) can dangle at the end.
    for cut in range(min(6, len(raw) + 1)):
        try:
            decoded = _DECODER.decode('"' + raw[: len(raw) - cut] + '"')
        except ValueError:
            continue
        return str(decoded)
    return raw.replace('\\"', '"').replace("\\n", "\n")


class TaskWindow(QWidget):
    """Start a task and watch it run.

    Signals: ``start_requested(task, confirm, monitor)`` (``confirm`` a
    :class:`~control.policy.ConfirmMode`; ``monitor`` a settings monitor string, already
    validated), ``stop_requested()``,
    ``pause_requested()``, ``resume_requested()``, ``automations_requested()`` (the saved
    tasks, to run or to edit); from the first-run guide ``setup_requested()`` (a model server
    on this machine), ``connect_requested()`` (one elsewhere) and ``demo_requested()``; from
    the note after a done demo those two and ``log_requested()`` (the action log).

    Slots: ``on_event(event)`` for every :mod:`app.events` event, ``set_model_status(text,
    state)``, ``set_can_start(ok, why)``, ``set_running(running)``, ``set_paused(paused,
    why)``, ``show_error(message, fix)``, ``clear_error(text)``, ``set_defaults(confirm,
    monitor)``, ``show_guide(shown, endpoint)``, ``expect_run(name, task)``,
    ``show_next_steps()``, ``show_unstarted(result, reason)``.

    A run's end shows its result (app/result.py) as the Run box's header, in its colour, with
    the reason right under it, scrolled into view.

    ``session`` reads the kind of desktop session (app.doctor.session_kind); in a Wayland
    session the window says what works there before the person starts a run.
    """

    start_requested = Signal(str, object, str)
    stop_requested = Signal()
    pause_requested = Signal()
    resume_requested = Signal()
    automations_requested = Signal()
    setup_requested = Signal()
    connect_requested = Signal()
    demo_requested = Signal()
    log_requested = Signal()

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        confirm: str = "risky",
        monitor: str = "1",
        monitors: Sequence[str] = DEFAULT_MONITORS,
        loader: ImageLoader | None = None,
        session: Callable[[], str] = lambda: session_kind(os.environ),
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(NEW_TASK_TITLE)
        self._session = session
        self._guide_wanted = False
        self._error_text = ""  # the error shown, as given (clear_error compares with it)
        self._automation = ""  # the name of the automation the window shows, if any
        self._running = False
        self._starting = False
        self._paused = False
        self._can_start = True
        self._why_not = ""
        self._geometry: FrameGeometry | None = None
        self._points: tuple[Point, ...] = ()
        self._frame: QImage | None = None
        self._marked: QImage | None = None
        self._wanted = 0  # the ticket of the screenshot last asked for
        self._loader = loader or ImageLoader(self)
        self._loader.loaded.connect(self._on_loaded)
        self._build(monitors)
        self.set_defaults(confirm, monitor)
        self._refresh()

    # -- layout ------------------------------------------------------------------------------

    def _build(self, monitors: Sequence[str]) -> None:
        self.task_edit = QPlainTextEdit()
        self.task_edit.setPlaceholderText(
            "What should holodesk do? For example: open the Downloads folder and sort it by "
            "date.  (Ctrl+Enter starts)"
        )
        self.task_edit.setTabChangesFocus(True)
        self.task_edit.setMaximumHeight(110)
        self.task_edit.textChanged.connect(self._refresh)

        self.confirm_combo = confirm_combo()
        self.monitor_combo = monitor_combo(monitors)
        self.start_button = QPushButton("Start")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self._start)
        shortcut = QShortcut(QKeySequence("Ctrl+Return"), self)
        shortcut.activated.connect(self._start)
        shortcut_enter = QShortcut(QKeySequence("Ctrl+Enter"), self)
        shortcut_enter.activated.connect(self._start)

        options = QHBoxLayout()
        options.addWidget(QLabel("Confirm:"))
        options.addWidget(self.confirm_combo)
        options.addSpacing(12)
        options.addWidget(QLabel("Monitor:"))
        options.addWidget(self.monitor_combo)
        options.addStretch(1)
        self.automations_button = QPushButton("Automations…")
        self.automations_button.setToolTip("Saved tasks, each on its own hotkey if you like")
        self.automations_button.clicked.connect(self.automations_requested)
        options.addWidget(self.automations_button)
        options.addWidget(self.start_button)

        # Labels are plain text: they show model and server text, never rendered as HTML.
        self.model_dot = plain_label("●")
        self.model_dot.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.model_status = plain_label()
        self.model_status.setWordWrap(True)  # the server's words can be long: wrap, never cut
        self.why_label = plain_label()
        self.why_label.setWordWrap(True)
        self.why_label.setStyleSheet(text_style(Tone.WARNING))
        self.why_label.hide()

        self.status_label = plain_label("Idle")
        bold = QFont(self.status_label.font())
        bold.setBold(True)
        self.status_label.setFont(bold)
        self.step_label = plain_label()
        self.step_label.setWordWrap(True)
        self.step_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.thought_view = QPlainTextEdit()
        self.thought_view.setReadOnly(True)
        self.thought_view.setPlaceholderText("The model's thinking appears here as it comes in.")
        self.thought_view.setMaximumHeight(90)
        self.screenshot_label = plain_label("No screenshot yet")
        self.screenshot_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.screenshot_label.setMinimumSize(320, 200)
        self.screenshot_label.setSizePolicy(
            QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding
        )
        self.screenshot_label.setStyleSheet(SCREEN_STYLE)
        self.error_label = plain_label()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(text_style(Tone.ERROR))
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        self.result_label = plain_label()
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result_label.hide()

        self.pause_button = QPushButton("Pause")
        self.pause_button.clicked.connect(self._toggle_pause)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setStyleSheet(danger_button_style())
        self.stop_button.clicked.connect(self.stop_requested)
        controls = QHBoxLayout()
        controls.addWidget(self.status_label, 1)
        controls.addWidget(self.pause_button)
        controls.addWidget(self.stop_button)

        self.next_steps = NextStepsNote()
        self.next_steps.setup_requested.connect(self.setup_requested)
        self.next_steps.connect_requested.connect(self.connect_requested)
        self.next_steps.task_requested.connect(self._write_first_task)
        self.next_steps.log_requested.connect(self.log_requested)
        self.next_steps.hide()

        run_box = QGroupBox("Run")
        run = QVBoxLayout(run_box)
        run.addLayout(controls)
        # Right under the header: why the run came to its result, never below the fold.
        run.addWidget(self.result_label)
        run.addWidget(self.next_steps)
        run.addWidget(self.step_label)
        run.addWidget(self.thought_view)
        run.addWidget(self.screenshot_label, 1)
        run.addWidget(self.error_label)

        # Everything scrolls inside the window: wrapped text (a long error, the guide) gets
        # the height it needs at any window size instead of being cut off, and the window
        # still fits a small screen (a top-level window does not grow for wrapped labels).
        self.content = QWidget()
        scroll = QScrollArea()
        scroll.setObjectName("task_scroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.content)
        self.scroll_area = scroll
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

        layout = QVBoxLayout(self.content)
        layout.addWidget(self.task_edit)
        layout.addLayout(options)
        model_line = QHBoxLayout()
        model_line.addWidget(self.model_dot)
        model_line.addWidget(self.model_status, 1)
        layout.addLayout(model_line)
        layout.addWidget(self.why_label)

        # Said before the first run, where it would otherwise be wasted.
        self.session_label = plain_label(session_notice(self._session_kind()))
        self.session_label.setObjectName("session_notice")
        self.session_label.setWordWrap(True)
        self.session_label.setStyleSheet(text_style(Tone.WARNING))
        self.session_label.setVisible(bool(self.session_label.text()))
        layout.addWidget(self.session_label)

        self.guide = FirstRunGuide()
        self.guide.setup_requested.connect(self.setup_requested)
        self.guide.connect_requested.connect(self.connect_requested)
        self.guide.demo_requested.connect(self.demo_requested)
        self.guide.hide()
        layout.addWidget(self.guide)
        layout.addWidget(run_box, 1)

        # As narrow as the content allows (no sideways scrolling), never taller than a small
        # screen needs: what does not fit scrolls.
        bar = scroll.verticalScrollBar().sizeHint().width()
        self.setMinimumSize(max(MINIMUM_SIZE.width(),
                                self.content.minimumSizeHint().width() + bar),
                            MINIMUM_SIZE.height())
        self._fit_content()

    def _fit_content(self) -> None:
        """Grow to the content's natural size, as far as the screen has room: opened so, and
        again when the guide comes (never smaller: the person may have made it bigger)."""
        bar = self.scroll_area.verticalScrollBar().sizeHint().width()
        natural = self.content.sizeHint() + QSize(bar, 0)
        screen = self.screen().availableGeometry().size() if self.screen() else natural
        self.resize(natural.boundedTo(screen * 0.9).expandedTo(self.size())
                    .expandedTo(self.minimumSize()))

    def _session_kind(self) -> str:
        try:
            return self._session()
        except Exception:  # no notice is better than no window
            return "none"

    # -- public slots ------------------------------------------------------------------------

    @Slot(str, str)
    def set_defaults(self, confirm: str, monitor: str) -> None:
        """Preselect the confirmation mode and the monitor (from the settings)."""
        index = self.confirm_combo.findData(str(confirm))
        if index >= 0:
            self.confirm_combo.setCurrentIndex(index)
        if self.monitor_combo.findText(monitor) < 0:
            self.monitor_combo.addItem(monitor)
        self.monitor_combo.setCurrentText(monitor)

    @Slot(str, str)
    def set_model_status(self, text: str, state: str) -> None:
        """The model server's status line; ``state`` (online, offline, checking, loading,
        error ...) picks the colour of its dot."""
        self.model_dot.setStyleSheet(text_style(STATE_TONES.get(state, Tone.MUTED)))
        self.model_status.setText(f"Model: {shown_line(text)}")
        self.model_status.setProperty("state", state)

    @Slot(bool, str)
    def set_can_start(self, ok: bool, why: str = "") -> None:
        """Whether a run may start (e.g. False while the model is offline), and why not."""
        self._can_start = ok
        self._why_not = "" if ok else why
        self._refresh()

    @Slot(bool)
    def set_running(self, running: bool) -> None:
        """Force the running state (the controller calls it when a start failed early)."""
        self._running = running
        self._starting = False
        if not running:
            self._paused = False
        self._refresh()

    @Slot(bool, str)
    def set_paused(self, paused: bool, why: str = "") -> None:
        """Show the run paused (e.g. because the person touched the mouse) or resumed."""
        self._paused = paused
        if self._running:
            self.status_label.setText(
                ("Paused" + (f": {shown_line(why)}" if why else "")) if paused else "Running"
            )
        self._refresh()

    @Slot(str, str)
    def show_error(self, message: str, fix: Fix | None = None) -> None:
        """Show an error (and how to fix it); a start that failed can be retried."""
        said = fix_text(fix)
        text = plain_words(message) + (f"\n{said}" if said else "")
        self._error_text = message
        self.error_label.setText(shown(text))
        self.error_label.setVisible(bool(text))
        if not self._running:
            self._starting = False
        self._refresh()

    @Slot(str)
    def clear_error(self, text: str = "") -> None:
        """Take the error away once the state it describes has ended: any error, or only
        when the one shown is ``text`` (a newer error about something else stays)."""
        if text and self._error_text != text:
            return
        self._error_text = ""
        self.error_label.clear()
        self.error_label.hide()

    @Slot(bool, str)
    def show_guide(self, show: bool, endpoint: str = "") -> None:
        """Show the first-run guide while no model server answers (at ``endpoint``); it stays
        out of the way of a run."""
        coming = show and not self._guide_wanted
        self._guide_wanted = show
        if show:
            self.guide.set_endpoint(endpoint)
        self._refresh()
        if coming and self.guide.isVisible():
            self._fit_content()

    @Slot(str, str)
    def expect_run(self, name: str, task: str) -> None:
        """The next run is the automation ``name`` (for ``task``): the window is titled with
        it at once, so whatever follows (its run or why it did not start) is shown under it,
        never under the previous task and its result. "" for a task typed here."""
        self._automation = name
        if not name:
            self.setWindowTitle(NEW_TASK_TITLE)  # not the last automation's any more
            return
        self.setWindowTitle(f"holodesk — automation: {shown_line(name, 60)}")
        self.step_label.setText(f"Automation “{shown_line(name)}”: {shown(task)}")
        self.status_label.setStyleSheet("")
        self.status_label.setText(f"Starting the automation “{shown_line(name)}”")
        self.result_label.hide()
        self.clear_error()

    @Slot()
    def show_next_steps(self) -> None:
        """After a done demo: what just happened and what to try next, with its buttons,
        until the next run starts."""
        self.next_steps.show()
        self._into_view(self.next_steps, self.status_label)

    @Slot(object)
    def on_event(self, event: object) -> None:
        """Render one event of the core (delivered on the GUI thread)."""
        if isinstance(event, RunStarted):
            self._run_started(event)
        elif isinstance(event, FrameCaptured):
            self._geometry = event.geometry
            # The bytes when the action log keeps no screenshot file.
            self._load(event.screenshot_path or event.image)
        elif isinstance(event, ModelText):
            self._set_thought(extract_thought(event.text))
        elif isinstance(event, StepProposed):
            self.step_label.setText(f"Step {event.step_no}: {shown_line(event.description)}")
            if event.step.thought:
                self._set_thought(event.step.thought)
            self._points = tuple(event.points)
            self._render()
        elif isinstance(event, AwaitingConfirmation):
            self.status_label.setText("Waiting for you to approve the step")
        elif isinstance(event, StepDecided):
            if event.decision not in (Decision.AUTO, Decision.APPROVED):
                self.status_label.setText(f"Step {event.step_no}: {event.decision.value}")
            elif self._running and not self._paused:
                self.status_label.setText("Running")
        elif isinstance(event, ActionExecuted):
            self.step_label.setText(
                f"Step {event.step_no}: done — {shown_line(event.description)}"
            )
            self.clear_error()
        elif isinstance(event, StepFailed):
            self.show_error(f"Step {event.step_no} failed: {event.error}", event.fix)
        elif isinstance(event, RunFinished):
            self._run_finished(event)

    # -- for tests and the controller -------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._running

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def automation(self) -> str:
        """The name of the automation the window shows ("" for a task typed or sent)."""
        return self._automation

    def screenshot_image(self) -> QImage | None:
        """The screenshot as shown, marker included (None before the first one arrives)."""
        return self._marked

    def thought(self) -> str:
        return self.thought_view.toPlainText()

    # -- internals ---------------------------------------------------------------------------

    def _refresh(self) -> None:
        has_task = bool(self.task_edit.toPlainText().strip())
        busy = self._running or self._starting
        self.start_button.setEnabled(self._can_start and has_task and not busy)
        if busy:
            tip = "A run is active"
        elif not self._can_start:
            tip = self._why_not or "Cannot start now"
        elif not has_task:
            tip = "Type a task first"
        else:
            tip = "Start the task (Ctrl+Enter)"
        self.start_button.setToolTip(plain_tooltip(tip))
        self.why_label.setText(shown(self._why_not))
        guide = self._guide_wanted and not busy
        self.guide.setVisible(guide)
        # The guide says why (and what to do) in its own words.
        self.why_label.setVisible(bool(self._why_not) and not self._running and not guide)
        for widget in (self.task_edit, self.confirm_combo, self.monitor_combo):
            widget.setEnabled(not busy)
        self.pause_button.setEnabled(self._running)
        self.pause_button.setText("Resume" if self._paused else "Pause")
        self.stop_button.setEnabled(self._running or self._starting)

    def _start(self) -> None:
        if not self.start_button.isEnabled():
            return
        task = self.task_edit.toPlainText().strip()
        try:
            monitor = normalize_monitor(self.monitor_combo.currentText())
        except ValueError as exc:
            self.show_error(str(exc))
            return
        self.clear_error()
        self._starting = True
        self._automation = ""
        self.setWindowTitle(NEW_TASK_TITLE)
        self._refresh()
        self.start_requested.emit(task, ConfirmMode(self.confirm_combo.currentData()), monitor)

    def _toggle_pause(self) -> None:
        if not self._running:
            return
        if self._paused:
            self.set_paused(False)
            self.resume_requested.emit()
        else:
            self.set_paused(True)
            self.pause_requested.emit()

    def _run_started(self, event: RunStarted) -> None:
        self._running, self._starting, self._paused = True, False, False
        self._points = ()
        self._geometry = None
        self._frame = self._marked = None
        self._wanted = 0
        self.screenshot_label.clear()
        self.screenshot_label.setText("Waiting for the first screenshot")
        self.thought_view.clear()
        name = self._automation
        if name:
            self.step_label.setText(f"Automation “{shown_line(name)}”: {shown(event.task)}")
            self.setWindowTitle(f"holodesk — automation: {shown_line(name, 60)}")
        else:
            self.step_label.setText(f"Task: {shown(event.task)}")
            self.setWindowTitle(f"holodesk — {shown_line(event.task, 60)}")
        self.clear_error()
        self.result_label.hide()
        self.next_steps.hide()
        dry = " (dry run: nothing is clicked or typed)" if event.dry_run else ""
        self.status_label.setStyleSheet("")
        self.status_label.setText("Running" + dry)
        if event.notice:  # until the model's first words replace it (the CLI prints it too)
            self.thought_view.setPlainText(f"Note: {shown(event.notice)}")
        self._refresh()

    def _run_finished(self, event: RunFinished) -> None:
        self._running, self._starting, self._paused = False, False, False
        lines = [shown(reason_text(event.reason, event.fix))] if event.reason else []
        if event.answer:
            lines.append(f"The model's answer: {shown(event.answer)}")
        self._show_result(event.result, f" after {event.steps} step(s)", lines)

    @Slot(object, str)
    def show_unstarted(self, result: RunResult, reason: str) -> None:
        """A run that never started: refused (app/admission.py, a refusal as it was built) or
        failed (no display ...). The header says so and why, as for a run's end; never over
        an active run's own."""
        if self._running:
            return
        self._starting = False
        self._show_result(result, "", [shown(reason)] if reason else [])

    def _show_result(self, result: RunResult, after: str, lines: list[str]) -> None:
        """The Run box's header says ``result`` in its colour, the ``lines`` right under it
        say why; both scrolled into view."""
        which = f"Automation “{shown_line(self._automation)}”: " if self._automation else ""
        self.status_label.setText(f"{which}{result.heading}{after}")
        # The header alone carries the colour: the lines under it never say otherwise.
        self.status_label.setStyleSheet(text_style(RESULT_TONES[result]))
        self.status_label.setProperty("result", result.value)
        self.result_label.setText("\n".join(lines))
        self.result_label.setVisible(bool(lines))
        self._refresh()
        self._into_view(self.result_label if lines else self.status_label, self.status_label)

    def _write_first_task(self) -> None:
        """The note's "Write a first task": the task box, ready to type in."""
        self.next_steps.hide()
        self._into_view(self.task_edit)
        self.task_edit.setFocus()

    def _into_view(self, *widgets: QWidget) -> None:
        """Scroll so that each of ``widgets`` is in view, the last one first of all (the
        layout settled first: a label just shown has no place in it yet)."""
        layout = self.content.layout()
        if layout is not None:
            layout.activate()
        for widget in widgets:
            self.scroll_area.ensureWidgetVisible(widget, 0, 0)

    def _set_thought(self, text: str) -> None:
        text = shown(text)
        if text != self.thought_view.toPlainText():
            self.thought_view.setPlainText(text)
            bar = self.thought_view.verticalScrollBar()
            bar.setValue(bar.maximum())

    def _load(self, path: ImageSource) -> None:
        bounds = QSize(SCREENSHOT_BOUNDS)
        self._wanted = self._loader.submit(lambda: read_scaled(path, bounds))

    @Slot(int, QImage)
    def _on_loaded(self, ticket: int, image: QImage) -> None:
        if ticket != self._wanted:
            return  # an older screenshot finished after a newer one was asked for
        if image.isNull():
            self.screenshot_label.setText("The screenshot could not be read")
            return
        self._frame = image
        self._render()

    def _render(self) -> None:
        if self._frame is None:
            return
        spots = (
            image_points(self._points, self._geometry, self._frame.size())
            if self._geometry is not None
            else []
        )
        self._marked = mark_image(self._frame, spots, radius=10.0)
        self.screenshot_label.setPixmap(QPixmap.fromImage(self._marked))
