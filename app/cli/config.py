"""The `holodesk config` command: show the settings and where they come from, change one.

The API key is never taken from the command line: argv is visible to every local user in
``ps`` and lands in the shell history. ``config set api_key`` (or ``-``) reads it without echo
on a terminal, or one line of stdin otherwise; an empty value forgets it.
"""

from __future__ import annotations

import argparse

from app.cli.output import EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    cfg = sub.add_parser("config", help="show or change settings")
    cfgsub = cfg.add_subparsers(dest="config_command", required=True)
    cshow = cfgsub.add_parser("show", help="print the settings and where they come from")
    cshow.set_defaults(func=_cmd_config_show)
    cset = cfgsub.add_parser(
        "set",
        help="change one setting (api_key goes to the keyring and is asked for, never "
        "given on the command line)",
    )
    cset.add_argument("key")
    cset.add_argument("value", nargs="?", help="the new value (api_key: leave it out)")
    cset.set_defaults(func=_cmd_config_set)


def _cmd_config_show(args: argparse.Namespace) -> int:
    from app.settings import describe_settings, load_settings

    print(describe_settings(load_settings()))
    return EXIT_OK


def _cmd_config_set(args: argparse.Namespace) -> int:
    from app.settings import API_KEY_NAMES, SettingsError, set_value
    from model.problem import Fix

    name = args.key.strip().lower().replace("-", "_")
    value: str | None = args.value
    if name in API_KEY_NAMES:
        if value not in (None, "-", ""):
            # Never repeat the value: it is probably a real key.
            raise SettingsError(
                "the API key is not taken from the command line: every user of this machine "
                "sees it in `ps`, and the shell keeps it in its history; nothing was stored",
                Fix("run `holodesk config set api_key` and type the key when asked (it is "
                    "not echoed), or pipe it in: `holodesk config set api_key < keyfile`. The "
                    "key you typed is in your shell history now: delete that line (bash: "
                    "`history -d N`) and, if others use this machine, replace the key."),
            )
        value = "-" if value is None else value
    elif value is None:
        raise SettingsError(
            f"config set {args.key} needs a value",
            Fix(f"run `holodesk config set {args.key} VALUE`; `holodesk config show` lists "
                "every setting and its value"),
        )
    set_value(args.key, value)
    print(f"{args.key} set")
    return EXIT_OK
