"""The desktop app stops its run and quits cleanly on SIGINT and SIGTERM."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.settings import Settings
from tests.support.home import isolate_home
from ui.app import HolodeskApp, quit_on_stop_signals


def test_sigterm_stops_the_run_and_quits_once(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_home(monkeypatch, tmp_path)
    app = HolodeskApp(Settings(), use_system_tray=False, probe=False)
    quits: list[bool] = []
    app.quit = lambda: quits.append(True)  # type: ignore[method-assign]
    before = signal.getsignal(signal.SIGTERM)
    try:
        with quit_on_stop_signals(app) as installed:
            assert installed
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)  # a second one: still one quit, no traceback
            qtbot.waitUntil(lambda: bool(quits), timeout=5_000)
            qtbot.wait(100)
        assert quits == [True]
        assert app.controller.latch.is_set
        info = app.controller.latch.info
        assert info is not None and (info.source, info.reason) == ("signal", "SIGTERM")
        assert signal.getsignal(signal.SIGTERM) is before
    finally:
        app.close()
        qtbot.wait(50)
