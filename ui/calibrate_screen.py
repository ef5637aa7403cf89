"""The window `holodesk calibrate` shows its targets in: full-screen on the chosen monitor.

:class:`CalibrationWindow` paints one target (a coloured disc, its label, a line saying what
is going on) on a plain background covering the monitor. :class:`QtTargetScreen` is the
:class:`app.calibrate.TargetScreen` the calibration drives from its worker thread: ``show``
hands the target to the GUI thread through a queued signal and waits until the window has
painted it; the GUI thread only ever runs the event loop (``run_until``), never waits.

Coordinates: targets come in logical points (pyautogui's space, what the model's answers map
to); Qt places windows in device-independent pixels. :func:`ui.overlay.logical_to_qt` converts
(the identity on X11 and macOS at the usual scale), so the disc is drawn where a run would click.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Sequence

from PySide6.QtCore import QEventLoop, QObject, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QColor,
    QFont,
    QGuiApplication,
    QKeyEvent,
    QPainter,
    QPaintEvent,
)
from PySide6.QtWidgets import QApplication, QWidget

from app.calibrate import BACKGROUND, INK, PlacedTarget, ScreenClosed
from model.coords import Rect
from ui.overlay import ScreenMap, current_screens, logical_to_qt

log = logging.getLogger(__name__)

PAINT_TIMEOUT = 10.0  # seconds for a shown target to be painted before giving up
_POLL_MS = 50

WINDOW_FLAGS = Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint


def area_to_qt(area: Rect, screens: Sequence[ScreenMap] | None = None, *,
               identity: bool | None = None) -> tuple[QRect, float]:
    """The logical rectangle ``area`` as a Qt global rectangle, and its screen's pixel ratio."""
    found = current_screens() if screens is None else screens
    ratio = 1.0
    if not identity:
        for screen in found:
            left, top, right, bottom = screen.native
            if left <= area.left < right and top <= area.top < bottom:
                ratio = screen.ratio
                break
    corner = logical_to_qt(area.left, area.top, found, identity=identity)
    x, y = math.floor(corner.x()), math.floor(corner.y())
    return QRect(x, y, math.ceil(area.width / ratio), math.ceil(area.height / ratio)), ratio


class CalibrationWindow(QWidget):
    """Covers a monitor and shows one target; Escape or closing the window cancels.

    ``screens`` and ``identity`` override the coordinate mapping (tests); by default they
    come from Qt. ``painted(seq)`` is emitted after each paint with the number given to the
    latest :meth:`present`.
    """

    painted = Signal(int)
    cancelled = Signal()

    def __init__(self, *, screens: Sequence[ScreenMap] | None = None,
                 identity: bool | None = None) -> None:
        super().__init__(None, WINDOW_FLAGS)
        self.setWindowTitle("holodesk calibration")
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self.setCursor(Qt.CursorShape.BlankCursor)  # the pointer must not hide a target
        self._screens = screens
        self._identity = identity
        self._target: PlacedTarget | None = None
        self._ratio = 1.0
        self._seq = 0
        self._closing = False

    @property
    def target(self) -> PlacedTarget | None:
        """The target shown now."""
        return self._target

    def present(self, target: PlacedTarget, seq: int = 0) -> None:
        """Cover ``target.area`` and show ``target`` alone (GUI thread)."""
        rect, self._ratio = area_to_qt(target.area, self._screens, identity=self._identity)
        self._target = target
        self._seq = seq
        if self.geometry() != rect:
            self.setGeometry(rect)
        if not self.isVisible():
            whole = any(s.geometry() == rect for s in QGuiApplication.screens())
            if whole:
                self.showFullScreen()
                self.setGeometry(rect)
            else:
                self.show()
            self.raise_()
            self.activateWindow()
        self.update()

    def local_center(self) -> QPointF | None:
        """Where the target's centre pixel is drawn, in this window's coordinates."""
        if self._target is None:
            return None
        c = self._target.center
        # The centre of the pixel the target names: a click there hits pixel (x, y).
        qt = logical_to_qt(c.x + 0.5, c.y + 0.5, self._screens, identity=self._identity)
        origin = logical_to_qt(self._target.area.left, self._target.area.top, self._screens,
                               identity=self._identity)
        return QPointF(qt.x() - math.floor(origin.x()), qt.y() - math.floor(origin.y()))

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            painter.fillRect(self.rect(), QColor(*BACKGROUND))
            target, center = self._target, self.local_center()
            if target is not None and center is not None:
                self._draw(painter, target, center)
        finally:
            painter.end()
        self.painted.emit(self._seq)

    def _draw(self, painter: QPainter, target: PlacedTarget, center: QPointF) -> None:
        radius = target.radius / self._ratio
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(*target.target.rgb))
        painter.drawEllipse(center, radius, radius)
        painter.setPen(QColor(*INK))
        font = QFont(self.font())
        font.setPixelSize(max(10, round(radius)))
        font.setBold(True)
        painter.setFont(font)
        # The label beside the disc, not on it: ink inside would pull its centre of colour off.
        box = QRectF(center.x() + radius * 1.4, center.y() - radius, radius * 3, radius * 2)
        if box.right() > self.width():
            box.moveRight(center.x() - radius * 1.4)
        align = (Qt.AlignmentFlag.AlignLeft if box.left() > center.x()
                 else Qt.AlignmentFlag.AlignRight)
        painter.drawText(box, align | Qt.AlignmentFlag.AlignVCenter, target.target.label)
        font.setPixelSize(max(10, round(self.height() * 0.02)))
        font.setBold(False)
        painter.setFont(font)
        hint = (f"holodesk calibration: target {target.index} of {target.count}, the "
                f"{target.target.description}. Press Esc to stop.")
        painter.drawText(QRectF(0, self.height() * 0.02, self.width(), self.height() * 0.05),
                         Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, hint)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.cancelled.emit()
            return
        super().keyPressEvent(event)

    def dismiss(self) -> None:
        """Close without counting as the person cancelling."""
        self._closing = True
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closing:
            self.cancelled.emit()
        super().closeEvent(event)


