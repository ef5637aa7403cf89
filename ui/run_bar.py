"""The run bar: what stands for holodesk's windows while a run acts.

A small frameless bar, always on top: a big red Stop, how far the run is (the step, what it
does, "waiting for your approval", "paused"), Pause / Resume and Show (the task window back).
The task window and the tray's stand-in collapse into it as a run starts (ui/stage.py places it
off the work). It never takes the keyboard focus (the run may be typing into the window
below) and has no taskbar entry. A press and release on Stop without moving is a Stop;
dragging anywhere on the bar moves it out of the way (a drag never stops, a stop never needs
a drag).
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
    QResizeEvent,
)
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from ui.plain import plain_tooltip, shown_line

#: The bar's size: small enough for a band beside a window on a 1366x768 screen.
BAR_SIZE = QSize(440, 56)
STOP_SIZE = QSize(112, 48)
DRAG_THRESHOLD = 6  # px the pointer may wander during a click before it counts as a drag
RED = QColor(207, 34, 46)
#: The window title: how a test or a screen reader finds the bar.
BAR_TITLE = "holodesk — Stop"

BAR_FLAGS = (
    Qt.WindowType.FramelessWindowHint
    | Qt.WindowType.WindowStaysOnTopHint
    | Qt.WindowType.Tool
    | Qt.WindowType.WindowDoesNotAcceptFocus
)


class StopFace(QWidget):
    """The red Stop of the bar, drawn; the bar takes its clicks (a press and release on it
    without a drag is a Stop)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFixedSize(STOP_SIZE)
        self.hint = ""
        self.pressed = False

    def set_hint(self, hint: str) -> None:
        """The small text under STOP (the stop hotkey); the face widens to fit it."""
        self.hint = hint
        small = QFont(self.font())
        small.setPointSizeF(small.pointSizeF() * 0.75)
        needed = QFontMetrics(small).horizontalAdvance(hint) + 16
        self.setFixedSize(max(STOP_SIZE.width(), needed), STOP_SIZE.height())
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            rect = QRectF(self.rect()).adjusted(1, 1, -1, -1)
            painter.setPen(QPen(QColor(255, 255, 255), 2))
            painter.setBrush(RED.darker(130) if self.pressed else RED)
            painter.drawRoundedRect(rect, 10, 10)
            painter.setPen(QColor(255, 255, 255))
            font = QFont(self.font())
            font.setBold(True)
            font.setPointSizeF(font.pointSizeF() * 1.4)
            painter.setFont(font)
            if not self.hint:
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, "■ STOP")
                return
            top = QRectF(rect.x(), rect.y(), rect.width(), rect.height() * 0.64)
            painter.drawText(top, Qt.AlignmentFlag.AlignCenter, "■ STOP")
            small = QFont(self.font())
            small.setPointSizeF(small.pointSizeF() * 0.75)
            painter.setFont(small)
            bottom = QRectF(rect.x(), rect.y() + rect.height() * 0.58, rect.width(),
                            rect.height() * 0.4)
            painter.drawText(bottom, Qt.AlignmentFlag.AlignCenter, self.hint)
        finally:
            painter.end()


class _Elided(QLabel):
    """One line of text elided at the end to its width; the whole text in its tooltip."""

    def __init__(self, bold: bool = False) -> None:
        super().__init__()
        self.setTextFormat(Qt.TextFormat.PlainText)  # it may quote a task or the model
        self.setMinimumWidth(40)
        if bold:
            font = QFont(self.font())
            font.setBold(True)
            self.setFont(font)
        self._full = ""

    def set_full(self, text: str) -> None:
        self._full = shown_line(text)
        self.setToolTip(plain_tooltip(text) if text else "")
        self._elide()

    @property
    def full(self) -> str:
        return self._full

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight,
                                                   max(self.width(), 40)))


