"""The `holodesk config` command: show the settings and where they come from, change one."""

from __future__ import annotations

import argparse

from app.cli.output import EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    cfg = sub.add_parser("config", help="show or change settings")
    cfgsub = cfg.add_subparsers(dest="config_command", required=True)
    cshow = cfgsub.add_parser("show", help="print the settings and where they come from")
    cshow.set_defaults(func=_cmd_config_show)
    cset = cfgsub.add_parser("set", help="change one setting (api_key goes to the keyring)")
    cset.add_argument("key")
    cset.add_argument("value")
    cset.set_defaults(func=_cmd_config_set)


def _cmd_config_show(args: argparse.Namespace) -> int:
    from app.settings import describe_settings, load_settings

    print(describe_settings(load_settings()))
    return EXIT_OK


def _cmd_config_set(args: argparse.Namespace) -> int:
    from app.settings import set_value

    set_value(args.key, args.value)
    print(f"{args.key} set")
    return EXIT_OK
