"""One run's request (app/run_request.py) and the one session builder (app/session.py).

`holodesk run`, `holodesk automation run` and the desktop app make a run's request in one place
(``make_run_request``): from the same choices they make the same request, the confirmation mode
typed. The session is built from the request by ``build_session`` with everything the run is
given as an input (its pause, its parameters, the automation it replays): nothing to call in an
order afterwards.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

import app.cli.run
import app.settings
from app.agent import AgentParts
from app.automations import Automation, AutomationError, add_automation
from app.cli.main import _parser
from app.pause import PauseGate
from app.run_request import AutomationMode, RunRequest, make_run_request
from app.session import RunParts, build_session
from app.settings import COMMAND_LINE, RunValues, Settings, SettingsError
from app.store import ActionLog
from control.input import DryRunBackend, Executor
from control.policy import ConfirmMode, SafetyPolicy
from control.stop import StopLatch
from model.client import ClientConfig, HolotronClient
from model.run_secrets import RunSecrets
from tests.support.app_rig import MakeApp, screen
from tests.support.fake_capturer import FakeCapturer
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, ScriptItem
from tests.support.home import isolate_home

ANSWER: ScriptItem = {"thought": "done", "action": {"action": "answer", "text": "done"}}
SOURCE = "automation 'greet'"


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, file_keyring: Any) -> None:
    """An isolated home with a keyring: automations added with holodesk are approved there."""
    isolate_home(monkeypatch, tmp_path)


def _greet(**values: object) -> Automation:
    return Automation.make(**{"name": "greet", "task": "write hello to {who}",
                              "parameters": {"who": {"default": "Ann"}}, "confirm": "risky",
                              "monitor": "mouse", "only_in": "gedit, firefox", **values})


def _same_settings_for_both(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> None:
    """The CLI reads the settings as the test app does (app/cli/run.py reads them when asked):
    the saved ones, the stand-in server's endpoint on top."""
    read = app.settings.load_settings
    monkeypatch.setattr(app.settings, "load_settings",
                        lambda *a, **k: read(*a, **k).with_overrides({"endpoint": endpoint},
                                                                     source="test"))


def _gui_request(qtbot: QtBot, make_app: MakeApp, server: FakeVLLM,
                 start: Callable[[Any], object]) -> RunRequest:
    """The request the desktop app's run of ``start(app)`` was built from."""
    gui, rig = make_app(server)
    start(gui)
    qtbot.waitUntil(lambda: rig.finished() == 1, timeout=20_000)
    assert len(rig.requests) == 1
    return rig.requests[0]


