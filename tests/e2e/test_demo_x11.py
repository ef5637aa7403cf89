"""End to end: `holodesk demo` on Xvfb with openbox, the real CLI as a subprocess.

The practice window opens in its own process, the demo model reads the real screenshots, the
real policy, confirmation, executor and action log run. Checked from outside holodesk: the
practice window's X11 window class, its checklist as seen on the screen while the run waits
for an answer, that exactly the risky step asks, and that a window covering the practice
window gets no input at all (the demo model refuses to act).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from app.cli.exitcodes import EXIT_NOT_DONE, EXIT_STOPPED
from app.demo.look import PRACTICE_WM_CLASS, Screenshot, Status
from tests.support.e2e import run_holodesk, start_holodesk, wait_exit
from tests.support.fixtures import xvfb_fixture
from tests.support.gui import poll
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.wm import WindowManager, keep_above
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

WIDTH, HEIGHT = 1280, 800
xvfb = xvfb_fixture(WIDTH, HEIGHT)
DONE_LINE = ("Demo: the practice window's checklist: type the name: done; choose Blue: done; "
             "save the entry: done; delete the draft: done")


@pytest.fixture(autouse=True)
def _desktop(openbox: WindowManager, xvfb: Xvfb) -> Iterator[None]:
    # The pointer rests away from the failsafe corners and from where the window opens.
    subprocess.run(["xdotool", "mousemove", "40", "400"], env=xvfb.env(), check=True)
    yield


def practice_windows(xvfb: Xvfb) -> list[str]:
    found = subprocess.run(["xdotool", "search", "--class", PRACTICE_WM_CLASS],
                           env=xvfb.env(), capture_output=True, text=True)
    return found.stdout.split()


def grab(xvfb: Xvfb) -> Image.Image:
    """The whole screen, read through the test's own X connection to that display."""
    from Xlib import X
    from Xlib import display as xdisplay

    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)
    try:
        raw = d.screen().root.get_image(0, 0, WIDTH, HEIGHT, X.ZPixmap, 0xFFFFFFFF)
        return Image.frombytes("RGB", (WIDTH, HEIGHT), raw.data, "raw", "BGRX")
    finally:
        d.close()


def test_the_demo_finishes_the_practice_task(xvfb: Xvfb, home: Home) -> None:
    result = run_holodesk(home, "demo", "--confirm", "never", xvfb=xvfb, timeout=240)
    assert result.returncode == 0, str(result)
    assert "ended: done after" in result.stdout, str(result)
    assert "done after 5 step(s): the practice window's checklist is all done" in result.stdout
    assert "Demo: done." in result.stdout
    assert DONE_LINE in result.stdout, str(result)
    assert "confirm:" not in result.stdout
    assert 'type "Ada Lovelace"' in result.stdout
    # After the result: what just happened, and what to try next, last.
    after = result.stdout.split("Demo: done.", 1)[1]
    assert "Demo: What just happened: holodesk took a screenshot" in after
    assert after.rstrip().splitlines()[-4:] == [
        "What to try next:",
        "  - set up a model server: holodesk serve on a machine with an NVIDIA GPU (README: "
        "Set up the model server), or use a server elsewhere: holodesk config set endpoint "
        "https://HOST:8000/v1",
        '  - write a first task: holodesk run "open the Downloads folder"',
        "  - open the action log: holodesk log show last (or holodesk log list)",
    ]
    assert result.stderr.strip() == "", result.stderr
    assert practice_windows(xvfb) == []  # closed at the end
    shown = run_holodesk(home, "log", "show", "last")
    assert shown.returncode == 0, str(shown)
    assert "Demo: in the holodesk practice window" in shown.stdout
    assert ": done: the practice window's checklist is all done" in shown.stdout.splitlines()[0]
    assert "Delete draft button" in shown.stdout


