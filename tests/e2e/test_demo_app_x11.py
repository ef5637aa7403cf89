"""The desktop app's demo (HolodeskApp.start_demo) over the same core as `holodesk demo`.

The app runs offscreen under pytest-qt; the practice window runs in its own process on a
private Xvfb, and the runs' screenshots are real captures of that display, sent to the real
demo server by the real client. Input is recorded, not sent (nothing here may drive a display
from the test process), so the practice task cannot get done: the tests check the wiring
(the demo's settings reach the run, the app's confirmation asks, closing ends everything)
and that a demo that failed says not done on every surface of the app (issue 24: it said
"Done" in green, "answered" in the tray and the log).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QLabel, QWidget
from pytestqt.qtbot import QtBot

from app.agent import AgentParts
from app.demo.look import PRACTICE_WM_CLASS
from app.demo.run import DemoResult
from app.events import Answer as Reply
from app.events import AwaitingConfirmation, ConfirmReply, Event
from app.parts import client_config, make_capturer
from app.pause import PauseGate
from app.run_request import RunRequest
from app.session import RunParts, Session, build_session
from app.settings import Settings
from app.store import ActionLog
from control.input import DryRunBackend, Executor
from control.policy import SafetyPolicy
from control.stop import StopLatch
from control.target_x11 import X11TargetFinder
from model.client import HolotronClient
from tests.support.fake_notifications import FakeNotifications
from tests.support.fixtures import xvfb_fixture
from tests.support.home import isolate_home
from tests.support.log_window_rows import run_ids, run_row, select
from tests.support.target_app import RunningApp
from tests.support.wm import WindowManager, keep_above
from tests.support.xvfb import Xvfb
from ui.colours import Tone, text_style
from ui.tray import TrayState

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1280, 800)
TIMEOUT_MS = 120_000


@pytest.fixture
def on_display(xvfb: Xvfb, openbox: WindowManager, monkeypatch: pytest.MonkeyPatch,
               tmp_path: Path) -> Iterator[Xvfb]:
    """The practice window's process and the captures go to the private Xvfb; the action log
    and settings to a private home."""
    isolate_home(monkeypatch, tmp_path)
    for name, value in xvfb.env().items():
        monkeypatch.setenv(name, value)
    for name in ("WAYLAND_DISPLAY", "WAYLAND_SOCKET", "XDG_SESSION_TYPE"):
        monkeypatch.delenv(name, raising=False)
    yield xvfb


def practice_windows(xvfb: Xvfb) -> list[str]:
    found = subprocess.run(["xdotool", "search", "--class", PRACTICE_WM_CLASS],
                           env=xvfb.env(), capture_output=True, text=True)
    return found.stdout.split()


class DemoParts:
    """The demo's runs over real parts on the private Xvfb, input recorded (``backends``),
    each run's settings in ``used``."""

    def __init__(self, xvfb: Xvfb) -> None:
        self.xvfb = xvfb
        self.used: list[Settings] = []
        self.backends: list[DryRunBackend] = []

    def parts(self, request: RunRequest, latch: StopLatch,
              pause: PauseGate | None) -> RunParts:
        settings = request.settings
        self.used.append(settings)
        backend = DryRunBackend()
        self.backends.append(backend)
        finder = X11TargetFinder(self.xvfb.display)
        return RunParts(AgentParts(
            client=HolotronClient(client_config(settings, None)),
            capturer=make_capturer(settings, display=self.xvfb.display),
            executor=Executor(backend, latch),
            policy=SafetyPolicy(settings.confirm, only_in=settings.only_in),
            store=ActionLog.open(),
            latch=latch,
            pause=pause,
            finder=finder,
        ), closeables=[finder], dry_run=True)

    def factory(self, request: RunRequest, latch: StopLatch, gate: PauseGate) -> Session:
        """The app's session factory: built as every front end builds a run (the request's
        check, the practice window's, reaches the agent)."""
        return build_session(request, self.parts, latch=latch, pause=gate)


def test_start_demo_runs_the_demo_in_the_app(on_display: Xvfb, qtbot: QtBot) -> None:
    from ui.app import HolodeskApp

    xvfb = on_display
    rig = DemoParts(xvfb)
    used, backends = rig.used, rig.backends
    # The person's endpoint answers nothing: the demo needs no model server.
    app = HolodeskApp(Settings(endpoint="http://127.0.0.1:9/v1", confirm="always"),
                      session_factory=rig.factory, use_system_tray=False, probe=False)
    events: list[Event] = []
    app.controller.run_event.connect(events.append)
    results: list[DemoResult] = []
    app.demo_finished.connect(results.append)
    try:
        assert app.actions.demo.text() == "Try the demo"
        app.actions.demo.trigger()  # the tray's entry
        qtbot.waitUntil(lambda: app.controller.pending is not None, timeout=TIMEOUT_MS)
        # The run is the demo's: its task, its server, only the practice window.
        (settings,) = used
        # The task window collapsed into the run bar while the demo acts.
        assert app.task_window.isHidden() and app.run_bar.isVisible()
        assert settings.model == "holodesk-demo"
        assert settings.endpoint.startswith("http://127.0.0.1:")
        assert settings.endpoint != "http://127.0.0.1:9/v1"
        assert settings.only_in == (PRACTICE_WM_CLASS,)
        assert app.settings.endpoint == "http://127.0.0.1:9/v1"  # the person's, unchanged
        assert practice_windows(xvfb)
        asking = [e for e in events if isinstance(e, AwaitingConfirmation)][-1]
        # The model saw the practice window in the real capture: its first step is the form's.
        assert asking.request.element == "Name field" or "Ada Lovelace" in str(
            asking.request.action)
        assert app.confirm_panel.isVisible()
        assert not app.start_demo()  # never a second run next to this one
        app._on_answered(ConfirmReply(Reply.STOP))
        qtbot.waitUntil(lambda: bool(results), timeout=TIMEOUT_MS)
        assert app.task_window.status_label.text().startswith("Stopped after")
    finally:
        app.close()
        qtbot.wait(50)
    assert not results[0].done
    assert "not done" in results[0].message
    # A stop stays a stop, whatever the practice window says: told as the run's end.
    assert any(text.startswith("holodesk: stopped:") for text in app.teller.told)
    assert backends[0].calls == []  # stopped at the first question: nothing was done
    assert practice_windows(xvfb) == []


