"""The `holodesk` command line: the parser of every subcommand, and the dispatch to it.

Each subcommand lives in its own module with ``register(sub)``, which adds its parser and
sets ``func``, the function the parsed arguments are handed to. Each keeps its heavy imports
inside that function: the parser is built for every command.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from app.cli import automations as cli_automations
from app.cli import bench as cli_bench
from app.cli import calibrate as cli_calibrate
from app.cli import config as cli_config
from app.cli import demo as cli_demo
from app.cli import doctor as cli_doctor
from app.cli import eval as cli_eval
from app.cli import log as cli_log
from app.cli import report as cli_report
from app.cli import run as cli_run
from app.cli import serve as cli_serve
from app.cli import trigger as cli_trigger
from app.cli.output import EXIT_OK, EXIT_USAGE, fail
from app.logs import setup_logging
from app.settings import SettingsError
from app.version import version

if TYPE_CHECKING:
    from app.calibrate import ScreenFactory

# In the order `holodesk --help` lists them.
_SUBCOMMANDS = (cli_run, cli_demo, cli_log, cli_trigger, cli_config,
                cli_automations, cli_serve, cli_doctor, cli_calibrate, cli_bench, cli_report,
                cli_eval)


def main(
    argv: Sequence[str] | None = None, *, calibrate_screen: ScreenFactory | None = None,
    process_entry: bool = False,
) -> int:
    """Entry point of the `holodesk` script.

    ``calibrate_screen`` makes the window `holodesk calibrate` shows its targets in: Qt lives
    in ui/, which app/ never imports, so ui.main passes it in. ``process_entry``: this call is
    the whole process (the script, not a test calling in), so a command that asks for it
    (``exit_at_once``, `holodesk run`) ends the process as soon as it is done
    (:func:`exit_now`).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    setup_logging(getattr(args, "verbose", False))
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    if args.command == "calibrate":
        args.calibrate_screen = calibrate_screen
    try:
        result: int = args.func(args)
    except SettingsError as e:
        return fail(e, EXIT_USAGE)
    if process_entry and getattr(args, "exit_at_once", False):
        exit_now(result)
    return result


def exit_now(code: int) -> NoReturn:
    """End this process with ``code`` without the interpreter's teardown.

    After a run, the teardown (garbage collection and freeing every module's objects, the
    HTTP client's and pydantic's many among them) took 0.1-0.6 s on a loaded 2-core machine:
    most of the time from a run's end to the prompt (bench/step.py). By the time a command
    returns, what must outlive the process is closed (the action log, the desktop lock, the X
    connections) and nothing is held down (the agent's ``finally`` releases every key and
    button, control/input.py ``Executor.release_all``). What is left to do is holodesk's own
    short list, run here: the log handlers flushed and closed (what logging's atexit handler
    does), then stdout and stderr. No other atexit handler is run: holodesk registers none, and
    a library's (Pillow's cache, say) frees what the process's end frees anyway. Threads left
    are daemons or idle pool workers.
    """
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed, or a pipe nobody reads
            stream.flush()
    os._exit(code)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="holodesk",
        description="A desktop computer-use assistant driven by Holotron-12B served by vLLM.",
    )
    p.add_argument("--version", action="version", version=f"holodesk {version()}")
    sub = p.add_subparsers(dest="command")
    for module in _SUBCOMMANDS:
        module.register(sub)
    return p


if __name__ == "__main__":
    sys.exit(main())
