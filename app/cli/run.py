"""The `holodesk run` command, and the terminal run it shares with `automation run` and a
`trigger NAME` without the desktop app."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.cli.output import EXIT_BUSY, EXIT_REFUSED, EXIT_USAGE, RESULT_CODES, error, fail
from app.cli.render import reason_line
from app.result import RunResult

if TYPE_CHECKING:
    from app.events import RunFinished
    from app.run_request import RunRequest
    from app.settings import RunValues
    from control.stop import StopLatch


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    from app.cli.helptext import examples
    from control.hotkeys import DEFAULT_STOP_HOTKEY, parse_combo

    run = sub.add_parser(
        "run", help="carry out a task on this desktop, from this terminal (needs a model "
        "server)",
        description="Carry out TASK on this desktop: holodesk takes a screenshot, asks the "
        "model for the next action, carries it out, and goes on until the model says the task "
        "is done, a limit (--max-steps, --max-seconds) is reached, or you stop it. Every step "
        "is kept in the action log (`holodesk log show last`).\n\n"
        "Before a risky action (a click on Send, Delete or Pay, Enter in a terminal, typing "
        "what looks like a password, and more: README.md, \"The safety model\") holodesk "
        "shows it here and asks first: a approves, r approves the rest of the run, s skips it, "
        "q stops. --confirm always asks before every action, --confirm never before none.\n\n"
        "To stop a run at any moment: the stop hotkey "
        f"({parse_combo(DEFAULT_STOP_HOTKEY).label()} unless the stop_hotkey setting says "
        "otherwise), Ctrl+C in this terminal, the mouse thrown into a corner of the screen, or "
        "the Stop of the run bar when the desktop app is open (its windows make way for the "
        "run meanwhile). Nothing is typed or clicked after a stop.\n\n"
        "A run needs a model server: `holodesk serve` starts one on this machine (a 40 GB+ "
        "CUDA GPU); for one elsewhere set the endpoint setting (`holodesk config set endpoint "
        "URL`) or give --endpoint. `holodesk doctor` checks the server. Without one, "
        "`holodesk demo` shows a run on a practice window.",
        epilog=examples(
            ('holodesk run "open the Downloads folder"', ""),
            ('holodesk run "empty the trash" --confirm always', "ask before every action"),
            ('holodesk run "find the cheapest flight" --dry-run --max-steps 5',
             "ask the model, act on nothing"),
            ('holodesk run "rename the screenshots by date" --monitor 2',
             "work on the second monitor"),
            ('holodesk run "sum the column" --only-in libreoffice-calc',
             "act in that application only"),
        ))
    run.add_argument("task", help="what to do, in plain words")
    run.add_argument("--confirm", choices=["always", "risky", "never"],
                     help="which actions to confirm first (default from settings: risky)")
    run.add_argument("--dry-run", action="store_true",
                     help="ask the model and log the steps, but click and type nothing")
    run.add_argument("--monitor", help="monitor index (1 = first, 0 = all), 'mouse', 'primary', "
                     "or a region WxH+X+Y (default from settings: 1)")
    run.add_argument("--max-steps", type=int, help="end the run after this many steps")
    run.add_argument("--max-seconds", type=float, help="end the run after this many seconds")
    run.add_argument("--endpoint", help="the server's base URL (default http://127.0.0.1:8000/v1)")
    run.add_argument("--model", help="the served model name (default: read from /v1/models)")
    run.add_argument("--convention", choices=["norm1000", "norm1", "pixels"],
                     help="how the model gives coordinates (holodesk's own contract)")
    run.add_argument("--profile", dest="model_profile", metavar="KEY",
                     help="the model's profile: its contract, tools, reasoning and sampling "
                     "(docs/models.md; default: holodesk's own contract)")
    run.add_argument("--only-in", metavar="APPS",
                     help="act only in these applications, e.g. 'firefox,libreoffice-calc' "
                     "(window class or program names); anything else is refused")
    run.add_argument("-v", "--verbose", action="store_true", help="print every event")
    # The process ends as soon as the run did (app/cli/main.exit_now): no teardown.
    run.set_defaults(func=_cmd_run, exit_at_once=True)


def run_choices(args: argparse.Namespace) -> RunValues:
    """The person's choices for one run on `holodesk run`'s command line (an option not given
    keeps the setting's value)."""
    from app.settings import RunValues, app_names
    from control.policy import ConfirmMode
    from model.coords import Convention

    return RunValues(
        confirm=ConfirmMode(args.confirm) if args.confirm else None,
        monitor=args.monitor,
        only_in=app_names(args.only_in) if args.only_in is not None else None,
        max_steps=args.max_steps,
        max_seconds=args.max_seconds,
        endpoint=args.endpoint,
        model=args.model,
        convention=Convention(args.convention) if args.convention else None,
        model_profile=args.model_profile,
    )


def run_request(args: argparse.Namespace) -> RunRequest:
    """The request `holodesk run` makes of its command line (app/run_request.py)."""
    from app.run_request import make_run_request
    from app.settings import load_settings

    return make_run_request(load_settings(), args.task, run_choices(args),
                            dry_run=args.dry_run)


def _cmd_run(args: argparse.Namespace) -> int:
    if not args.task.strip():
        from model.problem import Fix, Problem

        # Nothing to ask the model: a run would only spend steps guessing.
        return fail(Problem(
            "the task is empty: nothing was run",
            Fix('say what to do in plain words: `holodesk run "open the Downloads folder"`')),
            EXIT_USAGE)
    from app.cli.approve import settle_before_run

    settle_before_run()  # safety settings changed outside holodesk: asked, or not applied
    return run_task(run_request(args), verbose=args.verbose)


def run_task(request: RunRequest, *, verbose: bool = False,
             latch: StopLatch | None = None) -> int:
    """Carry out ``request`` in this terminal, as `holodesk run` does; the exit code of its
    result (app/cli/exitcodes.py), anything but done said on stderr as the last line.

    A request of an automation's run replays its saved steps first (unless it says not to)
    and an answered run's steps are saved for the next time; its parameters' filled task is
    the one run, its secrets masked (app/run_request.py).

    Holds the desktop lock for the run, confirms on the terminal, stops on Ctrl+C, SIGTERM
    and the stop hotkey (:func:`app.runner.foreground`); ``latch``, when given, is the run's
    stop (another part that may end the run pulls it, as `holodesk demo` does).
    """
    finished = drive_task(request, verbose=verbose, latch=latch)
    return finished if isinstance(finished, int) else run_ended(finished)


def drive_task(request: RunRequest, *, verbose: bool = False,
               latch: StopLatch | None = None) -> RunFinished | int:
    """Carry out ``request`` in this terminal (see :func:`run_task`): how it ended, or the
    exit code when it never started or ended without a result (said on stderr already)."""
    from app import protected
    from app.cli.terminal import TerminalFrontEnd
    from app.lock import DesktopBusyError
    from app.runner import drive, foreground, open_run
    from app.session import NeverTouchUnseen
    from app.way import RemoteWay
    from model.plain_http import PlainHttpRefused

    # A desktop app open beside this run takes its windows out of the run's way (app/way.py).
    way = RemoteWay.if_app_runs("")
    try:
        session = open_run(request, latch=latch, make_way=way)
    except DesktopBusyError as e:
        return fail(e, EXIT_BUSY)
    except (PlainHttpRefused, NeverTouchUnseen) as e:
        # holodesk refuses it before anything is sent or done; rendered with the exact
        # `holodesk config set` command of its fix.
        return refused(e)
    except Exception as e:
        return fail(f"run failed: cannot start the run: {e}")
    # Before the run: what changed since the last one (a program it started may have gone on
    # after it), and what limits this run's watch over the protected files. Paths only.
    for noticed in protected.changed_since_last_run(request.settings):
        error(f"warning: {noticed.describe()}")
    for notice in session.notices:
        error(f"warning: {notice}")
    front = TerminalFrontEnd(verbose=verbose, stopped=lambda: session.latch.is_set)
    if way is not None:
        way.task = session.parts.secrets.mask(session.task)  # it shows: never a secret
    try:
        with foreground(session):
            finished = drive(session, front.handle)
    finally:
        if way is not None:
            way.over()  # its windows come back
    for notice in session.after_close:  # protected files changed as the run ended
        error(f"warning: {notice}")
    if finished is None:
        return fail("run failed: it ended without a result; see the log file")
    return finished


def run_ended(finished: RunFinished) -> int:
    """The exit code of a run's result (app/cli/exitcodes.py). A run not done says its result
    and why on stderr, as the last line (the terminal front end said a done one's already)."""
    code = RESULT_CODES[finished.result]
    if finished.result is RunResult.DONE:
        return code
    return fail(f"run {finished.result.words}: {reason_line(finished.reason, finished.fix)}",
                code)


def refused(problem: BaseException | str) -> int:
    """A run holodesk (or the person, at a question) refused before it acted: said on stderr
    as the last line; the exit code for it."""
    from app.cli.render import render
    from model.problem import HolodeskError, Problem

    said = render(problem) if isinstance(problem, (Problem, HolodeskError)) else str(problem)
    return fail(f"run refused: {said}", EXIT_REFUSED)
