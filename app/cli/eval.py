"""The `holodesk eval` command: parses its options, runs the suite (app/eval.py), prints."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from app.cli.helptext import examples
from app.cli.output import EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, fail, say

if TYPE_CHECKING:
    from app.eval import EvalReport, TaskResult


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    p = sub.add_parser(
        "eval", help="run a small suite of checkable desktop tasks against a model",
        description="Run a fixed suite of desktop tasks, each in a throwaway window of its own "
        "(nothing else is touched), against a model server and a profile, and report per task: "
        "passed, steps, seconds, prompt and answer tokens (docs/eval.md). Without --endpoint "
        "the built-in demo model answers (no GPU). Exits 0 when every task passed.",
        epilog=examples(("holodesk eval --list", "the tasks"),
                        ("holodesk eval", "every task, with the built-in demo model"),
                        ("holodesk eval --endpoint http://127.0.0.1:8000/v1 --compare legacy "
                         "holotron-12b", "two contracts side by side")))
    p.add_argument("--endpoint", help="the server's base URL (default: the built-in demo model)")
    p.add_argument("--model", help="the served model name (default: read from /v1/models)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--profile", metavar="KEY",
                       help="the model's profile, i.e. its contract (docs/models.md; default: "
                       "what `holodesk run` picks)")
    which.add_argument("--compare", nargs=2, metavar=("A", "B"),
                       help="run the same tasks under two profiles and print them side by "
                       "side, e.g. --compare legacy holotron-12b")
    p.add_argument("--tasks", metavar="NAME,...", help="run only these tasks")
    p.add_argument("--max-steps", type=int, help="steps each task may take (default 20)")
    p.add_argument("--json", action="store_true", help="print the reports as JSON")
    p.add_argument("--list", action="store_true", help="list the tasks and exit")
    p.set_defaults(func=_cmd_eval)


def _cmd_eval(args: argparse.Namespace) -> int:
    from app.eval import DEFAULT_MAX_STEPS, TASKS, EvalError, run_suite, select_tasks
    from app.settings import load_settings
    from model.profiles import UnknownProfile, profile_by_key

    if args.list:
        for task in TASKS:
            say(f"{task.name}: {task.summary}")
        return EXIT_OK
    profiles: list[str | None] = list(args.compare) if args.compare else [args.profile]
    try:
        for key in profiles:
            if key is not None:
                profile_by_key(key)
        names = [n.strip() for n in (args.tasks or "").split(",") if n.strip()]
        tasks = select_tasks(names)
    except (UnknownProfile, EvalError) as e:
        return fail(e, EXIT_USAGE)
    if args.model and not args.endpoint:
        return fail("--model names a model of --endpoint's server; without --endpoint the "
                    "built-in demo model answers", EXIT_USAGE)
    if args.max_steps is not None and args.max_steps < 1:
        return fail("--max-steps must be at least 1", EXIT_USAGE)
    if not args.json:
        where = args.endpoint or "the built-in demo model"
        say(f"eval: {len(tasks)} task(s) against {where}, each in its own throwaway window.")

    def progress(label: str, result: TaskResult) -> None:
        if not args.json:
            mark = "passed" if result.passed else "FAILED"
            say(f"eval [{label}] {result.task}: {mark} after {result.steps} step(s): "
                f"{result.detail}")

    from app.cli.approve import settle_before_run

    settle_before_run()  # safety settings changed outside holodesk: asked, or not applied
    try:
        reports = run_suite(load_settings(), profiles, endpoint=args.endpoint, model=args.model,
                            tasks=tasks, max_steps=args.max_steps or DEFAULT_MAX_STEPS,
                            on_result=progress)
    except Exception as e:  # a window that did not open, the desktop busy, no display
        return fail(f"eval: cannot run the suite: {e}")
    if args.json:
        print(json.dumps({"reports": [r.as_dict() for r in reports]}, indent=2))
    else:
        say(table(reports))
    return EXIT_OK if all(r.passed for r in reports) else EXIT_RUN_FAILED


def _n(value: int | None) -> str:
    from app.eval import NOT_RECORDED

    return NOT_RECORDED if value is None else str(value)


def _reasoning(result: TaskResult) -> str:
    """The reasoning cell: ``~N`` when holodesk counted streamed deltas (docs/eval.md)."""
    text = _n(result.reasoning_tokens)
    estimated = result.reasoning_tokens is not None and result.reasoning_estimated
    return f"~{text}" if estimated else text


def _cells(result: TaskResult | None) -> list[str]:
    if result is None:
        return ["-"] * 6
    return ["yes" if result.passed else "NO", str(result.steps), f"{result.seconds:.1f}",
            _n(result.prompt_tokens), _n(result.completion_tokens), _reasoning(result)]


_COLUMNS = ["passed", "steps", "seconds", "prompt", "answer", "reasoning"]


def table(reports: Sequence[EvalReport]) -> str:
    """The reports as one table, a group of columns per report (side by side to compare)."""
    tasks: list[str] = []
    for report in reports:
        tasks += [r.task for r in report.results if r.task not in tasks]
    header = ["task"]
    for report in reports:
        header += [f"{report.profile}: {c}" if i == 0 else c for i, c in enumerate(_COLUMNS)]
    rows = [header]
    for task in tasks:
        row = [task]
        for report in reports:
            row += _cells(next((r for r in report.results if r.task == task), None))
        rows.append(row)
    total = ["passed"]
    for report in reports:
        done = sum(r.passed for r in report.results)
        total += [f"{done}/{len(report.results)}"] + [""] * (len(_COLUMNS) - 1)
    rows.append(total)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