class RunBar(QWidget):
    """Signals: ``stop_clicked()``, ``pause_clicked()`` / ``resume_clicked()``,
    ``show_clicked()`` (the task window back); ``moved_by_person()`` after a drag.

    ``show_step(headline, detail)`` says how far the run is; ``set_paused(paused)`` switches
    Pause and Resume; ``set_outside(outside)``: the run is another process's (a terminal's),
    which only Stop reaches.
    """

    stop_clicked = Signal()
    pause_clicked = Signal()
    resume_clicked = Signal()
    show_clicked = Signal()
    moved_by_person = Signal()

    def __init__(self, parent: QWidget | None = None, *, hint: str = "") -> None:
        super().__init__(parent, BAR_FLAGS)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWindowTitle(BAR_TITLE)
        self.setAutoFillBackground(True)
        self.setFixedSize(BAR_SIZE)
        self.stop_face = StopFace()
        self.headline = _Elided(bold=True)
        self.detail = _Elided()
        self.pause_button = QToolButton()
        self.pause_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.pause_button.clicked.connect(self._pause_or_resume)
        self.show_button = QToolButton()
        self.show_button.setText("Show")
        self.show_button.setToolTip("Show the task window (the run goes on)")
        self.show_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.show_button.clicked.connect(self.show_clicked)
        words = QVBoxLayout()
        words.setContentsMargins(0, 0, 0, 0)
        words.setSpacing(0)
        words.addWidget(self.headline)
        words.addWidget(self.detail)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 4, 6, 4)
        row.setSpacing(6)
        row.addWidget(self.stop_face)
        row.addLayout(words, 1)
        row.addWidget(self.pause_button)
        row.addWidget(self.show_button)
        self.paused = False
        self.outside = False
        self._press: QPoint | None = None  # global position of a press, while it lasts
        self._origin = QPoint()
        self._dragging = False
        self._on_stop = False
        self.set_paused(False)
        self.set_hint(hint)
        self.show_step("holodesk is starting the run", "")

    # -- what it says -------------------------------------------------------------------------

    def set_hint(self, hint: str) -> None:
        """How else to stop (the stop hotkey), under STOP and in its tooltip."""
        self.stop_face.set_hint(hint)
        self.stop_face.setToolTip("Stop the run" + (f" (or {hint})" if hint else ""))
        self.setToolTip("Drag to move")

    def show_step(self, headline: str, detail: str) -> None:
        self.headline.set_full(headline)
        self.detail.set_full(detail)

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pause_button.setText("Resume" if paused else "Pause")
        self.pause_button.setToolTip("Go on from a fresh screenshot" if paused
                                     else "Pause before the next screenshot or action")

    def set_outside(self, outside: bool) -> None:
        """A run of another process (`holodesk run` in a terminal): only Stop reaches it."""
        self.outside = outside
        self.pause_button.setVisible(not outside)
        self.show_button.setVisible(not outside)

    def _pause_or_resume(self) -> None:
        (self.resume_clicked if self.paused else self.pause_clicked).emit()

    def place_default(self, margin: int = 16) -> None:
        """Top middle of the primary screen's available area (before any run placed it)."""
        screen = QGuiApplication.primaryScreen()
        if screen is None:
            return
        area = screen.availableGeometry()
        self.move(area.x() + (area.width() - self.width()) // 2, area.top() + margin)

    # -- click and drag -----------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            super().mousePressEvent(event)
            return
        self._press = event.globalPosition().toPoint()
        self._origin = self.pos()
        self._dragging = False
        self._on_stop = self.stop_face.geometry().contains(event.position().toPoint())
        self.stop_face.pressed = self._on_stop
        self.stop_face.update()
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press is None:
            super().mouseMoveEvent(event)
            return
        delta = event.globalPosition().toPoint() - self._press
        if not self._dragging and delta.manhattanLength() > DRAG_THRESHOLD:
            self._dragging = True
            self.stop_face.pressed = False
            self.stop_face.update()
        if self._dragging:
            self.move(self._origin + delta)
        event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._press is None:
            super().mouseReleaseEvent(event)
            return
        on_stop = (self._on_stop and not self._dragging
                   and self.stop_face.geometry().contains(event.position().toPoint()))
        dragged = self._dragging
        self._press = None
        self._dragging = False
        self.stop_face.pressed = False
        self.stop_face.update()
        event.accept()
        if dragged:
            self.moved_by_person.emit()
        elif on_stop:
            self.stop_clicked.emit()
