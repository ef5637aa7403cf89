"""The calibration window (offscreen): where it goes, what it paints, and the thread hand-off."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.calibrate import BACKGROUND, PlacedTarget, ScreenClosed, place_targets
from model.coords import Rect
from ui.calibrate_screen import CalibrationWindow, QtTargetScreen, area_to_qt
from ui.overlay import ScreenMap

# A 1920x1080 monitor at dpr 1, and right of it a 2560x1440 one at dpr 2 (1280x720 in Qt).
SCREENS = [ScreenMap(QRect(0, 0, 1920, 1080), 1.0), ScreenMap(QRect(1920, 0, 1280, 720), 2.0)]


def _near(colour: QColor, rgb: tuple[int, int, int], tolerance: int = 8) -> bool:
    return max(abs(colour.red() - rgb[0]), abs(colour.green() - rgb[1]),
               abs(colour.blue() - rgb[2])) <= tolerance


def test_areas_map_to_qt_geometry() -> None:
    assert area_to_qt(Rect(0, 0, 1920, 1080), SCREENS, identity=False) == (
        QRect(0, 0, 1920, 1080), 1.0)
    # The dpr-2 monitor: its corner stays, its size halves.
    assert area_to_qt(Rect(1920, 0, 2560, 1440), SCREENS, identity=False) == (
        QRect(1920, 0, 1280, 720), 2.0)
    assert area_to_qt(Rect(1920, 0, 2560, 1440), SCREENS, identity=True) == (
        QRect(1920, 0, 2560, 1440), 1.0)


@pytest.mark.parametrize("area", [Rect(0, 0, 800, 600), Rect(300, 200, 640, 480)],
                         ids=["origin", "offset"])
def test_the_window_covers_the_area_and_paints_the_target(qtbot: QtBot, area: Rect) -> None:
    window = CalibrationWindow(identity=True)
    qtbot.addWidget(window)
    for placed in place_targets(area):
        with qtbot.waitSignal(window.painted, timeout=5000) as painted:
            window.present(placed, seq=placed.index)
        assert painted.args == [placed.index]
        assert window.geometry() == QRect(area.left, area.top, area.width, area.height)
        flags = window.windowFlags()
        assert flags & Qt.WindowType.FramelessWindowHint
        assert flags & Qt.WindowType.WindowStaysOnTopHint
        image = window.grab().toImage()
        cx, cy = placed.center.x - area.left, placed.center.y - area.top
        assert _near(image.pixelColor(cx, cy), placed.target.rgb), placed.target.label
        # Only this target: every other target's spot is background.
        for other in place_targets(area):
            if other is not placed and other.target is not placed.target:
                ox, oy = other.center.x - area.left, other.center.y - area.top
                assert _near(image.pixelColor(ox, oy), BACKGROUND)
        # The disc is centred on the target's pixel: its edges are symmetric around it.
        r = placed.radius
        assert _near(image.pixelColor(cx - r + 2, cy), placed.target.rgb)
        assert _near(image.pixelColor(cx + r - 2, cy), placed.target.rgb)
        assert _near(image.pixelColor(cx - r - 2, cy), BACKGROUND)
        assert _near(image.pixelColor(cx + r + 2, cy), BACKGROUND)


def test_escape_and_closing_cancel(qtbot: QtBot) -> None:
    window = CalibrationWindow(identity=True)
    qtbot.addWidget(window)
    window.present(place_targets(Rect(0, 0, 640, 480))[0])
    with qtbot.waitSignal(window.cancelled, timeout=2000):
        QTest.keyClick(window, Qt.Key.Key_Escape)
    with qtbot.waitSignal(window.cancelled, timeout=2000):
        window.close()
    window.present(place_targets(Rect(0, 0, 640, 480))[0])
    with qtbot.assertNotEmitted(window.cancelled):
        window.dismiss()
    assert not window.isVisible()


def _in_thread(fn: Callable[[], None]) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def body() -> None:
        try:
            fn()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, errors


def _screen(qtbot: QtBot, cancelled: list[bool]) -> QtTargetScreen:
    window = CalibrationWindow(identity=True)
    qtbot.addWidget(window)
    return QtTargetScreen(lambda: cancelled.append(True), window=window, paint_timeout=10)


def test_show_from_a_worker_returns_once_painted(qtbot: QtBot) -> None:
    cancelled: list[bool] = []
    screen = _screen(qtbot, cancelled)
    placed = place_targets(Rect(0, 0, 800, 600))
    seen: list[PlacedTarget | None] = []

    def work() -> None:
        for target in placed:
            screen.show(target)
            seen.append(screen.window.target)

    thread, errors = _in_thread(work)
    screen.run_until(lambda: not thread.is_alive())
    thread.join(5)
    assert errors == []
    assert seen == placed
    screen.close()
    assert not screen.window.isVisible()
    assert cancelled == []


def test_show_on_the_gui_thread_is_refused(qtbot: QtBot) -> None:
    screen = _screen(qtbot, [])
    with pytest.raises(RuntimeError, match="GUI thread"):
        screen.show(place_targets(Rect(0, 0, 800, 600))[0])


def test_a_closed_screen_refuses_to_show(qtbot: QtBot) -> None:
    screen = _screen(qtbot, [])
    screen.close()
    thread, errors = _in_thread(lambda: screen.show(place_targets(Rect(0, 0, 800, 600))[0]))
    thread.join(5)
    assert len(errors) == 1 and isinstance(errors[0], ScreenClosed)


def test_close_from_another_thread_wakes_a_waiting_show(qtbot: QtBot) -> None:
    # No event loop runs, so the target is never painted: only close() can end the wait.
    screen = _screen(qtbot, [])
    started = threading.Event()

    def work() -> None:
        started.set()
        screen.show(place_targets(Rect(0, 0, 800, 600))[0])

    thread, errors = _in_thread(work)
    assert started.wait(5)
    closer, _ = _in_thread(screen.close)
    closer.join(5)
    thread.join(5)
    assert not thread.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], ScreenClosed)
    qtbot.waitUntil(lambda: not screen.window.isVisible(), timeout=2000)


def test_escape_calls_on_cancel_and_closes(qtbot: QtBot) -> None:
    cancelled: list[bool] = []
    screen = _screen(qtbot, cancelled)
    screen.window.present(place_targets(Rect(0, 0, 800, 600))[0])
    QTest.keyClick(screen.window, Qt.Key.Key_Escape)
    assert cancelled == [True]
    assert not screen.window.isVisible()
    thread, errors = _in_thread(lambda: screen.show(place_targets(Rect(0, 0, 800, 600))[1]))
    thread.join(5)
    assert len(errors) == 1 and isinstance(errors[0], ScreenClosed)
