"""The tray app: wires the windows to the run controller, the server probe and the stop paths."""

from __future__ import annotations

import logging
import sys
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QApplication, QWidget

from app.events import (
    AwaitingConfirmation,
    ConfirmReply,
    Event,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StepDecided,
    StepFailed,
)
from app.logs import setup_logging
from app.pause import PauseGate
from app.secrets import api_key
from app.session import Session
from app.settings import Settings, SettingsError, load_settings
from app.status import ServerStatus, StatusPoller
from control.hotkeys import HotkeyListener
from control.stop import StopLatch
from ui.bridge import RunController, SessionFactory, real_session
from ui.confirm_panel import ConfirmPanel
from ui.crash import CrashReporter, show_error
from ui.instance import InstanceServer
from ui.log_window import LogWindow
from ui.overlay import TargetOverlay, WindowRects, exclude_from_capture
from ui.settings_dialog import SettingsDialog
from ui.stop_button import FloatingStopButton
from ui.task_window import TaskWindow
from ui.tray import Tray, TrayActions, TrayState
from ui.workers import Background

log = logging.getLogger(__name__)


class HolodeskApp(QObject):
    """Everything the person sees, wired to one :class:`RunController`.

    ``status_changed`` re-emits the server probe's results on the GUI thread.
    """

    status_changed = Signal(object)

    def __init__(
        self,
        settings: Settings,
        *,
        session_factory: SessionFactory | None = None,
        use_system_tray: bool | None = None,
        probe: bool = True,
    ) -> None:
        super().__init__()
        self.settings = settings
        # Our own windows never reach the model: excluded by the platform where it can
        # (Windows, macOS), painted out of the frame where it cannot (X11).
        self.window_rects = WindowRects(self)
        if session_factory is None:
            rects = self.window_rects.rects

            def session_factory(s: Settings, task: str, latch: StopLatch,
                                gate: PauseGate) -> Session:
                return real_session(s, task, latch, gate, exclude=rects)

        self.controller = RunController(session_factory, self)
        self.actions = TrayActions(self)
        self.tray = Tray(self.actions, use_system_tray=use_system_tray, parent=self)
        # The task window preselects the configured mode and monitor: it passes them as
        # overrides, so its own defaults would silently replace the settings.
        self.task_window = TaskWindow(confirm=str(settings.confirm), monitor=settings.monitor)
        self.confirm_panel = ConfirmPanel()
        self.overlay = TargetOverlay()
        self.stop_button = FloatingStopButton()
        self._stop_button_placed = False
        self.log_window: LogWindow | None = None
        for window in (self.task_window, self.confirm_panel, self.overlay, self.stop_button,
                       self.tray.window):
            self._keep_out_of_capture(window)
        self.status: ServerStatus | None = None
        self._errors: list[str] = []  # every message shown to the person, newest last

        c = self.controller
        c.run_event.connect(self._on_event)
        c.running_changed.connect(self._on_running)
        c.failed.connect(self._on_failed)
        self.task_window.start_requested.connect(self.start_task)
        self.task_window.stop_requested.connect(lambda: c.stop("task window"))
        self.task_window.pause_requested.connect(c.pause)
        self.task_window.resume_requested.connect(c.resume)
        self.stop_button.stop_clicked.connect(lambda: c.stop("stop button"))
        self.confirm_panel.answered.connect(self._on_answered)
        a = self.actions
        a.new_task.triggered.connect(self.show_task_window)
        a.action_log.triggered.connect(self.show_log)
        a.settings.triggered.connect(self.show_settings)
        a.stop.triggered.connect(lambda: c.stop("tray"))
        a.quit.triggered.connect(self.quit)
        self.tray.activated.connect(self.show_task_window)

        # Old runs go at start, off the GUI thread: a large log takes a while to prune.
        self._background = Background(self)
        self._background.run(lambda: _prune(settings.retention_days),
                             lambda removed: log.info("pruned %d old run(s)", len(removed)))

        self.status_changed.connect(self._on_status)
        self._poller: StatusPoller | None = None
        self._poller_started = False
        if probe:
            self._poller = StatusPoller(settings.endpoint, None, settings.model,
                                        self.status_changed.emit)
            self._retarget_probe()

    # -- what the person starts ----------------------------------------------------------

    def start_task(self, task: str, confirm: str = "", monitor: str = "") -> bool:
        """Start a run; False (and the reason shown) when it cannot start now."""
        if self.controller.running:
            self.report_error("A run is already active: stop it before starting another.")
            return False
        if self.status is not None and self.status.state != "ok":
            self.report_error(
                f"The model server is not ready: {self.status.message} {self.status.fix}"
            )
            return False
        overrides: dict[str, object] = {}
        if confirm:
            overrides["confirm"] = confirm
        if monitor:
            overrides["monitor"] = monitor
        try:
            settings = self.settings.with_overrides(overrides) if overrides else self.settings
        except SettingsError as e:
            self.report_error(str(e))
            return False
        return self.controller.start(task, settings)

    def show_task_window(self) -> None:
        self.task_window.show()
        self.task_window.raise_()
        self.task_window.activateWindow()

    def _keep_out_of_capture(self, window: QWidget | None) -> None:
        if window is None:
            return
        if not exclude_from_capture(window):
            self.window_rects.track(window)

    def show_log(self) -> None:
        if self.log_window is None:
            self.log_window = LogWindow()
            self._keep_out_of_capture(self.log_window)
            self.controller.run_event.connect(self.log_window.on_event)
        self.log_window.show()
        self.log_window.raise_()

    def show_settings(self) -> None:
        dialog = SettingsDialog()
        if dialog.exec():
            self.settings = dialog.settings
            self.task_window.set_defaults(str(self.settings.confirm), self.settings.monitor)
            self._retarget_probe()

    def _retarget_probe(self) -> None:
        """Point the server probe at the settings' endpoint, with its key from the keyring.

        The keyring may block (a Secret Service asking to be unlocked): never on this thread.
        """
        endpoint, model = self.settings.endpoint, self.settings.model

        def configure(key: str | None) -> None:
            if self._poller is None:
                return
            self._poller.configure(endpoint, key, model)
            if not self._poller_started:
                self._poller_started = True
                self._poller.start()

        self._background.run(lambda: api_key(endpoint), configure)

    def quit(self) -> None:
        self.close()
        app = QApplication.instance()
        if app is not None:
            app.quit()

    def close(self) -> None:
        """Stop the run and the probe and delete the windows, children before the app.

        Widgets left for the interpreter's exit to collect are destroyed in no fixed order,
        after parts of Qt are gone; deleting them here keeps shutdown clean.
        """
        self.controller.stop("quit", "holodesk is quitting")
        self.controller.wait(5.0)
        if self._poller is not None:
            self._poller.stop()
        if self.log_window is not None:
            self.log_window.shutdown()
        windows: list[QWidget | None] = [
            self.task_window, self.confirm_panel, self.overlay, self.stop_button,
            self.log_window, self.tray.window,
        ]
        for window in windows:
            if window is not None:
                window.close()
                window.deleteLater()
        if self.tray.icon is not None:
            self.tray.icon.hide()
        self.tray.menu.deleteLater()

    def report_error(self, text: str) -> None:
        """Tell the person: a notification where the desktop has them, else a dialog."""
        log.warning("%s", text)
        self._errors.append(text)
        if not self.tray.notify("holodesk", text, error=True):
            self.task_window.show_error(text)
            self.show_task_window()

    # -- what the run says ---------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        self.task_window.on_event(event)
        if isinstance(event, RunStarted):
            self.tray.set_state(TrayState.WORKING, f"holodesk: working on {event.task!r}")
        elif isinstance(event, AwaitingConfirmation):
            request = event.request
            self.tray.set_state(TrayState.WAITING, "holodesk: waiting for your approval")
            self.confirm_panel.show_request(request)
            self.confirm_panel.show()
            self.confirm_panel.raise_()
            self.confirm_panel.activateWindow()
            self.overlay.show_points(list(request.points))
        elif isinstance(event, StepDecided):
            self._clear_confirmation()
            self.tray.set_state(TrayState.WORKING, "holodesk: working")
        elif isinstance(event, RunPaused):
            self.task_window.set_paused(True, event.reason)
            self.tray.set_state(TrayState.WAITING, f"holodesk: paused ({event.reason})")
            self.show_task_window()
        elif isinstance(event, RunResumed):
            self.task_window.set_paused(False)
            self.tray.set_state(TrayState.WORKING, "holodesk: working")
        elif isinstance(event, StepFailed):
            self.report_error(f"{event.error} {event.fix}".strip())
        elif isinstance(event, RunFinished):
            self._clear_confirmation()
            stopped = event.outcome.value == "stopped"
            self.tray.set_state(
                TrayState.STOPPED if stopped else TrayState.IDLE,
                f"holodesk: {event.outcome.value}: {event.reason}",
            )

    def _on_failed(self, text: str) -> None:
        self.task_window.set_running(False)
        self.report_error(text)

    def _on_answered(self, reply: ConfirmReply) -> None:
        self.controller.answer(reply)
        self._clear_confirmation()

    def _clear_confirmation(self) -> None:
        self.confirm_panel.clear()
        self.confirm_panel.hide()
        self.overlay.clear()

    def _on_running(self, running: bool) -> None:
        self.actions.stop.setEnabled(running)
        if running:
            if not self._stop_button_placed:
                # Out of the way at the top right (left unplaced, it covers the task box
                # wherever no window manager places it), once its hint has set its width;
                # only the first time, so a person's drag stays.
                self.stop_button.place_default()
                self._stop_button_placed = True
            self.stop_button.show()
        else:
            self.stop_button.hide()
            self._clear_confirmation()

    def _on_status(self, status: ServerStatus) -> None:
        self.status = status
        ok = status.state == "ok"
        dot = {"ok": "online", "loading": "loading", "down": "offline"}.get(status.state, "error")
        self.task_window.set_model_status(status.message, dot)
        self.task_window.set_can_start(ok, "" if ok else f"{status.message} {status.fix}")
        if not self.controller.running:
            if ok:
                self.tray.set_state(TrayState.IDLE, f"holodesk: ready ({status.message})")
            else:
                self.tray.set_state(TrayState.OFFLINE, f"holodesk: {status.message}")

    # -- other launches --------------------------------------------------------------------

    def handle_message(self, message: dict[str, Any]) -> dict[str, Any]:
        """Answer a later launch or ``holodesk trigger``."""
        cmd = message.get("cmd")
        if cmd in ("show", "ping"):
            if cmd == "show":
                self.show_task_window()
            return {"ok": True}
        if cmd == "stop":
            self.controller.stop("trigger", "holodesk trigger stop")
            return {"ok": True}
        if cmd == "run":
            task = str(message.get("task", "")).strip()
            if not task:
                return {"ok": False, "error": "no task given"}
            if self.controller.running:
                return {"ok": False, "error": "a run is already active"}
            started = self.start_task(task)
            return {"ok": started} if started else {"ok": False, "error": self._errors[-1]}
        return {"ok": False, "error": f"unknown command {cmd!r}"}