def test_a_demo_that_fails_says_not_done_on_every_surface(
        on_display: Xvfb, qtbot: QtBot, tmp_path: Path) -> None:
    """Another application's window kept above the practice window: the demo model answers
    that it cannot see it and did nothing. The model answered, yet the practice window's
    checklist is not done: the task window's header and colour, the reason under it, the
    tray's state and tooltip, the stand-in window's text, the notification and the action log
    window's list and detail all say not done, and nothing says done in green."""
    from ui.app import HolodeskApp

    xvfb = on_display
    rig = DemoParts(xvfb)
    cover = RunningApp(xvfb, tmp_path / "cover", geometry="1180x680+50+40")
    bus = FakeNotifications().start()
    app = HolodeskApp(Settings(endpoint="http://127.0.0.1:9/v1", confirm="never"),
                      session_factory=rig.factory, use_system_tray=False, probe=False)
    results: list[DemoResult] = []
    app.demo_finished.connect(results.append)
    try:
        cover.wait_for(lambda: cover.layout_path.exists(), timeout=60, what="the cover window")
        keep_above(xvfb, "HolodeskTarget")
        app.tray.probe_notifications({"DBUS_SESSION_BUS_ADDRESS": bus.address})
        qtbot.waitUntil(lambda: app.tray.probed, timeout=10_000)
        assert app.tray.desktop_notifications
        app.actions.demo.trigger()
        qtbot.waitUntil(lambda: bool(results), timeout=TIMEOUT_MS)
        window = app.task_window
        # The task window: the header, its colour, the reason right under it, in view.
        assert window.status_label.text() == "Not done after 1 step(s)"
        assert window.status_label.property("result") == "not_done"
        assert window.status_label.styleSheet() == text_style(Tone.ERROR)
        reason = window.result_label.text()
        assert reason.startswith("the practice task is not done (still to do: type the name, "
                                 "choose Blue, save the entry, delete the draft)"), reason
        assert "The model's answer: Demo: I cannot see the whole holodesk practice" in reason
        assert window.result_label.isVisible()
        assert in_view(window, window.status_label) and in_view(window, window.result_label)
        green = text_style(Tone.OK)
        assert all(label.styleSheet() != green
                   for label in window.findChildren(QLabel) if label.isVisible())
        assert not window.next_steps.isVisible()  # what to try next: after a done demo only
        # The tray, its tooltip and the stand-in window that shows it.
        assert app.tray.state is TrayState.NOT_DONE
        assert app.tray.tooltip.startswith("holodesk: not done: the practice task is not done")
        assert app.tray.window is not None
        assert app.tray.window.status_text.text().startswith(
            "holodesk: not done: the practice task is not done")
        # The notification: the result and why, as an error.
        bus.wait_for(1)
        (said,) = [c for c in bus.calls if "practice task" in c.body]
        assert said.body.startswith("holodesk: not done: the practice task is not done")
        assert said.hints["urgency"] == 2
        assert not any(" done:" in c.body and "not done" not in c.body for c in bus.calls)
        # The action log window: the list, and the detail over the run's steps.
        app.show_log()
        log = app.log_window
        assert log is not None
        qtbot.waitUntil(lambda: bool(run_ids(log)), timeout=10_000)
        (run_id,) = run_ids(log)
        assert run_row(log, run_id)["Result"] == "not done"
        select(qtbot, log, run_id)
        assert log.run_detail.text().startswith("Not done: the practice task is not done")
        assert log.run_detail.property("result") == "not_done"
    finally:
        app.close()
        qtbot.wait(50)
        cover.stop()
        bus.stop()
    assert not results[0].done
    assert rig.backends[0].calls == []  # it saw no practice window: it did nothing
    assert practice_windows(xvfb) == []


def in_view(window: QWidget, widget: QWidget) -> bool:
    """Whether ``widget`` is whole inside the task window's scrolled view (no scrolling
    needed to read it)."""
    from ui.task_window import TaskWindow

    assert isinstance(window, TaskWindow)
    viewport = window.scroll_area.viewport()
    top_left = widget.mapTo(viewport, QPoint(0, 0))
    return viewport.rect().contains(QRect(top_left, widget.size()))

