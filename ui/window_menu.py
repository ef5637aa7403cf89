"""The task window's menu bar: everything the tray menu offers, where the tray may be missing.

On a desktop without a tray (stock GNOME) the tray's stand-in window can be closed; this menu
keeps Settings, the Action log, Check set-up, Automations, About and Quit one click away. It is
built from :class:`ui.tray.TrayActions`, the same actions the tray uses, so an entry added
there appears here too (the task window's own "New task…" is left out: it is this window).
"""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QMenuBar, QWidget

from ui.tray import TrayActions

__all__ = ["attach_window_menu", "menu_actions"]


def menu_actions(actions: TrayActions) -> list[QAction]:
    """The tray's entries that make sense in the task window, in the tray's order."""
    return [a for a in actions.all() if a is not actions.new_task]


def attach_window_menu(window: QWidget, actions: TrayActions, *,
                       run_menu: QMenu | None = None,
                       extra: list[QAction] | None = None) -> QMenuBar:
    """Give ``window`` (a widget with a layout) a menu bar holding the tray's entries.

    ``run_menu``: the saved automations to run, shown as a submenu above "Automations…";
    ``extra``: entries only this menu has, above About (e.g. bringing back the tray's
    stand-in window).
    """
    layout = window.layout()
    if layout is None:
        raise ValueError("the window has no layout to hold a menu bar")
    bar = QMenuBar(window)
    menu = bar.addMenu("&holodesk")
    for action in menu_actions(actions):
        if action is actions.about and extra:
            menu.addSeparator()
            for more in extra:
                menu.addAction(more)
        if actions.starts_group(action):
            menu.addSeparator()
        if action is actions.automations and run_menu is not None:
            menu.addMenu(run_menu)
        menu.addAction(action)
    layout.setMenuBar(bar)
    return bar
