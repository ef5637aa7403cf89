"""Start and stop the local vLLM server from the GUI, never blocking the event loop.

The tray wires it up like this::

    control = ServerControl(lambda: app.settings, parent=app)
    start_action.setVisible(ServerControl.available(app.settings))
    start_action.triggered.connect(control.start)
    stop_action.triggered.connect(control.stop)
    control.state_changed.connect(tray.show_server_state)   # "stopped", "starting", ...
    control.progress.connect(tray.show_message)             # "loading weights: 40% ..."
    control.failed.connect(show_error)                      # a ServeError

The sequence is :mod:`app.serving`'s, the same as `holodesk serve` (its checks, its warnings,
the API-key warning for a server reachable beyond this machine); it runs on a one-thread
:class:`~ui.workers.Background`: its checks (``nvidia-smi``, the keyring) and the wait for
``/health`` block; their results come back on the GUI thread. A warning shows as progress.
A timer notices a server that dies after it was ready. The server is stopped
when the application quits (``aboutToQuit``); should holodesk crash or be killed instead, the
launcher's guard (:mod:`model.serving.guard`) stops vLLM, so holodesk never leaves one behind.

A :meth:`ServerControl.stop` while the start is still in its checks ends quietly in "stopped":
whatever the interrupted start then fails with is logged, not shown (the person asked to stop).

A failure is a :class:`~model.serving.launcher.ServeError` (a message, a structured fix, the
log's last lines), worded for a window where it is shown (ui/problem_view.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal, Slot

from app.serving import (
    DEFAULT_HOST,
    Verdict,
    check,
    create_server,
    plan_server,
    server_available,
    start_server,
)
from app.settings import Settings
from model.problem import Fix, Problem
from model.serving.launcher import SERVED_MODEL_NAME, ServeError, VLLMServer
from ui.workers import Background

__all__ = ["ServerControl", "ServerState"]

_log = logging.getLogger(__name__)

ServerState = Literal["stopped", "starting", "ready", "stopping", "failed"]

_Outcome = Literal["ready", "external", "cancelled"]


class ServerControl(QObject):
    """Owns one local vLLM server: :meth:`start` / :meth:`stop` slots, state as signals.

    ``settings`` is called on the GUI thread at each start, so a changed endpoint or serve_*
    setting applies to the next start. ``executable`` forces the ``vllm`` to run (tests);
    None finds it like ``holodesk serve`` does. ``host`` is the address to listen on.
    """

    state_changed = Signal(str)  # a ServerState
    progress = Signal(str)  # a line of plain words about the start ("loading weights: 40% ...")
    failed = Signal(object)  # a ServeError; the state is "failed"

    def __init__(
        self,
        settings: Callable[[], Settings],
        parent: QObject | None = None,
        *,
        executable: str | None = None,
        host: str = DEFAULT_HOST,
        watch_interval_ms: int = 1000,
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self._executable = executable
        self._host = host
        self._state: ServerState = "stopped"
        self._server: VLLMServer | None = None
        self._base_url: str | None = None
        self._owned = False
        self._cancel = threading.Event()
        self._tasks = Background(self, max_threads=1)  # start and stop run in order
        self._watch = QTimer(self)
        self._watch.setInterval(watch_interval_ms)
        self._watch.timeout.connect(self._check_alive)
        self._shut_down = False
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # ------------------------------------------------------------------ queries

    @staticmethod
    def available(settings: Settings) -> bool:
        """Whether the endpoint is this machine: only then offer Start/Stop server."""
        return server_available(settings)

    @property
    def state(self) -> ServerState:
        """The current state (as last emitted)."""
        return self._state

    @property
    def base_url(self) -> str | None:
        """The server's base URL once started (also for a server found already running)."""
        return self._base_url

    @property
    def owned(self) -> bool:
        """Whether holodesk started the server (False: it was running already; Stop leaves it)."""
        return self._owned

    @property
    def log_path(self) -> Path | None:
        """The server's log file, once started here."""
        server = self._server
        return server.log_path if server is not None else None

    @property
    def pid(self) -> int | None:
        """The server's process id, while one started here exists: the guard vLLM runs under
        (:attr:`model.serving.launcher.VLLMServer.pid`; SIGTERM to it stops vLLM cleanly)."""
        server = self._server
        return server.pid if server is not None else None

    # ------------------------------------------------------------------ slots

    @Slot()
    def start(self) -> None:
        """Start the server in the background (ignored while starting, ready or stopping)."""
        if self._shut_down or self._state in ("starting", "ready", "stopping"):
            return
        settings = self._settings()
        if not server_available(settings):
            self._fail(ServeError(
                f"the endpoint {settings.endpoint} is not this machine",
                Fix("start the server where it runs, or set the endpoint to "
                    "http://127.0.0.1:8000/v1", setting="endpoint"),
            ))
            return
        self._cancel.clear()
        self._server = None
        self._owned = False
        self._set_state("starting")
        self._tasks.run(lambda: self._start_job(settings), self._started, self._start_failed)

    @Slot()
    def stop(self) -> None:
        """Stop the server holodesk started (in the background); a no-op when there is none."""
        if self._state in ("stopped", "stopping", "failed") or self._shut_down:
            return
        if self._state == "ready" and not self._owned:
            self.progress.emit(
                "this server was not started by holodesk: stop it where it runs (Ctrl+C)"
            )
            return
        self._cancel.set()
        self._watch.stop()
        self._set_state("stopping")
        self._tasks.run(self._stop_job, lambda _code: self._stopped(), self._stop_failed)

    @Slot()
    def shutdown(self) -> None:
        """Stop the server and wait for it (blocking, at most about 25 s): for application quit."""
        if self._shut_down:
            return
        self._shut_down = True
        self._cancel.set()
        self._watch.stop()
        # The start job sees the cancel within half a second; a stop job already under way
        # is not waited for long: the stop below (or the guard, once we are gone) finishes it.
        self._tasks.close(5_000)
        server, self._server = self._server, None
        if server is not None and self._owned:
            # Shorter than a Stop from the tray: quitting must not hang for a minute. vLLM
            # normally ends within seconds of SIGINT; what is left dies with its guard.
            server.stop(int_timeout=10, term_timeout=5, kill_timeout=5)
        self._state = "stopped"

    # ------------------------------------------------------------------ worker side

    def _emit_progress(self, text: str) -> None:
        self._tasks.call_soon(lambda: self.progress.emit(text))

    def _start_job(self, settings: Settings) -> _Outcome:
        plan = plan_server(settings, host=self._host, executable=self._executable)
        cfg = plan.config
        self._base_url = cfg.base_url
        checks = check(plan, on_checking=lambda: self._emit_progress("checking vLLM and the GPU"))
        if checks.verdict is Verdict.SERVED_ALREADY:
            return "external"
        if checks.verdict is Verdict.OTHER_SERVER:
            raise ServeError(
                f"another server already answers at {cfg.base_url}",
                "stop it, or set serve_port to a free port (and the endpoint to match)",
            )
        for warning in checks.warnings:
            self._emit_progress(f"warning: {warning.message}")
        if checks.verdict is Verdict.BLOCKED:
            raise _blocked(checks.fatal)
        if self._cancel.is_set():
            return "cancelled"
        server = create_server(plan)
        self._server = server
        self._owned = True

        def started(server: VLLMServer) -> None:
            self._emit_progress(f"starting vLLM (log: {server.log_path})")

        ready = start_server(
            server, on_started=started, on_progress=lambda p: self._emit_progress(p.text),
            should_stop=self._cancel.is_set,
        )
        return "ready" if ready else "cancelled"

    def _stop_job(self) -> int | None:
        server = self._server
        if server is None or not self._owned:
            return None
        return server.stop()

    # ------------------------------------------------------------------ GUI side

    def _started(self, outcome: _Outcome) -> None:
        if outcome == "cancelled" or self._state != "starting":
            return
        if outcome == "external":
            self.progress.emit(f"vLLM is already running at {self._base_url}")
        else:
            self.progress.emit(f"ready at {self._base_url} (model {SERVED_MODEL_NAME})")
            self._watch.start()
        self._set_state("ready")

    def _start_failed(self, exc: BaseException) -> None:
        if self._state == "stopping" or self._cancel.is_set():
            # Stopped during the start: the stop job queued behind this start ends in
            # "stopped". No popup for a start the person called off.
            _log.info("the server start was stopped; it ended with: %s", exc)
            self._release()
            return
        if isinstance(exc, ServeError):
            self._release()
            self._fail(exc)
            return
        _log.error("starting the server failed", exc_info=exc)
        self._release()
        self._fail(ServeError(f"could not start the server: {exc}",
                              "see holodesk's log for details"))

    def _stopped(self) -> None:
        self._server = None
        self._set_state("stopped")

    def _stop_failed(self, exc: BaseException) -> None:
        _log.error("stopping the server failed", exc_info=exc)
        self._fail(ServeError(f"could not stop the server: {exc}",
                              "see holodesk's log; `nvidia-smi` lists it"))

    def _check_alive(self) -> None:
        server = self._server
        if server is None or self._state != "ready":
            self._watch.stop()
            return
        if server.returncode is None or server.stopping:
            return
        self._watch.stop()
        exc = server.failure()
        self._release()
        # Its log's last lines are not quoted here: the server had been ready a while.
        self._fail(ServeError(f"vLLM stopped: {exc.message}", exc.fix))

    def _release(self) -> None:
        """Make sure nothing of a failed server is left (its worker processes too)."""
        server = self._server
        if server is not None and self._owned:
            self._tasks.run(server.stop)

    def _fail(self, error: ServeError) -> None:
        self._set_state("failed")
        self.failed.emit(error)

    def _set_state(self, state: ServerState) -> None:
        if state != self._state:
            self._state = state
            self.state_changed.emit(state)


def _blocked(fatal: Sequence[Problem]) -> ServeError:
    """One error for everything in the way of starting; a single problem keeps its fix whole
    (its setting and remedy), several share their words."""
    if len(fatal) == 1:
        return ServeError(fatal[0].message, fatal[0].fix)
    fixes = [p.fix for p in fatal if p.fix is not None]
    return ServeError(
        "; ".join(p.message for p in fatal),
        Fix(" / ".join(f.text for f in fixes),
            setting=next((f.setting for f in fixes if f.setting), None),
            remedy=next((f.remedy for f in fixes if f.remedy), None)) if fixes else None,
    )
