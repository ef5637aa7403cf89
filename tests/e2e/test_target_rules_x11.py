"""End to end: the target-aware rules of issue 10 on a real desktop (Xvfb and openbox).

Each rule is pinned where a person meets it, with real processes: the desktop app or
``holodesk run`` against the stand-in server, the Tk target app (tests/support/target_app.py)
recording what reaches it, a real xterm running bash (tests/support/terminal.py). The window
manager matters: it moves the focus on a click, frames the windows and answers holodesk's
requests to give the focus back.

* The person approves typing in the confirmation panel after looking at the task window (brought
  back with the run bar's Show): the keys still go to the window they were approved for
  (app/agent.py ``_after_confirmation``, ``X11TargetFinder.activate``).
* A click on holodesk's own window (the run bar, all that stands on the screen of holodesk
  while a run acts) is refused, and the model is told so.
* ``holodesk run`` in a terminal (``$WINDOWID``) never types into that terminal.
* A password manager (``never_touch``) is painted out of the screenshot and never clicked.
* ``--only-in`` refuses a click anywhere else.

One Xvfb and one openbox serve the module; every test starts its own windows.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.e2e import configure, run_holodesk
from tests.support.fake_vllm import ChatRequest, FakeVLLM, ScriptedPolicy, SeeingPolicy, Target
from tests.support.fixtures import xvfb_fixture
from tests.support.gui import (
    TRAY_DONE,
    TRAY_IDLE,
    TRAY_STOPPED,
    HolodeskGui,
    XWindow,
    grab,
    poll,
    tray_icon,
)
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.terminal import Terminal, missing_tools
from tests.support.wm import WindowManager
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

WIDTH, HEIGHT = 1920, 1080  # no downscale: the model's points are screen points
xvfb = xvfb_fixture(WIDTH, HEIGHT)

TIMEOUT = 60.0  # loose: a busy 2-core machine starts Qt, Tk and Python in parallel
BLUE = (0, 0, 255)  # the target app's text field
MASK_GREY = 128  # control/capture.py's MASK_BGRX
TARGET_GEOMETRY = "1000x660+880+380"  # bottom right: the app's windows open at the top left
REST = (860, 40)  # where the pointer waits: on no window, far from the failsafe corners
OWN = "never acts on its own windows"
ANSWER: dict[str, Any] = {"note": "", "thought": "That is all.",
                          "action": {"action": "answer", "text": "done"}}


def _xdotool(xvfb: Xvfb, *args: str) -> str:
    return subprocess.run(["xdotool", *args], env=xvfb.env(), check=True, capture_output=True,
                          text=True, timeout=30).stdout


def _start_app(xvfb: Xvfb, workdir: Path, geometry: str, class_name: str = "") -> RunningApp:
    extra = ("--class-name", class_name) if class_name else ()
    return RunningApp(xvfb, workdir, geometry=geometry, extra_args=extra)


@pytest.fixture
def app(xvfb: Xvfb, openbox: WindowManager, tmp_path: Path) -> Iterator[RunningApp]:
    """A fresh target app per test (so each test reads only its own events), framed by the
    manager, the pointer resting away from it."""
    _xdotool(xvfb, "mousemove", *map(str, REST))
    running = _start_app(xvfb, tmp_path / "target", TARGET_GEOMETRY)
    yield running
    running.stop()


def _centre(rect: tuple[int, int, int, int]) -> tuple[int, int]:
    left, top, width, height = rect
    return left + width // 2, top + height // 2


def _norm(point: tuple[int, int]) -> dict[str, int]:
    """A screen point as the model gives it (norm1000 of the screenshot, the whole screen)."""
    return {"x": round(point[0] / WIDTH * 1000), "y": round(point[1] / HEIGHT * 1000)}


def _click(element: str, point: tuple[int, int]) -> dict[str, Any]:
    return {"note": "", "thought": f"Click the {element}.",
            "action": {"action": "click", "element": element, **_norm(point)}}


def _log_show(home: Home) -> str:
    result = run_holodesk(home, "log", "show", "last")
    assert result.returncode == 0, str(result)
    return result.stdout


def _pointer(xvfb: Xvfb) -> tuple[int, int]:
    fields = dict(line.split("=", 1) for line in
                  _xdotool(xvfb, "getmouselocation", "--shell").split() if "=" in line)
    return int(fields["X"]), int(fields["Y"])


# -- the desktop app ----------------------------------------------------------------------------


def _is_step(request: ChatRequest) -> bool:
    shot = request.latest_image
    return shot is not None and shot.width >= 200  # not the app's server probe (tiny images)


class StepScript:
    """Scripted answers for the desktop app's steps: its server probe (tiny images) gets an
    answer without using up the script. The first step waits for :meth:`play`: the test
    writes the script once the run shows where the app's windows and buttons are."""

    def __init__(self) -> None:
        self._script: ScriptedPolicy | None = None
        self._ready = threading.Event()

    def play(self, replies: list[dict[str, Any]]) -> None:
        self._script = ScriptedPolicy(replies)
        self._ready.set()

    def __call__(self, request: ChatRequest) -> str:
        if not _is_step(request):
            return json.dumps(ANSWER)
        if not self._ready.wait(TIMEOUT):
            raise AssertionError("the test never gave the script")
        assert self._script is not None
        return self._script(request)


