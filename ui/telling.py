"""How the desktop app tells the person something: a notification where the desktop has them,
else a line in the task window; and which lines go away again (a refusal because a run was
active, once it is over; the model server's problems, once it is ready)."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable

from app.admission import Refusal, Refused
from app.result import RunResult
from ui.automations_dialog import AutomationsDialog
from ui.result_view import RESULT_TRAY, result_line
from ui.task_window import TaskWindow
from ui.tray import Tray

log = logging.getLogger(__name__)

#: How many of the newest messages told to the person are kept in memory (the log keeps all).
TOLD_KEPT = 50


class Teller:
    """Tells the person, through ``tray`` or ``task_window``.

    ``show_window`` brings the task window forward (not while ``calibrating``: then it waits
    for the calibration's end, ``keep_hidden``); ``confirming`` is whether a run waits for
    the person's approval (nothing may take its focus then); ``automations_dialog`` the open
    Automations window, which shows the schedules' notes.
    """

    def __init__(self, tray: Tray, task_window: TaskWindow, *, show_window: Callable[[], None],
                 calibrating: Callable[[], bool], keep_hidden: Callable[[TaskWindow], None],
                 confirming: Callable[[], bool],
                 automations_dialog: Callable[[], AutomationsDialog | None]) -> None:
        self.tray, self.task_window = tray, task_window
        self._show_window, self._calibrating = show_window, calibrating
        self._keep_hidden, self._confirming = keep_hidden, confirming
        self._automations_dialog = automations_dialog
        #: The newest messages told, newest last: what was said, for a look at the app's
        #: state; no decision reads them back (refusals are values: app/admission.py).
        self.told: deque[str] = deque(maxlen=TOLD_KEPT)
        #: The last thing to say about each automation's schedule (a missed or skipped run),
        #: by key; the Automations window shows it.
        self.schedule_notes: dict[str, str] = {}
        self._server_lines: list[str] = []
        self._busy_lines: list[str] = []

    def error(self, text: str) -> None:
        """A notification where the desktop has them, else the task window, brought forward."""
        log.warning("%s", text)
        self.told.append(text)
        if not self.tray.notify("holodesk", text, error=True):
            self.in_window(text)

    def in_window(self, text: str) -> None:
        """The message in the task window, brought forward (a notification's stand-in)."""
        self.task_window.show_error(text)
        if self._calibrating():
            # Not over the targets (it would also take the focus Escape needs): the
            # task window comes back, with the message, when the calibration ends.
            self._keep_hidden(self.task_window)
            return
        self._show_window()

    def refused(self, refused: Refused) -> None:
        """Why a run did not start. A refusal because a run is active never disturbs that
        run: no window is raised over a confirmation, and none takes the focus from it (an
        Enter meant for the confirmation must reach it)."""
        text = refused.text
        if refused.kind is not Refusal.BUSY:
            if refused.kind is Refusal.SERVER:
                # The server's state, which the status line and the guide follow: it goes
                # once the server is ready (server_ready).
                self._server_lines.append(text)
            else:
                self.unstarted(RunResult.REFUSED, text)
            self.error(text)
            return
        log.warning("%s", text)
        self.told.append(text)
        self._busy_lines.append(text)
        if self.tray.notify("holodesk", text):
            return
        self.task_window.show_error(text)
        if not self._confirming() and not self.task_window.isVisible():
            self._show_window()

    def unstarted(self, result: RunResult, text: str) -> None:
        """A run that never started came to ``result`` (refused, or failed as it was built):
        the task window's header and the tray say it as a run's end, unless a run is active
        (its own end is never touched). Telling the person is the caller's."""
        if self.task_window.running:
            return
        self.task_window.show_unstarted(result, text)
        self.tray.set_state(RESULT_TRAY[result], result_line(result, text))

    def finished(self, result: RunResult, text: str) -> None:
        """A run ended with ``result`` (``text`` says it and why): a notification, since the
        person may be looking elsewhere (the task window and the tray say it too, so nothing
        else stands in for it where the desktop has no notifications)."""
        log.info("%s", text)
        self.told.append(text)
        self.tray.notify("holodesk", text, error=result is not RunResult.DONE)

    def note(self, name: str, text: str, tell: bool) -> None:
        """A scheduled run that did not happen: a line in the Automations window and, with
        ``tell``, a notification (the task window's line, with no notifications)."""
        log.warning("%s", text)
        self.schedule_notes[name.casefold()] = text
        dialog = self._automations_dialog()
        if dialog is not None:
            dialog.set_notes(self.schedule_notes)
        if tell and not self.tray.notify("holodesk", text):
            # Not raised over the person's work, nor over a confirmation: shown when opened.
            self.task_window.show_error(text)

    def server_failure(self, text: str) -> None:
        """A model server that did not start or stop, from the tray; the guide, when in view,
        says it already under its button: once is enough there."""
        if self.task_window.guide.isVisible():
            log.warning("%s", text)
            self.told.append(text)
            self.tray.notify("holodesk", text, error=True)
            return
        self._server_lines.append(text)
        self.error(text)

    def server_ready(self) -> None:
        """The model server is ready: its problems are over."""
        for text in self._server_lines:
            self.task_window.clear_error(text)
        self._server_lines.clear()

    def run_over(self) -> None:
        """The run is over: so is "a run is active"."""
        for text in self._busy_lines:
            self.task_window.clear_error(text)
        self._busy_lines.clear()
