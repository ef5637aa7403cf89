"""The `holodesk automation` command: list, add, edit, remove, schedule and run saved
automations.

``holodesk trigger NAME`` (app/cli/trigger.py) runs one in the desktop app when it is running; the
app picks up every change made here by itself (it watches the file).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from app.cli.helptext import examples
from app.cli.output import EXIT_OK, EXIT_USAGE, error, fail, say

if TYPE_CHECKING:
    from app.approval import PendingChange
    from app.automations import Automation
    from app.parameter_values import Ask
    from app.parameters import Parameter
    from app.share import ExportPlan

_CONFIRM = ["always", "risky", "never"]
_MONITOR_HELP = "monitor index (1 = first, 0 = all), 'mouse', 'primary', or a region WxH+X+Y"
_HOTKEY_HELP = ("a global hotkey: two of ctrl, alt and super with a key (ctrl+alt+1), or an "
                "F-key or pause (f9, ctrl+f9); works while the desktop app runs")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    p = sub.add_parser(
        "automation", aliases=["automations"], help="saved tasks, run by name or hotkey",
        description="Saved tasks with their confirmation mode, monitor and hotkey. Run one "
                    "with `holodesk trigger NAME` (in the desktop app when it runs) or "
                    "`holodesk automation run NAME` (here).",
        epilog=examples(
            ('holodesk automation add backup --task "copy ~/notes to the USB stick" '
             "--hotkey ctrl+alt+1", ""),
            ("holodesk automation list", ""),
            ("holodesk automation run backup", "here, in this terminal"),
            ("holodesk automation schedule backup daily 18:00", "")),
    )
    asub = p.add_subparsers(dest="automation_command", required=True)

    ls = asub.add_parser(
        "list", help="list the automations",
        description="A STEPS column marks the automations with saved steps (\"saved\"): their "
                    "runs replay the steps of their last successful run without the model "
                    "first; `holodesk automation forget NAME` drops them.",
        epilog=examples(("holodesk automation list", "")))
    ls.set_defaults(func=_guarded(_cmd_list))

    add = asub.add_parser(
        "add", help="save a new automation",
        description="Save a task under a name, with its confirmation mode, monitor and global "
                    "hotkey. A {NAME} in the task is a parameter, filled in at each run "
                    "(--param, --secret-param). The desktop app picks it up by itself.",
        epilog=examples(
            ('holodesk automation add backup --task "copy ~/notes to the USB stick"', ""),
            ('holodesk automation add mail --task "write to {who}" --param who=Ada '
             "--hotkey ctrl+alt+2", "with a parameter and a hotkey"),
            ('holodesk automation add tidy --task "empty the trash" --confirm always', "")))
    add.add_argument("name", help="its name: letters, digits, spaces, '.', '_', '-'")
    add.add_argument("--task", required=True, help="what to do, in plain words")
    add.add_argument("--confirm", choices=_CONFIRM,
                     help="which actions to confirm first (default: the confirm setting)")
    add.add_argument("--monitor", help=f"{_MONITOR_HELP} (default: the monitor setting)")
    add.add_argument("--hotkey", help=_HOTKEY_HELP)
    _param_arguments(add)
    add.set_defaults(func=_guarded(_cmd_add))

    edit = asub.add_parser(
        "edit", help="change an automation (only what is given)",
        description="Change what is given of an automation: its name, task, confirmation mode, "
                    "monitor, hotkey or parameters; the rest stays as it is.",
        epilog=examples(("holodesk automation edit backup --confirm always", ""),
                        ("holodesk automation edit backup --no-hotkey", ""),
                        ("holodesk automation edit backup --name nightly-backup", "rename it")))
    edit.add_argument("name", help="the automation to change")
    edit.add_argument("--name", dest="new_name", help="rename it")
    edit.add_argument("--task", help="what to do, in plain words")
    edit.add_argument("--confirm", choices=_CONFIRM, help="which actions to confirm first")
    edit.add_argument("--monitor", help=_MONITOR_HELP)
    keys = edit.add_mutually_exclusive_group()
    keys.add_argument("--hotkey", help=_HOTKEY_HELP)
    keys.add_argument("--no-hotkey", action="store_true", help="remove its hotkey")
    _param_arguments(edit)
    edit.add_argument("--drop-param", action="append", default=[], metavar="NAME",
                      help="remove a parameter's declaration (repeatable)")
    edit.set_defaults(func=_guarded(_cmd_edit))

    secret = asub.add_parser(
        "set-secret", help="store the value of a secret parameter in the keyring",
        description="Store the value of a secret parameter in the system keyring, never in the "
                    "automations file. The value is asked without echo, or read from stdin "
                    "(one line) when stdin is not a terminal; it is never an argument.",
        epilog=examples(("holodesk automation set-secret login password", "asked for, without "
                         "echo")))
    secret.add_argument("name", help="the automation")
    secret.add_argument("param", help="its secret parameter")
    secret.set_defaults(func=_guarded(_cmd_set_secret))

    rm = asub.add_parser(
        "remove", aliases=["rm"], help="delete an automation",
        description="Delete an automation, with its schedule, hotkey, saved steps and stored "
                    "secrets.",
        epilog=examples(("holodesk automation remove backup", "")))
    rm.add_argument("name")
    rm.set_defaults(func=_guarded(_cmd_remove))

    sched = asub.add_parser(
        "schedule", help="run an automation by itself: once, daily, weekly or at login",
        description="Scheduled runs happen while the desktop app runs, through it (its "
                    "confirmations, stop and log); a run missed while it was not running or the "
                    "computer slept is reported, not run late. Without a schedule: show it.",
        epilog=examples(("holodesk automation schedule backup daily 09:00", ""),
                        ("holodesk automation schedule report weekly mon,thu 17:30", ""),
                        ("holodesk automation schedule backup at login", ""),
                        ("holodesk automation schedule backup", "show its schedule"),
                        ("holodesk automation schedule backup --clear", "")),
    )
    sched.add_argument("name", help="the automation")
    sched.add_argument("when", nargs="*", metavar="WHEN",
                       help="daily 09:00 | weekly mon,thu 17:30 | once 2026-12-24 09:00 | "
                            "at login (times are local)")
    kinds = sched.add_mutually_exclusive_group()
    kinds.add_argument("--daily", metavar="HH:MM", help="every day at this time")
    kinds.add_argument("--weekly", nargs=2, metavar=("DAYS", "HH:MM"),
                       help="on these days (mon,thu or weekdays) at this time")
    kinds.add_argument("--at", metavar="YYYY-MM-DDTHH:MM", help="once, at this date and time")
    kinds.add_argument("--at-login", action="store_true",
                       help="when holodesk starts at login (needs Start at login)")
    kinds.add_argument("--clear", action="store_true", help="remove its schedule")
    sched.set_defaults(func=_guarded(_cmd_schedule))

    run = asub.add_parser(
        "run", help="run an automation here, in this terminal",
        description="Run an automation in this terminal, as `holodesk run` runs a task: its "
                    "confirmations here, Ctrl+C or the stop hotkey to stop. When the steps of "
                    "its last successful run are saved, they are replayed first (the model is "
                    "asked where they no longer fit).",
        epilog=examples(("holodesk automation run backup", ""),
                        ("holodesk automation run mail --set who=Grace", "a parameter's value"),
                        ("holodesk automation run backup --confirm always", "to watch each "
                         "step")))
    run.add_argument("name")
    run.add_argument("--confirm", choices=_CONFIRM,
                     help="override its confirmation mode for this run (e.g. always, to watch)")
    run.add_argument("--dry-run", action="store_true",
                     help="ask the model and log the steps, but click and type nothing")
    run.add_argument("--set", dest="values", action="append", default=[],
                     metavar="NAME=VALUE",
                     help="a parameter's value for this run (repeatable; never a secret's)")
    run.add_argument("--ask", action="store_true",
                     help="ask for every parameter not given with --set, defaults offered")
    run.add_argument("--no-replay", action="store_true",
                     help="ask the model at every step, even when the automation's steps of "
                          "its last successful run are saved")
    run.add_argument("-v", "--verbose", action="store_true", help="print every event")
    run.set_defaults(func=_guarded(_cmd_run))

    forget = asub.add_parser(
        "forget", help="drop the saved steps of an automation's last successful run",
        description="The next run asks the model at every step again (and saves its steps "
                    "when it succeeds).",
        epilog=examples(("holodesk automation forget backup", "")))
    forget.add_argument("name")
    forget.set_defaults(func=_guarded(_cmd_forget))

    export = asub.add_parser(
        "export", help="write an automation to one file, to share it",
        description="Write the automation, its parameters (a secret one without its value), its "
                    "schedule and, if you say so, the saved steps of its last successful run to "
                    "one file. The saved steps hold crops of your screen, which can show "
                    "personal data: look at them first (--show-crops DIR).",
        epilog=examples(("holodesk automation export backup --show-crops /tmp/crops",
                         "look at the crops first"),
                        ("holodesk automation export backup --with-steps", ""),
                        ("holodesk automation export backup --without-steps -o backup.zip", "")))
    export.add_argument("name")
    export.add_argument("--output", "-o", metavar="PATH",
                        help="the file to write (default: NAME.holodesk.zip here)")
    steps = export.add_mutually_exclusive_group()
    steps.add_argument("--with-steps", action="store_true", default=None,
                       help="include the saved steps and their screen crops without asking")
    steps.add_argument("--without-steps", dest="with_steps", action="store_false",
                       help="leave the saved steps out without asking")
    steps.add_argument("--show-crops", metavar="DIR",
                       help="only write the screen crops into DIR to look at them; export "
                            "nothing")
    export.set_defaults(func=_guarded(_cmd_export))

    imp = asub.add_parser(
        "import", help="add an automation from a file written by export",
        description="Check the file (nothing unexpected in it, the automation valid here, the "
                    "saved steps readable) and add the automation. Its schedule is kept only "
                    "with --keep-schedule; a confirmation mode of never becomes risky.",
        epilog=examples(("holodesk automation import backup.holodesk.zip", ""),
                        ("holodesk automation import backup.holodesk.zip --as backup2", "")))
    imp.add_argument("file")
    imp.add_argument("--as", dest="as_name", metavar="NEWNAME",
                     help="import it under another name")
    imp.add_argument("--replace", action="store_true",
                     help="replace the automation of the same name (its stored secrets are "
                          "deleted)")
    imp.add_argument("--keep-schedule", action="store_true",
                     help="keep the schedule the file gives it")
    imp.add_argument("--no-hotkey", action="store_true",
                     help="leave out the hotkey the file gives it (e.g. one of yours has it)")
    imp.set_defaults(func=_guarded(_cmd_import))


def _param_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--param", action="append", default=[], metavar="NAME[=DEFAULT]",
                   help="declare a {NAME} placeholder of the task, with an optional default "
                        "(repeatable)")
    p.add_argument("--secret-param", action="append", default=[], metavar="NAME",
                   help="declare a secret {NAME}: its value is kept in the keyring (store it "
                        "with `holodesk automation set-secret`) and masked in the logs")


def _declarations(args: argparse.Namespace) -> dict[str, dict[str, object]]:
    """The parameters declared with --param and --secret-param."""
    out: dict[str, dict[str, object]] = {}
    for text in args.param:
        name, sep, default = text.partition("=")
        out[name.strip()] = {"default": default} if sep and default else {}
    for name in args.secret_param:
        if "=" in name:
            from app.automations import AutomationError

            raise AutomationError(
                f"--secret-param {name.split('=')[0]} takes no value: a secret is never given "
                "on the command line; store it with `holodesk automation set-secret`")
        out[name.strip()] = {"secret": True}
    return out


def _guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``command`` with an invalid automation or file reported as a usage error."""

    def run(args: argparse.Namespace) -> int:
        from app.automations import AutomationError
        from app.parameters import ParameterError
        from app.share import ShareError

        try:
            return command(args)
        except (AutomationError, ParameterError, ShareError) as e:
            return fail(e, EXIT_USAGE)

    return run


