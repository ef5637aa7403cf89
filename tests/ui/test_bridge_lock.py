"""The desktop app's runs take the same desktop lock as `holodesk run`."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app import paths
from app.lock import DesktopLock
from app.result import RunResult
from app.run_request import make_run_request
from app.settings import Settings
from tests.support.home import isolate_home
from ui.bridge import RunController


def test_a_gui_run_refuses_while_another_run_holds_the_desktop(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_home(monkeypatch, tmp_path)
    failures: list[str] = []
    results: list[RunResult] = []
    controller = RunController()  # the real session factory
    controller.failed.connect(failures.append)
    controller.unstarted.connect(lambda result, _text: results.append(result))
    with DesktopLock(paths.lock_path()):  # a terminal run, as far as the lock can tell
        assert controller.start(make_run_request(Settings(), "click Save"))
        qtbot.waitUntil(lambda: bool(failures), timeout=10_000)
        qtbot.waitUntil(lambda: not controller.running, timeout=10_000)
    assert "another holodesk run" in failures[0]
    assert "driving the desktop" in failures[0]
    assert results == [RunResult.REFUSED]  # as `holodesk run` says it (busy: exit 3)


def test_the_lock_is_released_when_the_input_backend_cannot_start(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import control.input

    isolate_home(monkeypatch, tmp_path)

    class NoDisplay:
        def __init__(self, *_args: object, **_kwargs: object) -> None:
            raise RuntimeError("no display for pyautogui")

    monkeypatch.setattr(control.input, "PyAutoGuiBackend", NoDisplay)
    failures: list[str] = []
    results: list[RunResult] = []
    controller = RunController()  # the real session factory
    controller.failed.connect(failures.append)
    controller.unstarted.connect(lambda result, _text: results.append(result))
    assert controller.start(make_run_request(Settings(), "click Save"))
    qtbot.waitUntil(lambda: bool(failures), timeout=10_000)
    qtbot.waitUntil(lambda: not controller.running, timeout=10_000)
    assert "no display for pyautogui" in failures[0]
    assert results == [RunResult.FAILED]
    with DesktopLock(paths.lock_path()):  # free again at once, not when collected
        pass
