"""Red team 14 on the run bar standing for a run in a terminal (ui/stage.py).

- The bar's Stop is that run's Ctrl+C (SIGINT). `holodesk run` takes a second SIGINT as "kill
  me now" (app/runner.py ``stop_signals``: Ctrl+C again raises KeyboardInterrupt), so a
  second Stop, a double-click or a click while the stopped run winds down (the bar stays until
  it says it is over), turned a stop into a crash: a traceback, no "stopped" exit code, the
  action log left without the run's end. A run is stopped once.
- A run in a terminal killed without being reaped (a zombie: `kill -9` under a parent that
  does not wait for it) still answers ``kill(pid, 0)``: the app stayed collapsed for good, its
  Stop aimed at a number that another process could take next.
- The app's own run that began while a terminal's run still held the bar (its process killed,
  the app not yet aware) lost the bar and every window came back over its work once the
  terminal's run was found gone: the rest of that run never made way.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.cli.exitcodes import EXIT_STOPPED
from app.way import WorkArea, area_message
from model.coords import Rect
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import REPO_ROOT, isolate_home
from tests.ui.test_stage import Desk as StageDesk
from ui.reveal import reveal
from ui.stage import Stage

#: Stands for `holodesk run` in a terminal: the product's own stop signals around a run that
#: ends as soon as it is told (the file "finish"), exiting as a stopped run does; a
#: KeyboardInterrupt (the second SIGINT) exits 99. Each signal's name goes to the file "seen".
TERMINAL_RUN = """
import pathlib, sys, time
from app.runner import stop_signals
folder = pathlib.Path(sys.argv[1])
seen = []
def on_signal(sig):
    seen.append(sig.name)
    (folder / "seen.tmp").write_text(" ".join(seen))
    (folder / "seen.tmp").replace(folder / "seen")
try:
    with stop_signals(on_signal):
        (folder / "ready").write_text("ready")
        while not (folder / "finish").exists():
            time.sleep(0.02)
except KeyboardInterrupt:
    sys.exit(99)
