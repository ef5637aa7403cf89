"""The `holodesk log` command: list past runs, show one with its steps, export one."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.output import EXIT_OK, EXIT_USAGE, error

if TYPE_CHECKING:
    from app.store import ActionLog, RunRecord


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    from app.cli.helptext import examples

    logp = sub.add_parser(
        "log", help="the action log: past runs and their steps",
        description="Every run is kept in the action log on this machine: its task and how it "
        "ended, and for each step the screenshot, the model's reasoning, the action, your "
        "decision, the result and the time taken. Runs older than the retention_days setting "
        "are deleted. The desktop app shows the same log in its Action log window.",
        epilog=examples(("holodesk log list", "the recent runs"),
                        ("holodesk log show last", "the newest run, step by step"),
                        ("holodesk log export last -o ~/runs", "a run as JSONL and images")))
    logsub = logp.add_subparsers(dest="log_command", required=True)
    ls = logsub.add_parser(
        "list", help="list recent runs",
        description="List the most recent runs: id, start time, steps, outcome and task.",
        epilog=examples(("holodesk log list", ""), ("holodesk log list -n 100", "")))
    ls.add_argument("-n", "--limit", type=int, default=20,
                    help="how many runs to list (default 20)")
    ls.set_defaults(func=_cmd_log_list)
    show = logsub.add_parser(
        "show", help="show one run and its steps",
        description="Show one run: its task, how it ended and why, the server and model, and "
        "each step with the action, your decision and the result, the model's reasoning, the "
        "application it acted in, the time taken and where its screenshot is.",
        epilog=examples(("holodesk log show last", "the newest run"),
                        ("holodesk log show 3f2a", "the run whose id starts with 3f2a")))
    show.add_argument("run", help="run id (a unique prefix is enough), or last")
    show.set_defaults(func=_cmd_log_show)
    exp = logsub.add_parser(
        "export", help="export a run as JSONL plus its screenshots",
        description="Write a run to a folder of its own (holodesk-run-ID): the run and its "
        "steps as JSON lines, with a copy of each step's screenshot; typed secrets are masked. "
        "Prints the folder.",
        epilog=examples(("holodesk log export last", "into a folder here"),
                        ("holodesk log export 3f2a -o ~/runs", "")))
    exp.add_argument("run", help="run id (a unique prefix is enough), or last")
    exp.add_argument("-o", "--output", type=Path, default=Path("."),
                     help="folder to write into (default: here)")
    exp.set_defaults(func=_cmd_log_export)


def _cmd_log_list(args: argparse.Namespace) -> int:
    from app.export import format_run_list
    from app.store import ActionLog

    with ActionLog.open() as store:
        print(format_run_list(store.list_runs(args.limit)))
    return EXIT_OK


def _cmd_log_show(args: argparse.Namespace) -> int:
    from app.export import format_run
    from app.store import ActionLog

    with ActionLog.open() as store:
        run = _find_run(store, args.run)
        if run is None:
            return EXIT_USAGE
        print(format_run(run, store.steps(run.id)))
    return EXIT_OK


def _cmd_log_export(args: argparse.Namespace) -> int:
    from app.export import export_run
    from app.store import ActionLog

    with ActionLog.open() as store:
        run = _find_run(store, args.run)
        if run is None:
            return EXIT_USAGE
        out = export_run(store, run.id, args.output)
    print(out)
    return EXIT_OK


def _find_run(store: ActionLog, ref: str) -> RunRecord | None:
    """The run named by ``ref`` (an id, a unique prefix, or "last"); None after saying why."""
    from app.store import RunNotFound

    try:
        return store.get_run(ref)
    except RunNotFound as e:
        error(e)
        return None
