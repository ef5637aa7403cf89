"""The Tk task windows of ui/practice/tk_*.py by their name (app/demo/task_look.py's
:class:`TaskWindow`), and showing one (``holodesk --task-window NAME``, parsed by
ui/practice/tasks)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from app.demo.task_look import TaskWindow
from ui.practice import PARENT_CHECK_MS, orphaned
from ui.practice.tk_contacts import ContactsWindow
from ui.practice.tk_delivery import DeliveryWindow
from ui.practice.tk_editor import EditorWindow
from ui.practice.tk_export import ExportWindow
from ui.practice.tk_files import FilesWindow
from ui.practice.tk_order import OrderWindows
from ui.practice.tk_task import TkWindow

WINDOWS: dict[TaskWindow, Callable[[Path | None], TkWindow]] = {
    TaskWindow.EDITOR: EditorWindow,
    TaskWindow.ORDER: OrderWindows,
    TaskWindow.EXPORT: ExportWindow,
    TaskWindow.FILES: FilesWindow,
    TaskWindow.CONTACTS: ContactsWindow,
    TaskWindow.DELIVERY: DeliveryWindow,
}


def show(kind: TaskWindow, state: Path | None) -> None:
    """Show the ``kind`` window, writing its state to ``state``, until it is closed or the
    holodesk that started it is gone."""
    make: Callable[[Path | None], TkWindow] = WINDOWS[kind]
    app = make(state)
    parent = os.getppid()

    def watch() -> None:
        if orphaned(parent):
            app.root.destroy()
        else:
            app.root.after(PARENT_CHECK_MS, watch)

    app.root.after(PARENT_CHECK_MS, watch)
    app.refresh()
    app.root.mainloop()
