"""The tray app: wires the windows to the run controller, the server probe and the stop paths."""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QFileSystemWatcher, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QApplication, QWidget

from app import paths
from app.automations import (
    Automation,
    AutomationError,
    automations_path,
    find_automation,
    load_automations,
    stop_conflicts,
)
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
from app.runner import stop_signals
from app.secrets import api_key
from app.session import Session
from app.settings import Settings, SettingsError, load_settings
from app.status import ServerStatus, StatusPoller
from control.hotkeys import HotkeyListener, conflicts
from control.stop import StopLatch
from ui.automations_dialog import AutomationsDialog
from ui.bridge import RunController, SessionFactory, real_session
from ui.calibrate_flow import CalibrationFlow, CalibrationReportDialog
from ui.confirm_panel import ConfirmPanel
from ui.crash import CrashReporter, show_error
from ui.doctor_window import DoctorWindow
from ui.instance import InstanceServer
from ui.log_window import LogWindow
from ui.overlay import TargetOverlay, WindowRects, exclude_from_capture
from ui.problem_view import view
from ui.server_control import ServerControl, ServerState
from ui.settings_dialog import SettingsDialog
from ui.stop_button import FloatingStopButton
from ui.task_window import TaskWindow
from ui.tray import Tray, TrayActions, TrayState
from ui.workers import Background

log = logging.getLogger(__name__)


