"""Bringing a window forward, whatever state it is in.

``show(); raise_(); activateWindow()`` leaves a minimised window minimised: on X11 it stays
iconic (``isVisible()`` is still true, so ``show()`` does nothing), and a desktop without a
taskbar (openbox) then has no way back to it. Every way of showing a window goes through
:func:`reveal`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget


def reveal(window: QWidget, *, activate: bool = True) -> None:
    """Show ``window`` un-minimised and in front (``activate``: with the keyboard focus too;
    its maximised or full-screen state is kept)."""
    state = window.windowState()
    if state & Qt.WindowState.WindowMinimized:
        window.setWindowState(state & ~Qt.WindowState.WindowMinimized)
    window.show()
    window.raise_()
    if activate:
        window.activateWindow()
