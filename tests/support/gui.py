"""Driving the desktop app (`holodesk` with no arguments) on a test's Xvfb, as a person would.

The app runs as a subprocess on the xcb platform (never the offscreen default the in-process
Qt tests use). The test finds its windows by title with ``xdotool search --name``, clicks and
types with xdotool, and reads what the app shows from the screen's pixels (a child process
grabs the screen: nothing here imports mss or pyautogui)::

    with HolodeskGui(home, xvfb, workdir) as gui:
        gui.click(*gui.task.point(100, 30))  # into the task box
        gui.xdotool("type", "press the save button")

Without a window manager every top-level window is placed where it asks (the task window
and the tray stand-in at the top left), and the keyboard focus is wherever the app (or
``focus``) last set it. Under one (the ``openbox`` fixture) the windows are found among the
clients it manages, and ``activate`` asks it for the focus.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import numpy as np
from PIL import Image

from tests.support.e2e import holodesk_argv, holodesk_env
from tests.support.home import REPO_ROOT, Home
from tests.support.xvfb import Xvfb

T = TypeVar("T")

#: Window titles (regexes). The task window is "holodesk — TASK" once a run starts, so a test
#: keeps the window found at start (``HolodeskGui.task``); the confirmation panel has no title
#: of its own (Qt shows the application name), so it is the "holodesk" window that is not the
#: tray's stand-in.
NEW_TASK_WINDOW = "^holodesk — new task$"
TRAY_WINDOW = "^holodesk$"  # the stand-in for the tray (Xvfb has no system tray)
#: The run bar (ui/run_bar.py): up while a run acts, the task window and the stand-in hidden.
RUN_BAR = "^holodesk — Stop$"

# Colours the app paints that a test can look for (ui/tray.py, ui/task_window.py).
TRAY_IDLE = (0x6B, 0x72, 0x80)
TRAY_WORKING = (0x25, 0x63, 0xEB)
TRAY_WAITING = (0xF5, 0x9E, 0x0B)  # a confirmation or a pause waits for the person
TRAY_STOPPED = (0xDC, 0x26, 0x26)
TRAY_DONE = (0x15, 0x80, 0x3D)  # the last run's result (ui/result_view.py): done
TRAY_NOT_DONE = (0xC2, 0x41, 0x0C)
TRAY_FAILED = (0x99, 0x1B, 0x1B)

_GRAB = (
    "import sys, mss, mss.tools\n"
    "with mss.mss() as s:\n"
    "    shot = s.grab(s.monitors[0])\n"
    "    sys.stdout.buffer.write(mss.tools.to_png(shot.rgb, shot.size))\n"
)


@dataclass(frozen=True)
class XWindow:
    """A top-level window: its X id, title and screen rectangle."""

    wid: str
    name: str
    x: int
    y: int
    width: int
    height: int

    def point(self, dx: int, dy: int) -> tuple[int, int]:
        """A screen point ``dx``, ``dy`` inside the window (negative: from the right/bottom)."""
        return (self.x + (dx if dx >= 0 else self.width + dx),
                self.y + (dy if dy >= 0 else self.height + dy))


def poll(predicate: Callable[[], T | None], timeout: float, what: str,
         alive: Callable[[], str | None] | None = None) -> T:
    """``predicate()`` once it is truthy; AssertionError after ``timeout`` (or when ``alive``
    reports that a process died: it returns the reason)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if alive is not None:
            dead = alive()
            if dead:
                raise AssertionError(f"{dead} while waiting for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def xdotool(xvfb: Xvfb, *args: str) -> str:
    """Run xdotool on the test display; its output."""
    result = subprocess.run(["xdotool", *args], env=xvfb.env(), capture_output=True, text=True,
                            timeout=30)
    if result.returncode != 0 and args[0] != "search":  # search exits 1 when nothing matches
        raise AssertionError(f"xdotool {' '.join(args)}: {result.stderr}")
    return result.stdout


def windows(xvfb: Xvfb, name: str, pid: int | None = None) -> list[XWindow]:
    """The visible top-level windows whose title matches the regex ``name`` (and that belong
    to process ``pid``, when given).

    xdotool's own ``--name`` misses titles Qt sets only as UTF-8 (``_NET_WM_NAME``), and its
    ``--pid`` is or-ed with the name: so it lists every top-level window, and the filtering is
    done here on what ``getwindowname`` and ``getwindowpid`` say.
    """
    out: list[XWindow] = []
    ids, managed = _top_levels(xvfb)
    for wid in ids:
        # getwindowpid last: it fails for windows without _NET_WM_PID (Tk's), after the rest.
        info = subprocess.run(
            ["xdotool", "getwindowname", wid, "getwindowgeometry", "--shell", wid,
             "getwindowpid", wid],
            env=xvfb.env(), capture_output=True, text=True, timeout=30,
        )
        lines = info.stdout.splitlines()
        fields = dict(line.split("=", 1) for line in lines[1:] if "=" in line)
        if not lines or "WIDTH" not in fields or not re.search(name, lines[0]):
            continue  # gone between the search and now, or another title
        owner = lines[-1] if lines[-1].isdigit() else None
        if pid is not None and owner != str(pid):
            continue
        if managed:
            # xdotool counts the frame's offset twice for a window inside one: ask xwininfo.
            placed = _absolute_geometry(xvfb, wid)
            if placed is None:
                continue  # gone meanwhile
            fields.update(placed)
        out.append(XWindow(wid, lines[0], int(fields["X"]), int(fields["Y"]),
                           int(fields["WIDTH"]), int(fields["HEIGHT"])))
    return out


def _top_levels(xvfb: Xvfb) -> tuple[list[str], bool]:
    """The ids of the application windows on screen, and whether a window manager runs: under
    one, the clients it manages (``_NET_CLIENT_LIST``; the root's children are its frames then,
    without titles), else the visible children of the root."""
    managed = subprocess.run(["xprop", "-root", "_NET_CLIENT_LIST"], env=xvfb.env(),
                             capture_output=True, text=True, timeout=30).stdout
    if "window id #" in managed:
        # A hidden (withdrawn) window leaves the list; an iconified one would stay, but
        # nothing here iconifies.
        ids = managed.split("#", 1)[1].replace(",", " ").split()
        return [str(int(wid, 16)) for wid in ids], True
    found = xdotool(xvfb, "search", "--onlyvisible", "--maxdepth", "1", "--name", "")
    return found.split(), False


def _absolute_geometry(xvfb: Xvfb, wid: str) -> dict[str, str] | None:
    """The window's rectangle on the screen (xwininfo's absolute corner), as xdotool's keys."""
    info = subprocess.run(["xwininfo", "-id", wid], env=xvfb.env(), capture_output=True,
                          text=True, timeout=30)
    keys = {"Absolute upper-left X": "X", "Absolute upper-left Y": "Y", "Width": "WIDTH",
            "Height": "HEIGHT"}
    fields = {}
    for line in info.stdout.splitlines():
        key, _, value = line.strip().partition(":")
        if key in keys:
            fields[keys[key]] = value.strip()
    return fields if len(fields) == 4 else None


def grab(xvfb: Xvfb) -> Image.Image:
    """The whole screen of the test display, as RGB."""
    png = subprocess.run([sys.executable, "-c", _GRAB], env=xvfb.env(), capture_output=True,
                         check=True, timeout=60).stdout
    return Image.open(io.BytesIO(png)).convert("RGB")


def colour_box(image: Image.Image, rgb: tuple[int, int, int], tolerance: int = 12,
               min_pixels: int = 20) -> tuple[int, int, int, int] | None:
    """The bounding box (left, top, right, bottom; exclusive) of the pixels of that colour,
    or None when fewer than ``min_pixels`` have it."""
    pixels = np.asarray(image, dtype=np.int16)
    mask = np.all(np.abs(pixels - np.array(rgb, dtype=np.int16)) <= tolerance, axis=2)
    if int(mask.sum()) < min_pixels:
        return None
    ys, xs = np.nonzero(mask)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def shows_colour(xvfb: Xvfb, window: XWindow, rgb: tuple[int, int, int],
                 tolerance: int = 12, min_pixels: int = 20) -> bool:
    """Whether ``window``'s rectangle on screen has at least ``min_pixels`` of that colour."""
    shot = grab(xvfb).crop((window.x, window.y, window.x + window.width,
                            window.y + window.height))
    return colour_box(shot, rgb, tolerance, min_pixels) is not None


def tray_icon(window: XWindow) -> XWindow:
    """The state icon's corner of the tray stand-in ``window`` (its top left): colour checks
    look there only, since button borders and text elsewhere hold greys near the idle colour."""
    return XWindow(window.wid, window.name, window.x, window.y, min(window.width, 34),
                   min(window.height, 34))


class HolodeskGui:
    """`holodesk` (the desktop app) running on ``xvfb`` with ``home``; stdout and stderr go
    to files in ``workdir``. Enter waits for the task window."""

    def __init__(self, home: Home, xvfb: Xvfb, workdir: Path, *, timeout: float = 60.0) -> None:
        self.home = home
        self.xvfb = xvfb
        self.workdir = workdir
        self.timeout = timeout
        self.proc: subprocess.Popen[str] | None = None
        self._task: XWindow | None = None
        self._tray: XWindow | None = None

    def env(self) -> dict[str, str]:
        env = holodesk_env(self.home, self.xvfb)
        # The real X platform: tests/conftest.py's offscreen default must not reach the app.
        env["QT_QPA_PLATFORM"] = "xcb"
        return env

    def start(self) -> HolodeskGui:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            holodesk_argv(), env=self.env(), cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
            stdout=(self.workdir / "stdout").open("w"), stderr=(self.workdir / "stderr").open("w"),
            text=True,
        )
        self._task = self.window(NEW_TASK_WINDOW)
        self._tray = self.window(TRAY_WINDOW)
        return self

    @property
    def task(self) -> XWindow:
        """The task window as found at start (``refresh`` it for its title now)."""
        assert self._task is not None, "not started"
        return self._task

    @property
    def tray(self) -> XWindow:
        """The tray's stand-in window as found at start (or as last ``move``d)."""
        assert self._tray is not None, "not started"
        return self._tray

    @property
    def pid(self) -> int:
        assert self.proc is not None, "not started"
        return self.proc.pid

    def died(self) -> str | None:
        """Why the app is gone (with its stderr), or None while it runs."""
        if self.proc is None or self.proc.poll() is None:
            return None
        return f"holodesk exited with {self.proc.returncode}: {self.stderr()}"

    def stderr(self) -> str:
        path = self.workdir / "stderr"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def window(self, name: str, timeout: float | None = None) -> XWindow:
        """The app's visible window whose title matches ``name`` (waits for it to appear)."""
        found = poll(lambda: windows(self.xvfb, name, self.pid), timeout or self.timeout,
                     f"a window named {name!r}", self.died)
        return found[0]

    def visible(self, window: XWindow) -> XWindow | None:
        """``window`` as it is now, or None while it is not shown (a run collapsed it)."""
        found = [w for w in windows(self.xvfb, ".*", self.pid) if w.wid == window.wid]
        return found[0] if found else None

    def run_bar(self, timeout: float | None = None) -> XWindow:
        """The run bar, once a run has started."""
        return self.window(RUN_BAR, timeout)

    def refresh(self, window: XWindow) -> XWindow:
        """``window`` as it is now (title and place may have changed)."""
        found = [w for w in windows(self.xvfb, ".*", self.pid) if w.wid == window.wid]
        assert found, f"{window.name!r} is no longer visible"
        return found[0]

    def confirm_panel(self, timeout: float | None = None) -> XWindow:
        """The confirmation panel, once it is on screen."""
        tray = self.tray.wid
        found = poll(lambda: [w for w in windows(self.xvfb, TRAY_WINDOW, self.pid)
                              if w.wid != tray], timeout or self.timeout,
                     "the confirmation panel", self.died)
        return found[0]

    def move(self, window: XWindow, x: int, y: int) -> XWindow:
        """Move a window (there is no window manager to do it), and wait until it is there."""
        self.xdotool("windowmove", "--sync", window.wid, str(x), str(y))

        def there() -> XWindow | None:
            now = self.refresh(window)
            if now.x == x and now.y == y:
                return now
            # The app may place its window itself after it first shows (later on a loaded
            # machine than our move): move it again until it stays.
            self.xdotool("windowmove", window.wid, str(x), str(y))
            return None

        moved = poll(there, self.timeout, f"{window.name!r} to move", self.died)
        if window.wid == self.tray.wid:
            self._tray = moved
        elif window.wid == self.task.wid:
            self._task = moved
        return moved

    def shows(self, window: XWindow, rgb: tuple[int, int, int], *, tolerance: int = 12,
              min_pixels: int = 20) -> bool:
        """Whether ``window``'s rectangle on screen has ``min_pixels`` of that colour."""
        return shows_colour(self.xvfb, window, rgb, tolerance, min_pixels)

    def wait_shows(self, window: XWindow, rgb: tuple[int, int, int], what: str,
                   timeout: float | None = None) -> None:
        poll(lambda: self.shows(window, rgb), timeout or self.timeout, what, self.died)

    def hidden(self, window: XWindow, timeout: float | None = None) -> None:
        """Wait until ``window`` is no longer visible."""
        poll(lambda: all(w.wid != window.wid for w in windows(self.xvfb, ".*", self.pid)),
             timeout or self.timeout, f"{window.name!r} to close", self.died)

    def xdotool(self, *args: str) -> str:
        return xdotool(self.xvfb, *args)

    def click(self, x: int, y: int) -> None:
        self.xdotool("mousemove", "--sync", str(x), str(y), "click", "1")

    def focus(self, window: XWindow) -> None:
        """Give ``window`` the keyboard focus (no window manager does it on a click)."""
        self.xdotool("windowfocus", "--sync", window.wid)

    def activate(self, window: XWindow) -> None:
        """Ask the window manager to give ``window`` the focus, and wait until it has."""
        self.xdotool("windowactivate", "--sync", window.wid)

    def stop(self) -> int | None:
        """Quit the app (SIGTERM, then SIGKILL); its exit code."""
        proc = self.proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(15)
        return proc.returncode

    def __enter__(self) -> HolodeskGui:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None:
            self.report()
        self.stop()

    def report(self) -> None:
        """What a failing test needs to see (pytest shows it): the screen, saved next to the
        app's output, the app's stderr and the end of its log file."""
        try:
            grab(self.xvfb).save(self.workdir / "failure.png")
            print(f"screen at the failure: {self.workdir / 'failure.png'}")
        except Exception as e:  # a report must not hide the failure it reports
            print(f"no screenshot: {e}")
        print(f"--- holodesk stderr\n{self.stderr()}")
        for log in self.home.state.rglob("*.log"):
            print(f"--- {log}\n{log.read_text(errors='replace')[-6000:]}")