class HolodeskApp(QObject):
    """Everything the person sees, wired to one :class:`RunController`.

    ``status_changed`` re-emits the server probe's results on the GUI thread;
    ``automation_requested(name, source)`` carries a hotkey press from the listener's thread
    to the GUI thread.
    """

    status_changed = Signal(object)
    automation_requested = Signal(str, str)

    def __init__(
        self,
        settings: Settings,
        *,
        session_factory: SessionFactory | None = None,
        use_system_tray: bool | None = None,
        probe: bool = True,
        calibration: CalibrationFlow | None = None,
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
        self.doctor_window: DoctorWindow | None = None
        self.calibration = calibration or CalibrationFlow()
        self.calibration.setParent(self)
        self.calibration.finished.connect(self._on_calibrated)
        self.calibration.failed.connect(self._on_calibration_failed)
        self.calibration_dialog: CalibrationReportDialog | None = None
        self._hidden_for_calibration: list[QWidget] = []
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
        self.task_window.automations_requested.connect(self.show_automations)
        self.stop_button.stop_clicked.connect(lambda: c.stop("stop button"))
        self.confirm_panel.answered.connect(self._on_answered)
        a = self.actions
        a.new_task.triggered.connect(self.show_task_window)
        a.action_log.triggered.connect(self.show_log)
        a.settings.triggered.connect(self.show_settings)
        a.check.triggered.connect(self.show_doctor)
        a.calibrate.triggered.connect(self.calibrate)
        a.stop.triggered.connect(lambda: c.stop("tray"))
        a.quit.triggered.connect(self.quit)
        a.automations.triggered.connect(self.show_automations)
        self.tray.activated.connect(self.show_task_window)
        self.tray.automation_chosen.connect(lambda name: self.run_automation(name, "tray"))

        # The local model server, started and stopped from the tray (holodesk serve's parts).
        self.server = ServerControl(lambda: self.settings, self)
        self.server.state_changed.connect(self._on_server_state)
        self.server.progress.connect(self._on_server_progress)
        self.server.failed.connect(self._on_server_failed)
        a.server.triggered.connect(self.toggle_server)
        self._update_server_action()

        # Automations: read now (a small file), again whenever the file changes (the CLI, the
        # Automations window or an editor wrote it); their hotkeys go on the stop hotkey's
        # listener once run_gui hands it over (set_hotkey_listener).
        self.automations: list[Automation] = []
        self.automations_dialog: AutomationsDialog | None = None
        self._automations_path = automations_path()
        self._automations_error = ""
        self._hotkeys: HotkeyListener | None = None
        self._stop_combo = ""
        self._registered: list[str] = []  # automation hotkeys on the listener now
        self._told_conflicts: list[str] = []
        self.automation_requested.connect(self.run_automation,
                                          Qt.ConnectionType.QueuedConnection)
        self._reload_timer = QTimer(self)
        self._reload_timer.setSingleShot(True)
        self._reload_timer.setInterval(200)  # one reload for a burst of file events
        self._reload_timer.timeout.connect(self.reload_automations)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(lambda _p: self._reload_timer.start())
        self._watcher.fileChanged.connect(lambda _p: self._reload_timer.start())
        self.reload_automations()

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
        if self.calibration.running:
            self.report_error("A calibration is running: let it finish or press Esc first.")
            return False
        if self.status is not None and self.status.state != "ok":
            self.report_error(
                f"The model server is not ready: {view(self.status.problem).line()}"
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

    def run_automation(self, name: str, source: str = "tray") -> bool:
        """Run the saved automation ``name`` (from the tray, a hotkey, a trigger); False, and
        the reason told, when it cannot start now: never a second run next to an active one."""
        try:
            automation = find_automation(self.automations, name)
        except AutomationError as e:
            self.report_error(str(e))
            return False
        if self.controller.running:
            self._tell_busy(f"A run is already active: the automation “{automation.name}” "
                            f"({source}) was not started. Stop the run first.")
            return False
        log.info("running automation %r (%s)", automation.name, source)
        return self.start_task(automation.task, str(automation.confirm), automation.monitor)

    def test_run_automation(self, automation: Automation) -> bool:
        """Run ``automation`` now with every step confirmed (the Automations window's Test run)."""
        if self.controller.running:
            self._tell_busy(f"A run is already active: the test run of “{automation.name}” "
                            "was not started. Stop the run first.")
            return False
        return self.start_task(automation.task, "always", automation.monitor)

    def _tell_busy(self, text: str) -> None:
        """Tell the person a request was refused because a run is active, without disturbing
        that run: no window is raised over a confirmation, and none takes the focus from it
        (an Enter meant for the confirmation must reach it)."""
        log.warning("%s", text)
        self._errors.append(text)
        if self.tray.notify("holodesk", text):
            return
        self.task_window.show_error(text)
        if self.controller.pending is None and not self.task_window.isVisible():
            self.show_task_window()

    def reload_automations(self) -> None:
        """Read the automations file again; on a change update the tray and the hotkeys.

        A file that cannot be read is reported once and the automations known so far stay in
        use (a half-finished hand edit must not silently drop the person's hotkeys).
        """
        self._watch_automations()
        try:
            items = load_automations(self._automations_path)
        except AutomationError as e:
            if str(e) != self._automations_error:
                self._automations_error = str(e)
                self.report_error(f"The automations cannot be read: {e}")
            return
        self._automations_error = ""
        if items != self.automations:
            self.set_automations(items)

    def set_automations(self, items: list[Automation]) -> None:
        """Use ``items`` (already saved): the tray menu, the hotkeys, the open window."""
        self.automations = list(items)
        self.tray.set_automations([(a.name, a.hotkey_label()) for a in self.automations])
        self._register_hotkeys()
        if self.automations_dialog is not None and not self.automations_dialog.isHidden():
            self.automations_dialog.reload()

    def _watch_automations(self) -> None:
        # The file is replaced by a rename on every save, which ends a watch on the file
        # itself: the folder is watched too (it sees the rename).
        folder = self._automations_path.parent
        try:
            paths.ensure_private_dir(folder)
        except OSError as e:
            log.warning("cannot watch %s: %s", folder, e)
            return
        wanted = [str(folder)]
        if self._automations_path.exists():
            wanted.append(str(self._automations_path))
        watched = self._watcher.files() + self._watcher.directories()
        missing = [p for p in wanted if p not in watched]
        if missing:
            self._watcher.addPaths(missing)

    def set_hotkey_listener(self, listener: HotkeyListener, stop_combo: str) -> None:
        """Register the automations' hotkeys on ``listener`` (started, with ``stop_combo``, the
        emergency stop, on it), and again whenever the automations change."""
        self._hotkeys = listener
        self._stop_combo = stop_combo
        self._register_hotkeys()

    def apply_stop_hotkey(self, combo: str) -> bool:
        """Make ``combo`` the emergency stop hotkey now (after a change in Settings).

        The new one is listened for before the old one is dropped, so there is never a moment
        without a stop hotkey; automations whose hotkeys now clash with it are left out and
        the person is told. False (the old hotkey kept) when the new one cannot be used.
        """
        from control.hotkeys import parse_combo

        listener, old = self._hotkeys, self._stop_combo
        if listener is None or not old or parse_combo(combo) == parse_combo(old):
            return listener is not None
        for automation_combo in self._registered:  # re-registered below against the new stop
            listener.unregister(automation_combo)
        self._registered = []
        try:
            listener.register(combo, self._stop_callback(combo))
        except Exception as e:
            with contextlib.suppress(Exception):  # a half-registered combo must not linger
                listener.unregister(combo)
            self.report_error(f"The stop hotkey {combo} cannot be used ({e}); {old} still "
                              "stops a run.")
            self._register_hotkeys()
            return False
        listener.unregister(old)
        self._stop_combo = combo
        self.stop_button.set_hint(f"or press {parse_combo(combo).label()}")
        if self.automations_dialog is not None:
            self.automations_dialog.stop_hotkey = combo
        log.info("the stop hotkey is now %s", combo)
        self._register_hotkeys()
        return True

    def _stop_callback(self, combo: str) -> Callable[[], None]:
        def stop() -> None:  # on the listener's thread; both stops only pull a latch
            self.controller.stop("hotkey", combo)
            # Also a calibration's way out when its full-screen window lost the focus Esc
            # needs (the tray is under that window).
            self.calibration.stop(f"stopped with {combo}")

        return stop

    @property
    def registered_hotkeys(self) -> list[str]:
        """The automation hotkeys listened for now."""
        return list(self._registered)

    def _register_hotkeys(self) -> None:
        listener = self._hotkeys
        if listener is None:
            return
        for combo in self._registered:
            listener.unregister(combo)
        self._registered = []
        stop = self._stop_combo
        problems = stop_conflicts(self.automations, stop) if stop else []
        if problems != self._told_conflicts:
            self._told_conflicts = problems
            for problem in problems:
                # The stop hotkey always wins: the automation's hotkey is left out.
                self.report_error(f"{problem[:1].upper()}{problem[1:]}. Until then it runs "
                                  "only from the tray menu.")
        for automation in self.automations:
            hotkey = automation.hotkey
            if not hotkey or (stop and conflicts(hotkey, stop)):
                continue
            try:
                listener.register(hotkey, self._hotkey_callback(automation.name))
            except Exception as e:  # one bad hotkey must not cost the others
                self.report_error(f"The hotkey {hotkey} of “{automation.name}” cannot be used: "
                                  f"{e}")
                continue
            self._registered.append(hotkey)
        log.info("automation hotkeys: %s", ", ".join(self._registered) or "none")

    def _hotkey_callback(self, name: str) -> Callable[[], None]:
        def fire() -> None:  # on the listener's thread: only hand the press over
            self.automation_requested.emit(name, "hotkey")

        return fire

    def show_automations(self) -> None:
        """Open the Automations window (list, add, edit, delete, test-run)."""
        if self.automations_dialog is None:
            dialog = AutomationsDialog(
                path=self._automations_path,
                stop_hotkey=self._stop_combo or self.settings.stop_hotkey,
                confirm=str(self.settings.confirm),
                monitor=self.settings.monitor,
            )
            dialog.saved.connect(self.set_automations)
            dialog.test_run_requested.connect(self.test_run_automation)
            self._keep_out_of_capture(dialog)
            self.automations_dialog = dialog
        else:
            self.automations_dialog.reload()
        self.automations_dialog.show()
        self.automations_dialog.raise_()
        self.automations_dialog.activateWindow()

    def toggle_server(self) -> None:
        """The tray's server entry: start the local vLLM, or stop the one started here."""
        if self.server.state in ("stopped", "failed"):
            self.server.start()
        else:
            self.server.stop()

    def _update_server_action(self) -> None:
        action = self.actions.server
        state = self.server.state
        # A server started here stays stoppable even after the endpoint moved elsewhere.
        ours = self.server.owned and state not in ("stopped", "failed")
        action.setVisible(ServerControl.available(self.settings) or ours)
        texts: dict[ServerState, str] = {
            "stopped": "Start model server",
            "failed": "Start model server",
            "starting": "Stop model server (starting…)",
            "ready": "Stop model server",
            "stopping": "Stopping model server…",
        }
        text = texts[state]
        if state == "ready" and not self.server.owned:
            text = "Model server running (started elsewhere)"
        action.setText(text)
        action.setEnabled(state != "stopping" and (state != "ready" or self.server.owned))

    def _on_server_state(self, state: str) -> None:
        self._update_server_action()
        if state == "ready" and self._poller is not None:
            self._poller.poll_now()  # Start becomes possible now, not at the next poll
        if not self.controller.running and state in ("starting", "stopping"):
            self.tray.set_state(TrayState.OFFLINE, f"holodesk: model server {state}")

    def _on_server_progress(self, text: str) -> None:
        if self.server.state == "starting":
            self.task_window.set_model_status(f"Model server starting: {text}", "loading")
        if not self.controller.running:
            self.tray.set_state(self.tray.state, f"holodesk: {text}")

    def _on_server_failed(self, message: str, fix: str) -> None:
        self._update_server_action()
        log_path = self.server.log_path
        # The fix may already quote the log's last lines under its path.
        where = (f" (its log: {log_path})"
                 if log_path is not None and str(log_path) not in fix else "")
        self.report_error(f"Model server: {message.rstrip('.')}. {fix}{where}".strip())

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

    def show_doctor(self) -> None:
        """Open the set-up checks (`holodesk doctor`) and run them afresh."""
        if self.doctor_window is None:
            self.doctor_window = DoctorWindow(lambda: self.settings)
            self._keep_out_of_capture(self.doctor_window)
        self.doctor_window.show_and_run()

    def calibrate(self) -> bool:
        """Find the model's coordinate convention on the configured monitor (as `holodesk
        calibrate`); the report opens when done. False when it cannot start now."""
        if self.controller.running:
            self._tell_busy("A run is active: stop it before calibrating.")
            return False
        if not self.calibration.start(self.settings):
            return False
        # Our windows out of the way: the targets must be the only thing on the screen.
        windows: list[QWidget | None] = [self.task_window, self.tray.window, self.log_window,
                                         self.automations_dialog, self.doctor_window,
                                         self.calibration_dialog]
        self._hidden_for_calibration = [w for w in windows if w is not None and w.isVisible()]
        for window in self._hidden_for_calibration:
            window.hide()
        return True

    def _restore_after_calibration(self) -> None:
        for window in self._hidden_for_calibration:
            window.show()
        self._hidden_for_calibration = []

    def _on_calibrated(self, report: Any) -> None:
        self._restore_after_calibration()
        if self.calibration_dialog is not None:
            self.calibration_dialog.close()
            self.calibration_dialog.deleteLater()
        dialog = CalibrationReportDialog(report, self.settings.convention)
        dialog.use_convention.connect(self._save_convention)
        self._keep_out_of_capture(dialog)
        self.calibration_dialog = dialog
        dialog.show()
        dialog.raise_()

    def _on_calibration_failed(self, text: str) -> None:
        self._restore_after_calibration()
        self.report_error(text)

    def _save_convention(self, value: str) -> None:
        from app.settings import set_value

        def save() -> Settings:
            set_value("convention", value)
            return load_settings()

        def saved(settings: Settings) -> None:
            self.settings = settings
            log.info("convention set to %s by calibration", value)

        self._background.run(save, saved,
                             lambda e: self.report_error(f"The convention was not saved: {e}"))

    def show_settings(self) -> None:
        dialog = SettingsDialog()
        if dialog.exec():
            self.settings = dialog.settings
            self.task_window.set_defaults(str(self.settings.confirm), self.settings.monitor)
            self._retarget_probe()
            self._update_server_action()  # the endpoint may have moved to or off this machine
            self.apply_stop_hotkey(self.settings.stop_hotkey)

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
        self.calibration.close()
        if self._poller is not None:
            self._poller.stop()
        self.server.shutdown()  # never leave a vLLM behind (bounded wait)
        if self.log_window is not None:
            self.log_window.shutdown()
        self._reload_timer.stop()
        if self._hotkeys is not None:
            for combo in self._registered:
                self._hotkeys.unregister(combo)
            self._registered = []
        windows: list[QWidget | None] = [
            self.task_window, self.confirm_panel, self.overlay, self.stop_button,
            self.log_window, self.automations_dialog, self.doctor_window,
            self.calibration_dialog, self.tray.window,
        ]
        for window in windows:
            if window is not None:
                window.close()
                window.deleteLater()
        if self.tray.icon is not None:
            self.tray.icon.hide()
        self.tray.menu.deleteLater()
        self.tray.run_menu.deleteLater()

    def report_error(self, text: str) -> None:
        """Tell the person: a notification where the desktop has them, else a dialog."""
        log.warning("%s", text)
        self._errors.append(text)
        if not self.tray.notify("holodesk", text, error=True):
            self.task_window.show_error(text)
            if self.calibration.running:
                # Not over the targets (it would also take the focus Escape needs): the
                # task window comes back, with the message, when the calibration ends.
                if self.task_window not in self._hidden_for_calibration:
                    self._hidden_for_calibration.append(self.task_window)
                return
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
            self.report_error(view(event.problem).line())
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
        self.task_window.set_can_start(ok, "" if ok else view(status.problem).line())
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
            self.calibration.stop("holodesk trigger stop")
            return {"ok": True}
        if cmd == "run":
            task = str(message.get("task", "")).strip()
            if not task:
                return {"ok": False, "error": "no task given"}
            if self.controller.running:
                return {"ok": False, "error": "a run is already active"}
            started = self.start_task(task)
            return {"ok": started} if started else {"ok": False, "error": self._errors[-1]}
        if cmd == "automation":
            return self._trigger_automation(str(message.get("name", "")))
        return {"ok": False, "error": f"unknown command {cmd!r}"}

    def _trigger_automation(self, name: str) -> dict[str, Any]:
        self.reload_automations()  # a change saved just before the trigger counts
        try:
            automation = find_automation(self.automations, name)
        except AutomationError as e:
            return {"ok": False, "error": str(e)}
        if self.controller.running:
            self.run_automation(automation.name, "trigger")  # tells the person too
            return {"ok": False, "busy": True,
                    "error": f"a run is already active: {automation.name!r} was not started"}
        if self.run_automation(automation.name, "trigger"):
            return {"ok": True}
        return {"ok": False, "error": self._errors[-1] if self._errors else "not started"}


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
    if hotkeys is not None:
        main.set_hotkey_listener(hotkeys, main.settings.stop_hotkey)
    elif any(a.hotkey for a in main.automations):
        main.report_error("The automations' hotkeys are not available either; run them from "
                          "the tray menu or with `holodesk trigger NAME`.")
    QTimer.singleShot(0, main.show_task_window)
    with quit_on_stop_signals(main):
        code = qt.exec()
    if hotkeys is not None:
        hotkeys.stop()
    server.close()
    return int(code)


@contextlib.contextmanager
def quit_on_stop_signals(main: HolodeskApp) -> Iterator[bool]:
    """While inside, SIGINT (Ctrl+C in the terminal that started it) and SIGTERM stop the run
    at once and quit cleanly (the server stopped, the windows closed), as the tray's Quit does.

    Installed once for the app's life, from the main thread (runs happen on a worker, where
    Python cannot install handlers). Python runs a handler only between its own bytecodes, so
    a timer wakes the interpreter while Qt's loop waits.
    """
    quitting: list[signal.Signals] = []

    def stop_and_quit(sig: signal.Signals) -> None:
        main.controller.stop("signal", sig.name)  # the run's stop names the signal
        main.calibration.stop(f"{sig.name} received")
        main.quit()

    def on_signal(sig: signal.Signals) -> None:
        # Handed to the event loop: the handler interrupts whatever the main thread was doing,
        # which may hold a lock the stop takes.
        if not quitting:  # a second signal must not close the windows twice
            quitting.append(sig)
            QTimer.singleShot(0, lambda: stop_and_quit(sig))

    wake = QTimer()
    wake.timeout.connect(lambda: None)
    # No KeyboardInterrupt on a second Ctrl+C: raised inside a Qt slot it ends nothing cleanly.
    with stop_signals(on_signal, second_interrupt_kills=False) as installed:
        wake.start(200)
        try:
            yield installed
        finally:
            wake.stop()


def _listen_for_stop_hotkey(main: HolodeskApp) -> HotkeyListener | None:
    """The global emergency stop; works whatever window has the focus, confirmation included."""
    from control.hotkeys import ListenerError, PynputHotkeys, parse_combo

    combo = main.settings.stop_hotkey
    hotkeys = PynputHotkeys()
    hotkeys.register(combo, main._stop_callback(combo))
    try:
        hotkeys.start()
    except ListenerError as e:
        main.report_error(f"The emergency stop hotkey is not available: {e}. Use the Stop "
                          "button, the tray menu or the screen corner.")
        return None
    main.stop_button.set_hint(f"or press {parse_combo(combo).label()}")
    return hotkeys
