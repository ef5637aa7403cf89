"""The tray app: wires the windows to the run controller, the server probe and the stop paths."""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QWidget

from app.automations import (
    Automation,
    AutomationError,
    automations_path,
    find_automation,
    load_automations,
    narrow_only_in,
)
from app.demo.run import Demo, DemoResult
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
from app.parameter_values import MissingValues, resolve, store_secret, stored_secrets
from app.parameters import Filled
from app.pause import PauseGate
from app.protected import Noticed, changed_message, changed_since_last_run
from app.report import collect_report
from app.run_request import AutomationMode, RunRequest, make_run_request
from app.runner import stop_signals
from app.safety_review import Review, review
from app.safety_review import apply as apply_changes
from app.safety_review import keep as keep_approved
from app.scheduler import Clock, Missed
from app.secrets import api_key, redact
from app.session import Session
from app.settings import RunValues, Settings, SettingsError, load_settings
from app.status import ServerStatus, StatusPoller
from app.trajectory import has_trajectory
from control.hotkeys import HotkeyListener
from control.policy import ConfirmMode
from control.stop import StopLatch
from control.tripwire import STOP_SOURCE as TRIPWIRE
from model.serving.launcher import ServeError
from ui.about_dialog import AboutDialog
from ui.app_icon import app_icon
from ui.automations_dialog import AutomationsDialog
from ui.automations_watcher import AutomationsWatcher
from ui.bridge import RunController, SessionFactory, real_session
from ui.calibrate_flow import CalibrationFlow, CalibrationReportDialog
from ui.calibration_control import CalibrationControl
from ui.confirm_panel import ConfirmPanel
from ui.crash import CrashReporter, show_error
from ui.doctor_window import DoctorWindow
from ui.hotkey_registry import HotkeyRegistry
from ui.instance import InstanceServer
from ui.log_window import LogWindow
from ui.overlay import TargetOverlay, WindowRects, exclude_from_capture
from ui.panel_place import move_clear_of
from ui.parameters_dialog import ParametersDialog
from ui.problem_view import fix_text, view
from ui.report_dialog import ReportDialog
from ui.safety_changes_dialog import SafetyChangesDialog
from ui.scheduler import ScheduleTimer
from ui.server_control import ServerControl
from ui.server_menu import ServerMenu, failure_text
from ui.settings_dialog import SettingsDialog
from ui.stop_button import FloatingStopButton
from ui.task_window import TaskWindow
from ui.tray import Tray, TrayActions, TrayCloseChoice, TrayState, ask_tray_close
from ui.window_menu import attach_window_menu
from ui.workers import Background

log = logging.getLogger(__name__)

#: After a start at login, how long "at login" automations wait for the model server to be
#: ready; past that they are reported as not run (a run an hour after login is a surprise).
LOGIN_WAIT_MS = 10 * 60 * 1000


