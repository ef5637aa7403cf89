"""The `holodesk trigger` command: run an automation, or talk to the running desktop app."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.cli.helptext import examples
from app.cli.output import EXIT_BUSY, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, error, fail, say

if TYPE_CHECKING:
    from app.automations import Automation
    from app.parameter_values import MissingValues


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    trig = sub.add_parser(
        "trigger", help="run an automation, or talk to the running desktop app",
        description="`trigger NAME` runs the automation NAME in the running desktop app, or "
                    "here when the app is not running; `trigger show|stop|run TASK` shows the "
                    "app's window, pulls its emergency stop, or starts a task in it.",
        epilog=examples(("holodesk trigger backup", "run the automation named backup"),
                        ("holodesk trigger show", "bring the desktop app's window forward"),
                        ("holodesk trigger stop", "the app's emergency stop"),
                        ('holodesk trigger run "open the Downloads folder"',
                         "a task, in the app")),
    )
    trig.add_argument("what", metavar="NAME|show|stop|run",
                      help="an automation's name, or show, stop, run")
    trig.add_argument("task", nargs="?", default="", help="with run: the task")
    trig.set_defaults(func=_cmd_trigger)


def _cmd_trigger(args: argparse.Namespace) -> int:
    from app.instance import send

    what = args.what.strip().lower()
    if what not in ("show", "stop", "run"):  # no automation may have these names
        return _trigger_automation(args.what, args.task)
    if what == "run" and not args.task.strip():
        return fail("trigger run needs a task", EXIT_USAGE)
    reply = send({"cmd": what, "task": args.task})
    if reply is None:
        return fail("the desktop app is not running; start it with `holodesk`")
    if not reply.get("ok"):
        return fail(str(reply.get("error", "the desktop app refused")), EXIT_REFUSED)
    return EXIT_OK


def _trigger_automation(name: str, extra: str) -> int:
    """`holodesk trigger NAME`: in the running app when there is one, else here."""
    from app.automations import AutomationError, find_automation, load_automations
    from app.cli.run import refused, run_task
    from app.instance import send
    from app.parameter_values import MissingValues, resolve
    from app.run_request import make_run_request
    from app.settings import load_settings

    if extra:
        return fail(f"trigger {name} takes no task: the automation has its own "
                    "(`holodesk automation edit NAME --task ...` changes it)", EXIT_USAGE)
    try:
        automation = find_automation(load_automations(), name)
    except AutomationError as e:
        return fail(e, EXIT_USAGE)
    reply = send({"cmd": "automation", "name": automation.name})
    if reply is None:
        # Said on the terminal: the person expected the desktop app to take it.
        from app.cli.approve import settle_before_run

        # The changes made outside holodesk are asked about first, and the task is filled
        # from the automation as the answer left it: a task the person refused must not be
        # the one run (tests/app/test_redteam13_refused_task_runs.py).
        settle_before_run(automation=automation.name)
        # A trigger is not interactive: saved defaults and the keyring, or it refuses.
        try:
            automation = find_automation(load_automations(), automation.name)
            filled = resolve(automation)
        except MissingValues as e:
            return fail(missing_for_trigger(e, automation), EXIT_USAGE)
        except AutomationError as e:
            return fail(e, EXIT_USAGE)
        error(f"the desktop app is not running; running {automation.name!r} here "
              "(Ctrl+C stops)")
        try:
            request = make_run_request(load_settings(), filled.task, automation=automation,
                                       parameters=filled)
        except AutomationError as e:  # changed outside holodesk: it does not run by itself
            return refused(e)
        return run_task(request)
    if not reply.get("ok"):
        return fail(str(reply.get("error", "the desktop app refused")),
                    EXIT_BUSY if reply.get("busy") else EXIT_REFUSED)
    say(f"automation {automation.name!r} started in the desktop app")
    return EXIT_OK


def missing_for_trigger(e: MissingValues, automation: Automation) -> str:
    """Why a trigger (which asks nothing) cannot run ``automation``, and the ways out."""
    name = f'"{automation.name}"' if " " in automation.name else automation.name
    plain = [n for n in e.names if n not in e.secret]
    how = [f"give {n} a default (`holodesk automation edit {name} --param {n}=VALUE`)"
           for n in plain]
    how += [f"store {n} in the keyring (`holodesk automation set-secret {name} {n}`)"
            for n in e.secret]
    return (f"{automation.name!r} needs a value for {', '.join(e.names)}, and a trigger uses "
            f"only saved defaults and the keyring: {'; or '.join(how)}; or run it with "
            f"`holodesk automation run {name}`, which asks")
