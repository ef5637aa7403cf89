"""The desktop app's demo (HolodeskApp.start_demo) over the same core as `holodesk demo`.

The app runs offscreen under pytest-qt; the practice window runs in its own process on a
private Xvfb, and the runs' screenshots are real captures of that display, sent to the real
demo server by the real client. Input is recorded, not sent (nothing here may drive a display
from the test process), so the practice task cannot get done: the test checks the wiring
(the demo's settings reach the run, the app's confirmation asks, closing ends everything)
and that an unfinished demo is told to the person.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
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
from tests.support.fixtures import xvfb_fixture
from tests.support.home import isolate_home
from tests.support.wm import WindowManager
from tests.support.xvfb import Xvfb

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


def test_start_demo_runs_the_demo_in_the_app(on_display: Xvfb, qtbot: QtBot) -> None:
    from ui.app import HolodeskApp

    xvfb = on_display
    used: list[Settings] = []
    backends: list[DryRunBackend] = []

    def parts(request: RunRequest, latch: StopLatch, pause: PauseGate | None) -> RunParts:
        settings = request.settings
        used.append(settings)
        backend = DryRunBackend()
        backends.append(backend)
        finder = X11TargetFinder(xvfb.display)
        return RunParts(AgentParts(
            client=HolotronClient(client_config(settings, None)),
            capturer=make_capturer(settings, display=xvfb.display),
            executor=Executor(backend, latch),
            policy=SafetyPolicy(settings.confirm, only_in=settings.only_in),
            store=ActionLog.open(),
            latch=latch,
            pause=pause,
            finder=finder,
        ), closeables=[finder], dry_run=True)

    def factory(request: RunRequest, latch: StopLatch, gate: PauseGate) -> Session:
        return build_session(request, parts, latch=latch, pause=gate)

    # The person's endpoint answers nothing: the demo needs no model server.
    app = HolodeskApp(Settings(endpoint="http://127.0.0.1:9/v1", confirm="always"),
                      session_factory=factory, use_system_tray=False, probe=False)
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
    finally:
        app.close()
        qtbot.wait(50)
    assert not results[0].done
    assert "not done" in results[0].message
    assert any("not done" in text for text in app.teller.told)
    assert backends[0].calls == []  # stopped at the first question: nothing was done
    assert practice_windows(xvfb) == []

