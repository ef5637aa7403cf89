"""The values of an automation's parameters for one run, and the keyring entries of its secret
parameters.

Where a value comes from, first found wins: what the person gave for this run, the keyring (a
secret parameter), the declared default, and last what the front end asks (the terminal without
echo for a secret, the desktop app's small form). A run never starts with a value missing:
:class:`MissingValues` names them, and each front end says how to give them.

A secret's value is stored per automation and parameter: service ``holodesk`` (as the API key),
username ``automation:<name, any case>:<parameter>``; an API key's username is its endpoint URL,
so the two never meet. A secret shorter than :data:`model.run_secrets.MIN_REDACT_LEN` characters is
refused: masking works on text, and masking a short one would hide ordinary words all over the
log while it could still show up elsewhere, so holodesk would promise something it cannot keep.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from app.automations import Automation, AutomationError
from app.parameters import Filled, Parameter, ParameterError, check_value
from app.secrets import KeyringStore, SecretsError, SecretStore
from model.run_secrets import MIN_REDACT_LEN

__all__ = [
    "Ask",
    "MissingValues",
    "SecretParameterError",
    "forget_secrets",
    "load_secret",
    "parse_assignment",
    "rename_secrets",
    "resolve",
    "store_secret",
    "stored_secrets",
]

log = logging.getLogger(__name__)

#: Asks the person for one parameter's value (``name``, its declaration); returns the text.
Ask = Callable[[str, Parameter], str]


class MissingValues(AutomationError):
    """Parameters without a value for this run; ``names`` in the task's order."""

    def __init__(self, automation: str, names: list[str], secret: list[str]) -> None:
        self.automation = automation
        self.names = names
        self.secret = secret
        super().__init__(f"{automation!r} needs a value for {', '.join(names)}")


class SecretParameterError(AutomationError):
    """A secret parameter's value cannot be stored or read; the message says what to do."""


def _account(automation: str, parameter: str) -> str:
    return f"automation:{automation.casefold()}:{parameter}"


def check_secret(name: str, value: str) -> str:
    """``value`` if it can be a secret parameter's value (one printable line, long enough to be
    masked); ParameterError naming ``name`` if not."""
    value = check_value(name, value)
    if len(value) < MIN_REDACT_LEN:
        raise ParameterError(
            f"{name} is shorter than {MIN_REDACT_LEN} characters: holodesk masks secrets in "
            "its logs by their text, and one this short cannot be masked reliably; make it a "
            "plain parameter, or use a longer secret")
    return value


def store_secret(automation: Automation, parameter: str, value: str,
                 store: SecretStore | None = None) -> str:
    """Keep ``value`` for the secret ``parameter`` of ``automation`` in the keyring; the
    keyring's name, for the message."""
    declared = automation.parameters.get(parameter)
    if declared is None or not declared.secret:
        secret = ", ".join(automation.secret_parameters()) or "none"
        raise AutomationError(
            f"{automation.name!r} has no secret parameter {parameter!r} (its secret "
            f"parameters: {secret})")
    value = check_secret(f"the value of {parameter}", value.strip("\r\n"))
    store = KeyringStore() if store is None else store
    try:
        store.set(_account(automation.name, parameter), value)
    except SecretsError as e:
        raise _unavailable(automation, parameter, "stored", e) from None
    return store.backend_name()


def load_secret(automation: Automation, parameter: str,
                store: SecretStore | None = None) -> str | None:
    """The stored value of a secret parameter, or None when none is stored."""
    store = KeyringStore() if store is None else store
    try:
        return store.get(_account(automation.name, parameter))
    except SecretsError as e:
        raise _unavailable(automation, parameter, "read", e) from None


def forget_secrets(automation: Automation, store: SecretStore | None = None) -> None:
    """Delete the stored values of ``automation``'s secret parameters (it was removed); a
    keyring that cannot be used is logged, not raised: the automation is gone either way."""
    store = KeyringStore() if store is None else store
    for name in automation.secret_parameters():
        try:
            store.delete(_account(automation.name, name))
        except SecretsError as e:
            log.warning("could not delete the secret parameter %s of %r: %s", name,
                        automation.name, e)


