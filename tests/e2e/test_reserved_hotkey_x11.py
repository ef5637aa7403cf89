"""The agent never presses the person's stop hotkey, in the sessions the product really builds.

`holodesk run` and the desktop app build their sessions with app/session.py's
``build_session`` (the app through ui/bridge.py's ``real_session``), which hands the
configured ``stop_hotkey`` to the safety policy as a reserved chord. These tests go through
those builders as the product does (a subprocess on a private Xvfb, real input, confirmation
mode ``never`` so nothing but the policy stands between the model and the keyboard) with the
stop hotkey left at its default and set to another chord: the model asks to press it, and the
step must be refused (``forbidden``) while the run goes on to its answer.

Were the chord not reserved, the agent would press it for real, and the run's own stop
hotkey listener would stop the run: the tests tell the two apart by the run's end and the
action log.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e import configure, run_holodesk
from tests.support.fake_vllm import ChatRequest, FakeVLLM
from tests.support.fixtures import target_app_fixture, xvfb_fixture
from tests.support.gui import TRAY_DONE, TRAY_IDLE, TRAY_STOPPED, HolodeskGui, poll, tray_icon
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1920, 1080)

TIMEOUT = 60.0
TARGET_GEOMETRY = "1000x660+900+400"  # bottom right: the app's windows are at the top left
TRAY_PLACE = (0, 1000)
REFUSED = "the person's own hotkey (holodesk's emergency stop)"

#: (stop_hotkey setting or None for the default, the keys the model asks to press)
CASES = [
    pytest.param(None, ["ctrl", "alt", "shift", "escape"], id="default"),
    pytest.param("ctrl+alt+k", ["ctrl", "alt", "k"], id="configured"),
    # Extra keys do not make it another chord: all of the stop's keys are still held.
    pytest.param("ctrl+alt+k", ["shift", "alt", "k", "ctrl"], id="configured-plus-shift"),
]


class PressThenAnswer:
    """Step 1: press ``keys``; step 2: answer. The desktop app's server probe (tiny images)
    gets an answer of its own and does not count as a step."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        self.steps = 0
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> str:
        shot = request.latest_image
        step: dict[str, Any] = {"note": "", "thought": "done",
                                "action": {"action": "answer", "text": "done"}}
        if shot is not None and shot.width >= 200:
            with self._lock:
                self.steps += 1
                first = self.steps == 1
            if first:
                step = {"note": "", "thought": "press the chord",
                        "action": {"action": "hotkey", "keys": self.keys}}
        return json.dumps(step)


app = target_app_fixture(TARGET_GEOMETRY, pointer=(600, 900))


def _log_show(home: Home) -> str:
    result = run_holodesk(home, "log", "show", "last")
    assert result.returncode == 0, str(result)
    return result.stdout


def _ended(home: Home) -> bool:
    # The request the server answered may have been the app's status probe (its image check),
    # not the run's first step: no run in the log yet is "not ended yet".
    result = run_holodesk(home, "log", "show", "last")
    if result.returncode != 0 and "no run matches" in result.stderr:
        return False
    assert result.returncode == 0, str(result)
    return "answered" in result.stdout or "stopped" in result.stdout


@pytest.mark.parametrize(("setting", "keys"), CASES)
def test_holodesk_run_never_presses_the_stop_hotkey(
    xvfb: Xvfb, app: RunningApp, home: Home, setting: str | None, keys: list[str]
) -> None:
    configure(home, stop_hotkey=setting)
    with FakeVLLM(PressThenAnswer(keys)) as server:
        result = run_holodesk(home, "run", "press the chord", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb, timeout=TIMEOUT * 2)
    # Pressed, the chord would have stopped the run (exit 1, "stopped by hotkey").
    assert result.returncode == 0, str(result)
    assert "not available" not in result.stderr  # the stop hotkey listener was running
    shown = _log_show(home)
    assert "forbidden" in shown, shown
    assert REFUSED in shown, shown
    assert not app.events("key_down"), "a key of the chord reached the desktop"


@pytest.mark.parametrize(("setting", "keys"), CASES)
def test_the_desktop_app_never_presses_the_stop_hotkey(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path, setting: str | None,
    keys: list[str],
) -> None:
    policy = PressThenAnswer(keys)
    with FakeVLLM(policy) as server:
        configure(home, endpoint=server.base_url, confirm="never", stop_hotkey=setting)
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            icon = tray_icon(gui.move(gui.tray, *TRAY_PLACE))
            gui.wait_shows(icon, TRAY_IDLE, "the tray to show idle (the model server is up)")
            served = server.served
            assert run_holodesk(home, "trigger", "run", "press the chord").returncode == 0
            # A request answered (the run's step 1, or the status probe's): then wait for the end.
            server.wait_for_served(served + 1, timeout=TIMEOUT)
            poll(lambda: _ended(home), TIMEOUT, "the run to end", gui.died)
            poll(lambda: gui.shows(icon, TRAY_DONE) or gui.shows(icon, TRAY_STOPPED),
                 TIMEOUT, "the tray to show the run's end", gui.died)
            assert not gui.shows(icon, TRAY_STOPPED), "the run was stopped"
    shown = _log_show(home)
    assert "answered" in shown, shown
    assert "forbidden" in shown, shown
    assert REFUSED in shown, shown
    assert not app.events("key_down"), "a key of the chord reached the desktop"
