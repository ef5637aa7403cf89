"""The floating Stop button: big, red, always on top while a run is active.

It never takes the keyboard focus (the agent may be typing into the window below) and has no
taskbar entry. A press and release without moving is a Stop; dragging moves the button out of
the way (a drag never stops, a stop never needs a drag).
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import QWidget

BUTTON_SIZE = QSize(132, 56)
DRAG_THRESHOLD = 6  # px the pointer may wander during a click before it counts as a drag
RED = QColor(207, 34, 46)

STOP_BUTTON_FLAGS = (
    Qt.WindowType.FramelessWindowHint
    | Qt.WindowType.WindowStaysOnTopHint
    | Qt.WindowType.Tool
    | Qt.WindowType.WindowDoesNotAcceptFocus
)


class FloatingStopButton(QWidget):
    """Signal ``stop_clicked()``; ``hint`` is shown under the word (e.g. the stop hotkey).

    ``place_default()`` puts it at the top right of the primary screen's available area.
    """

    stop_clicked = Signal()

    def __init__(self, parent: QWidget | None = None, *, hint: str = "") -> None:
        super().__init__(parent, STOP_BUTTON_FLAGS)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground, True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFixedSize(BUTTON_SIZE)
        self.setWindowTitle("holodesk — Stop")
        self._hint = hint
        self._press: QPoint | None = None  # global position of the press
        self._origin = QPoint()  # window position at the press
        self._dragging = False
        self._update_tooltip()

    def set_hint(self, hint: str) -> None:
        """The small text under STOP, e.g. the stop hotkey; the button widens to fit it."""
        self._hint = hint
        self._update_tooltip()
        small = self.font()
        small.setPointSizeF(small.pointSizeF() * 0.8)
        needed = QFontMetrics(small).horizontalAdvance(hint) + 24
        self.setFixedSize(max(BUTTON_SIZE.width(), needed), BUTTON_SIZE.height())
        self.update()

    def _update_tooltip(self) -> None:
        self.setToolTip("Stop the run" + (f" ({self._hint})" if self._hint else "")
                        + "; drag to move")

    def place_default(self, margin: int = 16) -> None:
        """Top right of the primary screen's available area."""
        screen = QGuiApplication.primaryScreen()
        if screen is None:
            return
        area = screen.availableGeometry()
        self.move(area.right() - self.width() - margin + 1, area.top() + margin)

    # -- painting ----------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            rect = QRectF(self.rect()).adjusted(1, 1, -1, -1)
            fill = RED.darker(130) if self._press is not None and not self._dragging else RED
            painter.setPen(QPen(QColor(255, 255, 255), 2))
            painter.setBrush(fill)
            painter.drawRoundedRect(rect, 12, 12)
            painter.setPen(QColor(255, 255, 255))
            font = QFont(self.font())
            font.setBold(True)
            font.setPointSizeF(font.pointSizeF() * 1.6)
            painter.setFont(font)
            if self._hint:
                top = QRectF(rect.x(), rect.y(), rect.width(), rect.height() * 0.66)
                painter.drawText(top, Qt.AlignmentFlag.AlignCenter, "■ STOP")
                small = QFont(self.font())
                small.setPointSizeF(small.pointSizeF() * 0.8)
                painter.setFont(small)
                bottom = QRectF(rect.x(), rect.y() + rect.height() * 0.58, rect.width(),
                                rect.height() * 0.4)
                painter.drawText(bottom, Qt.AlignmentFlag.AlignCenter, self._hint)
            else:
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, "■ STOP")
        finally:
            painter.end()

    # -- click and drag ----------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press = event.globalPosition().toPoint()
            self._origin = self.pos()
            self._dragging = False
            self.update()
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press is None:
            super().mouseMoveEvent(event)
            return
        delta = event.globalPosition().toPoint() - self._press
        if not self._dragging and delta.manhattanLength() > DRAG_THRESHOLD:
            self._dragging = True
        if self._dragging:
            self.move(self._origin + delta)
        event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._press is None:
            super().mouseReleaseEvent(event)
            return
        clicked = not self._dragging and self.rect().contains(event.position().toPoint())
        self._press = None
        self._dragging = False
        self.update()
        event.accept()
        if clicked:
            self.stop_clicked.emit()
