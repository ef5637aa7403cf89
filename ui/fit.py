"""Text that fits its widget and windows that fit their screen.

- :func:`fit_placeholder`: a line edit never narrower than its placeholder (Qt cuts it to
  "leave empty to k…" otherwise);
- :class:`ElidedLabel`: one line that never widens its window: a text too long for it ends in
  "…", and the whole text is its tooltip;
- :class:`TextPane`: a message as tall as its text up to a number of lines, then scrolling,
  wrapped even inside a long word, so a long server answer cannot stretch its window off the
  screen;
- :func:`fit_height`: grow a window to the height its wrapped texts need, never past the
  screen, and keep its bottom (its buttons) on it; :class:`KeepFitting` does it each time
  the window's layout changes (a text arrived, a pane grew);
- :class:`FillColumn`: a table column that takes the width the others leave, and that the
  person can still widen or narrow.

tests/support/text_fit.py measures the windows the same way.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QFontMetrics, QGuiApplication, QPalette, QResizeEvent, QTextOption
from PySide6.QtWidgets import (
    QFrame,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QTableView,
    QTextEdit,
    QWidget,
)

from ui.plain import PLAIN, wrapped_tooltip

__all__ = ["TITLE_BAR", "ElidedLabel", "FillColumn", "KeepFitting", "TextPane", "fit_height",
           "fit_placeholder"]

#: What a window manager adds above a window (its title bar), for a window not yet framed.
TITLE_BAR = 32

# QLineEdit's own margins around its text (qlineedit_p.h horizontalMargin, both sides) and
# the frame the style draws.
_EDIT_SLACK = 2 * 2 + 2 * 3


def fit_placeholder(edit: QLineEdit) -> None:
    """Make ``edit`` at least as wide as its placeholder text needs."""
    metrics = QFontMetrics(edit.font())
    margins = edit.textMargins()
    edit.setMinimumWidth(metrics.horizontalAdvance(edit.placeholderText()) + _EDIT_SLACK
                         + margins.left() + margins.right())


class ElidedLabel(QLabel):
    """One line of plain text that takes the width its layout gives and never asks for more:
    a longer text is cut with "…" and shown whole on hover. :meth:`full_text` is the text."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(PLAIN)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._full = ""
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        """Show ``text`` (plain, one line), cut to the width when it is too long."""
        self._full = text
        self._elide()

    def full_text(self) -> str:
        return self._full

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        return QSize(0, super().sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        metrics = QFontMetrics(self.font())
        room = self.contentsRect().width()
        shown = metrics.elidedText(self._full, Qt.TextElideMode.ElideRight, max(room, 0))
        self.setText(shown)
        self.setToolTip(wrapped_tooltip(self._full) if shown != self._full else "")


class TextPane(QTextEdit):
    """Read-only plain text for a message that may be long (a server's answer): wrapped at
    word boundaries, or anywhere in a word wider than the pane (a URL, a JSON error), as tall
    as its text up to ``lines`` lines, then scrolling. ``text()`` and ``setText()`` as a
    label's; the window around it grows with :class:`KeepFitting`."""

    def __init__(self, lines: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lines = lines
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        # Drawn on the window's colour, as a label is: it is a message, not a field.
        self.viewport().setBackgroundRole(QPalette.ColorRole.Window)
        self.document().documentLayout().documentSizeChanged.connect(self._follow)
        self._follow()

    def text(self) -> str:
        return self.toPlainText()

    def setText(self, text: str) -> None:
        self.setPlainText(text)
        self._follow()

    def _follow(self, *_size: object) -> None:
        """Take the height of the text as laid out at this width, up to ``lines`` lines."""
        document = self.document()
        if not document.toPlainText():
            self.setFixedHeight(0)
            return
        margin = 2 * self.frameWidth()
        cap = self.lines * QFontMetrics(self.font()).lineSpacing() + 2 * document.documentMargin()
        height = int(min(document.size().height(), cap)) + margin
        if height != self.height():
            self.setFixedHeight(height)


class KeepFitting(QObject):
    """Runs :func:`fit_height` on ``window`` whenever its layout has changed: a text set after
    the window was laid out (a keyring's answer, a server's) makes it grow then, not at the
    next resize."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Keep a reference to this object: without one, Qt may call a fresh wrapper of it,
        # without its attributes.
        if watched is getattr(self, "_window", None) and \
                event.type() == QEvent.Type.LayoutRequest:
            # After the layout has handled the request (this filter runs before it).
            QTimer.singleShot(0, self, lambda: fit_height(self._window))
        return False


def fit_height(window: QWidget) -> None:
    """Grow ``window`` to the height its layout needs at its width (a window does not grow
    by itself for the lines its wrapped labels take), never taller than its screen's free
    area, and move it up when its bottom would leave the screen."""
    layout = window.layout()
    if layout is None or not window.isVisible():
        return
    screen = window.screen() or QGuiApplication.primaryScreen()
    area = screen.availableGeometry()
    frame = window.frameGeometry().height() - window.height()
    above = frame if frame > 0 else TITLE_BAR
    room = area.height() - above
    needed = (layout.totalHeightForWidth(window.width()) if layout.hasHeightForWidth()
              else layout.totalSizeHint().height())
    height = min(max(needed, window.height()), room)
    if height != window.height():
        window.resize(window.width(), height)
    outer = window.frameGeometry()
    if outer.bottom() > area.bottom():
        window.move(outer.x(), max(area.top(), area.bottom() - height - above + 1))


class FillColumn(QObject):
    """Keeps ``column`` of ``table`` as wide as the other columns leave room for (at least
    ``minimum``), as a stretched column is, but Interactive: the person may widen or narrow
    it with the mouse, and from then on it keeps the width they chose (the table scrolls
    sideways)."""

    def __init__(self, table: QTableView, column: int, minimum: int = 120) -> None:
        super().__init__(table)
        self._table, self._column, self._minimum = table, column, minimum
        self.chosen = False  # the person resized it
        self._dragging = False
        self._setting = False
        header = table.horizontalHeader()
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        header.sectionResized.connect(self._resized)
        # Kept: events still come while the table is being destroyed, when asking it for its
        # viewport would fail.
        self._viewport = table.viewport()
        header.viewport().installEventFilter(self)
        self._viewport.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is getattr(self, "_viewport", None) and kind == QEvent.Type.Resize:
            self.fill()
        elif kind == QEvent.Type.MouseButtonPress:  # on the header: a drag may begin
            self._dragging = True
        elif kind == QEvent.Type.MouseButtonRelease:
            self._dragging = False
        return False

    def _resized(self, index: int, _old: int, _new: int) -> None:
        if self._setting:
            return
        if index == self._column and self._dragging:
            self.chosen = True
            return
        # Another column fitted its new text, or Qt laid the header out again: once that is
        # over, this one takes up the difference.
        QTimer.singleShot(0, self, self.fill)

    def fill(self) -> None:
        if self.chosen or not shiboken6.isValid(self._table):
            return
        header = self._table.horizontalHeader()
        others = sum(header.sectionSize(i) for i in range(header.count())
                     if i != self._column and not header.isSectionHidden(i))
        width = max(self._minimum, self._table.viewport().width() - others)
        if width != header.sectionSize(self._column):
            self._setting = True
            try:
                header.resizeSection(self._column, width)
            finally:
                self._setting = False
