"""Nothing left pressed, ever (Xvfb): a run killed mid-drag, and the desktop app hung up on.

SIGKILL: `holodesk run` drags on the target's pad again and again (the stand-in scripts it);
the test catches it with the button down (the X server's pointer mask), freezes it (SIGSTOP,
then the kernel's word that it is stopped), checks the button is still down and SIGKILLs it.
A drag is over in a fraction of a second, so the test waits on those conditions, retrying on
the next drag when the button went up before the freeze: never on a sleep. The X server then
holds the dead run's button (checked: the need as well as the fix), and the next run's first
click must land on Save as a click, not as the end of the dead drag.

SIGHUP (the terminal that started the desktop app closing): the app stops its run, records it
as stopped by the signal, and quits, as on SIGTERM.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from Xlib import X
from Xlib import display as xdisplay

from tests.support.e2e import configure, run_holodesk, start_holodesk, wait_exit
from tests.support.fake_vllm import ChatRequest, FakeVLLM, ScriptedPolicy
from tests.support.fixtures import target_app_fixture, xvfb_fixture
from tests.support.gui import TRAY_IDLE, HolodeskGui, tray_icon
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

SCREEN = (1920, 1080)
xvfb = xvfb_fixture(*SCREEN)
TARGET_GEOMETRY = "1000x660+900+400"  # bottom right: the desktop app's windows are top left
app = target_app_fixture(TARGET_GEOMETRY, pointer=(600, 900))

TIMEOUT = 60.0  # start-up and waits for the run to get going (a busy 2-core machine)
BOUND = 10.0  # loose: a signal to the app's exit
HOLD = 600.0  # the stand-in "thinks" this long: only a stop ends the request sooner
DRAGS = 40  # a run's worth of drags on the pad: the test needs to catch one of them


def _norm(point: tuple[int, int]) -> tuple[int, int]:
    """A screen point in the default convention (norm1000; the screen is sent whole)."""
    return round(point[0] * 1000 / SCREEN[0]), round(point[1] * 1000 / SCREEN[1])


def _step(action: dict[str, Any], thought: str = "") -> dict[str, Any]:
    return {"note": "", "thought": thought or "Next.", "action": action}


def _drags(app: RunningApp) -> list[dict[str, Any]]:
    """Drags across the pad, each a little lower than the last (never the same action twice):
    H's way, a move to the start and a drag from the cursor to the end."""
    left, top, width, height = app.widgets["pad"].solid
    steps = []
    for i in range(DRAGS):
        y = top + 20 + (i * 5) % (height - 40)
        (x0, y0), (x1, y1) = _norm((left + 30, y)), _norm((left + width - 30, y))
        steps.append(_step({"action": "move", "element": "drag pad", "x": x0, "y": y0},
                           f"Go to the start of drag {i + 1}."))
        steps.append(_step({"action": "drag_to", "element": "drag pad", "x": x1, "y": y1},
                           f"Drag {i + 1} across the pad."))
    return steps


@contextmanager
def _x(xvfb: Xvfb) -> Iterator[xdisplay.Display]:
    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)
        try:
            yield d
        finally:
            d.close()


def _button1_down(d: xdisplay.Display) -> bool:
    return bool(d.screen().root.query_pointer().mask & X.Button1Mask)


def _stopped(pid: int) -> bool:
    """Whether the kernel has the process stopped (state T in /proc/PID/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] in ("T", "t")


def _kill_mid_drag(proc: Any, xvfb: Xvfb, app: RunningApp) -> None:
    """SIGKILL ``proc`` while it holds the button down on the pad (see the module doc)."""
    deadline = time.monotonic() + TIMEOUT
    with _x(xvfb) as d:
        while True:
            assert proc.poll() is None, "the run ended before the test caught a drag"
            assert time.monotonic() < deadline, "never caught the run with the button down"
            if not _button1_down(d):
                continue
            os.kill(proc.pid, signal.SIGSTOP)
            app.wait_for(lambda: _stopped(proc.pid), timeout=BOUND, what="the run to freeze")
            if _button1_down(d):
                proc.send_signal(signal.SIGKILL)
                break
            os.kill(proc.pid, signal.SIGCONT)  # the drag ended first: catch the next one
    wait_exit(proc, timeout=BOUND)


def test_a_run_killed_mid_drag_leaves_nothing_pressed_for_the_next(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    with FakeVLLM(ScriptedPolicy(_drags(app), repeat_last=True)) as server:
        proc = start_holodesk(home, "run", "drag across the pad", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb, workdir=tmp_path / "a")
        try:
            _kill_mid_drag(proc, xvfb, app)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(BOUND)
    with _x(xvfb) as d:
        assert _button1_down(d), "the killed run's button is up: this test proves nothing"
    assert app.events("press", widget="pad"), "the drag did not start on the pad"

    mark = app.mark()
    save = app.widgets["save"].solid_center
    x, y = _norm(save)
    script = ScriptedPolicy([
        _step({"action": "click", "element": "Save button", "x": x, "y": y}, "Click Save."),
        _step({"action": "answer", "text": "Saved."}, "Done."),
    ])
    with FakeVLLM(script) as server:
        result = run_holodesk(home, "run", "click save", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb)
    assert result.returncode == 0, str(result)
    app.sync()
    presses = app.events_since(mark, "pointer_press")
    assert presses and presses[0]["widget"] == "save", presses  # the first click is its own
    assert app.events_since(mark, "click", widget="save"), app.events_since(mark)
    with _x(xvfb) as d:
        assert not _button1_down(d)


# --------------------------------------------------------------------------- the desktop app


def _is_step(request: ChatRequest) -> bool:
    """A run's step (a screenshot), not the desktop app's server probe (tiny images)."""
    shot = request.latest_image
    return shot is not None and shot.width >= 200


ANSWER = json.dumps(_step({"action": "wait", "seconds": 1}))


def test_sighup_stops_the_apps_run_records_it_and_quits(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    with FakeVLLM(lambda _request: ANSWER) as server:
        configure(home, endpoint=server.base_url, confirm="never")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            icon = tray_icon(gui.move(gui.tray, 0, 1000))  # out from under the task window
            gui.wait_shows(icon, TRAY_IDLE, "the tray to show idle (the model server is up)")
            server.delay = HOLD
            gui.click(*gui.task.point(100, 30))
            gui.xdotool("type", "--delay", "15", "wait for it")
            gui.focus(gui.task)
            gui.xdotool("key", "ctrl+Return")
            server.wait_until(lambda s: any(_is_step(r) for r in s.requests),
                              "the run's first step request", TIMEOUT)
            gui.run_bar()  # the run acts: the task window and the stand-in collapsed into it
            assert gui.proc is not None
            os.kill(gui.pid, signal.SIGHUP)
            code = gui.proc.wait(BOUND)  # it quits by itself: no SIGTERM from stop()
        server.wait_for_disconnect(timeout=BOUND)  # the request in flight was abandoned
    assert code == 0, gui.stderr()
    shown = run_holodesk(home, "log", "show", "last")
    assert shown.returncode == 0, str(shown)
    assert "stopped by signal: SIGHUP" in shown.stdout, shown.stdout
