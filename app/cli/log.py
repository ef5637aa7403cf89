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
    logp = sub.add_parser("log", help="the action log: past runs and their steps")
    logsub = logp.add_subparsers(dest="log_command", required=True)
    ls = logsub.add_parser("list", help="list recent runs")
    ls.add_argument("-n", "--limit", type=int, default=20)
    ls.set_defaults(func=_cmd_log_list)
    show = logsub.add_parser("show", help="show one run and its steps")
    show.add_argument("run", help="run id (a unique prefix is enough)")
    show.set_defaults(func=_cmd_log_show)
    exp = logsub.add_parser("export", help="export a run as JSONL plus its screenshots")
    exp.add_argument("run", help="run id (a unique prefix is enough)")
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
