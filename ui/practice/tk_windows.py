"""The Tk task windows of `holodesk eval` by the name ``holodesk --task-window`` is given
(app/demo/task_window.py's kinds), and that option's entry point."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from app.demo.task_window import Kind
from ui.practice import PARENT_CHECK_MS, orphaned
from ui.practice.tk_contacts import ContactsWindow
from ui.practice.tk_delivery import DeliveryWindow
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
    Kind.DELIVERY: DeliveryWindow,
}


def main(argv: Sequence[str] | None = None) -> int:
    """``holodesk --task-window KIND [--state FILE]``: show the window until it is closed."""
    parser = argparse.ArgumentParser(prog="holodesk --task-window",
                                     description="a task window of holodesk eval")
    parser.add_argument("kind", choices=sorted(WINDOWS))
    parser.add_argument("--state", type=Path, help="write the window's state here (JSON)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    make: Callable[[Path | None], TaskWindow] = WINDOWS[args.kind]
    app = make(args.state)
    parent = os.getppid()

    def watch() -> None:
        if orphaned(parent):
            app.root.destroy()
        else:
            app.root.after(PARENT_CHECK_MS, watch)

    app.root.after(PARENT_CHECK_MS, watch)
    app.refresh()
    app.root.mainloop()
    return 0
