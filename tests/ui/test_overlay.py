"""The target overlay (window flags, where the marker lands), the coordinate mapping, the
rectangles kept for masking captures, and the floating Stop button; offscreen."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from control.capture import CaptureTarget, EncodeOptions, MssCapturer
from model.coords import Point, Rect
from tests.support.target_app import REPO_ROOT, RunningApp
from tests.support.xvfb import Xvfb, xvfb_available
from ui.marker import MARKER_RGB
from ui.overlay import (
    ScreenMap,
    TargetOverlay,
    WindowRects,
    exclude_from_capture,
    logical_to_qt,
    qt_rect_to_physical,
)
from ui.run_bar import RunBar

# A 1920x1080 monitor at dpr 1, and right of it a 2560x1440 one at dpr 2 (1280x720 in Qt).
SCREENS = [ScreenMap(QRect(0, 0, 1920, 1080), 1.0), ScreenMap(QRect(1920, 0, 1280, 720), 2.0)]


def is_marker(colour: QColor) -> bool:
    return max(abs(colour.red() - MARKER_RGB[0]), abs(colour.green() - MARKER_RGB[1]),
               abs(colour.blue() - MARKER_RGB[2])) <= 30


# -- mapping ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("logical", "qt"), [
    ((100, 200), (100, 200)),
    ((1919, 1079), (1919, 1079)),
    ((1920, 0), (1920, 0)),  # a screen's top-left corner stays where it is
    ((1920 + 1280, 720), (1920 + 640, 360)),  # distances inside a dpr-2 screen halve
    ((1920 + 2559, 1439), (1920 + 1279.5, 719.5)),
])
def test_logical_points_to_qt_coordinates(logical: tuple[int, int],
                                          qt: tuple[float, float]) -> None:
    assert logical_to_qt(*logical, SCREENS, identity=False) == QPointF(*qt)
    assert logical_to_qt(*logical, SCREENS, identity=True) == QPointF(*logical)


def test_qt_rectangles_to_physical_pixels() -> None:
    assert qt_rect_to_physical(QRect(10, 20, 300, 200), SCREENS, identity=False) \
        == Rect(10, 20, 300, 200)
    assert qt_rect_to_physical(QRect(1920 + 100, 50, 200, 100), SCREENS, identity=False) \
        == Rect(1920 + 200, 100, 400, 200)
    # Round trip: a point's mapped position falls inside the mapped-back rectangle.
    spot = logical_to_qt(1920 + 1001, 501, SCREENS, identity=False)
    rect = qt_rect_to_physical(QRect(int(spot.x()) - 1, int(spot.y()) - 1, 3, 3), SCREENS,
                               identity=False)
    assert rect.contains(1920 + 1001, 501)


# -- the overlay -----------------------------------------------------------------------------


@pytest.fixture
def overlay(qtbot: QtBot) -> TargetOverlay:
    o = TargetOverlay(screens=SCREENS, identity=False)
    qtbot.addWidget(o)
    return o


def test_overlay_window_is_click_through_on_top_frameless_and_never_focused(
        overlay: TargetOverlay) -> None:
    flags = overlay.windowFlags()
    for flag in (Qt.WindowType.FramelessWindowHint, Qt.WindowType.WindowStaysOnTopHint,
                 Qt.WindowType.WindowTransparentForInput, Qt.WindowType.WindowDoesNotAcceptFocus,
                 Qt.WindowType.X11BypassWindowManagerHint):
        assert flags & flag, flag
    assert flags & Qt.WindowType.Tool == Qt.WindowType.Tool  # no taskbar entry
    for attribute in (Qt.WidgetAttribute.WA_TransparentForMouseEvents,
                      Qt.WidgetAttribute.WA_TranslucentBackground,
                      Qt.WidgetAttribute.WA_ShowWithoutActivating):
        assert overlay.testAttribute(attribute), attribute
    assert overlay.focusPolicy() == Qt.FocusPolicy.NoFocus


def test_the_marker_lands_on_the_mapped_point(overlay: TargetOverlay, qtbot: QtBot) -> None:
    overlay.show_points([Point(1920 + 1000, 400)])
    qtbot.waitExposed(overlay)
    assert overlay.isVisible()
    (spot,) = overlay.global_points
    assert spot == QPointF(1920 + 500, 200)
    geometry = overlay.geometry()
    assert geometry.contains(QPoint(1920 + 500, 200))
    assert geometry.width() < 150 and geometry.height() < 150  # only around the marker
    local = QPoint(1920 + 500 - geometry.x(), 200 - geometry.y())
    image = overlay.grab().toImage()
    assert is_marker(QColor(image.pixel(local)))
    assert QColor.fromRgba(image.pixel(2, 2)).alpha() == 0  # the rest is transparent
    # Only the marker is part of the window: the corners are masked off.
    mask = overlay.mask()
    assert mask.contains(local)
    assert not mask.contains(QPoint(1, 1))


def test_a_drag_is_marked_at_both_ends_and_clear_hides(overlay: TargetOverlay) -> None:
    overlay.show_points([Point(100, 100), Point(700, 400)])
    geometry = overlay.geometry()
    assert geometry.contains(QPoint(100, 100)) and geometry.contains(QPoint(700, 400))
    image = overlay.grab().toImage()
    for x, y in ((100, 100), (700, 400), (400, 250)):  # both ends and the arrow between
        assert is_marker(QColor(image.pixel(x - geometry.x(), y - geometry.y()))), (x, y)
    assert not overlay.mask().contains(QPoint(400 - geometry.x(), 100 - geometry.y()))
    overlay.clear()
    assert not overlay.isVisible() and overlay.global_points == []
    overlay.show_points([])
    assert not overlay.isVisible()


def test_exclude_from_capture_is_refused_on_x11_and_offscreen(qtbot: QtBot) -> None:
    widget = QWidget()
    qtbot.addWidget(widget)
    widget.show()
    result = exclude_from_capture(widget)
    if sys.platform.startswith("linux"):
        assert result is False  # the caller masks the frame instead


def test_window_rects_follow_the_tracked_windows(qtbot: QtBot) -> None:
    rects = WindowRects(screens=SCREENS, identity=False)
    widget = QWidget(None, Qt.WindowType.FramelessWindowHint)
    qtbot.addWidget(widget)
    widget.setGeometry(50, 60, 200, 100)
    rects.track(widget)
    assert rects.rects() == []  # not shown yet
    widget.show()
    qtbot.waitExposed(widget)
    assert rects.rects() == [Rect(50, 60, 200, 100)]
    widget.move(1920 + 10, 20)  # onto the dpr-2 screen: twice the pixels
    qtbot.waitUntil(lambda: rects.rects() == [Rect(1920 + 20, 40, 400, 200)], timeout=2000)
    widget.hide()
    assert rects.rects() == []


def test_a_minimised_window_is_not_painted_out_and_a_restored_one_is(qtbot: QtBot) -> None:
    # isVisible() stays true when minimised: following it alone painted a minimised window's
    # old place grey in every screenshot, hiding what the model had to see there.
    rects = WindowRects(screens=SCREENS, identity=False)
    widget = QWidget(None, Qt.WindowType.FramelessWindowHint)
    qtbot.addWidget(widget)
    widget.setGeometry(50, 60, 200, 100)
    rects.track(widget)
    widget.show()
    qtbot.waitExposed(widget)
    assert rects.rects() == [Rect(50, 60, 200, 100)]
    widget.showMinimized()
    qtbot.waitUntil(lambda: rects.rects() == [], timeout=2000)
    assert widget.isVisible()  # what the old rule followed
    widget.showNormal()
    qtbot.waitUntil(lambda: rects.rects() == [Rect(50, 60, 200, 100)], timeout=2000)


# -- the run bar's Stop --------------------------------------------------------------------


@pytest.fixture
def bar(qtbot: QtBot) -> RunBar:
    widget = RunBar(hint="Ctrl+Alt+Shift+S")
    qtbot.addWidget(widget)
    widget.place_default()
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _on_stop(bar: RunBar) -> QPoint:
    return bar.stop_face.geometry().center()


def test_run_bar_window(bar: RunBar) -> None:
    flags = bar.windowFlags()
    for flag in (Qt.WindowType.FramelessWindowHint, Qt.WindowType.WindowStaysOnTopHint,
                 Qt.WindowType.WindowDoesNotAcceptFocus):
        assert flags & flag, flag
    assert flags & Qt.WindowType.Tool == Qt.WindowType.Tool
    assert "Ctrl+Alt+Shift+S" in bar.stop_face.toolTip()
    image = bar.grab().toImage()
    centre = QColor(image.pixel(bar.stop_face.x() + 6, bar.height() // 2))
    assert centre.red() > 150 and centre.green() < 80  # red


def test_run_bar_stop_click_emits(bar: RunBar, qtbot: QtBot) -> None:
    with qtbot.waitSignal(bar.stop_clicked, timeout=2000):
        qtbot.mouseClick(bar.stop_face, Qt.MouseButton.LeftButton,
                         pos=bar.stop_face.rect().center())


def test_run_bar_drags_without_stopping(bar: RunBar, qtbot: QtBot) -> None:
    start = bar.pos()
    face = bar.stop_face
    press = face.rect().center()
    with qtbot.assertNotEmitted(bar.stop_clicked), \
            qtbot.waitSignal(bar.moved_by_person, timeout=2000):
        qtbot.mousePress(face, Qt.MouseButton.LeftButton, pos=press)
        qtbot.mouseMove(face, press + QPoint(-40, 25))
        qtbot.mouseRelease(face, Qt.MouseButton.LeftButton, pos=press + QPoint(-40, 25))
    assert bar.pos() == start + QPoint(-40, 25)
    with qtbot.waitSignal(bar.stop_clicked, timeout=2000):  # and still stops afterwards
        qtbot.mouseClick(face, Qt.MouseButton.LeftButton, pos=press)


def test_a_click_on_the_bar_beside_stop_does_not_stop(bar: RunBar, qtbot: QtBot) -> None:
    with qtbot.assertNotEmitted(bar.stop_clicked):
        qtbot.mouseClick(bar, Qt.MouseButton.LeftButton,
                         pos=QPoint(bar.headline.x() + 5, bar.height() // 2))


def test_run_bar_pause_resume_and_show(bar: RunBar, qtbot: QtBot) -> None:
    with qtbot.waitSignal(bar.pause_clicked, timeout=2000):
        bar.pause_button.click()
    bar.set_paused(True)
    assert bar.pause_button.text() == "Resume"
    with qtbot.waitSignal(bar.resume_clicked, timeout=2000):
        bar.pause_button.click()
    with qtbot.waitSignal(bar.show_clicked, timeout=2000):
        bar.show_button.click()
    bar.set_outside(True)  # a terminal's run: only its Stop reaches it
    assert bar.pause_button.isHidden() and bar.show_button.isHidden()


# -- x11: the overlay on a real X server without a compositor --------------------------------

_OVERLAY_SCRIPT = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
from model.coords import Point
from ui.overlay import TargetOverlay
overlay = TargetOverlay()
overlay.show_points([Point(int(sys.argv[1]), int(sys.argv[2]))])
QTimer.singleShot(800, lambda: print("shown", flush=True))
QTimer.singleShot(30000, app.quit)
app.exec()
"""


