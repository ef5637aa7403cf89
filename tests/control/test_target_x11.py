"""control/target_x11.py on a private Xvfb with a real window manager (openbox), a real
terminal (xterm running bash) and the Tk target app: the finder names what receives an action.

The windows overlap on purpose (the terminal over the app's lower right corner), so the window
under a point is the stacking order's answer, not the only window there.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from control.procfs import TerminalSign, child_pids
from control.target import Target, TargetKind
from control.target_x11 import HOLODESK_WM_CLASS, OwnProcess, X11TargetFinder
from model.coords import Rect
from tests.support.gui import poll
from tests.support.target_app import REPO_ROOT, RunningApp
from tests.support.terminal import wait_until
from tests.support.wm import WindowManager
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

APP_GEOMETRY = "500x300+40+40"  # frame about 502x325 at (40, 40)
TERM_GEOMETRY = "80x24+400+200"  # frame about 486x341 at (400, 200): over the app's corner
EMPTY = (1200, 760)  # no window there


def xdotool(xvfb: Xvfb, *args: str) -> str:
    done = subprocess.run(["xdotool", *args], env=xvfb.env(), capture_output=True, text=True,
                          timeout=30, check=True)
    return done.stdout


def xterms(xvfb: Xvfb) -> list[str]:
    """The xterm windows' ids; xdotool exits 1 when it finds none (not an error here)."""
    done = subprocess.run(["xdotool", "search", "--class", "XTerm"], env=xvfb.env(),
                          capture_output=True, text=True, timeout=30, check=False)
    return done.stdout.split()


def activate(xvfb: Xvfb, window: int) -> None:
    xdotool(xvfb, "windowactivate", "--sync", str(window))


def centre(target: Target) -> tuple[int, int]:
    assert target.rect is not None
    return target.rect.left + target.rect.width // 2, target.rect.top + target.rect.height // 2


