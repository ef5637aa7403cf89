"""A stop while the model thinks ends the in-flight request, on every stop path (Xvfb).

The stand-in server holds each step request for ten minutes (``HOLD``): only a client that
hangs up ends it sooner, and the server counts that hang-up (``disconnects``). So a run that
ends within ``BOUND`` *and* a disconnect the server saw prove the stop cancelled the request;
a stop that merely waited for the answer (or for holodesk's own request timeout, 120 s) fails
here instead of passing slowly.

Paths: in the desktop app (driven as a person does, see tests/support/gui.py) the global stop
hotkey, the run bar's Stop (what the task window and the tray's stand-in collapse into while a
run acts: Xvfb has no system tray), the task window's Stop button (brought back with the bar's
Show) and `holodesk trigger stop`; in `holodesk run`,
Ctrl+C typed into the terminal it runs in (a pseudo-terminal whose line discipline turns ^C
into SIGINT) and the stop hotkey. Each test also checks, in the action log, that the path it
pulled is the one that stopped the run. The failsafe corner is tests/e2e/test_e2e_x11.py's.

Nothing waits on a sleep: the request arrived (``wait_until``), then the stop, then the
disconnect (``wait_for_disconnect``) and the app's or the process's state.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from app.cli.exitcodes import EXIT_STOPPED
from tests.support.e2e import configure, holodesk_argv, holodesk_env, run_holodesk, wait_exit
from tests.support.fake_vllm import ChatRequest, FakeVLLM
from tests.support.fixtures import target_app_fixture, xvfb_fixture
from tests.support.gui import (
    TRAY_IDLE,
    TRAY_STOPPED,
    HolodeskGui,
    XWindow,
    grab,
    poll,
    tray_icon,
)
from tests.support.home import REPO_ROOT, Home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1920, 1080)

HOLD = 600.0  # seconds the stand-in "thinks" about a step: far beyond any bound below
BOUND = 10.0  # loose: stop to disconnect and to the run's end, on a busy 2-core machine
TIMEOUT = 60.0  # for start-up (Qt, Tk and Python starting in parallel), never for the stop
TARGET_GEOMETRY = "1000x660+900+400"  # bottom right: the app's windows are at the top left
TRAY_PLACE = (0, 1000)  # the tray stand-in, moved out from under the task window
TASK = "press the save button"

#: What the model would answer, had it finished thinking: a click on Save. It never arrives.
ANSWER = json.dumps({"note": "", "thought": "Save is visible; click it.",
                     "action": {"action": "click", "element": "Save button", "x": 100,
                                "y": 100}})


app = target_app_fixture(TARGET_GEOMETRY, pointer=(600, 900))


def _is_step(request: ChatRequest) -> bool:
    """A run's step (a screenshot), not the desktop app's server probe (tiny images)."""
    shot = request.latest_image
    return shot is not None and shot.width >= 200


def _wait_for_step(server: FakeVLLM) -> None:
    server.wait_until(lambda s: any(_is_step(r) for r in s.requests),
                      "the run's first step request", TIMEOUT)


def _log_show(home: Home) -> str:
    result = run_holodesk(home, "log", "show", "last")
    assert result.returncode == 0, str(result)
    return result.stdout


def _assert_cancelled(server: FakeVLLM, served: int, stopped_at: float,
                      ended: Callable[[], None]) -> None:
    """The request was abandoned and the run over, both within BOUND of the stop, and no
    answer was served after the ``served`` before the run."""
    server.wait_for_disconnect(timeout=BOUND)
    ended()
    took = time.monotonic() - stopped_at
    assert took < BOUND, f"the stop took {took:.1f} s"
    assert server.served == served, "a step was answered: the stop waited for the model"


# --------------------------------------------------------------------------- the desktop app


def _task_stop_point(xvfb: Xvfb, task: XWindow) -> tuple[int, int]:
    """The task window's red Stop button (in its top half: the screenshot preview below may
    hold red too)."""
    top = grab(xvfb).crop((task.x, task.y, task.x + task.width, task.y + task.height // 2))
    rgb = np.asarray(top, dtype=np.int16)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    # The style's gradient lightens #cf222e: "strongly red" rather than one colour.
    ys, xs = np.nonzero((r >= 190) & (r - g >= 90) & (r - b >= 80))
    assert len(xs) >= 200, "the task window's Stop button is not on screen"
    return task.x + int(xs.min() + xs.max()) // 2, task.y + int(ys.min() + ys.max()) // 2


def _start_task(gui: HolodeskGui) -> XWindow:
    """Click into the task box, type the task, Ctrl+Enter: the run starts; its run bar."""
    gui.click(*gui.task.point(100, 30))
    gui.xdotool("type", "--delay", "15", TASK)
    gui.focus(gui.task)  # no window manager hands it the focus on the click
    gui.xdotool("key", "ctrl+Return")
    return gui.run_bar()


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("hotkey", "hotkey"),
        ("run bar", "stop button"),
        ("task window", "task window"),
        ("holodesk trigger stop", "trigger"),
    ],
)
def test_a_stop_in_the_app_cancels_the_request_in_flight(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path, path: str, source: str
) -> None:
    with FakeVLLM(lambda _request: ANSWER) as server:
        configure(home, endpoint=server.base_url, confirm="never")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            tray = gui.move(gui.tray, *TRAY_PLACE)
            icon = tray_icon(tray)
            # Idle: the app's server probe (a chat request of its own) has been answered, so
            # the hold below applies to the run's steps only.
            gui.wait_shows(icon, TRAY_IDLE, "the tray to show idle (the model server is up)")
            served = server.served
            server.delay = HOLD
            bar = _start_task(gui)
            _wait_for_step(server)
            assert server.disconnects == 0
            if path == "hotkey":
                stopped_at = time.monotonic()
                gui.xdotool("key", "ctrl+alt+shift+Escape")
            elif path == "run bar":
                stopped_at = time.monotonic()
                gui.click(*bar.point(40, bar.height // 2))  # its red Stop, on the left
            elif path == "task window":
                _show_task_window(gui, bar)
                point = _task_stop_point(xvfb, gui.refresh(gui.task))
                stopped_at = time.monotonic()
                gui.click(*point)
            else:
                stopped_at = time.monotonic()
                assert run_holodesk(home, "trigger", "stop").returncode == 0
            _assert_cancelled(server, served, stopped_at, lambda: gui.wait_shows(
                icon, TRAY_STOPPED, "the tray to show the run stopped", timeout=BOUND))
            assert gui.died() is None  # a stop ends the run, not the app
    assert not app.events("pointer_press"), "acted after the stop"
    shown = _log_show(home)
    assert f"stopped by {source}" in shown, shown


def _show_task_window(gui: HolodeskGui, bar: XWindow) -> None:
    """The run bar's Show (at its right end): the task window back during the run."""
    gui.click(*bar.point(bar.width - 24, bar.height // 2))
    poll(lambda: gui.visible(gui.task), TIMEOUT, "the task window back", gui.died)


# --------------------------------------------------------------------------- holodesk run


def _start_in_terminal(home: Home, xvfb: Xvfb, workdir: Path,
                       *args: str) -> tuple[subprocess.Popen[str], int]:
    """`holodesk ARGS` with a pseudo-terminal as its controlling terminal; the terminal's
    master side is returned to type into (stdout and stderr go to files in ``workdir``)."""
    workdir.mkdir(parents=True, exist_ok=True)
    master, slave = pty.openpty()
    try:
        # setsid -c: a session of its own whose controlling terminal is stdin (the pty), so
        # the pty's foreground process group is holodesk's and ^C reaches it as it would in
        # a terminal window.
        proc = subprocess.Popen(
            ["setsid", "-c", *holodesk_argv(*args)], env=holodesk_env(home, xvfb),
            cwd=REPO_ROOT, stdin=slave, stdout=(workdir / "stdout").open("w"),
            stderr=(workdir / "stderr").open("w"), text=True,
        )
    finally:
        os.close(slave)
    return proc, master


@pytest.mark.parametrize("path", ["ctrl+c", "hotkey"])
def test_a_stop_in_the_terminal_cancels_the_request_in_flight(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path, path: str
) -> None:
    out = tmp_path / "run"
    with FakeVLLM(lambda _request: ANSWER) as server:
        server.delay = HOLD
        proc, terminal = _start_in_terminal(
            home, xvfb, out, "run", TASK, "--confirm", "never", "--endpoint", server.base_url)
        try:
            # The stop hotkey's listener is ready before the run's first request is sent.
            _wait_for_step(server)
            stopped_at = time.monotonic()
            if path == "ctrl+c":
                os.write(terminal, b"\x03")  # Ctrl+C, typed into the terminal
            else:
                subprocess.run(["xdotool", "key", "ctrl+alt+shift+Escape"], env=xvfb.env(),
                               check=True)
            codes: list[int] = []
            _assert_cancelled(server, 0, stopped_at,
                              lambda: codes.append(wait_exit(proc, timeout=BOUND)))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)
            os.close(terminal)
    stderr = (out / "stderr").read_text()
    assert codes == [EXIT_STOPPED], stderr
    assert "run stopped" in stderr
    assert "SIGINT" in stderr if path == "ctrl+c" else "stopped by hotkey" in stderr
    assert not app.events("pointer_press"), "acted after the stop"
    assert "stopped" in _log_show(home)
