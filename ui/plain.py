"""Model and server text in Qt widgets: always plain, always visible.

A QLabel's default format guesses: text that looks like HTML (``<b>bold</b>``) is rendered,
an HTML comment (``<!-- x -->``) hides what it holds. A label that shows model or server text
is therefore made with :func:`plain_label` (PlainText), its text passed through
:func:`shown` (app/visible.py: controls and invisible characters as symbols). Tooltips have no
format of their own: :func:`plain_tooltip` escapes text that could be markup, so Qt and the
notification server show it literally; a widget's tooltip that may be long is made with
:func:`wrapped_tooltip`, which Qt wraps instead of drawing one line wider than the screen.
tests/ui/test_plain_text.py checks that the windows keep to this.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt  # the namespace that holds convertFromPlainText
from PySide6.QtWidgets import QLabel, QWidget

from app.visible import visible, visible_line, visible_lines

PLAIN = Qt.TextFormat.PlainText


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A label that shows its text as plain text, never as HTML."""
    label = QLabel(parent)
    label.setTextFormat(PLAIN)
    label.setText(text)
    return label


def shown(text: str) -> str:
    """Model or server text as a plain-text widget shows it (line breaks kept)."""
    return visible(text)


def shown_lines(text: str) -> str:
    """A multi-line text (a file, a log) as a plain-text widget shows it: its lines as they
    are, without a ``⏎`` at each end, any other control or invisible character made visible."""
    return visible_lines(text)


def shown_line(text: str | None, limit: int | None = None) -> str:
    """Model or server text on one line (a table cell, a title), cut to ``limit``."""
    return visible_line(text, limit)


def plain_tooltip(text: str) -> str:
    """A tooltip or notification text that shows ``text`` literally.

    Qt renders a tooltip that looks like HTML, and notification servers read markup in a
    message: text that could be markup (a ``<`` or ``&``) goes in escaped, as rich text that
    says exactly ``text``; other text goes in as it is, so nothing shows stray tags."""
    text = visible(text)
    if "<" not in text and "&" not in text:
        return text
    return GuiQt.convertFromPlainText(text)


def wrapped_tooltip(text: str) -> str:
    """A widget's tooltip that shows ``text`` literally and wrapped: Qt draws a plain-text
    tooltip as one line, however long (a long thought would run off the screen), and wraps a
    rich-text one. Not for notifications: a server without markup would show the tags."""
    return GuiQt.convertFromPlainText(visible(text), Qt.WhiteSpaceMode.WhiteSpaceNormal)
