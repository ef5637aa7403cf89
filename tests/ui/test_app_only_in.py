"""An automation's ``only_in`` reaches the run however the desktop app starts it (found by a
hostile review: the app's runs kept only the confirmation mode and the monitor)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.automations import Automation, add_automation
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, SeeingPolicy
from tests.support.home import isolate_home


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


@pytest.mark.parametrize("source", ["tray", "hotkey", "schedule", "trigger"])
def test_the_apps_automation_runs_keep_only_in(
        qtbot: QtBot, make_app: MakeApp, source: str) -> None:
    auto = Automation.make(name="web only", task="press the red box", only_in=["firefox"])
    with FakeVLLM(SeeingPolicy([])) as server:
        app, rig = make_app(server)
        app.set_automations([auto])
        assert app.run_automation("web only", source)
        qtbot.waitUntil(lambda: len(rig.settings) == 1, timeout=20_000)
        assert rig.settings[0].only_in == ("firefox",)


def test_the_test_run_keeps_only_in(qtbot: QtBot, make_app: MakeApp) -> None:
    auto = Automation.make(name="web only", task="press the red box", only_in=["firefox"])
    with FakeVLLM(SeeingPolicy([])) as server:
        app, rig = make_app(server)
        assert app.test_run_automation(auto)
        qtbot.waitUntil(lambda: len(rig.settings) == 1, timeout=20_000)
        assert rig.settings[0].only_in == ("firefox",)
        assert str(rig.settings[0].confirm) == "always"


def test_an_automation_only_narrows_the_apps_settings(qtbot: QtBot, make_app: MakeApp,
                                                     file_keyring: object) -> None:
    """An automation (an imported one too) never acts in more applications than the settings
    allow: those both allow, none in common refuses the run; its confirmation mode is its own
    (saved by the person with holodesk, so approved for its task: app/approval.py)."""
    auto = Automation.make(name="term", task="press the red box", only_in=["xterm", "gedit"],
                           confirm="risky")
    elsewhere = Automation.make(name="calc", task="press the red box", only_in=["kcalc"])
    add_automation(auto)
    add_automation(elsewhere)
    with FakeVLLM(SeeingPolicy([])) as server:
        app, rig = make_app(server, only_in="firefox, xterm", confirm="always")
        app.set_automations([auto, elsewhere])
        assert not app.run_automation("calc", "tray")
        assert "may act only in kcalc" in app.teller.told[-1] and rig.settings == []
        assert app.run_automation("term", "tray")
        qtbot.waitUntil(lambda: len(rig.settings) == 1, timeout=20_000)
        assert rig.settings[0].only_in == ("xterm",)
        assert str(rig.settings[0].confirm) == "risky"
