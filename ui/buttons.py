"""The row of buttons at the foot of a dialog: any on the left, then the rest on the right."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QHBoxLayout, QWidget


def button_row(*right: QWidget, left: Sequence[QWidget] = ()) -> QHBoxLayout:
    """``left`` at the left edge, ``right`` at the right (the default action first, then
    Cancel or Close, as the desktop's own dialogs put them)."""
    row = QHBoxLayout()
    for widget in left:
        row.addWidget(widget)
    row.addStretch(1)
    for widget in right:
        row.addWidget(widget)
    return row
