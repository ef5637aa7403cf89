"""A stop hotkey changed in Settings works at once, with no moment without one."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.automations import Automation, save_automations
from app.events import RunFinished
from control.hotkeys import DEFAULT_STOP_HOTKEY
from control.policy import ConfirmMode
from tests.support.app_rig import MakeApp
from tests.support.fake_hotkeys import FakeHotkeys
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home, isolate_home

CLICK = {"thought": "save", "action": {"action": "click", "element": "Save", "x": 500, "y": 500}}
NEW_STOP = "ctrl+alt+9"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


def test_the_new_stop_hotkey_stops_a_run_and_the_old_one_is_gone(
    qtbot: QtBot, home: Home, make_app: MakeApp
) -> None:
    hotkeys = FakeHotkeys()
    with FakeVLLM(ScriptedPolicy([CLICK, CLICK])) as server:
        app, rig = make_app(server, confirm=ConfirmMode.ALWAYS)
        hotkeys.register(DEFAULT_STOP_HOTKEY, app.hotkeys.stop_callback(DEFAULT_STOP_HOTKEY))
        hotkeys.start()
        app.hotkeys.set_listener(hotkeys, DEFAULT_STOP_HOTKEY)

        assert app.hotkeys.apply_stop_hotkey(NEW_STOP)
        assert hotkeys.combos == [NEW_STOP]
        assert "Ctrl+Alt+9" in app.run_bar.stop_face.toolTip()

        assert app.start_task("save the file")
        qtbot.waitUntil(lambda: app.controller.pending is not None, timeout=20_000)
        assert not hotkeys.fire(DEFAULT_STOP_HOTKEY)  # the old one does nothing now
        assert hotkeys.fire(NEW_STOP)
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=20_000)
        last = rig.events[-1]
        assert isinstance(last, RunFinished) and last.outcome.value == "stopped"
        assert rig.backends[0].calls == []


def test_an_automation_clashing_with_the_new_stop_hotkey_is_left_out(
    qtbot: QtBot, home: Home, make_app: MakeApp
) -> None:
    save_automations([Automation.make(name="mail", task="send it", hotkey="ctrl+alt+9")])
    hotkeys = FakeHotkeys()
    hotkeys.start()
    with FakeVLLM(ScriptedPolicy([CLICK])) as server:
        app, _rig = make_app(server)
        hotkeys.register(DEFAULT_STOP_HOTKEY, app.hotkeys.stop_callback(DEFAULT_STOP_HOTKEY))
        app.hotkeys.set_listener(hotkeys, DEFAULT_STOP_HOTKEY)
        assert app.hotkeys.registered == ["ctrl+alt+9"]

        assert app.hotkeys.apply_stop_hotkey("ctrl+alt+9")
        assert app.hotkeys.registered == []  # the stop wins
        assert hotkeys.combos == ["ctrl+alt+9"]
        told = [e for e in app.teller.told if "emergency stop hotkey" in e]
        assert told and told[0].startswith("The hotkey ")
        assert "choose another hotkey. Until then" in told[0]