sys.exit(6)
"""


WAIT = {"thought": "wait", "action": {"action": "wait", "seconds": 0}}


def _screen() -> Rect:
    screen = QGuiApplication.primaryScreen()
    assert screen is not None
    g = screen.availableGeometry()
    return Rect(g.x(), g.y(), g.width(), g.height())


class Desk(StageDesk):
    """test_stage's task window and stand-in (and a log window), with a stage whose Stop is
    the real one (SIGINT) unless ``stop_outside`` is given."""

    def __init__(self, qtbot: QtBot, stop_outside: Callable[[int], None] | None = None) -> None:
        super().__init__(qtbot)
        self.stage = Stage(self.bar, collapsible=lambda: [self.task, self.tray],
                           windows=lambda: [], reveal=reveal, stop_outside=stop_outside,
                           parent=self.bar)  # goes with the bar: its watch too

    def click_stop(self, qtbot: QtBot) -> None:
        """A person's click on the bar's Stop."""
        face = self.bar.stop_face.geometry()
        QTest.mouseClick(self.bar, Qt.MouseButton.LeftButton, pos=face.center())


@pytest.fixture
def desk(qtbot: QtBot) -> Desk:
    return Desk(qtbot)


@pytest.fixture
def terminal_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    proc = subprocess.Popen([sys.executable, "-c", TERMINAL_RUN, str(tmp_path)],
                            cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    yield proc, tmp_path
    if proc.poll() is None:
        proc.kill()
    proc.wait(30)


def test_a_second_stop_on_the_bar_does_not_kill_the_terminals_run(
        desk: Desk, qtbot: QtBot, terminal_run: tuple[subprocess.Popen[bytes], Path]) -> None:
    proc, folder = terminal_run
    qtbot.waitUntil(lambda: (folder / "ready").exists(), timeout=30_000)
    assert desk.stage.outside(proc.pid, "tidy up", WorkArea(_screen()))
    desk.click_stop(qtbot)
    qtbot.waitUntil(lambda: (folder / "seen").exists(), timeout=30_000)
    assert (folder / "seen").read_text() == "SIGINT"
    # The run winds down (its last look, the log, the session's close): the bar is still
    # there, and the person clicks Stop again.
    assert desk.bar.isVisible()
    desk.click_stop(qtbot)
    (folder / "finish").write_text("")
    assert proc.wait(30) == EXIT_STOPPED, "the second Stop killed the run (KeyboardInterrupt)"
    assert (folder / "seen").read_text() == "SIGINT"


def test_a_double_click_on_stop_stops_the_terminals_run_once(
        qtbot: QtBot, terminal_run: tuple[subprocess.Popen[bytes], Path]) -> None:
    """A double-click reaches a window as a press, a release, a double-click press and a
    release: two Stops, a fraction of a second apart."""
    proc, _folder = terminal_run
    sent: list[int] = []  # what the clicks ask for (the test above: how it is sent)
    desk = Desk(qtbot, stop_outside=sent.append)
    desk.stage.outside(proc.pid, "tidy up", WorkArea(_screen()))
    face: QPoint = desk.bar.stop_face.geometry().center()
    QTest.mouseClick(desk.bar, Qt.MouseButton.LeftButton, pos=face)
    QTest.mouseDClick(desk.bar, Qt.MouseButton.LeftButton, pos=face)
    QTest.mouseRelease(desk.bar, Qt.MouseButton.LeftButton, pos=face)
    assert sent == [proc.pid]


def test_a_terminals_run_killed_and_never_reaped_gives_the_windows_back(
        desk: Desk, qtbot: QtBot, terminal_run: tuple[subprocess.Popen[bytes], Path]) -> None:
    proc, folder = terminal_run
    qtbot.waitUntil(lambda: (folder / "ready").exists(), timeout=30_000)
    desk.stage.outside(proc.pid, "tidy up", WorkArea(_screen()))
    assert desk.task.isHidden()
    os.kill(proc.pid, signal.SIGKILL)  # not waited for: a zombie until the fixture reaps it
    qtbot.waitUntil(lambda: desk.task.isVisible() and desk.tray.isVisible(), timeout=10_000)
    assert desk.bar.isHidden()
    assert proc.poll() == -signal.SIGKILL  # it was a zombie all along (reaped only now)


def test_the_apps_own_run_keeps_the_bar_when_the_terminals_run_is_gone(
        desk: Desk, qtbot: QtBot, terminal_run: tuple[subprocess.Popen[bytes], Path]) -> None:
    proc, folder = terminal_run
    qtbot.waitUntil(lambda: (folder / "ready").exists(), timeout=30_000)
    desk.stage.outside(proc.pid, "tidy up", WorkArea(_screen()))
    # Killed: its desktop lock is free at once, and the app's own run starts before the app
    # noticed the process is gone.
    proc.kill()
    proc.wait(30)
    desk.stage.begin("the app's own task")
    qtbot.waitUntil(lambda: not desk.stage.outside_pid, timeout=10_000)
    assert desk.stage.active, "the app's own run no longer makes way"
    assert desk.task.isHidden() and desk.tray.isHidden()
    assert desk.bar.isVisible() and not desk.bar.outside  # its Pause and Show are back
    # Its windows still leave its work before each look.
    reveal(desk.tray)
    changed, _ = desk.stage.clear(WorkArea(_screen()))
    assert changed and desk.tray.isHidden()
    desk.stage.end()
    assert desk.task.isVisible() and desk.bar.isHidden()


def test_trigger_stop_stops_the_terminals_run_the_bar_stands_for(
        qtbot: QtBot, make_app: MakeApp, monkeypatch: pytest.MonkeyPatch,
        terminal_run: tuple[subprocess.Popen[bytes], Path]) -> None:
    """`holodesk trigger stop` (the app's emergency stop, as its hotkey) answered "ok" while
    the run its bar stood for went on."""
    proc, folder = terminal_run
    isolate_home(monkeypatch, folder / "app")
    with FakeVLLM(ScriptedPolicy([WAIT])) as server:  # no run of the app's own
        app, _rig = make_app(server)
        qtbot.waitUntil(lambda: (folder / "ready").exists(), timeout=30_000)
        reply = app.runs.handle({"cmd": "make_way", "pid": proc.pid, "peer": proc.pid,
                                 "task": "tidy up", **area_message(WorkArea(_screen()))})
        assert reply["ok"] and app.run_bar.isVisible()
        assert app.runs.handle({"cmd": "stop"}) == {"ok": True}
        qtbot.waitUntil(lambda: (folder / "seen").exists(), timeout=30_000)
    (folder / "finish").write_text("")
    assert proc.wait(30) == EXIT_STOPPED
    qtbot.waitUntil(lambda: app.stage.outside_pid == 0, timeout=10_000)  # its windows back