class HolodeskApp(QObject):
    """Everything the person sees, wired to one :class:`RunController`.

    ``status_changed`` re-emits the server probe's results on the GUI thread. The parts it
    owns: ``hotkeys`` (the global hotkeys), ``server_menu`` (the tray's server entry over
    ``server``), ``calibration_control`` (Calibrate… over the flow ``calibration``).
    """

    status_changed = Signal(object)
    #: The settings read afresh as a run starts (on its worker): the app's own from then on.
    settings_read = Signal(object)
    #: Something to tell the person from another thread (a hotkey the grab thread gave up):
    #: delivered to :meth:`report_error` on the GUI thread.
    notice = Signal(str)
    #: A demo run ended (:meth:`start_demo`): its :class:`~app.demo.run.DemoResult`.
    demo_finished = Signal(object)

    def __init__(
        self,
        settings: Settings,
        *,
        session_factory: SessionFactory | None = None,
        use_system_tray: bool | None = None,
        probe: bool = True,
        calibration: CalibrationFlow | None = None,
        clock: Clock | None = None,
        schedule_state: Path | None = None,
        at_login: bool = False,
        load: Callable[[], Settings] | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        # How each run reads the settings afresh (load_settings: judged, app/approval.py), so
        # what the person changes with `config set` while the app runs applies to the next run;
        # None: ``settings`` as given, for every run.
        self._load = load
        self.settings_read.connect(self._use_read_settings)
        # holodesk's icon on every window and dialog, whoever made the QApplication (the
        # default of every window's icon is the application's).
        QApplication.setWindowIcon(app_icon())
        # Our own windows never reach the model: excluded by the platform where it can
        # (Windows, macOS), painted out of the frame where it cannot (X11).
        self.window_rects = WindowRects(self)
        if session_factory is None:
            rects = self.window_rects.rects

            def session_factory(request: RunRequest, latch: StopLatch,
                                gate: PauseGate) -> Session:
                return real_session(request, latch, gate, exclude=rects)

        self.controller = RunController(session_factory, self)
        self.actions = TrayActions(self)
        self.tray = Tray(self.actions, use_system_tray=use_system_tray, parent=self)
        # Without a tray, messages go to the desktop's notification service when it has one
        # (looked for with the other start-up probes); one that fails shows in the window.
        self.tray.undelivered.connect(lambda _title, text, _error: self._show_in_window(text))
        if probe and self.tray.icon is None:
            self.tray.probe_notifications()
        # The task window preselects the configured mode and monitor: it passes them as
        # overrides, so its own defaults would silently replace the settings.
        self.task_window = TaskWindow(confirm=str(settings.confirm), monitor=settings.monitor)
        # The tray's entries in the task window's menu: reachable where there is no tray.
        # Where the tray is a stand-in window, the menu can bring that window back.
        self.show_tray_action = QAction("Show the status window", self)
        self.show_tray_action.triggered.connect(self.show_tray_window)
        self.window_menu = attach_window_menu(
            self.task_window, self.actions, run_menu=self.tray.run_menu,
            extra=[self.show_tray_action] if self.tray.window is not None else [],
        )
        if self.tray.window is not None:
            self.tray.window.close_requested.connect(self._on_tray_window_close)
        #: Asks what closing the tray's stand-in means (a parameter for tests).
        self.ask_tray_close: Callable[[QWidget | None], TrayCloseChoice] = ask_tray_close
        self.about_dialog: AboutDialog | None = None
        self.confirm_panel = ConfirmPanel()
        self.overlay = TargetOverlay()
        self.stop_button = FloatingStopButton()
        self._stop_button_placed = False
        self.log_window: LogWindow | None = None
        self.doctor_window: DoctorWindow | None = None
        self.report_dialog: ReportDialog | None = None
        self.calibration = calibration or CalibrationFlow()
        self.calibration.setParent(self)
        self.calibration_control = CalibrationControl(
            self.calibration,
            settings=lambda: self.settings,
            windows=lambda: [self.task_window, self.tray.window, self.log_window,
                             self.automations_dialog, self.doctor_window,
                             self.parameters_dialog],
            keep_out_of_capture=self._keep_out_of_capture,
            tell=self.report_error,
            parent=self,
        )
        self.calibration_control.settings_saved.connect(self._use_settings)
        for window in (self.task_window, self.confirm_panel, self.overlay, self.stop_button,
                       self.tray.window):
            self._keep_out_of_capture(window)
        self.status: ServerStatus | None = None
        self._errors: list[str] = []  # every message shown to the person, newest last
        self.demo: Demo | None = None  # the demo being run, between start_demo and its end
        self._demo_starting = False
        self._closed = False
        # Messages about the model server's state: taken away once it is ready; about a run
        # being active: once it is over.
        self._server_errors: list[str] = []
        self._busy_errors: list[str] = []

        c = self.controller
        c.run_event.connect(self._on_event)
        c.running_changed.connect(self._on_running)
        c.failed.connect(self._on_failed)
        c.notice.connect(self.report_error)
        self.task_window.start_requested.connect(self.start_task)
        self.task_window.stop_requested.connect(lambda: c.stop("task window"))
        self.task_window.pause_requested.connect(c.pause)
        self.task_window.resume_requested.connect(c.resume)
        self.task_window.automations_requested.connect(self.show_automations)
        self.task_window.setup_requested.connect(self.set_up_server)
        self.task_window.connect_requested.connect(self.show_connect)
        self.task_window.demo_requested.connect(self.start_demo)
        self.stop_button.stop_clicked.connect(lambda: c.stop("stop button"))
        self.confirm_panel.answered.connect(self._on_answered)
        a = self.actions
        a.new_task.triggered.connect(self.show_task_window)
        a.demo.triggered.connect(self.start_demo)
        a.action_log.triggered.connect(self.show_log)
        a.settings.triggered.connect(self.show_settings)
        a.check.triggered.connect(self.show_doctor)
        a.calibrate.triggered.connect(self.calibrate)
        a.report.triggered.connect(self.show_report)
        a.stop.triggered.connect(lambda: c.stop("tray"))
        a.quit.triggered.connect(self.quit)
        a.automations.triggered.connect(self.show_automations)
        a.about.triggered.connect(self.show_about)
        self.tray.activated.connect(self.show_task_window)
        self.tray.automation_chosen.connect(lambda name: self.run_automation(name, "tray"))

        # The local model server, started and stopped from the tray (holodesk serve's parts).
        self.server = ServerControl(lambda: self.settings, self)
        self.server_menu = ServerMenu(
            self.server, a.server, lambda: self.settings,
            tray=self.tray, task_window=self.task_window,
            busy=lambda: self.controller.running, poll_now=self._poll_now,
            tell=self._tell_server_failure, parent=self,
        )
        self.server.state_changed.connect(self._on_server_state)
        self.server.progress.connect(self._on_server_progress)
        self.server.failed.connect(self._on_server_failed)

        # The global hotkeys: the emergency stop and the automations', on the listener run_gui
        # hands over (hotkeys.set_listener).
        self.hotkeys = HotkeyRegistry(self._stop_from_hotkey, self.report_error, self)
        self.notice.connect(self.report_error)
        self.hotkeys.automation_pressed.connect(self._run_from_hotkey,
                                                Qt.ConnectionType.QueuedConnection)
        self.hotkeys.stop_hotkey_changed.connect(self._on_stop_hotkey_changed)

        # Schedules: the timer says what is due; runs take the hotkey's path (run_automation).
        # Queued: a run due when the app starts begins once the app is built, not inside it.
        self.scheduler = ScheduleTimer(self, clock=clock, state_path=schedule_state)
        self.scheduler.due.connect(self._run_scheduled, Qt.ConnectionType.QueuedConnection)
        self.scheduler.missed.connect(self._report_missed, Qt.ConnectionType.QueuedConnection)
        #: The last thing to say about each automation's schedule (a missed or skipped run),
        #: by key; the Automations window shows it.
        self.schedule_notes: dict[str, str] = {}
        self._scheduled_run: str | None = None  # the name, while a scheduled run is active
        self._login_pending = at_login
        self._login_queue: list[str] = []  # "at login" automations still to run

        # Automations: read now (a small file), again whenever the file changes.
        self.automations: list[Automation] = []
        self.automations_dialog: AutomationsDialog | None = None
        self.parameters_dialog: ParametersDialog | None = None
        self._automations_error = ""
        self._automations_file = AutomationsWatcher(automations_path(), self)
        self._automations_file.changed.connect(self.reload_automations)
        self.reload_automations()

        # Old runs go at start, off the GUI thread: a large log takes a while to prune.
        self._background = Background(self)
        self._background.run(lambda: _prune(settings.retention_days),
                             lambda removed: log.info("pruned %d old run(s)", len(removed)))

        # Safety settings changed outside holodesk: looked for now and before each run.
        self.safety_dialog: SafetyChangesDialog | None = None
        self._safety_notes: set[str] = set()
        self.check_safety_changes()

        self.status_changed.connect(self._on_status)
        self._poller: StatusPoller | None = None
        self._poller_started = False
        if probe:
            self._poller = StatusPoller(settings.endpoint, None, settings.model,
                                        self.status_changed.emit)
            self._retarget_probe()
        if at_login:
            # Without a probe there is no server status to wait for.
            if self._poller is None:
                QTimer.singleShot(0, self._run_login_schedules)
            else:
                QTimer.singleShot(LOGIN_WAIT_MS, self._login_wait_over)

    # -- what the person starts ----------------------------------------------------------

    def start_task(self, task: str, confirm: ConfirmMode | None = None, monitor: str = "",
                   parameters: Filled | None = None, *, automation: str = "",
                   saved: Automation | None = None,
                   mode: AutomationMode = AutomationMode.RUN) -> bool:
        """Start a run (of the automation titled ``automation``, when named); False (and the
        reason shown) when it cannot start now. ``confirm`` and ``monitor``: the person's
        choices for this run (None, "": the settings'). ``parameters``: an automation's,
        filled (``task`` is their filled task). ``saved``: the automation run, as ``mode``
        says (its saved steps replay first, or a test run)."""
        if self.controller.running:
            text = "A run is already active: stop it before starting another."
            self._busy_errors.append(text)
            self.report_error(text)
            return False
        if self.calibration.running:
            self.report_error("A calibration is running: let it finish or press Esc first.")
            return False
        # The run uses the approved values meanwhile: the question never holds it up.
        self.check_safety_changes()
        # From here on the window shows this run, or why it did not start, under its name.
        # A secret parameter's value is in the filled task: shown masked, as in the log.
        self.task_window.expect_run(
            automation, redact(task, parameters.secrets()) if parameters else task)
        # Saved steps replay without the model (the answer too, while the screen is as it was
        # then): the server is needed only if the replay hands over, and that run then ends
        # with the server's problem, said as for any run.
        replayable = saved is not None and mode is AutomationMode.RUN and \
            has_trajectory(saved.key)
        if self.status is not None and self.status.state != "ok" and not replayable:
            text = f"The model server is not ready: {view(self.status.problem).line()}"
            self._server_errors.append(text)
            self.report_error(text)
            return False
        try:
            # An automation's limits only narrow the settings' (an imported one too). Said now
            # when they cannot; the run's own are made afresh as it starts (_run_request).
            if saved is not None and saved.only_in:
                narrow_only_in(self.settings, saved.only_in, automation or task)
        except AutomationError as e:
            self.report_error(str(e))
            return False
        choices = RunValues(confirm=confirm, monitor=monitor or None)
        return self.controller.start(self._run_request(task, choices, parameters, saved, mode))

    def _run_request(self, task: str, choices: RunValues, parameters: Filled | None,
                     saved: Automation | None,
                     mode: AutomationMode) -> Callable[[], RunRequest]:
        """What makes a run's request (app/run_request.py), on its worker as it starts: the
        settings read afresh (a stricter value set with `config set` while the app runs
        applies, one written by another program does not), then the run's own values. A saved
        automation gets what the person approved for it, and does not run while what it does
        is changed outside holodesk and not approved."""
        load, current = self._load, self.settings

        def prepare() -> RunRequest:
            fresh = load() if load is not None else current
            if load is not None:
                self.settings_read.emit(fresh)  # the app's (stop hotkey, windows) from now on
            return make_run_request(fresh, task, choices, automation=saved, mode=mode,
                                    parameters=parameters)

        return prepare

    def _use_read_settings(self, settings: Settings) -> None:
        if not self._closed and settings != self.settings:
            self._settings_changed(settings)

    def start_demo(self) -> bool:
        """Try holodesk on the practice window with the built-in demo model (as `holodesk
        demo`): the real run, with this app's confirmation panel, log and stop. It needs no
        model server. False, and the reason told, when it cannot start now.

        The practice window and the demo model start off the GUI thread; the run starts when
        both are up, and they are closed when it ends.
        """
        if self.controller.running or self._demo_starting:
            self.report_error("A run is already active: stop it before trying the demo.")
            return False
        if self.calibration.running:
            self.report_error("A calibration is running: let it finish or press Esc first.")
            return False
        from app.demo.run import start_demo

        self._demo_starting = True
        self.task_window.set_model_status("Demo: opening the practice window…", "loading")
        self.show_task_window()
        settings = self.settings
        self._background.run(lambda: start_demo(settings), self._run_demo,
                             self._demo_failed_to_start)
        return True

    def _demo_failed_to_start(self, error: BaseException) -> None:
        self._demo_starting = False
        if self._closed:
            return
        self._show_status()
        self.report_error(f"The demo cannot start: {error}")

    def _run_demo(self, demo: Demo) -> None:
        self._demo_starting = False
        if self._closed:  # quit while the practice window was opening: close it again
            demo.close()
            return
        self._show_status()
        if self.controller.running or \
                not self.controller.start(make_run_request(demo.settings, demo.task)):
            demo.close()
            self.report_error("A run is already active: stop it before trying the demo.")
            return
        self.demo = demo
        # Closing the practice window ends the run: nothing is left to practise on.
        demo.watch(self.controller.latch)

    def _end_demo(self) -> None:
        demo, self.demo = self.demo, None
        if demo is None:
            return
        # Closing waits for the practice window's process to end: off the GUI thread.
        self._background.run(demo.finish, self._demo_ended)

    def _demo_ended(self, result: DemoResult) -> None:
        log.info("%s", result.message)
        if not result.done:
            self.report_error(result.message)
        self.demo_finished.emit(result)

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
        started = self._start_automation(automation, source, str(automation.confirm))
        if started and source == "schedule":
            self._scheduled_run = automation.name
        return started

    # -- schedules -----------------------------------------------------------------------

    def _run_scheduled(self, name: str) -> None:
        """A schedule is due: run it as the hotkey would, and tell the person.

        A run already active (or a calibration, a demo starting) is never interrupted and
        the due run is not queued either: it would start at some later moment the person did
        not choose. It is reported as skipped instead.
        """
        if self._closed:
            return
        if self.controller.running or self._demo_starting or self.calibration.running:
            self._schedule_note(name, f"The scheduled run of “{name}” was skipped: another run "
                                      "was active. Run it from the tray menu if it is still "
                                      "wanted.")
            return
        if self.run_automation(name, "schedule"):
            self.tray.notify("holodesk", f"Scheduled run of “{name}” started. Stop it from the "
                                         "tray menu, the Stop button or the stop hotkey.")
        else:  # the reason was told already (start_task): only the line in the window
            self._schedule_note(name, f"The scheduled run of “{name}” did not start: "
                                      f"{self._errors[-1] if self._errors else 'unknown reason'}",
                                tell=False)

    def _report_missed(self, missed: Missed) -> None:
        if not self._closed:
            self._schedule_note(missed.name, missed.text(self.scheduler.clock.now()))

    def _schedule_note(self, name: str, text: str, *, tell: bool = True) -> None:
        """Tell the person about a scheduled run that did not happen: a notification, and a
        line in the Automations window (and the task window, with no notifications)."""
        log.warning("%s", text)
        self.schedule_notes[name.casefold()] = text
        if self.automations_dialog is not None:
            self.automations_dialog.set_notes(self.schedule_notes)
        if tell and not self.tray.notify("holodesk", text):
            # Not raised over the person's work, nor over a confirmation: shown when opened.
            self.task_window.show_error(text)

    def _on_status_for_login(self, status: ServerStatus) -> None:
        if self._login_pending and status.state == "ok":
            self._run_login_schedules()

    def _run_login_schedules(self) -> None:
        """Once per start at login: the "at login" automations, one after another (each
        starts when the one before has ended), in the file's order."""
        if not self._login_pending or self._closed:
            return
        self._login_pending = False
        self._login_queue = self.scheduler.at_login()
        self._next_login_run()

    def _next_login_run(self) -> None:
        # One that cannot start (reported) does not hold up the ones after it.
        while self._login_queue and not self._closed and not self.controller.running:
            self._run_scheduled(self._login_queue.pop(0))

    def _login_wait_over(self) -> None:
        if not self._login_pending or self._closed:
            return
        self._login_pending = False
        for name in self.scheduler.at_login():
            self._schedule_note(name, f"The automation “{name}” scheduled at login was not run: "
                                      "the model server was not ready within 10 minutes of "
                                      "login. Run it from the tray menu once it is.")

    def test_run_automation(self, automation: Automation) -> bool:
        """Run ``automation`` now with every step confirmed (the Automations window's Test run)."""
        if self.controller.running:
            self._tell_busy(f"A run is already active: the test run of “{automation.name}” "
                            "was not started. Stop the run first.")
            return False
        return self._start_automation(automation, "test run", "always")

    def _start_automation(self, automation: Automation, source: str, confirm: str) -> bool:
        """Fill the automation's parameters and start it. Secret values are read from the
        keyring on a worker thread (it may wait on the desktop's keyring), so a run with them
        starts a moment later (True here: a later refusal is told). A missing value is asked in
        a small form when the person started it (the tray, the Automations window); a hotkey or
        a trigger asks nothing and refuses, saying how to give it."""
        # What the person approved for it (its mode as the floor, its applications, whether
        # it may run at all) is read as its run starts, on the run's worker: the record's key
        # is in the keyring (_run_settings).
        if not automation.secret_parameters():
            return self._fill_and_start(automation, source, confirm, {})
        try:  # refused at once when it may act nowhere, not after the look-up
            if automation.only_in:
                narrow_only_in(self.settings, automation.only_in, automation.name)
        except AutomationError as e:
            self.report_error(str(e))
            return False

        self._background.run(
            lambda: stored_secrets(automation),
            lambda found: self._started_later(automation, source, confirm, found),
            lambda e: self.report_error(f"“{automation.name}” was not started: {e}"))
        return True

    def _started_later(self, automation: Automation, source: str, confirm: str,
                       secrets: dict[str, str]) -> None:
        if self.controller.running:
            self._tell_busy(f"A run is already active: “{automation.name}” ({source}) was not "
                            "started. Stop the run first.")
            return
        self._fill_and_start(automation, source, confirm, secrets)

    def _fill_and_start(self, automation: Automation, source: str, confirm: str,
                        secrets: dict[str, str], given: dict[str, str] | None = None) -> bool:
        try:
            filled = resolve(automation, given, secrets=secrets)
        except MissingValues as e:
            if source not in _ASKING_SOURCES:
                self.report_error(
                    f"“{automation.name}” was not started: it needs a value for "
                    f"{', '.join(e.names)}, and a {source} uses only saved defaults and the "
                    "keyring. Run it from the tray menu or the Automations window, which ask "
                    "for it, or give it a default in the Automations window.")
                return False
            self._ask_values(automation, source, confirm, secrets, e.names)
            return True
        except AutomationError as e:
            self.report_error(f"“{automation.name}” was not started: {e}")
            return False
        title = f"{automation.name} (test run)" if source == "test run" else automation.name
        # A test run is watched step by step and proves the task as it stands: it neither
        # replays saved steps nor saves its own.
        return self.start_task(filled.task, parameters=filled, automation=title,
                               saved=automation,
                               mode=AutomationMode.TEST if source == "test run"
                               else AutomationMode.RUN)

    def _ask_values(self, automation: Automation, source: str, confirm: str,
                    secrets: dict[str, str], missing: list[str]) -> None:
        if self.parameters_dialog is not None:
            self.parameters_dialog.close()  # one question at a time: the newest request
        dialog = ParametersDialog(automation, missing, None)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.parameters_dialog = dialog

        def accepted() -> None:
            typed = dialog.values()
            secret = set(automation.secret_parameters())
            known = {**secrets, **{k: v for k, v in typed.items() if k in secret}}
            plain = {k: v for k, v in typed.items() if k not in secret}
            kept = {name: typed[name] for name in dialog.kept()}
            if kept:
                self._background.run(
                    lambda: _keep_secrets(automation, kept), None,
                    lambda e: self.report_error(f"The value was used but not kept: {e}"))
            if self.controller.running:
                self._tell_busy(f"A run is already active: “{automation.name}” was not "
                                "started. Stop the run first.")
                return
            self._fill_and_start(automation, source, confirm, known, plain)

        def finished(_result: int) -> None:
            if self.parameters_dialog is dialog:
                self.parameters_dialog = None  # deleted on close: never touched again

        dialog.accepted.connect(accepted)
        dialog.finished.connect(finished)
        dialog.open()
        dialog.raise_()
        dialog.activateWindow()

    def _tell_busy(self, text: str) -> None:
        """Tell the person a request was refused because a run is active, without disturbing
        that run: no window is raised over a confirmation, and none takes the focus from it
        (an Enter meant for the confirmation must reach it)."""
        log.warning("%s", text)
        self._errors.append(text)
        self._busy_errors.append(text)
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
        self._automations_file.watch()
        try:
            items = load_automations(self._automations_file.path)
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
        self.hotkeys.set_automations(self.automations)
        self.scheduler.set_automations(self.automations)
        if self.automations_dialog is not None and not self.automations_dialog.isHidden():
            self.automations_dialog.reload()

    def _run_from_hotkey(self, name: str) -> None:
        self.run_automation(name, "hotkey")

    def _stop_from_hotkey(self, combo: str) -> None:
        # On the listener's thread; both stops only pull a latch.
        self.controller.stop("hotkey", combo)
        # Also a calibration's way out when its full-screen window lost the focus Esc
        # needs (the tray is under that window).
        self.calibration.stop(f"stopped with {combo}")

    def _on_stop_hotkey_changed(self, combo: str) -> None:
        from control.hotkeys import parse_combo

        self.stop_button.set_hint(f"or press {parse_combo(combo).label()}")
        if self.automations_dialog is not None:
            self.automations_dialog.stop_hotkey = combo

    def show_automations(self) -> None:
        """Open the Automations window (list, add, edit, delete, test-run)."""
        if self.automations_dialog is None:
            dialog = AutomationsDialog(
                path=self._automations_file.path,
                stop_hotkey=self.hotkeys.stop_combo or self.settings.stop_hotkey,
                confirm=str(self.settings.confirm),
                monitor=self.settings.monitor,
                # The schedule's own clock: "next run" must agree with when it will run.
                now=self.scheduler.clock.now,
            )
            dialog.saved.connect(self.set_automations)
            dialog.test_run_requested.connect(self.test_run_automation)
            dialog.set_notes(self.schedule_notes)
            self._keep_out_of_capture(dialog)
            self.automations_dialog = dialog
        else:
            self.automations_dialog.reload()
        self.automations_dialog.show()
        self.automations_dialog.raise_()
        self.automations_dialog.activateWindow()

    def show_task_window(self) -> None:
        self.task_window.show()
        self.task_window.raise_()
        self.task_window.activateWindow()

    def show_tray_window(self) -> None:
        """Bring back the tray's stand-in window (where the desktop has no tray)."""
        window = self.tray.window
        if window is not None:
            window.show()
            window.raise_()

    def _on_tray_window_close(self) -> None:
        """The stand-in window's close button: hide it or quit, as the person chooses; never
        a running app with no way back to it."""
        choice = self.ask_tray_close(self.tray.window)
        if choice is TrayCloseChoice.QUIT:
            self.quit()
        elif choice is TrayCloseChoice.HIDE and self.tray.window is not None:
            log.info("the status window was hidden; a new launch or the task window's menu "
                     "brings it back")
            self.tray.window.hide()

    def show_about(self) -> None:
        """Version, what holodesk is, where its files are, its licence."""
        if self.about_dialog is None:
            self.about_dialog = AboutDialog()
            self._keep_out_of_capture(self.about_dialog)
        self.about_dialog.show()
        self.about_dialog.raise_()
        self.about_dialog.activateWindow()

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

    def show_report(self) -> None:
        """Open "Report a problem" with a report gathered afresh (`holodesk report`)."""
        if self.report_dialog is None:
            self.report_dialog = ReportDialog(
                lambda: collect_report(self.settings, say=fix_text))
            self._keep_out_of_capture(self.report_dialog)
        self.report_dialog.show_and_start()

    def calibrate(self) -> bool:
        """Find the model's coordinate convention on the configured monitor (as `holodesk
        calibrate`); the report opens when done. False when it cannot start now."""
        if self.controller.running:
            self._tell_busy("A run is active: stop it before calibrating.")
            return False
        return self.calibration_control.start()

    @property
    def calibration_dialog(self) -> CalibrationReportDialog | None:
        """The last calibration's report window, if one was shown."""
        return self.calibration_control.dialog

    def _use_settings(self, settings: Settings) -> None:
        self.settings = settings

    def show_settings(self, *, server_only: bool = False) -> None:
        """The Settings dialog; ``server_only``: just the model server's part (the first-run
        guide's Connect to a server elsewhere)."""
        dialog = SettingsDialog(server_only=server_only)
        if dialog.exec():
            self._settings_changed(dialog.settings)

    def _settings_changed(self, settings: Settings) -> None:
        """Use ``settings`` (saved, or approved): the task window, the probe, the hotkeys."""
        self.settings = settings
        self.task_window.set_defaults(str(self.settings.confirm), self.settings.monitor)
        self._retarget_probe()
        self.server_menu.update()  # the endpoint may have moved to or off this machine
        self.hotkeys.apply_stop_hotkey(self.settings.stop_hotkey)

    # -- safety settings changed outside holodesk ----------------------------------------

    def check_safety_changes(self) -> None:
        """Look for safety settings changed outside holodesk (off this thread: the keyring
        may wait to be unlocked) and ask about them in a small window (app/safety_review.py).
        At start and before each run; never holds anything up."""
        if self._closed:
            return
        load, path = self._load, self._automations_file.path

        def look() -> tuple[Review, Settings | None]:
            done = review(every_automation=True, automations_file=path)
            # The settings in effect now, as judged (a stop hotkey set with `config set`).
            return done, load() if load is not None else None

        self._background.run(
            look, self._checked_safety_changes,
            lambda e: log.warning("the safety settings could not be checked: %s", e))

    def _checked_safety_changes(self, result: tuple[Review, Settings | None]) -> None:
        done, fresh = result
        if fresh is not None:
            self._use_read_settings(fresh)
        self._ask_safety_changes(done)

    def _ask_safety_changes(self, done: Review) -> None:
        if self._closed:
            return
        if done.note and done.note not in self._safety_notes:
            self._safety_notes.add(done.note)  # told once per start
            self.report_error(done.note[:1].upper() + done.note[1:] + ".")
        if not done.changes:
            return
        if self.safety_dialog is not None:
            self.safety_dialog.show_review(done)  # the newest look at the files
            return
        dialog = SafetyChangesDialog(done)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.answered.connect(lambda apply: self._answer_safety_changes(dialog.review, apply))
        dialog.finished.connect(lambda _result: self._safety_dialog_closed(dialog))
        self._keep_out_of_capture(dialog)  # never seen, never clicked by the model
        self.safety_dialog = dialog
        dialog.open()
        dialog.raise_()

    def _safety_dialog_closed(self, dialog: SafetyChangesDialog) -> None:
        if self.safety_dialog is dialog:
            self.safety_dialog = None  # deleted on close: never touched again

    def _answer_safety_changes(self, done: Review, apply: bool) -> None:
        what = "applied" if apply else "kept"

        def work() -> Settings:
            if apply:
                apply_changes(done)
            else:
                keep_approved(done)
            return load_settings()

        def failed(e: BaseException) -> None:
            self.report_error(f"The safety settings could not be {what}: {e}")

        self._background.run(work, self._settings_changed, failed)

    def show_connect(self) -> None:
        """The server's address, key and Test connection (the first-run guide's button)."""
        self.show_settings(server_only=True)

    def set_up_server(self) -> None:
        """Start a model server on this machine (the first-run guide's button): the tray's
        Start model server, its checks first; the guide shows how it goes."""
        if self.server.state in ("stopped", "failed"):
            self.task_window.guide.set_setup("starting", "checking this machine")
            self.server.start()

    def _on_server_state(self, state: str) -> None:
        self.task_window.guide.set_setup(state)
        if state == "stopped" and self.status is not None:
            # The start was called off or the server stopped: the status line says the
            # probe's words again, not the last progress of a start that is over.
            self._show_probe(self.status)
        elif state == "ready":
            self._clear_server_errors()

    def _on_server_progress(self, text: str) -> None:
        if self.server.state == "starting":
            self.task_window.guide.set_setup("starting", text)

    def _on_server_failed(self, error: ServeError) -> None:
        # The status line ends the start with its reason, at once; the probe's next change
        # replaces it.
        said = f"The model server did not start: {view(error).message.rstrip('.')}."
        self.task_window.set_model_status(said, "error")
        if not self.controller.running:
            self.tray.set_state(TrayState.OFFLINE, f"holodesk: {said}")
        self.task_window.guide.set_setup("failed", failure_text(error, self.server.log_path))

    def _tell_server_failure(self, text: str) -> None:
        if self.task_window.guide.isVisible():
            # The guide in view says it already, under its button: once is enough there.
            log.warning("%s", text)
            self._errors.append(text)
            self.tray.notify("holodesk", text, error=True)
            return
        self._server_errors.append(text)
        self.report_error(text)

    def _clear_server_errors(self) -> None:
        for text in self._server_errors:
            self.task_window.clear_error(text)
        self._server_errors.clear()

    def _retarget_probe(self) -> None:
        """Point the server probe at the settings' endpoint, with its key from the keyring.

        The keyring may block (a Secret Service asking to be unlocked): never on this thread.
        """
        endpoint, model = self.settings.endpoint, self.settings.model
        pin = self.settings.tls_fingerprint
        plain_http_ok = endpoint in self.settings.plain_http_ok

        def configure(key: str | None) -> None:
            if self._poller is None:
                return
            self._poller.configure(endpoint, key, model, pin, plain_http_ok)
            if not self._poller_started:
                self._poller_started = True
                self._poller.start()

        self._background.run(lambda: api_key(endpoint), configure)

    def _poll_now(self) -> None:
        if self._poller is not None:
            self._poller.poll_now()

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
        self._closed = True
        self.controller.stop("quit", "holodesk is quitting")
        self.controller.wait(5.0)
        if self.demo is not None:  # its end would come after the event loop is gone
            self.demo.close()
            self.demo = None
        self.calibration.close()
        if self._poller is not None:
            self._poller.stop()
        self.server.shutdown()  # never leave a vLLM behind (bounded wait)
        if self.log_window is not None:
            self.log_window.shutdown()
        self._automations_file.stop()
        self.scheduler.stop()
        self.hotkeys.clear()
        windows: list[QWidget | None] = [
            self.task_window, self.confirm_panel, self.overlay, self.stop_button,
            self.log_window, self.automations_dialog, self.doctor_window,
            self.report_dialog, self.calibration_dialog, self.about_dialog, self.tray.window,
            self.parameters_dialog,
        ]
        if self.tray.window is not None:
            self.tray.window.quitting = True
        for window in windows:
            if window is not None:
                window.close()
                window.deleteLater()
        if self.tray.icon is not None:
            self.tray.icon.hide()
        self.tray.menu.deleteLater()
        self.tray.run_menu.deleteLater()

    def report_changed_files(self) -> None:
        """Tell the person which protected files changed since the last run ended (at start;
        each run's start says it too), off the GUI thread: it reads every one of them."""
        settings = self.settings

        def told(noticed: list[Noticed]) -> None:
            if noticed:
                self.report_error(changed_message(noticed))

        self._background.run(lambda: changed_since_last_run(settings), told)

    def report_error(self, text: str) -> None:
        """Tell the person: a notification where the desktop has them, else a dialog."""
        log.warning("%s", text)
        self._errors.append(text)
        if not self.tray.notify("holodesk", text, error=True):
            self._show_in_window(text)

    def _show_in_window(self, text: str) -> None:
        """The message in the task window, brought forward (a notification's stand-in)."""
        self.task_window.show_error(text)
        if self.calibration.running:
            # Not over the targets (it would also take the focus Escape needs): the
            # task window comes back, with the message, when the calibration ends.
            self.calibration_control.keep_hidden(self.task_window)
            return
        self.show_task_window()

    # -- what the run says ---------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        self.task_window.on_event(event)
        if isinstance(event, RunStarted):
            name = self.task_window.automation
            what = f"the automation “{name}”" if name else repr(event.task)
            self.tray.set_state(TrayState.WORKING, f"holodesk: working on {what}")
        elif isinstance(event, AwaitingConfirmation):
            request = event.request
            self.tray.set_state(TrayState.WAITING, "holodesk: waiting for your approval")
            self.confirm_panel.show_request(request)
            # Never over the point it asks about: the person must see the real target.
            move_clear_of(self.confirm_panel, request.points)
            self.confirm_panel.show()
            self.confirm_panel.raise_()
            self.confirm_panel.activateWindow()
            self.overlay.show_points(list(request.points))
            if self._scheduled_run is not None:
                # The person may be elsewhere: the run waits for them, however long.
                self.tray.notify("holodesk", f"The scheduled run of “{self._scheduled_run}” "
                                             "waits for your approval.")
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
            info = self.controller.latch.info
            if stopped and info is not None and info.source == TRIPWIRE:
                # The person may not be looking at the task window: a protected file changed.
                self.report_error(f"The run was stopped: {event.reason}")

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
            self._end_demo()
            for text in self._busy_errors:  # "a run is active" is over with the run
                self.task_window.clear_error(text)
            self._busy_errors.clear()
            self._scheduled_run = None
            if self._login_queue:
                QTimer.singleShot(0, self._next_login_run)

    def _on_status(self, status: ServerStatus) -> None:
        self.status = status
        self._show_status()
        self._on_status_for_login(status)

    def _show_status(self) -> None:
        status = self.status
        if self._demo_starting:
            return
        if status is None:  # not probed yet: no stale demo line left standing
            self.task_window.set_model_status("checking…", "checking")
            return
        ok = status.state == "ok"
        self._show_probe(status)
        self.task_window.set_can_start(ok, "" if ok else view(status.problem).line())
        # Whenever nothing answers, the guide says what holodesk needs and how to get it.
        self.task_window.show_guide(status.state == "down",
                                    status.endpoint or self.settings.endpoint)
        if ok:
            self._clear_server_errors()

    def _show_probe(self, status: ServerStatus) -> None:
        """The probe's words in the status line and, while no run has it, the tray."""
        dot = {"ok": "online", "loading": "loading", "down": "offline"}.get(status.state, "error")
        self.task_window.set_model_status(status.message, dot)
        if not self.controller.running:
            if status.ok:
                self.tray.set_state(TrayState.IDLE, f"holodesk: ready ({status.message})")
            else:
                self.tray.set_state(TrayState.OFFLINE, f"holodesk: {status.message}")

    # -- other launches --------------------------------------------------------------------

    def handle_message(self, message: dict[str, Any]) -> dict[str, Any]:
        """Answer a later launch or ``holodesk trigger``."""
        cmd = message.get("cmd")
        if cmd in ("show", "ping"):
            if cmd == "show":
                # A second launch: everything the person may have closed comes back.
                self.show_tray_window()
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


def _keep_secrets(automation: Automation, values: dict[str, str]) -> None:
    for name, value in values.items():
        store_secret(automation, name, value)


#: Where a run was started by the person, who can be asked for a missing value.
_ASKING_SOURCES = frozenset({"tray", "window", "test run"})


def _prune(retention_days: int) -> list[str]:
    from app.runner import release_after_abnormal_end
    from app.store import ActionLog

    # First: a run killed mid-drag may have left its button down for the person's own use.
    release_after_abnormal_end()
    with ActionLog.open() as store:
        return store.prune(retention_days)


def run_gui(*, at_login: bool = False) -> int:
    """Start the tray app (or bring the running one forward) and run the event loop.

    ``at_login``: started by the desktop at login (the autostart entry says so): the
    automations scheduled "at login" run once the model server is ready.
    """
    setup_logging()
    QApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    qt = QApplication(sys.argv[:1])
    qt.setApplicationName("holodesk")
    # The desktop entry's name: docks and task switchers match the windows to it and its icon.
    qt.setDesktopFileName("holodesk")
    qt.setWindowIcon(app_icon())
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
    main = HolodeskApp(settings, at_login=at_login, load=load_settings)
    holder.append(main)
    for note in settings.notes:
        main.report_error(note)
    main.report_changed_files()
    hotkeys = _listen_for_stop_hotkey(main)
    if hotkeys is not None:
        main.hotkeys.set_listener(hotkeys, main.settings.stop_hotkey)
    elif any(a.hotkey for a in main.automations):
        main.report_error("The automations' hotkeys are not available either; run them from "
                          "the tray menu or the Automations window.")
    QTimer.singleShot(0, main.show_task_window)
    with quit_on_stop_signals(main):
        code = qt.exec()
    if hotkeys is not None:
        hotkeys.stop()
    server.close()
    return int(code)


@contextlib.contextmanager
def quit_on_stop_signals(main: HolodeskApp) -> Iterator[bool]:
    """While inside, SIGINT (Ctrl+C in the terminal that started it), SIGTERM and SIGHUP (that
    terminal closed) stop the run at once (its input released, its end recorded as stopped)
    and quit cleanly (the server stopped, the windows closed), as the tray's Quit does.

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
    """The global emergency stop; works whatever window has the focus, confirmation included.

    On X11 it and the automations' hotkeys are reserved for holodesk (the press does not also
    reach the window in front); one the X server will not reserve is listened for instead, and
    the person told.
    """
    from control.hotkeys import ListenerError, parse_combo
    from control.hotkeys_desktop import system_hotkeys

    combo = main.settings.stop_hotkey
    # A signal: the grab thread itself reports the hotkeys it gives up when it fails.
    hotkeys = system_hotkeys(lambda fallback: main.notice.emit(fallback.message))
    hotkeys.register(combo, main.hotkeys.stop_callback(combo))
    try:
        hotkeys.start()
    except ListenerError as e:
        main.report_error(f"The emergency stop hotkey is not available: {e}. Use the Stop "
                          "button, the tray menu or the screen corner.")
        return None
    main.stop_button.set_hint(f"or press {parse_combo(combo).label()}")
    return hotkeys
