"""Does every text fit its widget, and every window the screen? A checker that walks a widget
tree as it is laid out and measures each text with the widget's own font.

What it measures, for each visible widget under a window:

- a ``QLabel``'s text: with word wrap, the height the label needs for its width
  (``heightForWidth``) and its longest unbreakable word against the width; without, the text's
  size from ``QFontMetrics`` (every line of it) against the label's contents;
- a ``QLineEdit``'s placeholder (shown while it is empty) against the text area the style
  gives it;
- a ``QAbstractButton``'s text: a push button's, check box's or radio button's against the
  contents rectangle the style draws it in, a tool button's size hint (text, icon, arrow)
  against its size;
- a ``QGroupBox``'s title against the box;
- a table's cells and header sections: a text wider than its column must have a tooltip
  holding it whole (the way to read it), a header title must fit its section, and the
  columns must fit the table's width (as it opens, nothing is scrolled out of view);
- a text view that does not wrap must be able to scroll sideways, and so must a scroll area
  whose content is wider than it.

:func:`off_screen` says which windows do not fit the available screen, their frame included.
A window manager that draws a title bar has no frame in Qt's offscreen platform, so a window
without one is given :data:`WM_FRAME` (the title bar and borders openbox draws).

Each finding is a :class:`Clipped`; ``str()`` of one says what, where and by how much.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtCore import QMargins, QRect, QSize, Qt
from PySide6.QtGui import QFontMetrics, QGuiApplication, QTextDocument
from PySide6.QtGui import Qt as GuiQt  # the namespace that holds mightBeRichText
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractScrollArea,
    QCheckBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QStyle,
    QStyleOptionButton,
    QStyleOptionFrame,
    QStyleOptionGroupBox,
    QTableWidget,
    QTextEdit,
    QToolButton,
    QWidget,
)

__all__ = ["WM_FRAME", "Clipped", "clipped_text", "off_screen"]

#: The frame openbox draws around a window (its title bar on top), for a window Qt reports
#: without one (the offscreen platform has no window manager).
WM_FRAME = QMargins(1, 24, 1, 1)

# QLineEdit's own space between its text area and the text (qlineedit_p.h: horizontalMargin).
_LINE_EDIT_MARGIN = 2
# A table cell's text is drawn inside the cell less the style's focus frame margin on each
# side (PM_FocusFrameHMargin + 1 in QCommonStyle's item view layout).
_CELL_SLACK = 1


@dataclass(frozen=True)
class Clipped:
    """A text that does not fit (``needed`` > ``has``, in pixels), or a window too big."""

    window: str
    widget: str
    kind: str
    text: str
    needed: tuple[int, int]
    has: tuple[int, int]

    def __str__(self) -> str:
        short = self.text if len(self.text) <= 70 else self.text[:67] + "..."
        return (f"{self.window}: {self.kind} of {self.widget} {short!r} needs "
                f"{self.needed[0]}x{self.needed[1]}, has {self.has[0]}x{self.has[1]}")


def _name(widget: QWidget) -> str:
    name = widget.objectName()
    return f"{type(widget).__name__}({name})" if name else type(widget).__name__


def _title(window: QWidget) -> str:
    return window.windowTitle() or _name(window)


def _visible(widget: QWidget, root: QWidget) -> bool:
    return widget.isVisibleTo(root) and widget.width() > 0 and widget.height() > 0


def _plain(text: str, rich: bool) -> str:
    if not rich:
        return text
    document = QTextDocument()
    document.setHtml(text)
    return document.toPlainText()


def _label(label: QLabel) -> tuple[str, tuple[int, int], tuple[int, int]] | None:
    if label.pixmap() is not None and not label.pixmap().isNull():
        return None
    text = label.text()
    if not text.strip():
        return None
    fmt = label.textFormat()
    rich = fmt == Qt.TextFormat.RichText or (
        fmt == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text))
    plain = _plain(text, rich)
    inner = label.contentsRect().marginsRemoved(
        QMargins(label.margin(), label.margin(), label.margin(), label.margin()))
    metrics = QFontMetrics(label.font())
    if label.wordWrap():
        needed_height = label.heightForWidth(label.width())
        longest = max((metrics.horizontalAdvance(word) for word in plain.split()), default=0)
        needed = (longest, needed_height)
        has = (inner.width(), label.height())
    else:
        size = metrics.size(0, plain)
        needed = (size.width(), size.height())
        has = (inner.width(), inner.height())
    return plain, needed, has


def _placeholder(edit: QLineEdit) -> tuple[str, tuple[int, int], tuple[int, int]] | None:
    text = edit.placeholderText()
    if edit.text() or not text:
        return None
    option = QStyleOptionFrame()
    edit.initStyleOption(option)
    area = edit.style().subElementRect(QStyle.SubElement.SE_LineEditContents, option, edit)
    area = area.marginsRemoved(edit.textMargins())
    width = area.width() - 2 * _LINE_EDIT_MARGIN
    metrics = QFontMetrics(edit.font())
    return text, (metrics.horizontalAdvance(text), metrics.height()), (width, area.height())


def _button(button: QAbstractButton) -> tuple[str, tuple[int, int], tuple[int, int]] | None:
    text = button.text()
    if not text.strip():
        return None
    metrics = QFontMetrics(button.font())
    if isinstance(button, QToolButton):
        # Its size hint adds the style's margins, the icon and the menu arrow to the text.
        hint = button.sizeHint()
        return text, (hint.width(), metrics.height()), (button.width(), button.height())
    size = metrics.size(Qt.TextFlag.TextShowMnemonic, text)
    icon = button.icon()
    icon_width = button.iconSize().width() + 4 if not icon.isNull() else 0
    option = QStyleOptionButton()
    style = button.style()
    if isinstance(button, QPushButton):
        button.initStyleOption(option)
        area = style.subElementRect(QStyle.SubElement.SE_PushButtonContents, option, button)
        # Fusion draws the label inside the contents less its button margin.
        margin = style.pixelMetric(QStyle.PixelMetric.PM_ButtonMargin, option, button)
        has = (area.width() - margin, area.height())
    elif isinstance(button, QCheckBox | QRadioButton):
        button.initStyleOption(option)
        element = (QStyle.SubElement.SE_CheckBoxContents if isinstance(button, QCheckBox)
                   else QStyle.SubElement.SE_RadioButtonContents)
        area = style.subElementRect(element, option, button)
        has = (area.width(), area.height())
    else:
        has = (button.width(), button.height())
    return text, (size.width() + icon_width, size.height()), has


def _group_title(box: QGroupBox) -> tuple[str, tuple[int, int], tuple[int, int]] | None:
    title = box.title()
    if not title:
        return None
    option = QStyleOptionGroupBox()
    box.initStyleOption(option)
    label = box.style().subControlRect(QStyle.ComplexControl.CC_GroupBox, option,
                                       QStyle.SubControl.SC_GroupBoxLabel, box)
    metrics = QFontMetrics(box.font())
    needed = metrics.size(Qt.TextFlag.TextShowMnemonic, title)
    # The title is drawn from the label's left edge; it must end inside the box.
    room = box.width() - max(label.left(), 0)
    return title, (needed.width(), needed.height()), (room, label.height())


def _tooltip_holds(tooltip: str, text: str) -> bool:
    """Whether ``tooltip`` (plain, or rich text that says a plain text) holds ``text``."""
    if not tooltip:
        return False
    said = _plain(tooltip, GuiQt.mightBeRichText(tooltip))
    squash = re.compile(r"\s+")
    return squash.sub(" ", text).strip() in squash.sub(" ", said)


def _cells(table: QTableWidget, window: str) -> Iterable[Clipped]:
    """A cell whose text is cut must carry it whole in its tooltip; header titles must fit."""
    metrics = QFontMetrics(table.font())
    header = table.horizontalHeader()
    header_metrics = QFontMetrics(header.font())
    # As it opens, a table shows every column: the person scrolls only after widening one.
    total = sum(table.columnWidth(c) for c in range(table.columnCount())
                if not table.isColumnHidden(c))
    if total > table.viewport().width() + 1:
        yield Clipped(window, _name(table), "columns wider than the table", "",
                      (total, 0), (table.viewport().width(), 0))
    for column in range(table.columnCount()):
        if table.isColumnHidden(column):
            continue
        width = table.columnWidth(column)
        title_item = table.horizontalHeaderItem(column)
        title = title_item.text() if title_item is not None else ""
        # A section's title is drawn inside its margins, beside a sort arrow if any.
        margin = 2 * header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
        if title and header_metrics.horizontalAdvance(title) + margin > width:
            yield Clipped(window, _name(table), "column title", title,
                          (header_metrics.horizontalAdvance(title) + margin, 0), (width, 0))
        for row in range(table.rowCount()):
            item = table.item(row, column)
            if item is None or not item.text():
                continue
            icon = 0 if item.icon().isNull() else table.iconSize().width() + 4
            needed = metrics.horizontalAdvance(item.text()) + icon + 2 * (
                table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table)
                + _CELL_SLACK)
            if needed > width and not _tooltip_holds(item.toolTip(), item.text()):
                yield Clipped(window, _name(table), f"cell ({row}, {column}) without its text "
                              "in a tooltip", item.text(), (needed, 0), (width, 0))


def _text_view(view: QAbstractScrollArea, window: str) -> Iterable[Clipped]:
    """A text view whose lines do not wrap must scroll sideways to show them."""
    if isinstance(view, QPlainTextEdit):
        wraps = view.lineWrapMode() != QPlainTextEdit.LineWrapMode.NoWrap
    elif isinstance(view, QTextEdit):
        wraps = view.lineWrapMode() != QTextEdit.LineWrapMode.NoWrap
    else:
        return
    if wraps or view.horizontalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOff:
        return
    metrics = QFontMetrics(view.font())
    text = view.toPlainText()
    widest = max((metrics.horizontalAdvance(line) for line in text.splitlines()), default=0)
    room = view.viewport().width()
    if widest > room:
        yield Clipped(window, _name(view), "unwrapped line without a scroll bar", text,
                      (widest, 0), (room, 0))


def _scroll_area(area: QScrollArea, window: str) -> Iterable[Clipped]:
    """What a scroll area holds must not be wider than it when it cannot scroll sideways."""
    inner = area.widget()
    if inner is None or area.horizontalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOff:
        return
    room = area.viewport().width()
    if inner.width() > room:
        yield Clipped(window, _name(inner), "content wider than its scroll area, which cannot "
                      "scroll sideways", _name(inner), (inner.width(), 0), (room, 0))


def clipped_text(window: QWidget) -> list[Clipped]:
    """Every text under ``window`` (itself included) that does not fit its widget, as laid
    out now (show the window and let it lay out first)."""
    found: list[Clipped] = []
    title = _title(window)
    widgets = [window, *window.findChildren(QWidget)]
    for widget in widgets:
        if widget is not window and not _visible(widget, window):
            continue
        measured = None
        kind = ""
        if isinstance(widget, QLabel):
            measured, kind = _label(widget), "text"
        elif isinstance(widget, QLineEdit):
            measured, kind = _placeholder(widget), "placeholder"
        elif isinstance(widget, QAbstractButton):
            measured, kind = _button(widget), "text"
        elif isinstance(widget, QGroupBox):
            measured, kind = _group_title(widget), "title"
        elif isinstance(widget, QTableWidget):
            found.extend(_cells(widget, title))
        elif isinstance(widget, QScrollArea):
            found.extend(_scroll_area(widget, title))
        elif isinstance(widget, QAbstractScrollArea) and not isinstance(
                widget, QAbstractItemView):
            found.extend(_text_view(widget, title))
        if measured is None:
            continue
        text, needed, has = measured
        if needed[0] > has[0] or needed[1] > has[1]:
            found.append(Clipped(title, _name(widget), kind, text, needed, has))
    return found


def off_screen(windows: Iterable[QWidget], frame: QMargins = WM_FRAME) -> list[Clipped]:
    """The windows that do not fit their screen's available area, frame and all (``frame``
    is added to a window Qt reports without one)."""
    found: list[Clipped] = []
    for window in windows:
        screen = window.screen() or QGuiApplication.primaryScreen()
        available: QRect = screen.availableGeometry()
        outer = window.frameGeometry()
        if outer == window.geometry():
            outer = outer.marginsAdded(frame)
        if not available.contains(outer):
            size: QSize = outer.size()
            found.append(Clipped(_title(window), _name(window), "window",
                                 f"at {outer.x()},{outer.y()}", (size.width(), size.height()),
                                 (available.width(), available.height())))
    return found
