"""holodesk's windows around a run (ui/stage.py): collapsed into the run bar as it starts, out
of where it works before each screenshot (asked from the run's thread), back when it ends; a
run in a terminal the same, its windows back when its process is gone."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.way import WorkArea
from control.stop import StopLatch
from model.coords import Point, Rect
from ui.reveal import reveal
from ui.run_bar import RunBar
from ui.stage import Stage


def _overlaps(a: QRect, b: Rect) -> bool:
    return (a.x() < b.right and b.left < a.x() + a.width()
            and a.y() < b.bottom and b.top < a.y() + a.height())


class Desk:
    """A task window, a stand-in and a log window, shown; the stage over them."""

    def __init__(self, qtbot: QtBot) -> None:
        self.task = self._window(qtbot, QRect(0, 0, 300, 400))
        self.tray = self._window(qtbot, QRect(320, 0, 300, 80))
        self.log = self._window(qtbot, QRect(400, 300, 300, 200))
        self.bar = RunBar()
        qtbot.addWidget(self.bar)
        self.stopped: list[int] = []
        self.stage = Stage(self.bar, collapsible=lambda: [self.task, self.tray],
                           windows=lambda: [self.log, None], reveal=reveal,
                           stop_outside=self.stopped.append)

    @staticmethod
    def _window(qtbot: QtBot, geometry: QRect) -> QWidget:
        window = QWidget()
        qtbot.addWidget(window)
        window.setGeometry(geometry)
        window.show()
        qtbot.waitExposed(window)
        return window


@pytest.fixture
def desk(qtbot: QtBot) -> Desk:
    return Desk(qtbot)


def _screen() -> Rect:
    screen = QGuiApplication.primaryScreen()
    assert screen is not None
    g = screen.availableGeometry()
    return Rect(g.x(), g.y(), g.width(), g.height())


def _from_the_run(stage: Stage, area: WorkArea, latch: StopLatch | None = None) -> list[bool]:
    """make_way as the run calls it: from its own thread; what it returned, when it has."""
    answers: list[bool] = []
    threading.Thread(target=lambda: answers.append(stage.make_way(area, latch)),
                     daemon=True).start()
    return answers


def test_a_run_collapses_the_task_window_and_the_stand_in_and_they_come_back(
        desk: Desk, qtbot: QtBot) -> None:
    desk.stage.begin()
    assert desk.task.isHidden() and desk.tray.isHidden()
    assert desk.log.isVisible()  # not over any work yet: it stays
    assert desk.bar.isVisible()
    desk.stage.end()
    assert desk.task.isVisible() and desk.tray.isVisible()
    assert desk.bar.isHidden()


def test_a_window_hidden_before_the_run_stays_hidden_after(desk: Desk) -> None:
    desk.tray.hide()
    desk.stage.begin()
    desk.stage.end()
    assert desk.tray.isHidden() and desk.task.isVisible()


def test_before_a_look_windows_over_the_work_go_and_the_bar_leaves_it(
        desk: Desk, qtbot: QtBot) -> None:
    screen = _screen()
    work = Rect(screen.left + 350, screen.top + 250, 300, 250)  # under the log window
    desk.stage.begin()
    answers = _from_the_run(desk.stage, WorkArea(screen, (work,), (Point(500, 300),)))
    qtbot.waitUntil(lambda: bool(answers), timeout=10_000)
    assert answers == [True]
    assert desk.log.isHidden()
    assert not _overlaps(desk.bar.frameGeometry(), work)
    # Asked again with nothing in the way: nothing moves, the run does not wait to settle.
    again = _from_the_run(desk.stage, WorkArea(screen, (work,), (Point(500, 300),)))
    qtbot.waitUntil(lambda: bool(again), timeout=10_000)
    assert again == [False]
    desk.stage.end()
    assert desk.log.isVisible()


def test_a_window_the_person_brought_back_stays(desk: Desk, qtbot: QtBot) -> None:
    screen = _screen()
    desk.stage.begin()
    desk.stage.kept(desk.task)
    reveal(desk.task)
    answers = _from_the_run(desk.stage, WorkArea(screen, (Rect(0, 0, 200, 200),)))
    qtbot.waitUntil(lambda: bool(answers), timeout=10_000)
    assert desk.task.isVisible()


def test_a_stop_ends_the_wait_even_when_the_gui_cannot_answer(desk: Desk) -> None:
    """Asked on the GUI thread itself (which therefore cannot answer): a stop returns at once
    (app.close stops the run, then waits for it on the GUI thread)."""
    latch = StopLatch()
    latch.stop("test", "stopped")
    desk.stage.begin()
    assert desk.stage.make_way(WorkArea(_screen()), latch) is False


@pytest.fixture
def terminal_run() -> Iterator[subprocess.Popen[bytes]]:
    """A process standing for `holodesk run` in a terminal."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait(10)


def test_a_run_in_a_terminal_collapses_the_windows_until_its_process_is_gone(
        desk: Desk, qtbot: QtBot, terminal_run: subprocess.Popen[bytes]) -> None:
    screen = _screen()
    pid = terminal_run.pid
    assert desk.stage.outside(pid, "tidy up", WorkArea(screen, (Rect(0, 0, 300, 300),), (), 2,
                                                       'click "Save"'))
    assert desk.task.isHidden() and desk.tray.isHidden() and desk.bar.isVisible()
    assert desk.bar.outside and "Save" in desk.bar.headline.full
    desk.bar.stop_clicked.emit()  # its Stop stops that run
    assert desk.stopped == [pid]
    desk.stage.begin()  # the app's own run cannot take the bar from it meanwhile
    assert desk.bar.outside
    terminal_run.kill()
    terminal_run.wait(10)
    qtbot.waitUntil(lambda: desk.task.isVisible() and desk.tray.isVisible(), timeout=10_000)
    assert desk.bar.isHidden()


def test_a_run_in_a_terminal_says_when_it_is_over(desk: Desk,
                                                  terminal_run: subprocess.Popen[bytes]) -> None:
    desk.stage.outside(terminal_run.pid, "x", WorkArea(_screen()))
    desk.stage.outside_ended(terminal_run.pid + 1)  # another process's word changes nothing
    assert desk.task.isHidden()
    desk.stage.outside_ended(terminal_run.pid)
    assert desk.task.isVisible() and desk.bar.isHidden()


def test_a_terminals_run_is_refused_while_the_apps_own_runs(
        desk: Desk, terminal_run: subprocess.Popen[bytes]) -> None:
    desk.stage.begin()
    assert desk.stage.outside(terminal_run.pid, "x", WorkArea(_screen())) is False
    assert not desk.bar.outside
