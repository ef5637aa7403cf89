"""The `holodesk doctor` command: check the desktop and the model server, print the fixes."""

from __future__ import annotations

import argparse
import json
import sys

from app.cli.exitcodes import EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE
from app.cli.helptext import examples
from app.cli.render import fix_line
from app.version import version


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    p = sub.add_parser(
        "doctor",
        help="check the desktop and the model server, and say how to fix what fails",
        description="Check, in order: display server, screen capture, input injection, global "
        "hotkeys, system tray, keyring, endpoint, model, context length, image limit, "
        "structured output, reasoning parser (a model that thinks at each step gets its "
        "reasoning apart from the answer), and a one-step dry run that acts on nothing. Each "
        "says PASS, WARN (works, but worth fixing), FAIL or SKIP (an earlier check it needs did "
        "not pass), with the fix. Exit code 0 when nothing failed or was skipped.",
        epilog=examples(
            ("holodesk doctor", ""),
            ("holodesk doctor --endpoint http://127.0.0.1:8001/v1", "check another server"),
            ("holodesk doctor --json", "for a script or a bug report"),
            ('holodesk doctor && holodesk run "open the Downloads folder"',
             "run only on a working set-up")),
    )
    p.add_argument("--endpoint", help="the server's base URL (default from settings)")
    p.add_argument("--model", help="the served model name (default: read from /v1/models)")
    p.add_argument("--monitor", help="monitor index (1 = first), 'mouse', or a region WxH+X+Y")
    p.add_argument("--convention", choices=["norm1000", "norm1", "pixels"],
                   help="how the model gives coordinates (for the dry run)")
    p.add_argument("--profile", dest="model_profile", metavar="KEY",
                   help="the model's profile, whose contract the checks speak "
                   "(docs/models.md)")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for each model request (default 60)")
    p.add_argument("--task", help="what the dry run asks the model (default: click the most "
                   "prominent button)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("-v", "--verbose", action="store_true", help="print log messages too")
    p.set_defaults(func=_cmd_doctor)


def _cmd_doctor(args: argparse.Namespace) -> int:
    # The heavy imports only when the doctor is asked for: the parser is built for every command.
    from app.doctor import (
        CHECK_NAMES,
        DRY_RUN_TASK,
        CheckResult,
        DoctorConfig,
        all_passed,
        doctor_document,
        format_result,
        run_doctor,
        summary_text,
    )
    from app.settings import load_with_overrides

    # SettingsError: main() says EXIT_USAGE
    settings = load_with_overrides({name: getattr(args, name) for name in (
        "endpoint", "model", "monitor", "convention", "model_profile")})
    if args.timeout <= 0:
        print("holodesk: --timeout must be positive", file=sys.stderr)
        return EXIT_USAGE
    config = DoctorConfig(settings=settings, request_timeout=args.timeout,
                          task=args.task or DRY_RUN_TASK)
    width = max(len(name) for name in CHECK_NAMES)

    def show(result: CheckResult) -> None:
        print(format_result(result, width, say=fix_line), flush=True)

    if not args.json:
        print(f"holodesk {version()} doctor: checking this desktop and {settings.endpoint}",
              flush=True)
    try:
        results = run_doctor(config, None if args.json else show)
    except KeyboardInterrupt:  # a check can wait a minute for the model: Ctrl+C, no traceback
        print("\nholodesk: doctor stopped before every check ran", file=sys.stderr)
        return EXIT_RUN_FAILED
    if args.json:
        print(json.dumps(doctor_document(results, settings.endpoint, say=fix_line), indent=2))
    else:
        print(f"\n{summary_text(results)}")
    # A WARN passes: the set-up works (its fix is printed above it).
    return EXIT_OK if all_passed(results) else EXIT_RUN_FAILED
