"""Automations end to end on a private Xvfb: `holodesk trigger NAME` with no app (a headless
run in the terminal), and the desktop app with an automation on a global hotkey, pressed with
xdotool (DISPLAY is always the test's own) while the target window has the focus (the hotkey
is reserved: the window never gets its key), then triggered from another process.

The fake model sees (it finds the red Save button in the screenshot), so a click reaching Save
proves the automation's run went all the way through. The hotkey's answered run is saved as the
automation's steps, so the triggered run after it replays them (still confirmed).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.e2e import run_holodesk
from tests.support.fake_vllm import FakeVLLM, SeeingPolicy, Target
from tests.support.fixtures import target_app_fixture, xvfb_fixture
from tests.support.gui import RUN_BAR, TRAY_DONE, TRAY_IDLE, HolodeskGui, poll, tray_icon, windows
from tests.support.home import Home
from tests.support.stop_hotkey import focus_field
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1920, 1080)

RED = (255, 0, 0)  # the target's Save button
TARGET_GEOMETRY = "1000x660+900+400"  # bottom right: the app's windows are at the top left
TRAY_PLACE = (0, 1000)
TIMEOUT = 60.0  # loose: a busy 2-core machine starts Qt, Tk and Python in parallel
TASK = "press the save button"


app = target_app_fixture(TARGET_GEOMETRY, pointer=(600, 900))


def _ok(home: Home, *args: str) -> str:
    result = run_holodesk(home, *args)
    assert result.returncode == 0, str(result)
    return result.stdout


def _runs(home: Home) -> list[str]:
    """The action log's runs, one line each (newest first)."""
    listed = _ok(home, "log", "list").splitlines()
    return [line for line in listed[1:] if line.strip()]


def test_trigger_runs_the_automation_here_when_no_app_runs(
        xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    with FakeVLLM(SeeingPolicy([Target("Save button", RED)])) as server:
        _ok(home, "config", "set", "endpoint", server.base_url)
        _ok(home, "config", "set", "confirm", "never")
        # The automation's own mode: every step confirmed, on the terminal as `holodesk run`.
        _ok(home, "automation", "add", "save it", "--task", TASK, "--confirm", "always")
        result = run_holodesk(home, "trigger", "Save It", xvfb=xvfb, stdin="a\n")
    assert result.returncode == 0, str(result)
    assert "confirm: click" in result.stdout and "Save button" in result.stdout
    assert app.wait_for(lambda: app.events("click", widget="save"), what="the click on Save")
    runs = _runs(home)
    assert len(runs) == 1 and "  done  " in runs[0] and TASK in runs[0]


def test_a_hotkey_runs_the_automation_in_the_app_once(
        xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path) -> None:
    policy = SeeingPolicy([Target("Save button", RED)])
    with FakeVLLM(policy) as server:
        _ok(home, "config", "set", "endpoint", server.base_url)
        # Every step confirmed: the run waits at the confirmation while the hotkey is pressed
        # again (hand back on touch is off there, so the press cannot pause it either).
        _ok(home, "automation", "add", "save it", "--task", TASK, "--confirm", "always",
            "--hotkey", "ctrl+alt+1")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            tray = tray_icon(gui.move(gui.tray, *TRAY_PLACE))
            gui.wait_shows(tray, TRAY_IDLE, "the tray to show idle (the model server is up)")
            poll(lambda: "automation hotkeys: ctrl+alt+1" in _log_text(home), TIMEOUT,
                 "the automation's hotkey to be registered", gui.died)

            focus_field(xvfb, app)  # the window in front when the person presses the hotkey
            mark = app.mark()
            gui.xdotool("key", "ctrl+alt+1")
            panel = gui.confirm_panel()
            # The task window and the stand-in collapsed into the run bar while it acts.
            assert gui.visible(gui.task) is None and gui.visible(gui.tray) is None
            app.sync()  # whatever the run sent before it asked has arrived now
            assert not app.events("click")  # nothing before the approval
            # Reserved (an X grab): the 1 of the hotkey never reached the window in front.
            assert not [e for e in app.events_since(mark) if e.get("keysym") == "1"]
            assert "could not be reserved" not in gui.stderr()

            gui.xdotool("key", "ctrl+alt+1")  # again, during the run
            poll(lambda: "was not started" in gui.stderr(), TIMEOUT,
                 "the app to say the second press started nothing", gui.died)
            assert "“save it” (hotkey)" in gui.stderr()

            _approve(gui, app, panel)
            _wait_run_over(gui)
            gui.wait_shows(tray, TRAY_DONE, "the tray to show the run done")
            # Back, titled with the automation's name, not the task (a failure too is shown
            # under it).
            poll(lambda: (w := gui.visible(gui.task)) is not None
                 and w.name == "holodesk — automation: save it", TIMEOUT,
                 "the task window to show the automation's run", gui.died)
            assert len(_runs(home)) == 1

            # From another process: forwarded to the app, which runs it again.
            policy.reset()
            triggered = run_holodesk(home, "trigger", "save it", xvfb=xvfb)
            assert triggered.returncode == 0, str(triggered)
            assert "started in the desktop app" in triggered.stdout
            _approve(gui, app, gui.confirm_panel(), clicks=2)
            _wait_run_over(gui)  # else quitting the app can interrupt the run's last step
            gui.wait_shows(tray, TRAY_DONE, "the tray to show the run done")
    assert [e["widget"] for e in app.events("click")] == ["save", "save"]
    runs = _runs(home)
    assert len(runs) == 2 and all("  done  " in r for r in runs)
    # The hotkey's run was recorded; the app replayed it for the trigger, still confirmed.
    assert policy.position == 0
    shown = _ok(home, "log", "show", "last").splitlines()
    steps = [line for line in shown if line.startswith("step ")]
    assert len(steps) == 2 and all(line.endswith("replayed") for line in steps), steps


def _wait_run_over(gui: HolodeskGui) -> None:
    """The run's worker has ended (the run bar goes once it has)."""
    poll(lambda: not windows(gui.xvfb, RUN_BAR, gui.pid), TIMEOUT, "the run bar to go",
         gui.died)


def _log_text(home: Home) -> str:
    return "".join(p.read_text(errors="replace") for p in home.state.rglob("*.log"))


def _approve(gui: HolodeskGui, app: RunningApp, panel: object, clicks: int = 1) -> None:
    """Press Enter on the confirmation panel (it takes the focus itself) until the click
    arrives; again only while the panel is still up (the panel ignores an Enter that comes
    before it is armed, 350 ms after it appears)."""
    wid = getattr(panel, "wid", "")
    deadline = time.monotonic() + TIMEOUT
    while len(app.events("click", widget="save")) < clicks:
        if time.monotonic() > deadline:
            raise AssertionError("the approved click on Save did not arrive")
        if any(w.wid == wid for w in windows(gui.xvfb, ".*", gui.pid)):
            gui.xdotool("key", "Return")
        settle = time.monotonic() + 3.0
        while time.monotonic() < settle and len(app.events("click", widget="save")) < clicks:
            time.sleep(0.05)