class QtTargetScreen(QObject):
    """:class:`app.calibrate.TargetScreen` on a :class:`CalibrationWindow`.

    Make it on the GUI thread (a QApplication must exist). ``show`` must not be called on the
    GUI thread: it waits for that thread to paint. ``on_cancel`` is called (on the GUI thread)
    when the person presses Escape or closes the window.
    """

    _present = Signal(object, int)
    _dismiss = Signal()

    def __init__(self, on_cancel: Callable[[], None], *,
                 window: CalibrationWindow | None = None,
                 paint_timeout: float = PAINT_TIMEOUT) -> None:
        super().__init__()
        self.window = window or CalibrationWindow()
        self.paint_timeout = paint_timeout
        self._on_cancel = on_cancel
        self._cond = threading.Condition()
        self._requested = 0
        self._painted = 0
        self._closed = False
        # Emitted from the worker, received here on the GUI thread: queued connections.
        self._present.connect(self._on_present)
        self._dismiss.connect(self.window.dismiss)
        self.window.painted.connect(self._on_painted)
        self.window.cancelled.connect(self._on_cancelled)

    def show(self, target: PlacedTarget) -> None:
        """Show ``target`` and return once it is painted (call from a worker thread)."""
        if threading.current_thread() is threading.main_thread():
            raise RuntimeError("QtTargetScreen.show waits for the GUI thread: call it elsewhere")
        with self._cond:
            if self._closed:
                raise ScreenClosed("the calibration window was closed")
            self._requested += 1
            seq = self._requested
        self._present.emit(target, seq)
        with self._cond:
            painted = self._cond.wait_for(lambda: self._painted >= seq or self._closed,
                                          self.paint_timeout)
            if self._closed:
                raise ScreenClosed("the calibration window was closed")
        if not painted:
            raise ScreenClosed(
                f"the calibration window did not paint within {self.paint_timeout:g} s"
            )

    def close(self) -> None:
        """Take the window down; safe from any thread, twice."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if threading.current_thread() is threading.main_thread():
            self.window.dismiss()
        else:
            self._dismiss.emit()

    def run_until(self, done: Callable[[], bool]) -> None:
        """Run the Qt event loop until ``done()`` holds, checked every 50 ms.

        The periodic check also returns control to Python, so a Ctrl+C handler runs promptly.
        """
        if done():
            return
        loop = QEventLoop()
        timer = QTimer()
        timer.setInterval(_POLL_MS)
        timer.timeout.connect(lambda: loop.quit() if done() else None)
        timer.start()
        loop.exec()
        timer.stop()

    def _on_present(self, target: PlacedTarget, seq: int) -> None:
        with self._cond:
            if self._closed:
                return
        self.window.present(target, seq)

    def _on_painted(self, seq: int) -> None:
        with self._cond:
            if seq > self._painted:
                self._painted = seq
                self._cond.notify_all()

    def _on_cancelled(self) -> None:
        self._on_cancel()
        self.close()


_app: QApplication | None = None  # kept for the process's lifetime, as Qt requires


def open_target_screen(on_cancel: Callable[[], None]) -> QtTargetScreen:
    """The screen for `holodesk calibrate`, creating the QApplication when there is none."""
    global _app
    existing = QApplication.instance()
    if existing is None:
        _app = QApplication(["holodesk"])
        _app.setApplicationName("holodesk")
        existing = _app
    if isinstance(existing, QApplication):
        # The window closing must not end an event loop the CLI is running.
        existing.setQuitOnLastWindowClosed(False)
    return QtTargetScreen(on_cancel)
