"""The `holodesk demo` command: the real loop on a practice window, no GPU or server needed."""

from __future__ import annotations

import argparse

from app.cli.output import EXIT_OK, fail


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    from app.cli.helptext import examples

    demo = sub.add_parser(
        "demo", help="the place to start: watch a run on a practice window, with a built-in "
        "demo model (no GPU or model server needed)",
        description="Open a practice window and let a built-in demo model (which looks at the "
        "screen, no GPU or model server needed) fill it in with the real capture, safety "
        "checks, confirmation, input, stop and action log. It acts only in the practice "
        "window. Exits 0 when the practice task is done.",
        epilog=examples(
            ("holodesk demo", "asks before the risky step (Delete draft)"),
            ("holodesk demo --confirm never", "watch it run through without a question"),
            ("holodesk demo --confirm always", "approve every step yourself"),
        ))
    demo.add_argument("--confirm", choices=["always", "risky", "never"],
                      help="which actions to confirm first (default from settings: risky)")
    demo.add_argument("-v", "--verbose", action="store_true", help="print every event")
    demo.set_defaults(func=_cmd_demo)


def _cmd_demo(args: argparse.Namespace) -> int:
    from app.cli.run import drive_task, run_ended
    from app.demo.run import PracticeWindowError, start_demo
    from app.result import RunResult
    from app.run_request import make_run_request
    from app.settings import load_settings
    from control.stop import StopLatch

    print("Demo: opening the practice window and the demo model (nothing else is touched).",
          flush=True)
    try:
        demo = start_demo(load_settings(), confirm=args.confirm)
    except PracticeWindowError as e:
        return fail(f"Demo: {e}")
    try:
        print(f"Demo: model {demo.settings.model} at {demo.settings.endpoint}; acting only in "
              "the practice window.", flush=True)
        latch = StopLatch()
        demo.watch(latch)
        # The practice window's own state decides whether the run is done (Demo.check).
        finished = drive_task(make_run_request(demo.settings, demo.task, check=demo.check),
                              verbose=args.verbose, latch=latch)
    finally:
        result = demo.finish()
    if isinstance(finished, int):
        return finished  # it never ran: said already
    if result.checklist:
        print(result.checklist)
    if finished.result is not RunResult.DONE:
        return run_ended(finished)
    print(result.message)
    print(next_steps_text())
    return EXIT_OK


def next_steps_text() -> str:
    """What a done demo says last: what just happened, and what to try next."""
    from app.demo.run import NEXT_STEPS, WHAT_HAPPENED

    lines = [f"Demo: {WHAT_HAPPENED}", "What to try next:"]
    lines += [f"  - {step.title.lower()}: {step.command}" for step in NEXT_STEPS]
    return "\n".join(lines)
