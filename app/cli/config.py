"""The `holodesk config` command: show the settings and where they come from, read one, change
one, return one to its default, approve safety settings changed outside holodesk.

The API key is never taken from the command line: argv is visible to every local user in
``ps`` and lands in the shell history. ``config set api_key`` (or ``-``) reads it without echo
on a terminal, or one line of stdin otherwise; an empty value forgets it.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from typing import Any

from app.cli.helptext import entries, examples, later_help
from app.cli.output import EXIT_OK, EXIT_USAGE, fail, say


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    from app.approval import SAFETY_KEYS

    safety = ", ".join(SAFETY_KEYS)
    cfg = sub.add_parser(
        "config", help="show or change settings",
        description="holodesk's settings live in settings.toml in its config folder "
        "(~/.config/holodesk on Linux); `holodesk config show` prints where. Each one can also "
        "be set for one process with HOLODESK_<KEY> in the environment (HOLODESK_MAX_STEPS=50). "
        f"A safety setting ({safety}) changed in the file or the environment by anything but "
        "holodesk applies only once you approve it (`holodesk config approve`). The API key is "
        "not a setting: "
        "`holodesk config set api_key` keeps it in the system keyring.",
        epilog=examples(("holodesk config show", "every setting, its value and where it comes "
                         "from"),
                        ("holodesk config set confirm always", "ask before every action"),
                        ("holodesk config get max_steps", "the value in effect, for scripts"),
                        ("holodesk config unset confirm", "back to the default")))
    later_help(cfg, settings_help)
    cfgsub = cfg.add_subparsers(dest="config_command", required=True)
    cshow = cfgsub.add_parser(
        "show", help="print the settings and where they come from",
        description="Print every setting with its value in effect and where that value comes "
        "from (the default, settings.toml, the environment), the safety settings changed "
        "outside holodesk that wait for your approval, where the API key comes from (never the "
        "key), and where the settings file, the action log and the log file are.",
        epilog=examples(("holodesk config show", "")))
    cshow.set_defaults(func=_cmd_config_show)
    cset = cfgsub.add_parser(
        "set",
        help="change one setting (api_key goes to the keyring and is asked for, never "
        "given on the command line)",
        description="Check VALUE and save it for KEY in settings.toml; a value out of range is "
        "refused with the reason and nothing is saved. An empty value clears a setting that "
        "may be empty. `holodesk config set api_key` asks "
        "for the API key without echo (or reads one line of stdin) and stores it in the system "
        "keyring for the endpoint in use; it is never taken from the command line.",
        epilog=examples(("holodesk config set confirm always", "ask before every action"),
                        ("holodesk config set max_steps 50", ""),
                        ("holodesk config set only_in firefox,libreoffice-calc",
                         "act in these applications only"),
                        ("holodesk config set endpoint http://127.0.0.1:8001/v1", ""),
                        ("holodesk config set api_key", "asked for, kept in the keyring")))
    later_help(cset, settings_help)
    cset.add_argument("key", metavar="KEY", help="the setting's name (listed below), or api_key")
    cset.add_argument("value", metavar="VALUE", nargs="?",
                      help="the new value (api_key: leave it out)")
    cset.set_defaults(func=_cmd_config_set)
    cget = cfgsub.add_parser(
        "get", help="print one setting's value in effect (for scripts)",
        description="Print the value of KEY in effect, alone, as `config set` takes it: a list "
        "comma-separated, true or false, nothing for an unset value. The API key is never "
        "printed.",
        epilog=examples(("holodesk config get confirm", "risky, unless you changed it"),
                        ("holodesk config get never_touch", "a list, comma-separated")))
    cget.add_argument("key", metavar="KEY",
                      help="the setting's name (`holodesk config set --help` lists them)")
    cget.set_defaults(func=_cmd_config_get)
    cunset = cfgsub.add_parser(
        "unset", help="return one setting to its default (api_key: forget the stored key)",
        description="Remove KEY from settings.toml so its default applies again (a value set "
        "in the environment, HOLODESK_<KEY>, still wins; the command says so). `holodesk "
        "config unset api_key` forgets the API key stored for the endpoint in use.",
        epilog=examples(("holodesk config unset confirm", "back to risky"),
                        ("holodesk config unset api_key", "forget the stored key")))
    cunset.add_argument("key", metavar="KEY",
                        help="the setting's name (`holodesk config set --help` lists them), "
                        "or api_key")
    cunset.set_defaults(func=_cmd_config_unset)
    capprove = cfgsub.add_parser(
        "approve", help="show the safety settings changed outside holodesk and ask whether to "
        "apply them",
        description=f"A safety setting ({safety}, an automation's confirm mode and what it "
                    "does) changed in the files, or set in the environment, by anything but "
                    "holodesk is not applied until you approve it here; refusing writes the "
                    "approved value back into the file.",
        epilog=examples(("holodesk config approve", "")))
    capprove.set_defaults(func=_cmd_config_approve)


def settings_help() -> str:
    """Every setting with its meaning, its range or choices and its default, for `config set
    --help` and `config --help`: made from the settings model itself (its fields'
    descriptions and constraints, as pydantic's JSON schema gives them), so a setting added
    there is listed here with nothing else to write."""
    from app.approval import SAFETY_KEYS
    from app.settings import Settings

    schema = Settings.model_json_schema()
    kinds: dict[str, Any] = schema.get("$defs", {})
    rows = []
    for name, field in schema["properties"].items():
        meaning = str(field.get("description", "")).strip()
        safety = "a safety setting" if name in SAFETY_KEYS else ""
        rows.append((name, "; ".join(p for p in (meaning, *_allowed(field, kinds, meaning),
                                                 _default(field), safety) if p)))
    return (f"Settings (`holodesk config show` prints their values):\n{entries(rows)}\n\n"
            "A list is given comma-separated. A safety setting changed outside holodesk "
            "applies once you approve it (`holodesk config approve`).")


def _allowed(field: Mapping[str, Any], kinds: Mapping[str, Any], meaning: str) -> list[str]:
    """What values ``field`` (a property of the JSON schema) takes: its choices (unless its
    description names them all already), true or false, or its range."""
    # An optional value is "anyOf" the type and null; an enum is a reference to a kind.
    options = [field, *field.get("anyOf", ())]
    options += [kinds[o["$ref"].rsplit("/", 1)[-1]] for o in options if "$ref" in o]
    said: list[str] = []
    for option in options:
        choices = [str(c) for c in option.get("enum", ())]
        if choices and not all(re.search(rf"\b{re.escape(c)}\b", meaning) for c in choices):
            said.append("one of " + ", ".join(choices))
        if option.get("type") == "boolean":
            said.append("true or false")
        low, high = option.get("minimum"), option.get("maximum")
        above = option.get("exclusiveMinimum")
        if low is not None and high is not None:
            said.append(f"{low:g} to {high:g}")
        elif above is not None:
            said.append(f"more than {above:g}" + (f", at most {high:g}" if high is not None
                                                   else ""))
        elif low is not None or high is not None:
            said.append(f"at least {low:g}" if low is not None else f"at most {high:g}")
    return said


def _default(field: Mapping[str, Any]) -> str:
    default = field.get("default")
    if default is None or default == "" or default == []:
        return "default: empty"
    if isinstance(default, list):
        text = ",".join(str(v) for v in default)
    elif isinstance(default, bool):
        text = "true" if default else "false"
    elif isinstance(default, float):
        text = f"{default:g}"
    else:
        text = str(default)
    # A long list (the password managers of never_touch) is for `config show` to print.
    return f"default: {text}" if len(text) <= 40 else "default: see `holodesk config show`"


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
