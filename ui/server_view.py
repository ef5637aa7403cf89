"""The model server as the person sees it: the probe's words in the task window's status line
and the tray, the first-run guide, and a local server's start as it goes."""

from __future__ import annotations

from collections.abc import Callable

from app.secrets import api_key
from app.settings import Settings
from app.status import ServerStatus, StatusPoller
from model.serving.launcher import ServeError
from ui.problem_view import view
from ui.server_control import ServerControl
from ui.server_menu import failure_text
from ui.task_window import TaskWindow
from ui.telling import Teller
from ui.tray import Tray, TrayState
from ui.workers import Background


class ServerView:
    """Shows ``status()`` (the probe's last word, None before the first) in ``task_window``
    and ``tray``, and ``server``'s start; ``poller`` is the probe (None: not probed).

    ``running``: whether a run has the tray's state; ``demo_starting``: the demo's opening
    line has the status line meanwhile.
    """

    def __init__(self, server: ServerControl, poller: StatusPoller | None, *,
                 task_window: TaskWindow, tray: Tray, teller: Teller, background: Background,
                 settings: Callable[[], Settings], status: Callable[[], ServerStatus | None],
                 running: Callable[[], bool], demo_starting: Callable[[], bool]) -> None:
        self.server, self.poller = server, poller
        self._window, self._tray, self._teller = task_window, tray, teller
        self._background, self._settings, self._status = background, settings, status
        self._running, self._demo_starting = running, demo_starting
        self._poller_started = False
        server.state_changed.connect(self._on_state)
        server.progress.connect(self._on_progress)
        server.failed.connect(self._on_failed)

    def set_up(self) -> None:
        """Start a model server on this machine (the first-run guide's button): the tray's
        Start model server, its checks first; the guide shows how it goes."""
        if self.server.state in ("stopped", "failed"):
            self._window.guide.set_setup("starting", "checking this machine")
            self.server.start()

    def show_status(self) -> None:
        """The probe's last word: the status line, whether a task can start, the guide."""
        status = self._status()
        if self._demo_starting():
            return
        if status is None:  # not probed yet: no stale demo line left standing
            self._window.set_model_status("checking…", "checking")
            return
        ok = status.state == "ok"
        self._show_probe(status)
        self._window.set_can_start(ok, "" if ok else view(status.problem).line())
        # Whenever nothing answers, the guide says what holodesk needs and how to get it.
        self._window.show_guide(status.state == "down",
                                status.endpoint or self._settings().endpoint)
        if ok:
            self._teller.server_ready()

    def _show_probe(self, status: ServerStatus) -> None:
        """The probe's words in the status line and, while no run has it, the tray."""
        dot = {"ok": "online", "loading": "loading", "down": "offline"}.get(status.state, "error")
        self._window.set_model_status(status.message, dot)
        if not self._running():
            if status.ok:
                self._tray.set_state(TrayState.IDLE, f"holodesk: ready ({status.message})")
            else:
                self._tray.set_state(TrayState.OFFLINE, f"holodesk: {status.message}")

    def _on_state(self, state: str) -> None:
        self._window.guide.set_setup(state)
        status = self._status()
        if state == "stopped" and status is not None:
            # The start was called off or the server stopped: the status line says the
            # probe's words again, not the last progress of a start that is over.
            self._show_probe(status)
        elif state == "ready":
            self._teller.server_ready()

    def _on_progress(self, text: str) -> None:
        if self.server.state == "starting":
            self._window.guide.set_setup("starting", text)

    def _on_failed(self, error: ServeError) -> None:
        # The status line ends the start with its reason, at once; the probe's next change
        # replaces it.
        said = f"The model server did not start: {view(error).message.rstrip('.')}."
        self._window.set_model_status(said, "error")
        if not self._running():
            self._tray.set_state(TrayState.OFFLINE, f"holodesk: {said}")
        self._window.guide.set_setup("failed", failure_text(error, self.server.log_path))

    def retarget(self) -> None:
        """Point the probe at the settings' endpoint, with its key from the keyring.

        The keyring may block (a Secret Service asking to be unlocked): never on this thread.
        """
        settings = self._settings()
        endpoint, model = settings.endpoint, settings.model
        pin = settings.tls_fingerprint
        plain_http_ok = endpoint in settings.plain_http_ok

        def configure(key: str | None) -> None:
            if self.poller is None:
                return
            self.poller.configure(endpoint, key, model, pin, plain_http_ok)
            if not self._poller_started:
                self._poller_started = True
                self.poller.start()

        self._background.run(lambda: api_key(endpoint), configure)

    def poll_now(self) -> None:
        if self.poller is not None:
            self.poller.poll_now()

    def stop(self) -> None:
        if self.poller is not None:
            self.poller.stop()
