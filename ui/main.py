"""The `holodesk` entry point: no arguments start the desktop app, anything else is the CLI."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ui.identity import EXIT_NOT_OURS, identity_problem

if TYPE_CHECKING:
    from app.calibrate import TargetScreen


def main(argv: Sequence[str] | None = None) -> int:
    """Route to the tray app or to the headless CLI (which never loads Qt unless it must)."""
    args = list(sys.argv[1:] if argv is None else argv)
    # Before anything of app/ runs: another project's `app` or `model` would run in its place.
    problem = identity_problem()
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_NOT_OURS
    from model.serving.guard import FROZEN_SUBCOMMAND

    if args[:1] == [FROZEN_SUBCOMMAND]:
        # The model server's guard, when the frozen app runs it (model/serving/guard.py): the
        # bundle has no Python of its own to run the guard's file with.
        from model.serving.guard import main as guard_main

        return guard_main(args[1:])
    from app.demo.practice import PRACTICE_OPTION

    if args[:1] == [PRACTICE_OPTION]:
        # The practice window of `holodesk demo`, a process of its own (app/demo/practice.py).
        from ui.practice.window import main as practice_main

        return practice_main(args[1:])
    from app.demo.rows import ROWS_OPTION

    if args[:1] == [ROWS_OPTION]:
        # The rows window of `holodesk eval`, a process of its own (app/demo/rows.py).
        from ui.practice.rows import main as rows_main

        return rows_main(args[1:])
    from app.demo.task_windows import TASK_WINDOW_OPTION

    if args[:1] == [TASK_WINDOW_OPTION]:
        # A Tk task window of `holodesk eval`, a process of its own (app/demo/task_windows.py).
        from ui.practice.tasks import main as task_window_main

        return task_window_main(args[1:])
    from app.autostart import AT_LOGIN_OPTION

    if args == [AT_LOGIN_OPTION]:
        # The autostart entry's start (app/autostart.py): the "at login" automations run.
        from ui.app import run_gui

        return run_gui(at_login=True)
    if args:
        from app.cli.main import main as cli_main

        return cli_main(args, calibrate_screen=_calibrate_screen, process_entry=argv is None)
    from ui.app import run_gui

    return run_gui()


def _calibrate_screen(on_cancel: Callable[[], None]) -> TargetScreen:
    # Qt is loaded only when `holodesk calibrate` really opens its window.
    from ui.calibrate_screen import open_target_screen

    return open_target_screen(on_cancel)


if __name__ == "__main__":
    sys.exit(main())