def _prune(retention_days: int) -> list[str]:
    from app.store import ActionLog

    with ActionLog.open() as store:
        return store.prune(retention_days)


def run_gui() -> int:
    """Start the tray app (or bring the running one forward) and run the event loop."""
    setup_logging()
    QApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    qt = QApplication(sys.argv[:1])
    qt.setApplicationName("holodesk")
    qt.setQuitOnLastWindowClosed(False)  # closing a window leaves the tray running

    crash = CrashReporter()
    crash.crashed.connect(show_error)
    crash.install()

    try:
        settings = load_settings()
    except SettingsError as e:
        show_error(f"The settings cannot be read: {e}")
        return 2

    holder: list[HolodeskApp] = []
    server = InstanceServer(lambda m: holder[0].handle_message(m) if holder else {"ok": False})
    if not server.listen():
        from app.instance import send

        send({"cmd": "show"})
        print("holodesk is already running: its window was brought forward.", file=sys.stderr)
        return 0
    main = HolodeskApp(settings)
    holder.append(main)
    hotkeys = _listen_for_stop_hotkey(main)
    QTimer.singleShot(0, main.show_task_window)
    code = qt.exec()
    if hotkeys is not None:
        hotkeys.stop()
    server.close()
    return int(code)


def _listen_for_stop_hotkey(main: HolodeskApp) -> HotkeyListener | None:
    """The global emergency stop; works whatever window has the focus, confirmation included."""
    from control.hotkeys import ListenerError, PynputHotkeys, parse_combo

    combo = main.settings.stop_hotkey
    hotkeys = PynputHotkeys()
    hotkeys.register(combo, lambda: main.controller.stop("hotkey", combo))
    try:
        hotkeys.start()
    except ListenerError as e:
        main.report_error(f"The emergency stop hotkey is not available: {e}. Use the Stop "
                          "button, the tray menu or the screen corner.")
        return None
    main.stop_button.set_hint(f"or press {parse_combo(combo).label()}")
    return hotkeys