def _cmd_list(args: argparse.Namespace) -> int:
    from app.automations import automations_path, load_automations, stop_conflicts
    from app.schedule import local_zone
    from app.scheduler import next_runs
    from app.settings import load_settings
    from app.trajectory import has_trajectory
    from app.visible import visible_line

    items = load_automations()
    if not items:
        say(f"no automations yet ({automations_path()}); add one with\n"
              "  holodesk automation add NAME --task \"what to do\" --hotkey ctrl+alt+1")
        return EXIT_OK
    from app.safety_review import review
    from app.settings import SettingsError

    # A mode changed outside holodesk and not approved: the one that runs is shown.
    try:
        changes = review(every_automation=True).changes
    except SettingsError:
        changes = ()  # the file's problem is reported where the settings are read below
    waiting = {c.automation.casefold(): c for c in changes if c.automation is not None}
    header = ["NAME", "HOTKEY", "CONFIRM", "MONITOR"]
    rows = [[visible_line(a.name), a.hotkey_label() or "-", _mode_cell(a, waiting), a.monitor]
            for a in items]
    if any(a.schedule for a in items):  # the columns only when something is scheduled
        zone = local_zone()
        upcoming = next_runs(items, datetime.now(zone), zone)
        header += ["SCHEDULE", "NEXT RUN"]
        for row, a in zip(rows, items, strict=True):
            row += [a.schedule or "-", upcoming.get(a.key, "-")]
    saved = [has_trajectory(a.key) for a in items]
    if any(saved):  # "saved": its runs replay those steps without the model first
        header.append("STEPS")
        for row, has in zip(rows, saved, strict=True):
            row.append("saved" if has else "-")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row, task in ((header, "TASK"), *((r, a.task) for r, a in zip(rows, items, strict=True))):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        say("  ".join([*cells, visible_line(task, 60)]).rstrip())
    if waiting:
        say("* changed outside holodesk, not applied until you approve it (holodesk config "
            "approve):")
        for change in waiting.values():
            say(f"  {visible_line(change.describe())}")
    for problem in stop_conflicts(items, load_settings().stop_hotkey):
        error(f"warning: {problem}")
    return EXIT_OK