def test_holodesk_run_and_the_task_window_make_the_same_request(
        qtbot: QtBot, make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        _same_settings_for_both(monkeypatch, server.base_url)

        def from_the_window(gui: Any) -> None:
            window = gui.task_window
            window.task_edit.setPlainText("sort the downloads")
            window.confirm_combo.setCurrentIndex(window.confirm_combo.findData("always"))
            window.monitor_combo.setCurrentText("2")
            assert window.start_button.isEnabled()
            window.start_button.click()

        gui = _gui_request(qtbot, make_app, server, from_the_window)
    args = _parser().parse_args(["run", "sort the downloads", "--confirm", "always",
                                 "--monitor", "2"])
    cli = app.cli.run.run_request(args)
    assert gui == cli
    assert cli.confirm is ConfirmMode.ALWAYS and gui.confirm is ConfirmMode.ALWAYS
    assert cli.monitor == "2" and cli.settings.monitor == "2"
    assert cli.values == RunValues(confirm=ConfirmMode.ALWAYS, monitor="2")
    assert cli.values.source("confirm") == COMMAND_LINE
    assert cli.automation is None and cli.parameters is None and not cli.dry_run


def test_automation_run_and_the_app_make_the_same_request_for_an_automation(
        qtbot: QtBot, make_app: MakeApp, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.cli.automations

    automation = _greet()
    add_automation(automation)  # made with holodesk: approved as it is
    made: list[RunRequest] = []

    def run_task(request: RunRequest, **_options: object) -> int:
        made.append(request)
        return 0

    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        _same_settings_for_both(monkeypatch, server.base_url)

        def from_the_tray(gui: Any) -> None:
            gui.set_automations([automation])
            assert gui.run_automation("greet", "tray")

        gui = _gui_request(qtbot, make_app, server, from_the_tray)
    monkeypatch.setattr(app.cli.run, "run_task", run_task)
    args = _parser().parse_args(["automation", "run", "greet"])
    assert app.cli.automations._cmd_run(args) == 0
    cli = made[0]
    assert gui == cli
    assert cli.task == "write hello to Ann"
    assert cli.parameters is not None and dict(cli.parameters.values) == {"who": "Ann"}
    assert cli.automation == automation and cli.mode is AutomationMode.RUN and cli.replay
    assert cli.confirm is ConfirmMode.RISKY and cli.monitor == "mouse"
    assert cli.only_in == ("gedit", "firefox")
    assert cli.values.source("confirm") == SOURCE


def test_the_persons_confirm_choice_is_typed_and_wins_over_the_automations() -> None:
    automation = _greet()
    add_automation(automation)
    settings = Settings(only_in=("Firefox", "xterm"))
    request = make_run_request(settings, automation.task, RunValues(confirm=ConfirmMode.ALWAYS),
                               automation=automation, parameters=automation.fill({"who": "Ann"}))
    assert request.confirm is ConfirmMode.ALWAYS and request.settings.confirm is ConfirmMode.ALWAYS
    assert request.values.source("confirm") == COMMAND_LINE
    assert request.values.source("monitor") == SOURCE
    assert request.only_in == ("firefox",)  # an automation's applications only narrow
    assert request.settings.sources["only_in"] == SOURCE
    assert request.task == "write hello to Ann"
    # Never saved: the run's own values stay out of the settings file.
    assert {"confirm", "monitor", "only_in"} <= request.settings.origin.transient


def test_only_in_from_the_command_line_replaces_the_settings_and_is_carried() -> None:
    args = argparse.Namespace(confirm=None, monitor=None, only_in="firefox, libreoffice-calc",
                              max_steps=7, max_seconds=None, endpoint=None, model=None,
                              convention=None, model_profile=None)
    choices = app.cli.run.run_choices(args)
    request = make_run_request(Settings(only_in=("gedit",)), "fill the sheet", choices)
    assert request.only_in == ("firefox", "libreoffice-calc")
    assert request.limits.max_steps == 7 and request.settings.max_steps == 7
    assert request.confirm is ConfirmMode.RISKY  # not chosen: the settings'


def test_a_bad_choice_and_an_automation_that_may_act_nowhere_are_refused() -> None:
    with pytest.raises(SettingsError, match="command line"):
        make_run_request(Settings(), "anything", RunValues(monitor="the left one"))
    automation = _greet(only_in="xterm")
    add_automation(automation)
    with pytest.raises(AutomationError, match="may act only in xterm"):
        make_run_request(Settings(only_in=("gedit",)), automation.task, automation=automation)


def test_a_test_run_confirms_every_step_and_neither_replays_nor_saves() -> None:
    automation = _greet(confirm="never")
    request = make_run_request(Settings(), automation.task, automation=automation,
                               mode=AutomationMode.TEST)
    assert request.confirm is ConfirmMode.ALWAYS
    assert request.saved_steps is None and not request.replay
    assert make_run_request(Settings(), automation.task, automation=automation,
                            mode=AutomationMode.WITHOUT_REPLAY).saved_steps == automation


class _Backend(DryRunBackend):
    """Input that holds something until closed."""

    closed = 0

    def close(self) -> None:
        self.closed += 1


class _Finder:
    """A part of the run's own that holds something until closed."""

    closed = 0

    def close(self) -> None:
        self.closed += 1


def test_the_session_is_built_from_the_request_with_no_order_to_keep() -> None:
    """The pause, the parameters and the automation are inputs of the builder: the session
    comes out wired (nothing assigned to it afterwards), and closing it closes every part
    that holds something, through the Closeable protocol."""
    automation = _greet()
    filled = automation.fill({"who": "Bob"})
    request = make_run_request(Settings(), filled.task, automation=automation,
                               parameters=filled)
    gate, latch = PauseGate(), StopLatch()
    backend, finder = _Backend(), _Finder()

    def parts(req: RunRequest, run_latch: StopLatch, pause: PauseGate | None) -> RunParts:
        assert req is request and run_latch is latch
        secrets = RunSecrets()  # the policy and the log share the run's, as RealParts's do
        return RunParts(AgentParts(
            client=HolotronClient(ClientConfig(base_url="http://127.0.0.1:9/v1")),
            capturer=FakeCapturer(screen),
            executor=Executor(backend, run_latch),
            policy=SafetyPolicy(req.settings.confirm, secrets=secrets),
            store=ActionLog.open(secrets=secrets),
            latch=run_latch,
            pause=pause,
        ), closeables=[finder])

    session = build_session(request, parts, latch=latch, pause=gate)
    try:
        assert session.parts.pause is gate and session.latch is latch
        assert session.task == "write hello to Bob" and session.parameters == filled
        assert session.automation == automation
        assert session.recorder is not None  # an answered run's steps are saved
        assert session.recorder.template == automation.task
    finally:
        session.close()
    assert finder.closed == 1 and backend.closed == 1
