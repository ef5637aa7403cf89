"""The Tk task windows of `holodesk eval` by the name ``holodesk --task-window`` is given
(app/demo/task_window.py's kinds)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.demo.task_window import Kind
from ui.practice.tk_contacts import ContactsWindow
from ui.practice.tk_editor import EditorWindow
from ui.practice.tk_export import ExportWindow
from ui.practice.tk_files import FilesWindow
from ui.practice.tk_order import OrderWindows
from ui.practice.tk_task import TaskWindow

WINDOWS: dict[str, Callable[[Path | None], TaskWindow]] = {
    Kind.EDITOR: EditorWindow,
    Kind.ORDER: OrderWindows,
    Kind.EXPORT: ExportWindow,
    Kind.FILES: FilesWindow,
    Kind.CONTACTS: ContactsWindow,
}
