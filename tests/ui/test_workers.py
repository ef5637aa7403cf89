"""ui.workers: work runs on a pool thread, results arrive on the GUI thread, no loop stalls."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import QObject, QThread, QTimer
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ui.workers import Background, run_in_background, run_on_main


def gui_thread() -> QThread:
    app = QApplication.instance()
    assert app is not None
    return app.thread()


def test_result_is_delivered_on_the_gui_thread(qtbot: QtBot) -> None:
    tasks = Background()
    worker_threads: list[bool] = []
    delivered: list[tuple[int, bool]] = []

    def work() -> int:
        worker_threads.append(QThread.currentThread() == gui_thread())
        return 42

    tasks.run(
        work, lambda value: delivered.append((value, QThread.currentThread() == gui_thread()))
    )
    qtbot.waitUntil(lambda: bool(delivered), timeout=5000)
    assert worker_threads == [False]
    assert delivered == [(42, True)]
    assert tasks.pending == 0


def test_error_goes_to_on_error_on_the_gui_thread(qtbot: QtBot) -> None:
    tasks = Background()
    errors: list[tuple[BaseException, bool]] = []

    def work() -> None:
        raise ValueError("boom")

    tasks.run(
        work, lambda _v: None, lambda e: errors.append((e, QThread.currentThread() == gui_thread()))
    )
    qtbot.waitUntil(lambda: bool(errors), timeout=5000)
    assert isinstance(errors[0][0], ValueError) and errors[0][1]


def test_error_without_handler_is_logged(qtbot: QtBot, caplog: pytest.LogCaptureFixture) -> None:
    tasks = Background()

    def work() -> None:
        raise RuntimeError("nobody listens")

    tasks.run(work)
    qtbot.waitUntil(lambda: tasks.pending == 0, timeout=5000)
    assert "background task failed" in caplog.text
    assert "nobody listens" in caplog.text


def test_the_event_loop_keeps_running_while_work_blocks(qtbot: QtBot) -> None:
    tasks = Background()
    release = threading.Event()
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start()
    done: list[str] = []
    tasks.run(lambda: release.wait(10) and "released", done.append)
    # The loop turns (the timer ticks) although the task is blocked.
    qtbot.waitUntil(lambda: len(ticks) >= 5, timeout=5000)
    assert done == []
    release.set()
    qtbot.waitUntil(lambda: done == ["released"], timeout=5000)
    timer.stop()


def test_one_thread_runs_tasks_in_order(qtbot: QtBot) -> None:
    tasks = Background(max_threads=1)
    order: list[int] = []
    for n in range(20):
        tasks.run(lambda n=n: n, order.append)  # type: ignore[misc]
    qtbot.waitUntil(lambda: len(order) == 20, timeout=5000)
    assert order == list(range(20))
    tasks.close()


def test_forget_pending_drops_late_results(qtbot: QtBot) -> None:
    tasks = Background(max_threads=1)
    release = threading.Event()
    got: list[object] = []
    tasks.run(lambda: release.wait(10), got.append)
    tasks.forget_pending()
    release.set()
    assert tasks.wait(5000)
    qtbot.wait(50)
    assert got == []


def test_closed_background_refuses_work() -> None:
    tasks = Background(max_threads=1)
    tasks.close()
    with pytest.raises(RuntimeError):
        tasks.run(lambda: None)


def test_deleted_owner_gets_nothing_and_nothing_crashes(qtbot: QtBot) -> None:
    release = threading.Event()
    finished = threading.Event()
    got: list[object] = []

    def work() -> str:
        release.wait(10)
        finished.set()
        return "late"

    for _round in range(20):
        # Deleted while tasks run and while they deliver: the window-closed-mid-probe case.
        owner = QObject()
        tasks = Background(owner)
        for _n in range(5):
            tasks.run(lambda: "quick", got.append)
        owner.deleteLater()
        qtbot.wait(1)
    owner = QObject()
    tasks = Background(owner)
    tasks.run(work, got.append)
    owner.deleteLater()
    qtbot.wait(20)
    release.set()
    assert finished.wait(5)
    qtbot.wait(50)
    assert "late" not in got


def test_module_helpers(qtbot: QtBot) -> None:
    got: list[object] = []
    run_in_background(lambda: "value", got.append)
    qtbot.waitUntil(lambda: got == ["value"], timeout=5000)

    on_gui: list[bool] = []

    def from_worker() -> None:
        run_on_main(lambda: on_gui.append(QThread.currentThread() == gui_thread()))

    thread = threading.Thread(target=from_worker)
    thread.start()
    thread.join(5)
    qtbot.waitUntil(lambda: on_gui == [True], timeout=5000)
