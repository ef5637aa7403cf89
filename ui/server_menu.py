"""The tray's model server entry: Start / Stop over a :class:`ServerControl`, and what its states
say in the tray and the task window while no run has them.

Where this machine cannot serve the model (no usable NVIDIA GPU, not Linux: the checks of
`holodesk serve`, :func:`app.serving.serving_problem`, asked once off the GUI thread), the
entry says so instead of offering a start that can only fail; its tooltip says why and what to
do instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction

from app.serving import serving_problem
from app.settings import Settings
from model.problem import Problem
from model.serving.launcher import ServeError
from ui.plain import wrapped_tooltip
from ui.problem_view import view
from ui.server_control import ServerControl, ServerState
from ui.task_window import TaskWindow
from ui.tray import Tray, TrayState
from ui.workers import Background

__all__ = ["NO_GPU_TEXT", "ServerMenu", "failure_text"]

_log = logging.getLogger(__name__)

#: The entry where this machine cannot serve the model (its tooltip says why).
NO_GPU_TEXT = "Model server: no GPU here"
_ELSEWHERE_TEXT = "Server started elsewhere"
_ELSEWHERE_TIP = ("A model server that holodesk did not start answers at the endpoint: stop it "
                  "where it runs.")

_TEXTS: dict[ServerState, str] = {
    "stopped": "Start model server",
    "failed": "Start model server",
    "starting": "Stop model server (starting…)",
    "ready": "Stop model server",
    "stopping": "Stopping model server…",
}


class ServerMenu(QObject):
    """Drives ``action`` (the tray's server entry) from ``server``'s state.

    ``busy()`` says whether a run is active (its own tray state then wins); ``poll_now()``
    asks the server probe at once; ``tell(text)`` tells the person a start or stop failed.
    ``serving_problem()`` says why this machine cannot serve (None: it can); it is called
    once, on a worker thread.
    """

    def __init__(
        self,
        server: ServerControl,
        action: QAction,
        settings: Callable[[], Settings],
        *,
        tray: Tray,
        task_window: TaskWindow,
        busy: Callable[[], bool],
        poll_now: Callable[[], None],
        tell: Callable[[str], None],
        serving_problem: Callable[[], Problem | None] = serving_problem,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.server = server
        self.action = action
        self._settings = settings
        self._tray = tray
        self._task_window = task_window
        self._busy = busy
        self._poll_now = poll_now
        self._tell = tell
        #: Why this machine cannot serve the model, once known (None: it can, or not known).
        self.cannot_serve: Problem | None = None
        if tray.window is not None:
            tray.window.reserve(action, [*_TEXTS.values(), _ELSEWHERE_TEXT, NO_GPU_TEXT])
        self._checks = Background(self, max_threads=1)
        self._checks.run(serving_problem, self._checked,
                         lambda e: _log.warning("could not check for a GPU: %s", e))
        server.state_changed.connect(self._on_state)
        server.progress.connect(self._on_progress)
        server.failed.connect(self._on_failed)
        action.triggered.connect(self.toggle)
        self.update()

    def toggle(self) -> None:
        """Start the local vLLM, or stop the one started here."""
        if self.server.state in ("stopped", "failed"):
            self.server.start()
        else:
            self.server.stop()

    def update(self) -> None:
        """The entry's text, visibility and enabled state for the server's state and the
        settings' endpoint (call after the settings change)."""
        action, server = self.action, self.server
        state = server.state
        # A server started here stays stoppable even after the endpoint moved elsewhere.
        ours = server.owned and state not in ("stopped", "failed")
        action.setVisible(ServerControl.available(self._settings()) or ours)
        text = _TEXTS[state]
        if state == "ready" and not server.owned:
            text = _ELSEWHERE_TEXT
        why = self.cannot_serve if state in ("stopped", "failed") else None
        action.setText(NO_GPU_TEXT if why is not None else text)
        tip = (view(why).text() if why is not None else _ELSEWHERE_TIP if text == _ELSEWHERE_TEXT
               else "")
        action.setToolTip(wrapped_tooltip(tip) if tip else "")
        action.setEnabled(why is None and state != "stopping"
                          and (state != "ready" or server.owned))

    def _checked(self, problem: Problem | None) -> None:
        if problem is not None:
            _log.info("no model server can start here: %s", problem.message)
        self.cannot_serve = problem
        self.update()

    def _on_state(self, state: str) -> None:
        self.update()
        if state == "ready":
            self._poll_now()  # Start becomes possible now, not at the next poll
        if not self._busy() and state in ("starting", "stopping"):
            self._tray.set_state(TrayState.OFFLINE, f"holodesk: model server {state}")

    def _on_progress(self, text: str) -> None:
        if self.server.state == "starting":
            self._task_window.set_model_status(f"Model server starting: {text}", "loading")
        if not self._busy():
            self._tray.set_state(self._tray.state, f"holodesk: {text}")

    def _on_failed(self, error: ServeError) -> None:
        self.update()
        self._tell(failure_text(error, self.server.log_path))


def failure_text(error: ServeError, log_path: Path | None) -> str:
    """The failure as the person is told it: the message, the fix in the GUI's terms, and the
    log (its last lines when the error has them)."""
    fix = view(error).fix
    if error.log_tail:
        fix += f"\nLast lines of the log ({log_path}):\n" + "\n".join(error.log_tail[-8:])
    # The fix may already quote the log's last lines under its path.
    where = (f" (its log: {log_path})"
             if log_path is not None and str(log_path) not in fix else "")
    message = view(error).message
    return f"Model server: {message.rstrip('.')}. {fix}{where}".strip()
