"""The tray app: wires the windows to the run controller, the server probe and the stop paths.

Which runs start, from where, and why not, is decided in app/controller.py (no Qt); this
module keeps only what needs Qt: the windows, the tray, the signals and their wiring.
"""

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

from app.admission import Activity, RunSource, Started, busy
from app.automations import Automation, AutomationError, automations_path, load_automations
from app.controller import Controller, Desk, Launch
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
from app.protected import Noticed, changed_message, changed_since_last_run
from app.report import collect_report
from app.result import RunResult
from app.run_request import RunRequest
from app.runner import stop_signals
from app.scheduler import Clock
from app.session import Session
from app.settings import Settings, SettingsError, load_settings
from app.status import ServerStatus, StatusPoller
from control.hotkeys import HotkeyListener
from control.policy import ConfirmMode
from control.stop import StopLatch
from control.tripwire import STOP_SOURCE as TRIPWIRE
from ui.about_dialog import AboutDialog
from ui.app_icon import app_icon
from ui.automations_dialog import AutomationsDialog
from ui.automations_watcher import AutomationsWatcher
from ui.bridge import RunController, SessionFactory, real_session
from ui.calibrate_flow import CalibrationFlow
from ui.calibration_control import CalibrationControl
from ui.confirm_panel import ConfirmPanel
from ui.crash import CrashReporter, show_error
from ui.demo_control import DemoControl
from ui.doctor_window import DoctorWindow
from ui.hotkey_registry import HotkeyRegistry
from ui.instance import InstanceServer
from ui.log_window import LogWindow
from ui.overlay import TargetOverlay, WindowRects
from ui.panel_place import move_clear_of
from ui.parameters_dialog import ValuesAsker
from ui.problem_view import fix_text, view
from ui.report_dialog import ReportDialog
from ui.result_view import RESULT_TRAY, result_line
from ui.reveal import reveal
from ui.run_bar import RunBar
from ui.safety_watch import SafetyWatch
from ui.scheduler import ScheduleTimer
from ui.server_control import ServerControl
from ui.server_menu import ServerMenu
from ui.server_view import ServerView
from ui.settings_dialog import SettingsDialog
from ui.stage import Stage
from ui.task_window import TaskWindow
from ui.telling import Teller
from ui.tray import Tray, TrayActions, TrayCloseChoice, TrayState, ask_tray_close
from ui.window_menu import attach_window_menu
from ui.workers import Background

log = logging.getLogger(__name__)

#: After a start at login, how long "at login" automations wait for the model server to be
#: ready; past that they are reported as not run (a run an hour after login is a surprise).
LOGIN_WAIT_MS = 10 * 60 * 1000