def _mode_cell(automation: Automation, waiting: dict[str, PendingChange]) -> str:
    """The CONFIRM column: the mode a run gets; ``held*`` for one that does not run until the
    person approves what it does now."""
    from app.approval import AUTOMATION_CHANGE

    change = waiting.get(automation.key)
    if change is None:
        return str(automation.confirm)
    return "held*" if change.key == AUTOMATION_CHANGE else f"{change.approved}*"


def _cmd_add(args: argparse.Namespace) -> int:
    from app.automations import Automation, add_automation
    from app.settings import load_settings

    settings = load_settings()
    automation = Automation.make(
        "",
        name=args.name,
        task=args.task,
        confirm=args.confirm or settings.confirm,
        monitor=args.monitor if args.monitor is not None else settings.monitor,
        hotkey=args.hotkey,
        parameters=_declarations(args),
    )
    add_automation(automation, stop_hotkey=settings.stop_hotkey)
    key = f" on {automation.hotkey_label()}" if automation.hotkey else ""
    say(f"automation {automation.name!r} saved{key}; run it with "
          f"`holodesk trigger {_quoted(automation.name)}`")
    _tell_secrets(automation)
    return EXIT_OK


def _tell_secrets(automation: Automation) -> None:
    for name in automation.secret_parameters():
        say(f"store the value of {name} with "
              f"`holodesk automation set-secret {_quoted(automation.name)} {name}`")


