"""The task windows of `holodesk eval` (app/demo/task_windows.py starts them): small Tk windows.

``holodesk --task-window NAME --state FILE`` (routed by ui/main.py) shows the one named: the
first six (menu, drag, invoices, settings, copies, prefs) are modules of this package on a
shared frame (:mod:`ui.practice.tasks.base`), the others ui/practice/tk_*.py on theirs
(:mod:`ui.practice.tk_task`, shown by :func:`ui.practice.tk_windows.show`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from app.demo.task_look import BORDERS, TaskWindow
from app.demo.task_windows import TASK_WINDOW_OPTION


def main(argv: Sequence[str] | None = None) -> int:
    """``holodesk --task-window NAME [--state FILE]``: show the window until it is closed."""
    parser = argparse.ArgumentParser(prog=f"holodesk {TASK_WINDOW_OPTION}",
                                     description="a task window of holodesk eval")
    parser.add_argument("name", choices=[kind.value for kind in TaskWindow])
    parser.add_argument("--state", type=Path, help="write the window's state here (JSON)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    kind = TaskWindow(args.name)
    if kind not in BORDERS:
        from ui.practice.tk_windows import show

        show(kind, args.state)
        return 0
    # Each window's module is imported only when it is the one shown: ui.practice.tasks.NAME
    # holds its window as the one TaskApp subclass whose kind is NAME.
    from ui.practice.tasks.base import TaskApp

    module = importlib.import_module(f"ui.practice.tasks.{kind.value}")
    [app] = [v for v in vars(module).values() if isinstance(v, type)
             and issubclass(v, TaskApp) and v is not TaskApp and v.kind is kind]
    app(args.state).run()
    return 0