class HolodeskApp(QObject):
    """Everything the person sees, wired to one :class:`RunController` (the run on its
    worker) and one :class:`~app.controller.Controller` (``runs``: which runs start).

    ``status_changed`` re-emits the server probe's results on the GUI thread. The parts it
    owns: ``hotkeys`` (the global hotkeys), ``server_menu`` (the tray's server entry over
    ``server``), ``server_view`` (the probe's words, the first-run guide), ``teller`` (how the
    person is told), ``safety`` (safety settings changed outside holodesk), ``demo`` (the
    demo), ``values_asker`` (an automation's missing values), ``calibration_control``
    (Calibrate… over the flow ``calibration``).
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
                # Before each screenshot the run waits for holodesk's windows to leave the
                # work (ui/stage.py): what it works in is never a painted-out hole.
                return real_session(request, latch, gate, exclude=rects,
                                    make_way=lambda area: self.stage.make_way(area, latch))

        self.controller = RunController(session_factory, self)
        self.values_asker = ValuesAsker()
        self.actions = TrayActions(self)
        self.tray = Tray(self.actions, use_system_tray=use_system_tray, parent=self)
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
        #: What the task window and the stand-in collapse into while a run acts (Stop,
        #: progress), kept off the work by ``stage``.
        self.run_bar = RunBar()
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
                             self.values_asker.dialog],
            keep_out_of_capture=self.window_rects.keep_out,
            tell=self.report_error,
            parent=self,
        )
        self.calibration_control.settings_saved.connect(self._use_read_settings)
        for window in (self.task_window, self.confirm_panel, self.overlay, self.run_bar,
                       self.tray.window):
            self.window_rects.keep_out(window)
        self.stage = Stage(
            self.run_bar,
            collapsible=lambda: [self.task_window, self.tray.window],
            windows=lambda: [self.log_window, self.automations_dialog, self.doctor_window,
                             self.report_dialog, self.about_dialog,
                             self.calibration_control.dialog, self.values_asker.dialog,
                             self.safety.dialog],
            reveal=lambda window: reveal(window, activate=False),
            parent=self,
        )
        self.status: ServerStatus | None = None
        self.server_view: ServerView  # made with the server, below
        self.teller = Teller(
            self.tray, self.task_window, show_window=self.show_task_window,
            calibrating=lambda: self.calibration.running,
            keep_hidden=self.calibration_control.keep_hidden,
            confirming=lambda: self.controller.pending is not None,
            automations_dialog=lambda: self.automations_dialog)
        # Without a tray, messages go to the desktop's notification service when it has one
        # (looked for with the other start-up probes); one that fails shows in the window.
        self.tray.undelivered.connect(lambda _title, text, _error: self.teller.in_window(text))
        self._closed = False
        self._background = Background(self)
        # What decides which runs start (app/controller.py), with what only this app can do.
        self.runs = Controller(Desk(
            activity=lambda: Activity.of(self.controller.running or self.demo.starting,
                                         self.calibration.running),
            start_run=self.controller.start,
            settings=lambda: self.settings,
            automations=lambda: self.automations,
            reload=self.reload_automations,
            folder=automations_path().parent,
            off_thread=lambda work, done, failed: self._background.run(work, done, failed),
            ask_values=self.values_asker.ask,
            tell=self.teller.refused,
            notify=lambda text: self.tray.notify("holodesk", text),
            note=self.teller.note,
            soon=lambda fn: QTimer.singleShot(0, fn),
            server_problem=lambda: _server_problem(self.status),
            load=load,
            settings_read=self.settings_read.emit,
            expect_run=self.task_window.expect_run,
            check_safety=lambda: self.safety.check(),
            show=self._bring_back,
            stop=lambda reason: self._stop_all("trigger", reason),
            closed=lambda: self._closed,
            make_way=self.stage.outside,
            run_over=self.stage.outside_ended,
        ), at_login=at_login)
        self.demo = DemoControl(
            self.controller, self._background, settings=lambda: self.settings,
            admit=self.runs.admit, refused=self.teller.refused, tell=self.report_error,
            task_window=self.task_window, show_window=self.show_task_window, tray=self.tray,
            opened=lambda: self.server_view.show_status(), finished=self.demo_finished.emit,
            closed=lambda: self._closed)

        c = self.controller
        c.run_event.connect(self._on_event)
        c.running_changed.connect(self._on_running)
        c.unstarted.connect(self.teller.unstarted)  # the header says it as a run's end
        c.failed.connect(lambda _text: self.task_window.set_running(False))
        c.failed.connect(self.report_error)  # after: the window shows it as not running
        c.notice.connect(self.report_error)
        self.task_window.start_requested.connect(self.start_task)
        self.task_window.stop_requested.connect(lambda: c.stop("task window"))
        self.task_window.pause_requested.connect(c.pause)
        self.task_window.resume_requested.connect(c.resume)
        self.task_window.automations_requested.connect(self.show_automations)
        self.task_window.setup_requested.connect(lambda: self.server_view.set_up())
        self.task_window.connect_requested.connect(lambda: self.show_settings(server_only=True))
        self.task_window.log_requested.connect(self.show_log)
        self.task_window.demo_requested.connect(self.start_demo)
        bar = self.run_bar
        bar.stop_clicked.connect(lambda: c.stop("stop button"))
        bar.pause_clicked.connect(c.pause)
        bar.resume_clicked.connect(c.resume)
        bar.show_clicked.connect(self._show_during_run)
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
        self.server_view = ServerView(
            self.server,
            StatusPoller(settings.endpoint, None, settings.model, self.status_changed.emit)
            if probe else None,
            task_window=self.task_window, tray=self.tray, teller=self.teller,
            background=self._background, settings=lambda: self.settings,
            status=lambda: self.status, running=lambda: self.controller.running,
            demo_starting=lambda: self.demo.starting)
        self.server_menu = ServerMenu(
            self.server, a.server, lambda: self.settings,
            tray=self.tray, task_window=self.task_window,
            busy=lambda: self.controller.running, poll_now=self.server_view.poll_now,
            tell=self.teller.server_failure, parent=self,
        )

        # The global hotkeys: the emergency stop and the automations', on the listener run_gui
        # hands over (hotkeys.set_listener).
        self.hotkeys = HotkeyRegistry(lambda combo: self._stop_all("hotkey", combo),
                                      self.report_error, self)
        self.notice.connect(self.report_error)
        self.hotkeys.automation_pressed.connect(lambda name: self.run_automation(name, "hotkey"),
                                                Qt.ConnectionType.QueuedConnection)
        self.hotkeys.stop_hotkey_changed.connect(self._on_stop_hotkey_changed)

        # Schedules: the timer says what is due; runs take the hotkey's path (run_automation).
        # Queued: a run due when the app starts begins once the app is built, not inside it.
        self.scheduler = ScheduleTimer(self, clock=clock, state_path=schedule_state)
        self.scheduler.due.connect(self.runs.run_scheduled, Qt.ConnectionType.QueuedConnection)
        self.scheduler.missed.connect(
            lambda missed: self.runs.missed(missed.name, missed.text(self.scheduler.clock.now())),
            Qt.ConnectionType.QueuedConnection)

        # Automations: read now (a small file), again whenever the file changes.
        self.automations: list[Automation] = []
        self.automations_dialog: AutomationsDialog | None = None
        self._automations_error = ""
        self._automations_file = AutomationsWatcher(automations_path(), self)
        self._automations_file.changed.connect(self.reload_automations)
        self.reload_automations()

        # Old runs go at start, off the GUI thread: a large log takes a while to prune.
        self._background.run(lambda: _prune(settings.retention_days),
                             lambda removed: log.info("pruned %d old run(s)", len(removed)))

        # Safety settings changed outside holodesk: looked for now and before each run.
        self.safety = SafetyWatch(
            self._background, self._automations_file.path, load=load,
            read=self._use_read_settings, changed=self._settings_changed,
            tell=self.report_error, keep_out=self.window_rects.keep_out,
            closed=lambda: self._closed)
        self.safety.check()

        self.status_changed.connect(self._on_status)
        if probe:
            self.server_view.retarget()
        if at_login:
            # Without a probe there is no server status to wait for.
            if not probe:
                QTimer.singleShot(0, lambda: self.runs.server_ready(self.scheduler.at_login))
            else:
                QTimer.singleShot(LOGIN_WAIT_MS, lambda: self.runs.login_wait_over(
                    self.scheduler.at_login, LOGIN_WAIT_MS // 60_000))

    # -- what the person starts ----------------------------------------------------------

    def start_task(self, task: str, confirm: ConfirmMode | None = None,
                   monitor: str = "") -> bool:
        """Start a typed task (the task window, a trigger); False (and the reason told) when it
        cannot start now (app/controller.py admits it)."""
        return isinstance(self.runs.start(Launch(task, RunSource.TYPED, confirm, monitor)),
                          Started)

    def _use_read_settings(self, settings: Settings) -> None:
        if not self._closed and settings != self.settings:
            self._settings_changed(settings)

    def start_demo(self) -> bool:
        """Try holodesk on the practice window with the built-in demo model (as `holodesk
        demo`): the real run, with this app's confirmation panel, log and stop. It needs no
        model server. False, and the reason told, when it cannot start now."""
        return self.demo.start()

    def run_automation(self, name: str, source: RunSource | str = RunSource.TRAY) -> bool:
        """Run the saved automation ``name`` (from the tray, a hotkey, a trigger); False, and
        the reason told, when it cannot start now: never a second run next to an active one."""
        return isinstance(self.runs.run_automation(name, RunSource(source)), Started)

    def test_run_automation(self, automation: Automation) -> bool:
        """Run ``automation`` now with every step confirmed (the Automations window's Test run)."""
        return isinstance(self.runs.test_run(automation), Started)

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

    def _stop_all(self, source: str, reason: str) -> None:
        # On the hotkey listener's thread too; both stops only pull a latch.
        self.controller.stop(source, reason)
        # The run in a terminal the run bar stands for stops too (`holodesk trigger stop`
        # said "stopped" while it went on); on the GUI thread, once (ui/stage.py).
        self.stage.stop_outside_soon()
        # Also a calibration's way out when its full-screen window lost the focus Esc
        # needs (the tray is under that window).
        self.calibration.stop(f"stopped with {reason}" if source == "hotkey" else reason)

    def _on_stop_hotkey_changed(self, combo: str) -> None:
        from control.hotkeys import parse_combo

        self.run_bar.set_hint(parse_combo(combo).label())
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
            dialog.set_notes(self.teller.schedule_notes)
            self.window_rects.keep_out(dialog)
            self.automations_dialog = dialog
        else:
            self.automations_dialog.reload()
        reveal(self.automations_dialog)

    def show_task_window(self) -> None:
        reveal(self.task_window)

    def _show_during_run(self) -> None:
        """The run bar's Show: the task window back for the rest of the run (the person's
        choice; the work may be under it)."""
        self.stage.kept(self.task_window)
        self.show_task_window()

    def _bring_back(self) -> None:
        """A second launch: everything the person may have closed comes back."""
        self.show_tray_window()
        self.show_task_window()

    def show_tray_window(self) -> None:
        """Bring back the tray's stand-in window (where the desktop has no tray)."""
        window = self.tray.window
        if window is not None:
            reveal(window, activate=False)

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
            self.window_rects.keep_out(self.about_dialog)
        reveal(self.about_dialog)

    def show_log(self) -> None:
        if self.log_window is None:
            self.log_window = LogWindow()
            self.window_rects.keep_out(self.log_window)
            self.controller.run_event.connect(self.log_window.on_event)
        reveal(self.log_window, activate=False)

    def show_doctor(self) -> None:
        """Open the set-up checks (`holodesk doctor`) and run them afresh."""
        if self.doctor_window is None:
            self.doctor_window = DoctorWindow(lambda: self.settings)
            self.window_rects.keep_out(self.doctor_window)
        self.doctor_window.show_and_run()

    def show_report(self) -> None:
        """Open "Report a problem" with a report gathered afresh (`holodesk report`)."""
        if self.report_dialog is None:
            self.report_dialog = ReportDialog(
                lambda: collect_report(self.settings, say=fix_text))
            self.window_rects.keep_out(self.report_dialog)
        self.report_dialog.show_and_start()

    def calibrate(self) -> bool:
        """Find the model's coordinate convention on the configured monitor (as `holodesk
        calibrate`); the report opens when done. False when it cannot start now."""
        if self.controller.running:
            self.teller.refused(busy("the calibration"))
            return False
        return self.calibration_control.start()

    def show_settings(self, *, server_only: bool = False) -> None:
        """The Settings dialog; ``server_only``: just the model server's part (the first-run
        guide's Connect to a server elsewhere)."""
        # The stand-in window's own dialog: the window manager keeps it above that
        # always-on-top window, which covered Save and Cancel otherwise.
        dialog = SettingsDialog(self.tray.window, server_only=server_only)
        accepted = dialog.exec()
        dialog.deleteLater()  # a child of the stand-in: not kept once closed
        if accepted:
            self._settings_changed(dialog.settings)

    def _settings_changed(self, settings: Settings) -> None:
        """Use ``settings`` (saved, or approved): the task window, the probe, the hotkeys."""
        self.settings = settings
        self.task_window.set_defaults(str(self.settings.confirm), self.settings.monitor)
        self.server_view.retarget()
        self.server_menu.update()  # the endpoint may have moved to or off this machine
        self.hotkeys.apply_stop_hotkey(self.settings.stop_hotkey)

    # -- safety settings changed outside holodesk ----------------------------------------

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
        self.demo.close()
        self.calibration.close()
        self.server_view.stop()
        self.server.shutdown()  # never leave a vLLM behind (bounded wait)
        if self.log_window is not None:
            self.log_window.shutdown()
        self._automations_file.stop()
        self.scheduler.stop()
        self.hotkeys.clear()
        windows: list[QWidget | None] = [
            self.task_window, self.confirm_panel, self.overlay, self.run_bar,
            self.log_window, self.automations_dialog, self.doctor_window,
            self.report_dialog, self.calibration_control.dialog, self.about_dialog,
            self.tray.window, self.values_asker.dialog,
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
        self.teller.error(text)

    # -- what the run says ---------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        self.task_window.on_event(event)
        self.stage.on_event(event)
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
            if self.runs.scheduled_run is not None:
                # The person may be elsewhere: the run waits for them, however long.
                self.tray.notify("holodesk", f"The scheduled run of “{self.runs.scheduled_run}” "
                                             "waits for your approval.")
        elif isinstance(event, StepDecided):
            self._clear_confirmation()
            self.tray.set_state(TrayState.WORKING, "holodesk: working")
        elif isinstance(event, RunPaused):
            self.task_window.set_paused(True, event.reason)
            self.tray.set_state(TrayState.WAITING, f"holodesk: paused ({event.reason})")
            # Nothing acts while it waits for the person: the windows come back (they leave
            # the work again before the next screenshot).
            self.stage.bring_back()
            self.show_task_window()
        elif isinstance(event, RunResumed):
            self.task_window.set_paused(False)
            self.tray.set_state(TrayState.WORKING, "holodesk: working")
        elif isinstance(event, StepFailed):
            self.report_error(view(event.problem).line())
        elif isinstance(event, RunFinished):
            self._clear_confirmation()
            said = result_line(event.result, event.reason)
            self.tray.set_state(RESULT_TRAY[event.result], said)
            info = self.controller.latch.info
            if (event.result is RunResult.STOPPED and info is not None
                    and info.source == TRIPWIRE):
                # A protected file changed: said as the problem it is, not as a mere end.
                self.report_error(f"The run was stopped: {event.reason}")
            else:  # the person may be looking elsewhere
                self.teller.finished(event.result, said)

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
            # The task window and the stand-in collapse into the run bar, off the work.
            self.stage.begin()
        else:
            self.stage.end()  # the windows come back, to say how it ended
            self._clear_confirmation()
            self.demo.end()
            self.teller.run_over()
            self.runs.run_ended()

    def _on_status(self, status: ServerStatus) -> None:
        self.status = status
        self.server_view.show_status()
        if status.state == "ok":
            self.runs.server_ready(self.scheduler.at_login)

    # -- other launches --------------------------------------------------------------------

    def handle_message(self, message: dict[str, Any]) -> dict[str, Any]:
        """Answer a later launch or ``holodesk trigger`` (app/ipc.py)."""
        return self.runs.handle(message)


def _server_problem(status: ServerStatus | None) -> str:
    """Why the model server cannot take a run, as probed; "" when it can or is not known."""
    if status is None or status.state == "ok":
        return ""
    return view(status.problem).line()


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
    main.run_bar.set_hint(parse_combo(combo).label())
    return hotkeys