def _cmd_edit(args: argparse.Namespace) -> int:
    from app.automations import find_automation, load_automations, replace_automation
    from app.settings import load_settings

    old = find_automation(load_automations(), args.name)
    changes: dict[str, object] = {}
    for field, value in (("name", args.new_name), ("task", args.task),
                         ("confirm", args.confirm), ("monitor", args.monitor),
                         ("hotkey", args.hotkey)):
        if value is not None:
            changes[field] = value
    if args.no_hotkey:
        changes["hotkey"] = None
    declared = _declarations(args)
    if declared or args.drop_param or args.task is not None:
        params = {k: v.model_dump(exclude_defaults=True) for k, v in old.parameters.items()}
        for name in args.drop_param:
            if params.pop(name.strip(), None) is None:
                return fail(f"{old.name!r} has no parameter {name.strip()!r}", EXIT_USAGE)
        params.update(declared)
        if args.task is not None:
            # A placeholder the new task no longer has is no longer a parameter.
            from app.parameters import placeholders

            used = placeholders(args.task)
            dropped = [n for n in params if n not in used and n not in declared]
            for name in dropped:
                del params[name]
                say(f"the task no longer uses {{{name}}}: parameter {name} removed")
        changes["parameters"] = params
    if not changes:
        return fail("nothing to change; give --name, --task, --confirm, --monitor, "
                    "--hotkey, --no-hotkey, --param, --secret-param or --drop-param", EXIT_USAGE)
    new = old.changed(**changes)
    # --confirm is the person's choice for the automation as edited; without it, the mode
    # approved before carries over (an edit of something else approves nothing).
    replace_automation(old.name, new, stop_hotkey=load_settings().stop_hotkey,
                       confirm_chosen=args.confirm is not None)
    from app.parameter_values import rename_secrets
    from app.trajectory import follow_edit

    rename_secrets(old, new)
    kept = follow_edit(old, new)
    say(f"automation {new.name!r} saved" + (f"; {kept}" if kept else ""))
    _tell_secrets(new)
    return EXIT_OK