def _start_task(gui: HolodeskGui, task: str) -> XWindow:
    """Wait for the server probe (the tray shows idle), type the task, Ctrl+Enter; the run
    bar the task window collapses into."""
    gui.wait_shows(tray_icon(gui.tray), TRAY_IDLE, "the tray to show the model server is up")
    gui.click(*gui.task.point(100, 30))
    gui.xdotool("type", "--delay", "15", task)
    gui.activate(gui.task)
    gui.xdotool("key", "ctrl+Return")
    return gui.run_bar()


def _approve(gui: HolodeskGui, panel: XWindow) -> None:
    """Click the panel's Approve button (its first button, bottom left) once it is armed, and
    wait for the panel to go. One click only: a second one after the panel went would land on
    whatever is below it, and a click on the target app would give it the focus itself."""
    x, y = panel.point(70, -24)
    box = (x - 60, y - 8, x + 60, y + 8)  # the button's label

    def armed() -> bool:
        # The label is drawn black once Approve is enabled (350 ms after the panel shows),
        # grey before.
        label = np.asarray(grab(gui.xvfb).crop(box), dtype=np.int16)
        return int(np.sum(np.all(label < 80, axis=2))) >= 20

    poll(armed, TIMEOUT, "the Approve button to be armed", gui.died)
    gui.xdotool("mousemove", str(x), str(y), "click", "1")
    gui.hidden(panel)