@pytest.mark.x11
def test_overlay_on_x11_shows_only_the_marker_and_lets_clicks_through(
        tmp_path: Path) -> None:
    if not xvfb_available():
        pytest.skip("Xvfb is not installed")
    with Xvfb(1280, 800) as server:
        app = RunningApp(server, tmp_path, geometry="1000x660+0+0")
        env = server.env()
        env["QT_QPA_PLATFORM"] = "xcb"
        env["PYTHONPATH"] = str(REPO_ROOT)
        save = app.widgets["save"]
        x, y = save.solid_center
        proc = subprocess.Popen([sys.executable, "-c", _OVERLAY_SCRIPT, str(x), str(y)],
                                env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.strip() == "shown", proc.stderr.read() if proc.stderr else ""
            with server.activated(), MssCapturer(CaptureTarget.area(Rect(x - 30, y - 30, 61, 61)),
                                                 options=EncodeOptions(image_format="png"),
                                                 display=server.display) as cap:
                frame = cap.grab()
            pixels = np.asarray(Image.open(io.BytesIO(frame.data)).convert("RGB"))
            assert is_marker(QColor(*pixels[30, 30].tolist()))
            # Between the crosshair's arms and outside the circle: the button, not a black box.
            for px, py in ((24, 24), (2, 2), (58, 58)):
                assert tuple(pixels[py, px].tolist()) == save.rgb, (px, py)
            mark = app.mark()
            subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"],
                           env=server.env(), check=True)
            deadline = time.monotonic() + 10
            while not app.events_since(mark, "click", widget="save"):
                assert time.monotonic() < deadline, app.events_since(mark)
                time.sleep(0.05)
        finally:
            proc.kill()
            proc.wait(10)
            app.stop()