def _cmd_remove(args: argparse.Namespace) -> int:
    from app.automations import find_automation, load_automations, remove_automation
    from app.parameter_values import forget_secrets
    from app.trajectory import forget_trajectory

    old = find_automation(load_automations(), args.name)
    remove_automation(old.name)
    forget_secrets(old)
    forget_trajectory(old.key)  # a new automation of that name starts afresh
    say(f"automation {old.name!r} removed")
    return EXIT_OK


def _schedule_text(args: argparse.Namespace) -> str | None:
    """The schedule the arguments ask for ("" for --clear, None when they ask for none)."""
    given = [bool(args.when), args.daily is not None, args.weekly is not None,
             args.at is not None, args.at_login, args.clear]
    if sum(given) > 1:
        raise ValueError("give the schedule once: as words (daily 09:00) or as one option")
    if args.clear:
        return ""
    if args.daily is not None:
        return f"daily at {args.daily}"
    if args.weekly is not None:
        return f"weekly on {args.weekly[0]} at {args.weekly[1]}"
    if args.at is not None:
        return f"once at {args.at}"
    if args.at_login:
        return "at login"
    return " ".join(args.when) if args.when else None


def _cmd_schedule(args: argparse.Namespace) -> int:
    from app.automations import find_automation, load_automations
    from app.autostart import default_autostart
    from app.instance import send
    from app.schedule import local_zone
    from app.scheduler import login_needs, next_runs, set_schedule

    zone = local_zone()
    now = datetime.now(zone)
    try:
        text = _schedule_text(args)
    except ValueError as e:
        return fail(str(e), EXIT_USAGE)
    if text is None:
        automation = find_automation(load_automations(), args.name)
    else:
        automation = set_schedule(args.name, text or None, now=now, tz=zone)
    if automation.schedule is None:
        say(f"automation {automation.name!r} has no schedule" +
              (" now" if text is not None else "; give one, e.g. daily 09:00"))
        return EXIT_OK
    upcoming = next_runs([automation], now, zone)[automation.key]
    saved = "runs" if text is not None else "is scheduled:"
    say(f"automation {automation.name!r} {saved} {automation.schedule}; next run: {upcoming}")
    say("scheduled runs happen while the desktop app runs; one missed while it was not "
          "running or the computer slept is reported, not run late")
    if text is not None and send({"cmd": "ping"}, timeout=1.0) is None:
        error("note: the desktop app is not running now; start it (holodesk) for the schedule "
              "to run")
    when = automation.when
    if when is not None and not when.timed:
        need = login_needs(default_autostart())
        if need is not None:
            error(f"warning: {need}")
    return EXIT_OK