def test_keys_approved_in_the_panel_go_to_the_approved_window(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    """The model clicks the Tk app's field and types "hello", each approved in the panel; before
    approving the typing the person looks at the task window (it has the focus). The panel goes,
    the manager hands the focus to the task window, and holodesk takes it back to the field."""
    with FakeVLLM(SeeingPolicy([Target("Name field", BLUE, type_text="hello")])) as server:
        configure(home, endpoint=server.base_url, confirm="always")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            bar = _start_task(gui, "write hello in the name field")
            panel = gui.confirm_panel()
            _approve(gui, panel)
            app.wait_for(lambda: app.events("pointer_press", widget="field"), TIMEOUT,
                         "the approved click on the field")
            panel = gui.confirm_panel()
            assert "hello" not in app.text("field")
            # The person brings the task window back, reads it (it has the focus), approves.
            gui.click(*bar.point(bar.width - 24, bar.height // 2))  # the bar's Show
            poll(lambda: gui.visible(gui.task), TIMEOUT, "the task window back", gui.died)
            gui.activate(gui.task)
            _approve(gui, panel)
            gui.wait_shows(tray_icon(gui.tray), TRAY_DONE, "the run to end (the tray: done)")
    app.sync()  # every key the run sent has arrived
    shown = _log_show(home)
    assert app.text("field") == "hello", shown
    assert shown.count("[approved / ok]") == 2, shown
    assert "answered" in shown.splitlines()[0], shown


def test_a_click_on_holodesks_own_window_is_refused_and_the_model_is_told(
    xvfb: Xvfb, openbox: WindowManager, home: Home, tmp_path: Path
) -> None:
    """The model clicks the middle of the run bar (holodesk's window on the screen while a run
    acts), then its Stop, with nothing confirmed: neither click is made (the pointer never
    goes there, the run is not stopped but answers), the log says why, and the next request
    tells the model."""
    script = StepScript()
    _xdotool(xvfb, "mousemove", *map(str, REST))
    with FakeVLLM(script) as server:
        configure(home, endpoint=server.base_url, confirm="never")
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            _start_task(gui, "look at the run bar")
            rest = _pointer(xvfb)  # where the test left it, typing the task
            # The run waits for its first answer: the bar is where the run put it.
            server.wait_until(lambda s: any(_is_step(r) for r in s.requests),
                              "the run's first step", TIMEOUT)
            bar = gui.run_bar()
            middle = _centre((bar.x, bar.y, bar.width, bar.height))
            script.play([_click("holodesk run bar", middle),
                         _click("Stop button", bar.point(40, bar.height // 2)), ANSWER])
            tray = tray_icon(gui.tray)
            # Done once the run has answered; red had its own Stop button stopped it.
            poll(lambda: gui.shows(tray, TRAY_DONE) or gui.shows(tray, TRAY_STOPPED), TIMEOUT,
                 "the run to end", gui.died)
            assert _pointer(xvfb) == rest, "the pointer went to holodesk's own window"
    steps = [r for r in server.requests if _is_step(r)]
    shown = _log_show(home)
    assert len(steps) == 3, shown
    assert "answered" in shown.splitlines()[0], shown  # not stopped by its own Stop button
    assert shown.count("[forbidden / skipped]") == 2, shown
    refused = f"refused by the safety policy: aims at holodesk (holodesk's own): holodesk {OWN}"
    assert shown.count(f"error: {refused}") == 2, shown
    # The model hears why each click was not done, in the next request (H's contract: an
    # <error> result after each step).
    told = f'<error tool="click_desktop">\nnot done: {refused}'
    assert steps[1].text.count(told) == 1, steps[1].text
    assert steps[2].text.count(told) == 2, steps[2].text


# -- holodesk run ---------------------------------------------------------------------------


def _run(home: Home, xvfb: Xvfb, server: FakeVLLM, *args: str,
         env: dict[str, str] | None = None) -> str:
    """``holodesk run`` with nothing confirmed, to its end; ``log show`` of the run."""
    result = run_holodesk(home, "run", "do the task", "--confirm", "never", "--endpoint",
                          server.base_url, *args, xvfb=xvfb, env=env, timeout=TIMEOUT * 2)
    shown = _log_show(home)
    assert result.returncode == 0, f"{result}\n{shown}"
    return shown


def test_holodesk_run_never_types_into_the_terminal_it_runs_in(
    xvfb: Xvfb, openbox: WindowManager, home: Home, tmp_path: Path
) -> None:
    """``holodesk run`` started from an xterm (``$WINDOWID`` names it, as xterm sets it), that
    xterm focused: ``echo hi`` + Enter is refused and the shell gets no line."""
    missing = missing_tools()
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (apt-get install {' '.join(missing)})")
    typing = {"note": "", "thought": "Say hi in the shell.",
              "action": {"action": "type", "text": "echo hi", "press_enter": True}}
    with Terminal(xvfb, tmp_path / "terminal") as term:
        _xdotool(xvfb, "mousemove", *map(str, term.geometry().center))
        with FakeVLLM(ScriptedPolicy([typing, ANSWER])) as server:
            shown = _run(home, xvfb, server, env={"WINDOWID": term.window})
        lines = term.sync()
    assert lines == 0, f"the shell was handed {lines} line(s)\n{shown}"
    assert 'type "echo hi" + Enter' in shown and "[forbidden / skipped]" in shown, shown
    assert f"holodesk {OWN} or the terminal it runs in" in shown, shown
    assert "in: XTerm" in shown, shown


def test_a_password_manager_is_painted_out_and_never_clicked(
    xvfb: Xvfb, openbox: WindowManager, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    """A window of class KeePassXC (in the default ``never_touch``) is sent to the model as
    mask grey while the target app beside it keeps its colours; a click on it is refused."""
    keepass = _start_app(xvfb, tmp_path / "keepass", "600x400+60+60", class_name="KeePassXC")
    try:
        client = _xdotool(xvfb, "search", "--onlyvisible", "--class", "^Keepassxc$").split()[0]
        wm_class = subprocess.run(["xprop", "-id", client, "WM_CLASS"], env=xvfb.env(),
                                  capture_output=True, text=True, timeout=30, check=True).stdout
        # Tk capitalises the class; the setting's names are compared in lower case.
        assert '"Keepassxc"' in wm_class, wm_class
        click = _click("Save button", _centre(keepass.widgets["save"].rect))
        with FakeVLLM(ScriptedPolicy([click, ANSWER])) as server:
            shown = _run(home, xvfb, server)
            shot = server.requests[0].latest_image
        keepass.sync()
        assert not keepass.events("pointer_press"), f"the password manager was clicked\n{shown}"
    finally:
        keepass.stop()
    assert shot is not None and shot.size == (WIDTH, HEIGHT)
    pixels = np.asarray(shot.image.convert("RGB"), dtype=np.int16)
    assert _share(pixels, keepass.window, (MASK_GREY,) * 3) > 0.97, "KeePassXC reached the model"
    assert _share(pixels, app.widgets["save"].solid, app.widgets["save"].rgb) > 0.9
    assert "[forbidden / skipped]" in shown, shown
    assert "an application holodesk never touches (setting never_touch)" in shown, shown


def test_only_in_refuses_a_click_in_another_application(
    xvfb: Xvfb, openbox: WindowManager, app: RunningApp, home: Home
) -> None:
    """``--only-in firefox``: a click on the Tk app is refused with the reason."""
    click = _click("Save button", _centre(app.widgets["save"].rect))
    with FakeVLLM(ScriptedPolicy([click, ANSWER])) as server:
        shown = _run(home, xvfb, server, "--only-in", "firefox")
    app.sync()
    assert not app.events("pointer_press"), f"clicked outside --only-in\n{shown}"
    assert "[forbidden / skipped]" in shown, shown
    assert "but this run may act only in firefox" in shown, shown


def _share(pixels: np.ndarray, rect: tuple[int, int, int, int],
           rgb: tuple[int, int, int]) -> float:
    """The share of ``rect`` (left, top, width, height) that is ``rgb`` (JPEG moves it a
    little)."""
    left, top, width, height = rect
    area = pixels[top:top + height, left:left + width]
    return float(np.mean(np.all(np.abs(area - np.array(rgb)) <= 12, axis=2)))