def rename_secrets(old: Automation, new: Automation, store: SecretStore | None = None) -> None:
    """Move the stored secrets of ``old`` to ``new`` (renamed); those ``new`` no longer
    declares as secret are deleted."""
    if old.key == new.key and set(old.secret_parameters()) <= set(new.secret_parameters()):
        return
    store = KeyringStore() if store is None else store
    for name in old.secret_parameters():
        kept = name in new.secret_parameters()
        if kept and old.key == new.key:
            continue
        try:
            value = store.get(_account(old.name, name))
            if value is None:
                continue
            if kept:
                store.set(_account(new.name, name), value)
            store.delete(_account(old.name, name))
        except SecretsError as e:
            log.warning("could not move the secret parameter %s of %r: %s", name, old.name, e)


def stored_secrets(automation: Automation, store: SecretStore | None = None) -> dict[str, str]:
    """The values of ``automation``'s secret parameters the keyring holds (may block on the
    keyring: the desktop app calls it on a worker thread)."""
    out: dict[str, str] = {}
    for name in automation.secret_parameters():
        value = load_secret(automation, name, store)
        if value:
            out[name] = value
    return out


def parse_assignment(text: str) -> tuple[str, str]:
    """``name=value`` split at the first ``=``; ParameterError when there is none."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ParameterError(f"{text!r} is not NAME=VALUE (e.g. file=report.pdf)")
    return name.strip(), value


def resolve(
    automation: Automation,
    given: Mapping[str, str] | None = None,
    *,
    store: SecretStore | None = None,
    ask: Ask | None = None,
    ask_all: bool = False,
    secrets: Mapping[str, str] | None = None,
) -> Filled:
    """The task of ``automation`` filled for a run.

    ``given`` are this run's values (never a secret's: that would put it on a command line);
    secrets come from the keyring, the rest from the defaults; ``ask`` (when given) is asked
    for every value still missing, and with ``ask_all`` for every parameter not in ``given``
    (the default shown as a suggestion). ``secrets``, when given, are the secret values
    already read from the keyring or asked (the desktop app reads the keyring off its GUI
    thread): the keyring is then not read here. Raises :class:`MissingValues` when values are still
    missing, :class:`AutomationError` for a bad value.
    """
    given = dict(given or {})
    secret_given = [n for n in given if n in automation.secret_parameters()]
    if secret_given:
        raise AutomationError(
            f"{', '.join(secret_given)} of {automation.name!r} is a secret parameter: its value "
            "is never given on the command line (it would stay in the shell history); store it "
            f"in the keyring with `holodesk automation set-secret {_quoted(automation.name)} "
            f"{secret_given[0]}`, or leave it out to be asked")
    values = dict(given)
    names = automation.needs()
    for name in names:
        if name in values:
            continue
        declared = automation.parameters[name]
        if declared.secret:
            found = (secrets or {}).get(name) if secrets is not None else \
                load_secret(automation, name, store)
            if found:
                values[name] = found
        elif declared.default is not None and not ask_all:
            values[name] = declared.default
    if ask is not None:
        for name in names:
            if name not in values or (ask_all and name not in given and
                                      not automation.parameters[name].secret):
                answer = ask(name, automation.parameters[name])
                if answer:
                    values[name] = answer
    missing = [n for n in names if not values.get(n)]
    if missing:
        raise MissingValues(automation.name, missing,
                            [n for n in missing if automation.parameters[n].secret])
    for name in automation.secret_parameters():
        try:
            check_secret(f"the value of {name}", values[name])
        except ParameterError as e:
            raise AutomationError(f"automation {automation.name!r}: {e}") from None
    return automation.fill(values)


def _unavailable(automation: Automation, parameter: str, verb: str,
                 error: Exception) -> SecretParameterError:
    # The keyring's own message speaks of the API key; this one is about the parameter.
    log.info("keyring for the secret parameter %s of %r: %s", parameter, automation.name, error)
    return SecretParameterError(
        f"the secret parameter {parameter!r} of {automation.name!r} cannot be {verb}: no "
        "secure system keyring is usable (holodesk keeps secrets only in the Secret Service "
        "(GNOME Keyring or KWallet), the macOS Keychain or the Windows Credential Locker, "
        "never in a file). Unlock or install one, or give the value when asked.")


def _quoted(name: str) -> str:
    return f'"{name}"' if " " in name else name