class Xterm:
    """A real xterm running bash, mapped and managed."""

    def __init__(self, xvfb: Xvfb, *args: str, geometry: str = TERM_GEOMETRY,
                 command: tuple[str, ...] = ("bash", "--norc", "--noprofile")) -> None:
        env = xvfb.env()
        env.pop("WINDOWID", None)
        self.proc = subprocess.Popen(
            ["xterm", *args, "-geometry", geometry, "-e", *command],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        # --sync: xdotool waits for a window with this pid (xterm sets _NET_WM_PID).
        self.window = int(xdotool(xvfb, "search", "--sync", "--pid", str(self.proc.pid))
                          .split()[0])
        if command[0] == "bash":
            wait_until(lambda: self.shell() is not None, "bash to run in the xterm")

    def shell(self) -> int | None:
        for pid in child_pids(self.proc.pid):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == "bash":
                    return pid
            except OSError:
                continue
        return None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


class App(RunningApp):
    """The Tk target app; ``client`` is its client window (``wid`` is openbox's frame)."""

    def __init__(self, xvfb: Xvfb, workdir: Path) -> None:
        super().__init__(xvfb, workdir, geometry=APP_GEOMETRY)
        self.client = int(xdotool(xvfb, "search", "--sync", "--onlyvisible", "--class",
                                  "^Holodesktarget$").split()[0])


@pytest.fixture(scope="module")
def app(xvfb: Xvfb, openbox: WindowManager, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[App]:
    running = App(xvfb, tmp_path_factory.mktemp("target"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def term(xvfb: Xvfb, openbox: WindowManager, app: App) -> Iterator[Xterm]:
    if shutil.which("xterm") is None:
        pytest.skip("xterm is not installed (apt-get install xterm)")
    xterm = Xterm(xvfb)
    yield xterm
    xterm.stop()


@pytest.fixture
def x11(xvfb: Xvfb) -> Iterator[Xvfb]:
    """This process talks to the test's Xvfb (python-xlib reads the cookie's file from the
    environment when it connects)."""
    with xvfb.activated():
        yield xvfb


def finder_for(own: OwnProcess | None = None) -> X11TargetFinder:
    return X11TargetFinder(os.environ["DISPLAY"], own if own is not None else OwnProcess())


def test_the_focused_terminal_is_named_with_the_shell_inside(
        x11: Xvfb, app: App, term: Xterm) -> None:
    finder = finder_for()
    activate(x11, term.window)
    target = finder.focused()
    assert target.window == term.window
    assert (target.wm_instance, target.wm_class) == ("xterm", "XTerm")
    assert target.pid == term.proc.pid and target.process == "xterm"
    assert target.inside == "bash" and target.terminal is TerminalSign.PTY_MASTER
    assert target.title  # xterm titles itself after its command
    assert target.kind is TargetKind.TERMINAL
    assert target.label() == "XTerm \u2014 bash"
    assert target.rect is not None and target.rect.contains(401, 201)
    assert not target.own and not target.desktop


def test_the_foreground_job_of_the_terminal_is_what_is_inside(
        x11: Xvfb, app: App, term: Xterm) -> None:
    finder = finder_for()
    activate(x11, term.window)
    xdotool(x11, "type", "--window", str(term.window), "sleep 600\n")
    try:
        wait_until(lambda: finder.focused().inside == "sleep", "sleep in front of bash")
        assert finder.focused().kind is TargetKind.TERMINAL  # it still holds the pty
    finally:
        xdotool(x11, "key", "--window", str(term.window), "ctrl+c")
    wait_until(lambda: finder.focused().inside == "bash", "bash back in front")


def test_the_focused_tk_app_is_an_application(x11: Xvfb, app: App, term: Xterm) -> None:
    finder = finder_for()
    activate(x11, app.client)
    target = finder.focused()
    assert target.wm_class == "Holodesktarget" and target.title == "holodesk target"
    # Tk sets no _NET_WM_PID: the pid comes from the X server (X-Resource).
    assert target.pid == app.proc.pid
    assert target.process.startswith("python")
    assert target.inside == "" and target.kind is TargetKind.APPLICATION
    assert target.terminal is None
    assert target.rect is not None and target.rect.left == 40 and target.rect.top == 40


def test_a_terminal_under_another_name_running_no_shell_is_a_terminal(
        x11: Xvfb, app: App, term: Xterm) -> None:
    # xterm -class Notes -e python3: neither the name nor a shell says "terminal"; the pty it
    # holds does, and the REPL is what is in front.
    notes = Xterm(x11, "-class", "Notes", "-name", "notes", geometry="60x10+600+40",
                  command=(sys.executable, "-q"))
    try:
        target = poll(lambda: (t := finder_for().at(650, 80)).inside and t, 30,
                      "python3 in front of the renamed terminal")
        assert target.wm_class == "Notes" and target.kind is TargetKind.TERMINAL
        assert target.terminal is TerminalSign.PTY_MASTER
        assert target.inside.startswith("python")
    finally:
        notes.stop()


def test_an_application_named_like_a_terminal_is_an_application(
        x11: Xvfb, app: App, tmp_path: Path) -> None:
    # The Tk app under the class Konsole: it holds no terminal, so it is judged as what it is.
    named = RunningApp(x11, tmp_path / "named", geometry="300x200+700+400",
                       extra_args=("--class-name", "Konsole"))
    try:
        client = int(xdotool(x11, "search", "--sync", "--onlyvisible", "--class",
                             "^Konsole$").split()[0])
        target = poll(lambda: (t := finder_for().at(800, 480)).window == client and t, 30,
                      "the renamed app under the point")
        assert target.wm_class == "Konsole" and target.kind is TargetKind.APPLICATION
    finally:
        named.stop()


def test_the_focus_goes_back_to_a_window_on_request(x11: Xvfb, app: App, term: Xterm) -> None:
    """After the person answered holodesk's confirmation, the keys go back to the window they
    were approved for: the finder asks the manager to activate it and waits until it has."""
    finder = finder_for()
    activate(x11, app.client)
    xterm = finder_for().at(800, 500)  # the terminal only
    assert finder.focused().window == app.client
    assert finder.activate(xterm)
    assert finder.focused().window == term.window
    assert not finder.activate(Target(note="no window found"))


def test_the_window_under_a_point_follows_the_stacking_order(
        x11: Xvfb, app: App, term: Xterm) -> None:
    finder = finder_for()
    overlap = (450, 250)  # the app's lower right corner, under the terminal's upper left
    app_only = (100, 100)
    term_only = (800, 500)
    activate(x11, term.window)
    assert finder.at(*overlap).wm_class == "XTerm"
    assert finder.at(*app_only).wm_class == "Holodesktarget"
    assert finder.at(*term_only).wm_class == "XTerm"
    assert finder.at(*term_only).kind is TargetKind.TERMINAL
    activate(x11, app.client)  # openbox raises the active window
    assert finder.at(*overlap).wm_class == "Holodesktarget"
    assert finder.at(*term_only).wm_class == "XTerm"
    # The title bar is the frame's, and the click still goes to that application.
    title_bar = finder.focused().rect
    assert title_bar is not None
    assert finder.at(title_bar.left + 100, title_bar.top + 8).wm_class == "Holodesktarget"


def test_an_empty_area_is_the_desktop(x11: Xvfb, app: App, term: Xterm) -> None:
    target = finder_for().at(*EMPTY)
    assert target.desktop and target.window == 0
    assert target.label() == "the desktop" and target.found


def test_windows_lists_the_mapped_windows_bottom_to_top(
        x11: Xvfb, app: App, term: Xterm) -> None:
    finder = finder_for()
    activate(x11, term.window)
    classes = [t.wm_class for t in finder.windows()]
    assert classes.index("Holodesktarget") < classes.index("XTerm")
    activate(x11, app.client)
    listed = finder.windows()
    classes = [t.wm_class for t in listed]
    assert classes.index("XTerm") < classes.index("Holodesktarget")
    for target in listed:
        if target.wm_class in ("XTerm", "Holodesktarget"):
            assert target.rect is not None and target.rect.width > 300
    top = next(t for t in reversed(listed) if t.wm_class == "Holodesktarget")
    assert finder.at(*centre(top)).window == top.window


def test_one_finder_answers_two_threads_at_once(x11: Xvfb, app: App, term: Xterm) -> None:
    finder = finder_for()
    activate(x11, term.window)
    seen: list[str] = []

    def ask(point: tuple[int, int]) -> None:
        for _ in range(60):
            seen.append(finder.focused().wm_class + "/" + finder.at(*point).wm_class)

    threads = [threading.Thread(target=ask, args=(p,)) for p in ((100, 100), (800, 500))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(set(seen)) == ["XTerm/Holodesktarget", "XTerm/XTerm"]
    assert len(seen) == 120


def test_a_window_of_an_own_process_is_holodesks(x11: Xvfb, app: App,
                                                 term: Xterm) -> None:
    finder = finder_for(OwnProcess(pids=frozenset({app.proc.pid})))
    activate(x11, app.client)
    target = finder.focused()
    assert target.own and target.kind is TargetKind.HOLODESK
    assert finder.at(100, 100).own
    activate(x11, term.window)
    assert not finder.focused().own
    assert finder.focused().kind is TargetKind.TERMINAL


def test_the_terminal_windowid_names_is_holodesks(x11: Xvfb, app: App,
                                                  term: Xterm) -> None:
    own = OwnProcess.current(environ={"WINDOWID": str(term.window)}, tty=False)
    finder = finder_for(own)
    activate(x11, term.window)
    assert finder.focused().own and finder.focused().kind is TargetKind.HOLODESK
    assert finder.at(800, 500).own
    assert not finder.at(100, 100).own


# A Qt window named as ui/app.py names the application: Qt's xcb plugin takes WM_CLASS's
# class from the application name. "overlay" gives it the flags of holodesk's click-through
# marker (ui/overlay.py), which stays on top of the point a confirmation is about.
_QT_WINDOW = """
import sys
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication(["holodesk"])
app.setApplicationName(sys.argv[1])
if sys.argv[2] == "overlay":
    from ui.overlay import OVERLAY_FLAGS
    w = QWidget(None, OVERLAY_FLAGS)
else:
    w = QWidget()
w.setWindowTitle("holodesk " + sys.argv[2])
w.setGeometry(*map(int, sys.argv[3:7]))
w.show()
app.exec()
"""


@contextmanager
def qt_window(xvfb: Xvfb, kind: str, geometry: tuple[int, int, int, int]) -> Iterator[int]:
    """A Qt window of holodesk's class in its own process; yields the window id."""
    env = xvfb.env()
    env["QT_QPA_PLATFORM"] = "xcb"
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    qt = subprocess.Popen([sys.executable, "-c", _QT_WINDOW, HOLODESK_WM_CLASS, kind,
                           *map(str, geometry)], env=env, cwd=REPO_ROOT,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    try:
        yield int(xdotool(xvfb, "search", "--sync", "--onlyvisible", "--name",
                          f"^holodesk {kind}$").split()[0])
    finally:
        qt.terminate()
        _, err = qt.communicate(timeout=10)
    assert qt.returncode in (0, -15), err


def test_a_qt_window_of_holodesk_is_holodesks_from_any_process(
        x11: Xvfb, app: App, term: Xterm) -> None:
    with qt_window(x11, "settings", (700, 600, 300, 100)) as window:
        activate(x11, window)
        finder = finder_for(OwnProcess())  # no pid of ours: the class alone says it
        target = finder.focused()
        assert target.window == window and target.wm_class == HOLODESK_WM_CLASS
        assert target.own and target.kind is TargetKind.HOLODESK
        assert finder.at(*centre(target)).own


def test_a_click_through_overlay_is_not_the_target_the_window_below_is(
        x11: Xvfb, app: App, term: Xterm) -> None:
    """holodesk's marker sits over the very point a confirmed click goes to: the click reaches
    the window below, so that is the target (were it the overlay, holodesk's own, every
    confirmed click would be refused)."""
    finder = finder_for(OwnProcess())
    activate(x11, app.client)
    with qt_window(x11, "overlay", (60, 60, 200, 200)) as overlay:
        top = finder.windows()[-1]
        # The overlay really is the topmost window over the point (override-redirect, own).
        assert top.window == overlay and top.own
        assert top.rect is not None and top.rect.contains(100, 100)
        below = finder.at(100, 100)
        assert below.wm_class == "Holodesktarget" and not below.own


def test_a_window_that_closes_never_raises(x11: Xvfb, app: App, term: Xterm) -> None:
    finder = finder_for()
    brief = Xterm(x11, geometry="40x10+900+40")
    try:
        activate(x11, brief.window)
        seen = finder.focused()
        assert seen.window == brief.window
        point = centre(seen)
        assert finder.at(*point).window == brief.window
    finally:
        brief.stop()
    wait_until(lambda: finder.at(*point).window != brief.window, "the closed xterm to go")
    assert finder.at(*point).desktop
    assert finder.focused().window != brief.window  # whatever has the focus now, no error


def test_an_active_window_that_no_longer_exists_is_unknown(
        x11: Xvfb, app: App, term: Xterm) -> None:
    """_NET_ACTIVE_WINDOW naming a destroyed window (the manager has not caught up yet): the
    finder's X requests fail with BadWindow, and it answers "unknown" instead of raising."""
    finder = finder_for()
    brief = Xterm(x11, geometry="40x10+900+40")
    dead = brief.window
    brief.stop()
    wait_until(lambda: str(dead) not in xterms(x11), "the xterm to close")
    set_active(x11, dead)
    target = finder.focused()
    assert target.window == 0 and target.kind is TargetKind.UNKNOWN
    assert "closed" in target.note
    # The connection is still good for the next question. The app first: when openbox had
    # already handed the focus back to the terminal before the property was overwritten, it
    # takes the terminal for active and activating it again would change nothing (seen on 2
    # loaded cores, in whichever order the two happened).
    activate(x11, app.client)
    activate(x11, term.window)
    assert finder.focused().wm_class == "XTerm"


def test_keys_go_where_the_input_focus_is_whatever_the_manager_calls_active(
        x11: Xvfb, app: App, term: Xterm) -> None:
    """An application may set the X input focus itself (or hold another program's window
    embedded in its own): X hands the keys to the focus, so the focus decides, not
    _NET_ACTIVE_WINDOW."""
    finder = finder_for()
    activate(x11, app.client)
    assert finder.focused().wm_class == "Holodesktarget"
    # The focus moves to the terminal behind the manager's back; the manager still names the
    # app active.
    xdotool(x11, "windowfocus", "--sync", str(term.window))
    set_active(x11, app.client)
    target = finder.focused()
    assert target.window == term.window and target.kind is TargetKind.TERMINAL
    activate(x11, app.client)


def set_active(xvfb: Xvfb, window: int) -> None:
    # Any client may write the root's properties (the manager rewrites this one on the next
    # focus change).
    subprocess.run(["xprop", "-root", "-f", "_NET_ACTIVE_WINDOW", "32x", "-set",
                    "_NET_ACTIVE_WINDOW", hex(window)], env=xvfb.env(), check=True, timeout=30)


def test_without_a_window_manager_the_input_focus_and_the_pointer_say(
        tmp_path: Path) -> None:
    """No manager sets _NET_ACTIVE_WINDOW on a bare X server: the input focus (the Tk app
    takes it itself) walked up to its top-level names the window; with the focus following
    the pointer over the bare root, the desktop."""
    with Xvfb(800, 600) as bare, bare.activated():
        finder = finder_for()
        xdotool(bare, "mousemove", "700", "500")
        assert finder.focused().desktop and finder.focused().window == 0
        app = RunningApp(bare, tmp_path / "target", geometry="400x300+50+50")
        try:
            wait_until(lambda: finder.focused().wm_class == "Holodesktarget",
                       "the Tk app to take the focus")
            target = finder.focused()
            assert target.pid == app.proc.pid and target.kind is TargetKind.APPLICATION
            assert target.rect == Rect(50, 50, 400, 300)  # no frame: the window itself
            assert finder.at(100, 100).window == target.window
        finally:
            app.stop()
        wait_until(lambda: finder.focused().window == 0, "the focus to go back to the root")
        assert finder.focused().desktop


def _counting_lists(finder: X11TargetFinder, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the finder's full listings of the windows (the costly walk)."""
    calls: list[int] = []
    walk = finder._windows

    def counted(d: object) -> list[Target]:
        calls.append(1)
        return walk(d)

    monkeypatch.setattr(finder, "_windows", counted)
    return calls


def test_the_window_list_is_walked_again_only_when_a_window_changed(
        x11: Xvfb, app: App, term: Xterm, monkeypatch: pytest.MonkeyPatch) -> None:
    """The list is asked for at every frame: an unchanged desktop is not walked again, and a
    window that opens, moves, restacks or closes is in the very next list."""
    finder = finder_for()
    walks = _counting_lists(finder, monkeypatch)
    first = finder.windows()
    assert finder.windows() == first and finder.windows() == first
    assert len(walks) == 1
    brief = Xterm(x11, "-class", "KeePassXC", geometry="40x10+900+40")
    try:
        opened = [t for t in finder.windows() if t.window == brief.window]
        assert len(walks) == 2
        assert opened and opened[0].matches(["keepassxc"]) and opened[0].rect is not None
        xdotool(x11, "windowmove", "--sync", str(brief.window), "700", "500")
        moved = [t for t in finder.windows() if t.window == brief.window]
        assert moved[0].rect is not None and moved[0].rect != opened[0].rect
        activate(x11, app.client)
        assert finder.windows()[-1].window == app.client
        activate(x11, brief.window)
        assert finder.windows()[-1].window == brief.window
    finally:
        brief.stop()
    gone = brief.window
    wait_until(lambda: str(gone) not in xterms(x11), "the xterm to close")
    assert all(t.window != gone for t in finder.windows())
    settled = len(walks)
    finder.windows()
    assert len(walks) == settled
    finder.close()


def test_without_the_watch_the_windows_are_walked_every_time(
        x11: Xvfb, app: App, term: Xterm, monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch that cannot tell (its connection failed) makes every list a fresh walk."""
    finder = finder_for()
    walks = _counting_lists(finder, monkeypatch)

    def broken() -> None:
        raise ConnectionResetError("the watch's X connection broke")

    finder.windows()
    assert finder._watch._display is not None
    monkeypatch.setattr(finder._watch._display, "sync", broken)
    finder.windows()
    finder.windows()  # the watch reopened and says so: walked again
    assert len(walks) == 3
    finder.windows()
    assert len(walks) == 3  # and then it watches again
    finder.close()


def test_the_application_window_inside_a_frame_is_looked_for_again_after_any_change(
        x11: Xvfb, app: App, term: Xterm, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding the client inside a top-level walks its children (tens of round trips where no
    window manager marks it): kept while the watch sees no change, looked for again after
    one, so a window replaced at a point is named as the new one."""
    finder = finder_for()
    looked: list[int] = []
    find = finder._find_client_below

    def counted(d: object, top: object) -> object:
        looked.append(1)
        return find(d, top)

    monkeypatch.setattr(finder, "_find_client_below", counted)
    activate(x11, term.window)
    point = centre(finder.at(*centre(finder.focused())))
    first = finder.at(*point)
    assert first.window == term.window and first.wm_class == "XTerm"
    before = len(looked)
    assert finder.at(*point) == first and finder.focused().window == term.window
    assert len(looked) == before  # nothing changed: no walk
    elsewhere = Xterm(x11, "-class", "Elsewhere", geometry="20x5+1100+700")
    try:
        # Any change the watch sees drops what was found: the same top-level is walked again.
        assert finder.at(*point) == first
        assert len(looked) > before
    finally:
        elsewhere.stop()
    brief = Xterm(x11, "-class", "Briefterm", geometry=f"30x8+{point[0] - 60}+{point[1] - 40}")
    try:
        activate(x11, brief.window)
        now = finder.at(*point)
        assert now.window == brief.window and now.wm_class == "Briefterm"
    finally:
        brief.stop()
    wait_until(lambda: finder.at(*point).window == term.window, "the xterm below again")
    finder.close()


_HOST = """\
import sys, time
from Xlib import X, display
d = display.Display()
host = d.screen().root.create_window(0, 0, 400, 250, 0, X.CopyFromParent, X.InputOutput,
                                     X.CopyFromParent, background_pixel=d.screen().white_pixel)
host.set_wm_class("host", sys.argv[1] if len(sys.argv) > 1 else "EmbedHost")
host.set_wm_name("embed host")
if len(sys.argv) > 2:  # where the program says it runs
    from Xlib import Xatom
    host.change_property(d.get_atom("WM_CLIENT_MACHINE"), Xatom.STRING, 8, sys.argv[2].encode())
host.map()
d.sync()
print(host.id, flush=True)
while True:
    d.next_event()
"""


def test_a_terminal_embedded_in_an_applications_window_is_a_terminal(
        x11: Xvfb, app: App, term: Xterm) -> None:
    """XEmbed: an xterm made inside another program's top-level window (``xterm -into``). The
    top-level is the other program's, which holds no terminal and has none below it; the
    window the click and the keys go to is the xterm's, and the process that made it holds the
    pty."""
    from Xlib import X

    host_proc = subprocess.Popen([sys.executable, "-c", _HOST], env=x11.env(),
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    assert host_proc.stdout is not None
    host_id = int(host_proc.stdout.readline())
    # Started by a process that then exits: the xterm is no child of the host's process.
    argv = ["xterm", "-into", str(host_id), "-geometry", "40x10+0+0", "-e", "bash", "--norc",
            "--noprofile"]
    launcher = subprocess.run(
        [sys.executable, "-c", "import subprocess, sys; print(subprocess.Popen(sys.argv[1:], "
         "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, "
         "start_new_session=True).pid)", *argv],
        env=x11.env(), capture_output=True, text=True, timeout=30, check=True)
    embedded = int(launcher.stdout)
    finder = finder_for()
    try:
        d = finder._connection()
        host = d.create_resource_object("window", host_id)
        wait_until(lambda: bool(host.query_tree().children), "the xterm inside the host")
        inner = host.query_tree().children[0]
        wait_until(lambda: inner.get_attributes().map_state == X.IsViewable,
                   "the embedded xterm mapped")
        # Where the manager put the host: the xterm fills its top left corner.
        origin = host.translate_coords(d.screen().root, 0, 0)
        left, top_y = -origin.x, -origin.y
        inside = poll(lambda: (t := finder_for().at(left + 20, top_y + 20)).wm_class
                      == "EmbedHost" and t, 30, "the host window under the point")
        assert inside.kind is TargetKind.TERMINAL and inside.terminal is TerminalSign.PTY_MASTER
        # The host's own part (outside the embedded xterm) is an application.
        outside = finder_for().at(left + 390, top_y + 240)
        assert outside.wm_class == "EmbedHost" and outside.kind is TargetKind.APPLICATION
        # Keys: the input focus on the embedded xterm.
        activate(x11, host_id)
        inner.set_input_focus(X.RevertToParent, X.CurrentTime)
        d.sync()
        focused = poll(lambda: (t := finder_for().focused()).wm_class == "EmbedHost" and t, 30,
                       "the host focused")
        assert focused.kind is TargetKind.TERMINAL
    finally:
        finder.close()
        os.kill(embedded, signal.SIGTERM)
        host_proc.kill()
        host_proc.wait(10)


def test_a_window_from_another_machine_is_judged_a_terminal(x11: Xvfb, app: App,
                                                           term: Xterm) -> None:
    """ssh -X: the program runs elsewhere (WM_CLIENT_MACHINE names another host) and the X
    server's pid is the local relay's; nothing here can be looked into. The same window
    naming this machine is an application (its process holds no terminal)."""
    from Xlib import X

    finder = finder_for()
    d = finder._connection()
    for machine, sign in (("buildhost.elsewhere.example", TerminalSign.ELSEWHERE),
                          (socket.gethostname(), None)):
        proc = subprocess.Popen([sys.executable, "-c", _HOST, "RemoteApp", machine],
                                env=x11.env(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            window = d.create_resource_object("window", int(proc.stdout.readline()))
            wait_until(lambda w=window: w.get_attributes().map_state == X.IsViewable,
                       "the remote window mapped")

            def remote(w: Any = window) -> Target | None:
                origin = w.translate_coords(d.screen().root, 0, 0)
                found = finder_for().at(-origin.x + 150, -origin.y + 100)
                return found if found.wm_class == "RemoteApp" else None

            target = poll(remote, 30, "the remote window under the point")
            assert target.terminal is sign, target
        finally:
            proc.kill()
            proc.wait(10)
    finder.close()


_TK_MENU = """
import sys, tkinter as tk
root = tk.Tk()
root.title("menu host")
root.geometry("300x200+700+400")
menu = tk.Menu(root, tearoff=0)
menu.add_command(label="Delete Message")
root.update()
print("up", flush=True)
for line in sys.stdin:
    if line.strip() == "post":
        menu.post(720, 420)
    elif line.strip() == "unpost":
        menu.unpost()
    root.update()
    print("done", flush=True)
"""


def test_a_posted_tk_menu_is_a_menu_shown_until_it_is_unposted(
        x11: Xvfb, app: App, term: Xterm) -> None:
    """Red team 10: a popup menu (here Tk's, a mapped override-redirect window of class Menu)
    takes the next key whichever window is focused: the finder says a menu is shown, so the
    policy asks for any pick; once the menu is gone it says none is."""
    host = subprocess.Popen([sys.executable, "-c", _TK_MENU], env=x11.env(), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert host.stdin is not None and host.stdout is not None
    try:
        assert host.stdout.readline().strip() == "up"
        activate(x11, app.client)
        finder = finder_for()
        assert finder.focused().menu is False
        host.stdin.write("post\n")
        host.stdin.flush()
        assert host.stdout.readline().strip() == "done"
        wait_until(lambda: finder.focused().menu is True, "the posted menu to be seen")
        assert finder.at(*EMPTY).menu is True  # whatever the action aims at
        host.stdin.write("unpost\n")
        host.stdin.flush()
        assert host.stdout.readline().strip() == "done"
        wait_until(lambda: finder.focused().menu is False, "the menu to be gone")
    finally:
        host.kill()
        host.wait(10)


def test_a_mapped_override_redirect_window_typed_popup_menu_is_a_menu_shown(
        x11: Xvfb, app: App, term: Xterm) -> None:
    """GTK's and Qt's popups: override-redirect, _NET_WM_WINDOW_TYPE_POPUP_MENU. A tooltip
    (override-redirect too) is no menu."""
    from Xlib import X, Xatom
    from Xlib import display as xdisplay

    d = xdisplay.Display()
    try:
        finder = finder_for()
        for kind, shown in (("TOOLTIP", False), ("POPUP_MENU", True)):
            popup = d.screen().root.create_window(
                900, 100, 80, 60, 0, X.CopyFromParent, X.InputOutput, X.CopyFromParent,
                override_redirect=True)
            popup.change_property(d.intern_atom("_NET_WM_WINDOW_TYPE"), Xatom.ATOM, 32,
                                  [d.intern_atom(f"_NET_WM_WINDOW_TYPE_{kind}")])
            popup.map()
            d.sync()
            try:
                wait_until(lambda: finder.focused().menu is shown, f"a {kind} mapped")  # noqa: B023
            finally:
                popup.destroy()
                d.sync()
            wait_until(lambda: finder.focused().menu is False, f"the {kind} gone")
    finally:
        d.close()