def test_with_confirm_risky_exactly_the_risky_step_asks(xvfb: Xvfb, home: Home,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "demo"
    proc = start_holodesk(home, "demo", "--confirm", "risky", xvfb=xvfb, workdir=out,
                          stdin_open=True)
    try:
        poll(lambda: "confirm:" in (out / "stdout").read_text(), timeout=180,
             what="the confirmation question",
             alive=lambda: None if proc.poll() is None else
             f"holodesk exited ({proc.returncode}): {(out / 'stderr').read_text()}")
        asked = (out / "stdout").read_text()
        assert asked.count("confirm:") == 1, asked
        assert "Delete draft button" in asked.split("confirm:", 1)[1]
        # While it waits: the practice window is there, its own window class, and on the
        # screen its checklist shows everything but the risky step done.
        assert len(practice_windows(xvfb)) >= 1
        shot = Screenshot(grab(xvfb))
        window = shot.window()
        assert window is not None
        assert shot.checklist(window) == [Status.DONE, Status.DONE, Status.DONE, Status.TODO]
        assert proc.stdin is not None
        proc.stdin.write("a\n")
        proc.stdin.flush()
        code = wait_exit(proc, timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = (out / "stdout").read_text()
    assert code == 0, said + (out / "stderr").read_text()
    assert said.count("confirm:") == 1, said
    assert DONE_LINE in said
    assert practice_windows(xvfb) == []


def test_a_covered_practice_window_gets_no_action_and_the_demo_is_not_done(
        xvfb: Xvfb, home: Home, tmp_path: Path) -> None:
    """Another window kept above everything covers where the practice window opens: the demo
    model sees no practice window and answers so; nothing is clicked or typed anywhere. The
    model answered, yet the practice window says the task is not done: the exit code, the
    last line, `log list` and `log show` all say not done (issue 24)."""
    cover = RunningApp(xvfb, tmp_path / "cover", geometry=f"{WIDTH - 100}x{HEIGHT - 120}+50+40")
    try:
        cover.wait_for(lambda: cover.layout_path.exists(), timeout=60, what="the cover window")
        keep_above(xvfb, "HolodeskTarget")
        mark = cover.mark()
        result = run_holodesk(home, "demo", "--confirm", "never", xvfb=xvfb, timeout=240)
        assert result.returncode == EXIT_NOT_DONE, str(result)
        assert "cannot see the whole holodesk practice window" in result.stdout, str(result)
        assert "ended: not done after 1 step(s): the practice task is not done" in result.stdout
        last = result.stderr.strip().splitlines()[-1]
        assert last == ("holodesk: run not done: the practice task is not done (still to do: "
                        "type the name, choose Blue, save the entry, delete the draft)"), last
        assert "What to try next" not in result.stdout  # only after a done demo
        cover.sync()
        touched = [e for e in cover.events_since(mark)
                   if e["type"] in ("pointer_press", "click", "key_down", "text")]
        assert touched == []
    finally:
        cover.stop()
    assert practice_windows(xvfb) == []
    listed = run_holodesk(home, "log", "list")
    (row,) = [line for line in listed.stdout.splitlines() if "Demo: in the" in line]
    assert "  not done  " in row and "answered" not in row, listed.stdout
    shown = run_holodesk(home, "log", "show", "last")
    head = shown.stdout.splitlines()[0]
    assert ": not done: the practice task is not done" in head, shown.stdout
    assert "answered" not in head and ": done" not in head


def test_closing_the_practice_window_stops_the_run(xvfb: Xvfb, home: Home,
                                                  tmp_path: Path) -> None:
    """Closed while the run waits at a question: the run stops at once, nobody answered."""
    out = tmp_path / "demo"
    proc = start_holodesk(home, "demo", "--confirm", "always", xvfb=xvfb, workdir=out,
                          stdin_open=True)
    try:
        poll(lambda: "confirm:" in (out / "stdout").read_text(), timeout=180,
             what="the first question",
             alive=lambda: None if proc.poll() is None else
             f"holodesk exited ({proc.returncode}): {(out / 'stderr').read_text()}")
        (window,) = practice_windows(xvfb)
        pid = subprocess.run(["xdotool", "getwindowpid", window], env=xvfb.env(),
                             capture_output=True, text=True, check=True).stdout.strip()
        os.kill(int(pid), signal.SIGTERM)
        code = wait_exit(proc, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = (out / "stdout").read_text() + (out / "stderr").read_text()
    assert code == EXIT_STOPPED, said  # a stop stays a stop, whatever the window says
    assert "the practice window was closed" in said, said
    assert "holodesk: run stopped:" in (out / "stderr").read_text().strip().splitlines()[-1]
    assert "Demo: the practice window's checklist: " in said, said