def _cmd_set_secret(args: argparse.Namespace) -> int:
    from app.automations import find_automation, load_automations
    from app.parameter_values import store_secret

    automation = find_automation(load_automations(), args.name)
    param = args.param.strip()
    declared = automation.parameters.get(param)
    if declared is None or not declared.secret:
        store_secret(automation, param, "")  # says which secret parameters there are
    value = _read_hidden(f"{param} (input hidden): ")
    if value is None:
        return fail(f"no value read for {param}: type it when asked, or give it on stdin "
                    f"(`holodesk automation set-secret {_quoted(automation.name)} {param} "
                    "< file`)", EXIT_USAGE)
    backend = store_secret(automation, param, value)
    say(f"secret parameter {param} of {automation.name!r} stored in the keyring ({backend})")
    return EXIT_OK


def _read_hidden(prompt: str) -> str | None:
    """A line without echo on a terminal, else stdin's first line; None when there is none."""
    import getpass
    import sys

    if sys.stdin is None or sys.stdin.closed:
        return None
    if sys.stdin.isatty():
        try:
            return getpass.getpass(prompt)
        except EOFError:
            return None
    line = sys.stdin.readline()
    return line.rstrip("\r\n") or None


def _cmd_run(args: argparse.Namespace) -> int:
    from app.admission import Refused, RunSource
    from app.automations import AutomationError, load_automations
    from app.cli.run import refused, run_task
    from app.controller import Missing, fill, find, missing_refused
    from app.parameter_values import parse_assignment
    from app.run_request import AutomationMode, make_run_request
    from app.settings import RunValues, load_settings
    from control.policy import ConfirmMode

    # The look-up and the values as the desktop app's (app/controller.py); the run itself
    # holds the desktop lock (app/cli/run.py), its admission here.
    automation = find(load_automations(), args.name)
    if isinstance(automation, Refused):
        return fail(automation.text, EXIT_USAGE)
    given = dict(parse_assignment(text) for text in args.values)
    from app.cli.approve import settle_before_run

    # The changes made outside holodesk are asked about first, and the task is filled from
    # the automation as the answer left it: a task the person refused must not be the one
    # run (tests/app/test_redteam13_refused_task_runs.py).
    settle_before_run(automation=automation.name)
    automation = find(load_automations(), automation.name)  # as the answer left it
    if isinstance(automation, Refused):  # one added outside holodesk is taken out on No
        return refused(automation.text)
    ask = _terminal_ask()
    filled = fill(automation, given, ask=ask, ask_all=args.ask)
    if isinstance(filled, Refused):
        return fail(filled.text, EXIT_USAGE)
    if isinstance(filled, Missing):
        if ask is not None:
            return fail(f"no value given for {', '.join(filled.names)}: a run never fills a "
                        "placeholder with nothing; nothing was run", EXIT_USAGE)
        return fail(missing_refused(automation, filled, RunSource.COMMAND_LINE).text,
                    EXIT_USAGE)
    # --confirm is the person's own choice for this run, over the automation's.
    choices = RunValues(confirm=ConfirmMode(args.confirm) if args.confirm else None)
    try:
        request = make_run_request(
            load_settings(), filled.task, choices, automation=automation, parameters=filled,
            mode=AutomationMode.WITHOUT_REPLAY if args.no_replay else AutomationMode.RUN,
            dry_run=args.dry_run)
    except AutomationError as e:  # changed outside holodesk and not approved, or nowhere to act
        return refused(e)
    return run_task(request, verbose=args.verbose)


def _terminal_ask() -> Ask | None:
    """Asks each missing value on the terminal (a secret without echo); None without one."""
    import sys

    if sys.stdin is None or sys.stdin.closed or not sys.stdin.isatty():
        return None

    def ask(name: str, declared: Parameter) -> str:
        about = f" ({declared.description})" if declared.description else ""
        if declared.secret:
            return _read_hidden(f"{name}{about} (input hidden): ") or ""
        default = f" [{declared.default}]" if declared.default else ""
        try:
            answer = input(f"{name}{about}{default}: ")
        except EOFError:
            return ""
        return answer or (declared.default or "")

    return ask


def _cmd_forget(args: argparse.Namespace) -> int:
    from app.automations import find_automation, load_automations
    from app.trajectory import forget_trajectory

    automation = find_automation(load_automations(), args.name)
    if forget_trajectory(automation.key):
        say(f"the saved steps of {automation.name!r} are forgotten; its next run asks the "
              "model at every step")
    else:
        say(f"{automation.name!r} has no saved steps")
    return EXIT_OK


