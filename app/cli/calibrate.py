"""The `holodesk calibrate` command: which coordinate convention the running model uses.

The target window is Qt, which app/ never imports: ``ui.main`` hands a screen factory to
:func:`app.cli.main.main`, which puts it on the parsed arguments as ``calibrate_screen``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING

from app.cli.helptext import examples
from app.cli.output import (
    EXIT_BUSY,
    EXIT_OK,
    EXIT_RUN_FAILED,
    EXIT_USAGE,
    error,
    fail,
    stop_signals,
)
from model.problem import Fix, Problem, Remedy

if TYPE_CHECKING:
    import signal

    from app.calibrate import CalibrationReport, ScreenFactory, TargetResult
    from app.settings import Settings
    from model.coords import Convention


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    p = sub.add_parser(
        "calibrate",
        help="show targets on the screen and find how the model gives coordinates",
        description=(
            "Shows five coloured targets full-screen on the monitor, one at a time, asks the "
            "model to click each, and reports under which coordinate convention (norm1000, "
            "norm1, pixels) its clicks land, with the error in pixels per target. Exits 0 when "
            "a convention fits, 1 when the clicks miss under every convention."
        ),
        epilog=examples(("holodesk calibrate", "on the first monitor; asks before saving"),
                        ("holodesk calibrate --monitor 2 --save", "")),
    )
    p.add_argument("--monitor", help="monitor index (1 = first), 'mouse', or a region WxH+X+Y")
    p.add_argument("--endpoint", help="the server's base URL (default http://127.0.0.1:8000/v1)")
    p.add_argument("--model", help="the served model name (default: read from /v1/models)")
    p.add_argument("--profile", dest="model_profile", metavar="KEY",
                   help="the model's profile (docs/models.md); on H's contract each target is "
                   "asked as H's element localization")
    save = p.add_mutually_exclusive_group()
    save.add_argument("--save", dest="save", action="store_true", default=None,
                      help="save the convention found to the settings without asking")
    save.add_argument("--no-save", dest="save", action="store_false",
                      help="do not save it (default when stdin is not a terminal)")
    p.add_argument("-v", "--verbose", action="store_true", help="print what happens")
    p.set_defaults(func=_cmd_calibrate, calibrate_screen=None)


def _settings(args: argparse.Namespace) -> Settings:
    from app.settings import load_with_overrides

    return load_with_overrides({name: getattr(args, name, None)
                                for name in ("monitor", "endpoint", "model",
                                             "model_profile")})


def _cmd_calibrate(args: argparse.Namespace) -> int:
    factory: ScreenFactory | None = getattr(args, "calibrate_screen", None)
    if factory is None:
        return fail("calibrate needs the desktop app's window to show its targets; run it "
                    "as `holodesk calibrate` (the installed command), not through app.cli",
                    EXIT_USAGE)
    from app.lock import DesktopBusyError
    from app.runner import desktop_lock

    settings = _settings(args)
    try:
        with desktop_lock():
            report = _calibrate(settings, factory)
    except DesktopBusyError as e:
        return fail(e, EXIT_BUSY)
    except KeyboardInterrupt:  # Ctrl+C before the calibration's own handler is in place
        return fail("calibration stopped")
    if report is None:
        return EXIT_RUN_FAILED
    from app.calibrate import format_report

    print(format_report(report))
    if report.stopped:
        print("Nothing saved: the calibration did not finish.")
        return EXIT_RUN_FAILED
    best = report.verdict.best
    if best is None:
        return EXIT_RUN_FAILED
    _offer_to_save(best.convention, args.save)
    return EXIT_OK


def _calibrate(settings: Settings, factory: ScreenFactory) -> CalibrationReport | None:
    """Run the calibration; None after printing why it could not run."""
    from app.calibrate import TARGETS, CalibrationUnavailable, open_calibrator, run_with_screen
    from control.stop import StopLatch

    latch = StopLatch()

    def on_signal(sig: signal.Signals) -> None:
        latch.stop("signal", f"{sig.name} received")

    try:
        with (open_calibrator(settings, latch, on_result=_progress) as calibrator,
              stop_signals(on_signal)):
            print(f"Calibrating monitor {settings.monitor} with {calibrator.model!r} at "
                  f"{settings.endpoint}: {len(TARGETS)} targets, one at a time (Esc or "
                  "Ctrl+C stops).", file=sys.stderr)
            return run_with_screen(factory, latch, calibrator.run)
    except CalibrationUnavailable as e:
        error(e)
        return None
    except (OSError, RuntimeError, ValueError) as e:  # capture or window failures
        error(f"the calibration failed: {e}")
        return None
    except Exception as e:  # e.g. mss's ScreenShotError: a message, never a traceback
        logging.getLogger(__name__).exception("calibration failed")
        error(Problem(f"the calibration failed: {type(e).__name__}: {e}",
                      Fix("check the screen capture; details are in the log file",
                          remedy=Remedy.RUN_DOCTOR)))
        return None


def _progress(result: TargetResult) -> None:
    from app.calibrate import describe_answer

    placed = result.placed
    print(f"  [{placed.index}/{placed.count}] {placed.target.description}: "
          f"{describe_answer(result)}", file=sys.stderr, flush=True)


def _offer_to_save(found: Convention, save: bool | None) -> None:
    from app.settings import load_settings, set_value

    saved = load_settings().convention
    if save is None:
        if found == saved:
            print(f"The settings already use {found.value}.")
            return
        save = _ask(f"Save convention = {found.value} to the settings (now {saved.value})? "
                    "[y/N] ")
    if not save:
        if found != saved:
            print(f"Not saved. To use it: holodesk config set convention {found.value}")
        return
    set_value("convention", found.value)
    print(f"Saved: convention = {found.value}.")


def _ask(question: str) -> bool:
    """A y/N question on a terminal; no (without asking) when stdin is not one."""
    if not sys.stdin.isatty():
        return False
    try:
        return input(question).strip().lower() in {"y", "yes"}
    except EOFError:
        return False
