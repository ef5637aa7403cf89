"""The `holodesk config` command: show the settings and where they come from, read one, change
one, return one to its default, approve safety settings changed outside holodesk.

The API key is never taken from the command line: argv is visible to every local user in
``ps`` and lands in the shell history. ``config set api_key`` (or ``-``) reads it without echo
on a terminal, or one line of stdin otherwise; an empty value forgets it.
"""

from __future__ import annotations

import argparse

from app.cli.output import EXIT_OK, EXIT_USAGE, fail, say


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
    cget = cfgsub.add_parser("get", help="print one setting's value in effect (for scripts)")
    cget.add_argument("key")
    cget.set_defaults(func=_cmd_config_get)
    cunset = cfgsub.add_parser(
        "unset", help="return one setting to its default (api_key: forget the stored key)")
    cunset.add_argument("key")
    cunset.set_defaults(func=_cmd_config_unset)
    capprove = cfgsub.add_parser(
        "approve", help="show the safety settings changed outside holodesk and ask whether to "
        "apply them",
        description="A safety setting (confirm, never_touch, only_in, protected_paths, "
                    "stop_hotkey, tls_fingerprint, plain_http_ok, serve_model, an automation's "
                    "confirm mode and what it does) changed in the files, or set in the "
                    "environment, by anything but holodesk is not applied until you approve it "
                    "here; refusing writes the approved value back into the file.")
    capprove.set_defaults(func=_cmd_config_approve)


def _cmd_config_show(args: argparse.Namespace) -> int:
    from app.settings import describe_settings, load_settings

    say(describe_settings(load_settings()))
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
    say(f"{args.key} set")
    return EXIT_OK


def _cmd_config_approve(args: argparse.Namespace) -> int:
    from app.cli.approve import approve_command

    return approve_command()


def _cmd_config_get(args: argparse.Namespace) -> int:
    from app.secrets import lookup_api_key
    from app.settings import API_KEY_NAMES, load_settings, value_text
    from model.problem import Problem

    settings = load_settings()
    if args.key.strip().lower().replace("-", "_") in API_KEY_NAMES:
        # Printing it would put it in a terminal's scrollback and a script's logs.
        where = lookup_api_key(settings.endpoint).describe()
        return fail(Problem(f"the API key is never printed; for {settings.endpoint} it is "
                            f"{where}"), EXIT_USAGE)
    say(value_text(settings, args.key))  # an unknown key: SettingsError, EXIT_USAGE
    return EXIT_OK


def _cmd_config_unset(args: argparse.Namespace) -> int:
    from app.settings import (
        API_KEY_NAMES,
        env_var,
        load_settings,
        set_value,
        setting_name,
        unset_value,
        value_text,
    )

    if args.key.strip().lower().replace("-", "_") in API_KEY_NAMES:
        set_value("api_key", "")  # an empty key forgets the stored one
        say(f"api_key forgotten for {load_settings().endpoint}")
        return EXIT_OK
    name = setting_name(args.key)
    unset_value(name)
    effective = load_settings()
    say(f"{name} unset: back to its default ({value_text(effective, name) or 'none'})"
          if name not in effective.sources else
          f"{name} unset in the settings file, but {env_var(name)} in the environment "
          f"still sets it to {value_text(effective, name)}")
    return EXIT_OK
