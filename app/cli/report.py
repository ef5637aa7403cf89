"""The `holodesk report` command: gather a problem report, show what is in it, then save it.

It prints the list of files and the start of each, and asks before writing anything; without
a terminal to ask on it writes nothing unless ``--yes`` says the person has read the list.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.cli.helptext import examples
from app.cli.output import EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, fail

#: Lines of each part shown before asking.
PREVIEW_LINES = 6


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    p = sub.add_parser(
        "report",
        help="save a problem report (version, set-up checks, settings, the log's end, the "
        "last run) to send with a bug report; shows what is in it first",
        description="Gather a problem report as a .zip: the version and platform, the set-up "
        "checks (as `holodesk doctor --json`), the settings, the last lines of the log file "
        "and the last run's steps as text, with the API key, typed secrets and anything shaped "
        "like a token masked. Screenshots only with --screenshots (they are not masked). The "
        "list of what goes in and a preview are printed before it asks to save.",
        epilog=examples(("holodesk report", "shows what goes in, then asks"),
                        ("holodesk report --screenshots -o ~/report.zip", ""),
                        ("holodesk report --yes", "save without asking")),
    )
    p.add_argument("-o", "--output", type=Path,
                   help="the .zip to write (default: holodesk-report-DATE-TIME.zip here)")
    p.add_argument("--screenshots", action="store_true",
                   help="also add the last run's screenshots (not masked: check them first)")
    p.add_argument("--keep-home", action="store_true",
                   help="keep the home folder's path as it is (default: written as ~)")
    p.add_argument("-y", "--yes", action="store_true",
                   help="save without asking (after reading what goes in)")
    p.set_defaults(func=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    from app.cli.render import fix_line
    from app.report import (
        ReportError,
        collect_report,
        default_report_path,
        project_address,
        send_words,
    )
    from app.settings import Settings, SettingsError, load_settings
    from app.visible import visible_line
    from model.problem import Fix

    path: Path = args.output or default_report_path(Path.cwd())
    if path.suffix.lower() != ".zip":
        path = path.with_name(path.name + ".zip")
    try:
        settings, settings_error = load_settings(), None
    except SettingsError as e:
        # A broken settings file is worth reporting too: the report says so, with defaults.
        settings, settings_error = Settings(), str(e)
        print(f"holodesk: the settings cannot be read, the report says so: {e}",
              file=sys.stderr)
    print("holodesk: gathering the report (the set-up checks take up to a minute)...",
          file=sys.stderr, flush=True)
    report = collect_report(settings, say=fix_line, hide_home=not args.keep_home,
                            settings_error=settings_error)
    print("The report holds:")
    for line in report.contents(screenshots=args.screenshots):
        print(f"  {line}")
    if report.screenshots and not args.screenshots:
        print(f"  (the last run's {len(report.screenshots)} screenshot(s) are left out; "
              "--screenshots adds them)")
    print()
    for part in report.parts:
        lines = part.text.splitlines()
        print(f"--- {part.name}")
        for line in lines[:PREVIEW_LINES]:
            print(f"    {visible_line(line, 160)}")
        if len(lines) > PREVIEW_LINES:
            print(f"    ... {len(lines) - PREVIEW_LINES} more lines")
    print()
    if not args.yes:
        if not sys.stdin.isatty():
            return fail(ReportError(
                "nothing was written: there is no terminal to ask whether to save the report",
                Fix("read the list above, then run `holodesk report --yes` (add "
                    "`--output FILE.zip` to choose where it goes)")), EXIT_USAGE)
        if not _ask(f"Save the report to {path}? [y/N] "):
            print("Nothing was written.")
            return EXIT_RUN_FAILED
    try:
        written = report.write(path, screenshots=args.screenshots)
    except ReportError as e:
        return fail(e)
    print(f"Saved: {written}")
    print(f"{send_words(project_address())} It holds what is listed above and nothing else.")
    return EXIT_OK


def _ask(question: str) -> bool:
    try:
        return input(question).strip().lower() in {"y", "yes"}
    except EOFError:
        return False