def _cmd_export(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from app.share import default_output, export_automation, plan_export, write_pictures

    plan = plan_export(args.name)
    if args.show_crops:
        if not plan.crops:
            say(f"{plan.automation.name!r} has no saved screen crops")
            return EXIT_OK
        written = write_pictures(plan, Path(args.show_crops))
        say(f"{len(written)} screen crop(s) of {plan.automation.name!r} written to "
              f"{args.show_crops}; look at them, then export with --with-steps or "
              "--without-steps")
        return EXIT_OK
    dest = Path(args.output) if args.output else default_output(plan.automation)
    say(f"exporting to {dest}:")
    for line in plan.summary():
        say(f"  {line}")
    with_steps = bool(args.with_steps)
    if plan.trajectory is not None and args.with_steps is None:
        if sys.stdin is None or sys.stdin.closed or not sys.stdin.isatty():
            return fail(
                f"the saved steps of {plan.automation.name!r} hold {len(plan.crops)} crops of "
                "your screen, which can show personal data, and stdin is not a terminal to ask: "
                "look at them with --show-crops DIR, then give --with-steps or "
                "--without-steps; nothing was written", EXIT_USAGE)
        answer = _ask_steps(plan)
        if answer is None:
            return fail("nothing was written", EXIT_USAGE)
        with_steps = answer
    export_automation(plan, dest, with_steps=with_steps)
    what = "with its saved steps" if with_steps and plan.trajectory else "without saved steps"
    say(f"automation {plan.automation.name!r} exported {what} to {dest}; import it with "
          f"`holodesk automation import {dest.name}`")
    return EXIT_OK


def _ask_steps(plan: ExportPlan) -> bool | None:
    """Asks whether to include the saved steps, offering to write the crops out first."""
    import tempfile
    from pathlib import Path

    from app.share import write_pictures

    while True:
        try:
            answer = input(f"include the saved steps ({len(plan.crops)} screen crops, which can "
                           "show personal data)? [y]es, [n]o, [s]how them first, [q]uit: ")
        except EOFError:
            return None
        choice = answer.strip().lower()[:1]
        if choice == "y":
            return True
        if choice == "n":
            return False
        if choice == "q":
            return None
        if choice == "s":
            folder = Path(tempfile.mkdtemp(prefix="holodesk-crops-"))
            for path in write_pictures(plan, folder):
                say(f"  {path} ({path.stat().st_size // 1024 + 1} KB)")
            say(f"the crops are in {folder}; open them, then answer")


def _cmd_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from app.settings import load_settings
    from app.share import ExportPlan, NameTaken, ShareError, import_automation, read_share

    shared = read_share(Path(args.file))
    try:
        done = import_automation(shared, as_name=args.as_name, replace=args.replace,
                                 keep_schedule=args.keep_schedule,
                                 drop_hotkey=args.no_hotkey,
                                 stop_hotkey=load_settings().stop_hotkey)
    except NameTaken as e:
        return fail(f"{e}: import it under another name (--as NEWNAME) or replace yours "
                    "(--replace)", EXIT_USAGE)
    except ShareError as e:
        if "hotkey" in str(e) and shared.automation.hotkey and not args.no_hotkey:
            return fail(f"{e} (or import it without its hotkey: --no-hotkey)", EXIT_USAGE)
        raise
    steps = f" with {done.steps} saved steps" if done.steps else " without saved steps"
    say(f"automation {done.automation.name!r} imported{steps}:")
    for line in ExportPlan(done.automation, shared.trajectory, shared.pictures).summary():
        say(f"  {line}")
    for note in done.notes:
        say(f"note: {note}")
    if shared.automation.schedule and done.automation.schedule is None:
        say(f"to schedule it: `holodesk automation schedule {_quoted(done.automation.name)} "
              f"{shared.automation.schedule}`")
    if done.steps:
        say("its saved steps replay like your own: every action is checked and confirmed as "
              "the model's would be, and only where its screen crops are found")
    _tell_secrets(done.automation)
    return EXIT_OK


def _quoted(name: str) -> str:
    return f'"{name}"' if " " in name else name
