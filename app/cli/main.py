"""The `holodesk` command line: run a task, read the action log, show and change settings."""

from __future__ import annotations

import argparse
import logging
import queue
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from app import paths
from app.cli import automations as cli_automations
from app.cli import bench as cli_bench
from app.cli import calibrate as cli_calibrate
from app.cli import doctor as cli_doctor
from app.cli import serve as cli_serve
from app.cli.exitcodes import EXIT_BUSY, EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE
from app.events import Event, Outcome, RunFinished
from app.lock import DesktopBusyError, DesktopLock
from app.logs import setup_logging
from app.settings import Settings, SettingsError, load_settings, load_with_overrides

if TYPE_CHECKING:
    from app.calibrate import ScreenFactory
    from app.store import ActionLog, RunRecord
    from control.hotkeys import PynputHotkeys
    from control.stop import StopLatch

log = logging.getLogger("holodesk")



def main(
    argv: Sequence[str] | None = None, *, calibrate_screen: ScreenFactory | None = None
) -> int:
    """Entry point of the `holodesk` script.

    ``calibrate_screen`` makes the window `holodesk calibrate` shows its targets in: Qt lives
    in ui/, which app/ never imports, so ui.main passes it in.
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
        print(f"holodesk: {e}", file=sys.stderr)
        return EXIT_USAGE
    return result


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="holodesk",
        description="A desktop computer-use assistant driven by Holotron-12B served by vLLM.",
    )
    sub = p.add_subparsers(dest="command")

    run = sub.add_parser("run", help="carry out a task on this desktop")
    run.add_argument("task", help="what to do, in plain words")
    run.add_argument("--confirm", choices=["always", "risky", "never"],
                     help="which actions to confirm first (default from settings: risky)")
    run.add_argument("--dry-run", action="store_true",
                     help="ask the model and log the steps, but click and type nothing")
    run.add_argument("--monitor", help="monitor index (1 = first), 'mouse', or a region WxH+X+Y")
    run.add_argument("--max-steps", type=int, help="end the run after this many steps")
    run.add_argument("--max-seconds", type=float, help="end the run after this many seconds")
    run.add_argument("--endpoint", help="the server's base URL (default http://127.0.0.1:8000/v1)")
    run.add_argument("--model", help="the served model name (default: read from /v1/models)")
    run.add_argument("--convention", choices=["norm1000", "norm1", "pixels"],
                     help="how the model gives coordinates")
    run.add_argument("-v", "--verbose", action="store_true", help="print every event")
    run.set_defaults(func=_cmd_run)

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

    trig = sub.add_parser(
        "trigger", help="run an automation, or talk to the running desktop app",
        description="`trigger NAME` runs the automation NAME in the running desktop app, or "
                    "here when the app is not running; `trigger show|stop|run TASK` shows the "
                    "app's window, pulls its emergency stop, or starts a task in it.",
    )
    trig.add_argument("what", metavar="NAME|show|stop|run",
                      help="an automation's name, or show, stop, run")
    trig.add_argument("task", nargs="?", default="", help="with run: the task")
    trig.set_defaults(func=_cmd_trigger)

    cfg = sub.add_parser("config", help="show or change settings")
    cfgsub = cfg.add_subparsers(dest="config_command", required=True)
    cshow = cfgsub.add_parser("show", help="print the settings and where they come from")
    cshow.set_defaults(func=_cmd_config_show)
    cset = cfgsub.add_parser("set", help="change one setting (api_key goes to the keyring)")
    cset.add_argument("key")
    cset.add_argument("value")
    cset.set_defaults(func=_cmd_config_set)

    # Each of these keeps its heavy imports inside its command function.
    for module in (cli_automations, cli_serve, cli_doctor, cli_calibrate, cli_bench):
        module.register(sub)
    return p


def _run_settings(args: argparse.Namespace) -> Settings:
    return load_with_overrides({name: getattr(args, name, None) for name in (
        "confirm", "monitor", "max_steps", "max_seconds", "endpoint", "model", "convention")})


def _cmd_run(args: argparse.Namespace) -> int:
    return run_task(_run_settings(args), args.task, dry_run=args.dry_run, verbose=args.verbose)


def run_task(settings: Settings, task: str, *, dry_run: bool = False,
             verbose: bool = False) -> int:
    """Carry out ``task`` in this terminal, as `holodesk run` does; the exit code.

    Holds the desktop lock for the run, confirms on the terminal, stops on Ctrl+C, SIGTERM
    and the stop hotkey.
    """
    from app.session import build_session  # the heavy imports only when a run is asked for

    lock = DesktopLock(paths.lock_path())
    try:
        lock.acquire()
    except DesktopBusyError as e:
        print(f"holodesk: {e}", file=sys.stderr)
        return EXIT_BUSY
    try:
        session = build_session(settings, task=task, dry_run=dry_run)
    except Exception as e:
        lock.release()
        print(f"holodesk: cannot start the run: {e}", file=sys.stderr)
        return EXIT_RUN_FAILED
    from app.cli.terminal import TerminalFrontEnd

    front = TerminalFrontEnd(verbose=verbose, stopped=lambda: session.latch.is_set)
    events: queue.Queue[Event] = queue.Queue()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        session.latch.stop("signal", signal.Signals(signum).name)
        # A second Ctrl+C kills the process outright, should anything ever hang.
        signal.signal(signal.SIGINT, signal.default_int_handler)

    old_int = signal.signal(signal.SIGINT, on_signal)
    old_term = signal.signal(signal.SIGTERM, on_signal)
    stop_hotkey = _listen_for_stop_hotkey(settings.stop_hotkey, session.latch)
    result: list[RunFinished] = []
    worker = threading.Thread(
        target=lambda: result.append(session.run(events.put)), name="agent", daemon=True
    )
    try:
        worker.start()
        # The main thread stays free for signals and for the person's answers, like the GUI.
        while worker.is_alive() or not events.empty():
            try:
                event = events.get(timeout=0.1)
            except queue.Empty:
                continue
            front.handle(event)
        worker.join()
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
        if stop_hotkey is not None:
            stop_hotkey.stop()
        session.close()
        lock.release()
    finished = result[0] if result else None
    if finished is None:
        print("holodesk: the run ended without a result; see the log file", file=sys.stderr)
        return EXIT_RUN_FAILED
    if finished.outcome is Outcome.ANSWERED:
        return EXIT_OK
    print(f"holodesk: run {finished.outcome.value}: {finished.reason}", file=sys.stderr)
    return EXIT_RUN_FAILED


def _listen_for_stop_hotkey(combo: str, latch: StopLatch) -> PynputHotkeys | None:
    """Pull the stop when the person presses ``combo`` anywhere; None when that cannot work."""
    from control.hotkeys import ListenerError, PynputHotkeys

    hotkeys = PynputHotkeys()
    hotkeys.register(combo, lambda: latch.stop("hotkey", combo))
    try:
        hotkeys.start()
    except ListenerError as e:
        # Ctrl+C and the failsafe corner still stop the run.
        log.warning("the stop hotkey %s is not available (%s); stop with Ctrl+C instead",
                    combo, e)
        return None
    return hotkeys


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
        print(f"holodesk: {e}", file=sys.stderr)
        return None


def _cmd_trigger(args: argparse.Namespace) -> int:
    from app.instance import send

    what = args.what.strip().lower()
    if what not in ("show", "stop", "run"):  # no automation may have these names
        return _trigger_automation(args.what, args.task)
    if what == "run" and not args.task.strip():
        print("holodesk: trigger run needs a task", file=sys.stderr)
        return EXIT_USAGE
    reply = send({"cmd": what, "task": args.task})
    if reply is None:
        print("holodesk: the desktop app is not running; start it with `holodesk`",
              file=sys.stderr)
        return EXIT_RUN_FAILED
    if not reply.get("ok"):
        print(f"holodesk: {reply.get('error', 'the desktop app refused')}", file=sys.stderr)
        return EXIT_RUN_FAILED
    return EXIT_OK


def _trigger_automation(name: str, extra: str) -> int:
    """`holodesk trigger NAME`: in the running app when there is one, else here."""
    from app.automations import AutomationError, find_automation, load_automations, run_settings
    from app.instance import send

    if extra:
        print(f"holodesk: trigger {name} takes no task: the automation has its own "
              "(`holodesk automation edit NAME --task ...` changes it)", file=sys.stderr)
        return EXIT_USAGE
    try:
        automation = find_automation(load_automations(), name)
    except AutomationError as e:
        print(f"holodesk: {e}", file=sys.stderr)
        return EXIT_USAGE
    reply = send({"cmd": "automation", "name": automation.name})
    if reply is None:
        # Said on the terminal: the person expected the desktop app to take it.
        print(f"holodesk: the desktop app is not running; running {automation.name!r} here "
              "(Ctrl+C stops)", file=sys.stderr)
        return run_task(run_settings(load_settings(), automation), automation.task)
    if not reply.get("ok"):
        print(f"holodesk: {reply.get('error', 'the desktop app refused')}", file=sys.stderr)
        return EXIT_BUSY if reply.get("busy") else EXIT_RUN_FAILED
    print(f"automation {automation.name!r} started in the desktop app")
    return EXIT_OK


def _cmd_config_show(args: argparse.Namespace) -> int:
    from app.settings import describe_settings

    print(describe_settings(load_settings()))
    return EXIT_OK


def _cmd_config_set(args: argparse.Namespace) -> int:
    from app.settings import set_value

    set_value(args.key, args.value)
    print(f"{args.key} set")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
