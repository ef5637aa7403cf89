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
from app.cli.helptext import Parser, entries, examples
from app.cli.output import EXIT_OK, EXIT_USAGE, fail
from app.logs import setup_logging
from app.settings import SettingsError
from app.version import version

if TYPE_CHECKING:
    from types import ModuleType

    from app.calibrate import ScreenFactory

#: The commands as `holodesk --help` lists them, after "Start here" (the app and the demo):
#: (heading, the modules whose commands go under it).
_GROUPS: tuple[tuple[str, tuple[ModuleType, ...]], ...] = (
    ("Run tasks", (cli_run, cli_automations, cli_trigger)),
    ("Set up and check", (cli_serve, cli_config, cli_doctor, cli_calibrate)),
    ("Look back", (cli_log, cli_report)),
    ("Measure models and servers", (cli_eval, cli_bench)),
)
_START = ("holodesk", "start the desktop app: a tray icon (or a small window where the desktop "
          "has none) to type tasks, watch each step, stop a run, and open the action log, "
          "Settings and Check set-up")
_ABOUT = (
    "holodesk does a task on your own desktop: you say what to do in plain words, and it looks "
    "at the screen and works the mouse and keyboard until the task is done, asking you before "
    "risky actions. The model, Holotron-12B, is served by vLLM on your own GPU, so screenshots "
    "never leave your machine."
)
_READ_MORE = (
    "Read more in holodesk's README.md: \"Try it without a GPU: holodesk demo\", \"Set up the "
    "model server\", \"The desktop app\", \"Use from the command line\", \"Automations\", "
    "\"Configuration\" and \"The safety model\". `holodesk COMMAND --help` (or `holodesk help "
    "COMMAND`) says what a command does, with examples. When something does not work: "
    "`holodesk doctor` checks the desktop and the model server and says how to fix what fails."
)


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
    p = Parser(prog="holodesk", usage="%(prog)s [-h] [--version] [COMMAND ...]")
    p.add_argument("--version", action="version", version=f"holodesk {version()}")
    # The commands are listed in the description, grouped: argparse's own list is one block.
    sub = p.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS,
                           prog="holodesk")
    listed: dict[ModuleType, list[tuple[str, str]]] = {}
    for module in (cli_demo, *(m for _, group in _GROUPS for m in group)):
        before = len(sub._choices_actions)
        module.register(sub)
        listed[module] = [(a.dest, a.help or "") for a in sub._choices_actions[before:]]
    _register_help(sub, p)
    start = [_START, *((f"holodesk {name}", text) for name, text in listed[cli_demo])]
    rows = [(name, text) for _, group in _GROUPS for m in group for name, text in listed[m]]
    blocks = [_ABOUT, f"Start here:\n{entries(start)}"]
    width = max(len(name) for name, _ in rows)
    for heading, group in _GROUPS:
        mine = [(f"{name:<{width}}", text) for m in group for name, text in listed[m]]
        blocks.append(f"{heading}:\n{entries(mine)}")
    p.description = "\n\n".join(blocks)
    p.epilog = "\n\n".join([examples(
        ("holodesk", "the desktop app"),
        ("holodesk demo", "a first run on a practice window, no GPU needed"),
        ('holodesk run "open the Downloads folder"', "a task, from this terminal"),
        ("holodesk doctor", "what is missing, and how to fix it"),
    ), _READ_MORE])
    return p


def _register_help(sub: argparse._SubParsersAction[Parser], root: Parser) -> None:
    """`holodesk help [COMMAND ...]`: the help of holodesk or of one of its commands."""
    p = sub.add_parser(
        "help", help="show this help, or a command's (the same as COMMAND --help)",
        description="Show holodesk's help, or the help of a command or subcommand: what it "
        "does, its options and examples.",
        epilog=examples(("holodesk help", "every command"),
                        ("holodesk help run", "what a run does and how to stop it"),
                        ("holodesk help config set", "every setting, its meaning and range")))
    p.add_argument("topic", nargs="*", metavar="COMMAND", help="a command, and a subcommand")

    def show(args: argparse.Namespace) -> int:
        parser = root
        for word in args.topic:
            found = next((a.choices for a in parser._actions
                          if isinstance(a, argparse._SubParsersAction)), None)
            if not isinstance(found, dict) or word not in found:
                from model.problem import Fix, Problem

                return fail(Problem(f"no help on {' '.join(args.topic)!r}: there is no such "
                                    "command", Fix("`holodesk --help` lists the commands")),
                            EXIT_USAGE)
            parser = found[word]
        parser.print_help()
        return EXIT_OK

    p.set_defaults(func=show)


if __name__ == "__main__":
    sys.exit(main())
