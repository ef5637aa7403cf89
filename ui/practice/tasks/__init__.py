"""The task windows of `holodesk eval` (app/demo/task_windows.py starts them): small Tk windows,
one module each, on a shared frame (:mod:`ui.practice.tasks.base`).

``holodesk --eval-window NAME --state FILE`` (routed by ui/main.py) shows the one named.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from app.demo.task_look import TaskWindow
from app.demo.task_windows import EVAL_WINDOW_OPTION


def main(argv: Sequence[str] | None = None) -> int:
    """``holodesk --eval-window NAME [--state FILE]``: show the window until it is closed."""
    parser = argparse.ArgumentParser(prog=f"holodesk {EVAL_WINDOW_OPTION}",
                                     description="a task window of holodesk eval")
    parser.add_argument("name", choices=[kind.value for kind in TaskWindow])
    parser.add_argument("--state", type=Path, help="write the window's state here (JSON)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    kind = TaskWindow(args.name)
    # Each window's module is imported only when it is the one shown.
    if kind is TaskWindow.MENU:
        from ui.practice.tasks.menu import MenuApp as App
    elif kind is TaskWindow.DRAG:
        from ui.practice.tasks.drag import DragApp as App  # type: ignore[assignment]
    elif kind is TaskWindow.INVOICES:
        from ui.practice.tasks.invoices import InvoicesApp as App  # type: ignore[assignment]
    elif kind is TaskWindow.SETTINGS:
        from ui.practice.tasks.settings import SettingsApp as App  # type: ignore[assignment]
    elif kind is TaskWindow.COPIES:
        from ui.practice.tasks.copies import CopiesApp as App  # type: ignore[assignment]
    else:
        from ui.practice.tasks.prefs import PrefsApp as App  # type: ignore[assignment]
    App(args.state).run()
    return 0
