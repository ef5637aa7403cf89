"""Guards on the Qt binding itself: a long-running tray app must not die of a binding bug."""

from __future__ import annotations

import sys

from pytestqt.qtbot import QtBot


def test_processing_events_does_not_leak_references_to_none(qtbot: QtBot) -> None:
    # PySide6 6.12.0 on Python 3.11 drops a reference to None on every processEvents(): after a
    # few thousand calls the interpreter aborts ("none_dealloc"). pyproject pins below it.
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    assert app is not None
    before = sys.getrefcount(None)
    for _ in range(200):
        app.processEvents()
    assert sys.getrefcount(None) - before > -50
