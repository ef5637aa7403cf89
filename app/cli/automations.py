"""The `holodesk automation` command: list, add, edit, remove and run saved automations.

``holodesk trigger NAME`` (app/cli/trigger.py) runs one in the desktop app when it is running; the
app picks up every change made here by itself (it watches the file).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from app.cli.output import EXIT_OK, EXIT_USAGE, error, fail

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
    )
    asub = p.add_subparsers(dest="automation_command", required=True)

    ls = asub.add_parser("list", help="list the automations")
    ls.set_defaults(func=_guarded(_cmd_list))

    add = asub.add_parser("add", help="save a new automation")
    add.add_argument("name", help="its name: letters, digits, spaces, '.', '_', '-'")
    add.add_argument("--task", required=True, help="what to do, in plain words")
    add.add_argument("--confirm", choices=_CONFIRM,
                     help="which actions to confirm first (default: the confirm setting)")
    add.add_argument("--monitor", help=f"{_MONITOR_HELP} (default: the monitor setting)")
    add.add_argument("--hotkey", help=_HOTKEY_HELP)
    add.set_defaults(func=_guarded(_cmd_add))

    edit = asub.add_parser("edit", help="change an automation (only what is given)")
    edit.add_argument("name", help="the automation to change")
    edit.add_argument("--name", dest="new_name", help="rename it")
    edit.add_argument("--task", help="what to do, in plain words")
    edit.add_argument("--confirm", choices=_CONFIRM, help="which actions to confirm first")
    edit.add_argument("--monitor", help=_MONITOR_HELP)
    keys = edit.add_mutually_exclusive_group()
    keys.add_argument("--hotkey", help=_HOTKEY_HELP)
    keys.add_argument("--no-hotkey", action="store_true", help="remove its hotkey")
    edit.set_defaults(func=_guarded(_cmd_edit))

    rm = asub.add_parser("remove", aliases=["rm"], help="delete an automation")
    rm.add_argument("name")
    rm.set_defaults(func=_guarded(_cmd_remove))

    run = asub.add_parser("run", help="run an automation here, in this terminal")
    run.add_argument("name")
    run.add_argument("--confirm", choices=_CONFIRM,
                     help="override its confirmation mode for this run (e.g. always, to watch)")
    run.add_argument("--dry-run", action="store_true",
                     help="ask the model and log the steps, but click and type nothing")
    run.add_argument("--no-replay", action="store_true",
                     help="ask the model at every step, even when the automation's steps of "
                          "its last successful run are saved")
    run.add_argument("-v", "--verbose", action="store_true", help="print every event")
    run.set_defaults(func=_guarded(_cmd_run))

    forget = asub.add_parser(
        "forget", help="drop the saved steps of an automation's last successful run",
        description="The next run asks the model at every step again (and saves its steps "
                    "when it succeeds).")
    forget.add_argument("name")
    forget.set_defaults(func=_guarded(_cmd_forget))


def _guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``command`` with an invalid automation or file reported as a usage error."""

    def run(args: argparse.Namespace) -> int:
        from app.automations import AutomationError

        try:
            return command(args)
        except AutomationError as e:
            return fail(e, EXIT_USAGE)

    return run


def _cmd_list(args: argparse.Namespace) -> int:
    from app.automations import automations_path, load_automations, stop_conflicts
    from app.settings import load_settings

    items = load_automations()
    if not items:
        print(f"no automations yet ({automations_path()}); add one with\n"
              "  holodesk automation add NAME --task \"what to do\" --hotkey ctrl+alt+1")
        return EXIT_OK
    rows = [(a.name, a.hotkey_label() or "-", str(a.confirm), a.monitor, a.task) for a in items]
    widths = [max(len(r[i]) for r in [("NAME", "HOTKEY", "CONFIRM", "MONITOR", ""), *rows])
              for i in range(4)]
    header = ("NAME", "HOTKEY", "CONFIRM", "MONITOR", "TASK")
    for row in (header, *rows):
        cells = [row[i].ljust(widths[i]) for i in range(4)]
        task = row[4] if len(row[4]) <= 60 else row[4][:57] + "..."
        print("  ".join([*cells, task.replace("\n", " ")]).rstrip())
    for problem in stop_conflicts(items, load_settings().stop_hotkey):
        error(f"warning: {problem}")
    return EXIT_OK


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
    )
    add_automation(automation, stop_hotkey=settings.stop_hotkey)
    key = f" on {automation.hotkey_label()}" if automation.hotkey else ""
    print(f"automation {automation.name!r} saved{key}; run it with "
          f"`holodesk trigger {_quoted(automation.name)}`")
    return EXIT_OK


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
    if not changes:
        return fail("nothing to change; give --name, --task, --confirm, --monitor, "
                    "--hotkey or --no-hotkey", EXIT_USAGE)
    new = old.changed(**changes)
    replace_automation(old.name, new, stop_hotkey=load_settings().stop_hotkey)
    print(f"automation {new.name!r} saved")
    return EXIT_OK


def _cmd_remove(args: argparse.Namespace) -> int:
    from app.automations import find_automation, load_automations, remove_automation
    from app.trajectory import forget_trajectory

    old = find_automation(load_automations(), args.name)
    remove_automation(old.name)
    forget_trajectory(old.key)  # a new automation of that name starts afresh
    print(f"automation {old.name!r} removed")
    return EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    from app.automations import find_automation, load_automations, run_settings
    from app.cli.run import run_task
    from app.settings import load_settings

    automation = find_automation(load_automations(), args.name)
    settings = run_settings(load_settings(), automation)
    if args.confirm:
        settings = settings.with_overrides({"confirm": args.confirm})
    return run_task(settings, automation.task, dry_run=args.dry_run, verbose=args.verbose,
                    automation=automation, replay=not args.no_replay)


def _cmd_forget(args: argparse.Namespace) -> int:
    from app.automations import find_automation, load_automations
    from app.trajectory import forget_trajectory

    automation = find_automation(load_automations(), args.name)
    if forget_trajectory(automation.key):
        print(f"the saved steps of {automation.name!r} are forgotten; its next run asks the "
              "model at every step")
    else:
        print(f"{automation.name!r} has no saved steps")
    return EXIT_OK


def _quoted(name: str) -> str:
    return f'"{name}"' if " " in name else name
