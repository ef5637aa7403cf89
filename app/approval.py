"""The safety settings the person approved: a record that a program editing the files cannot
forge, and the comparison that keeps a change made outside holodesk from being obeyed.

A hijacked model working a text editor can open ``settings.toml`` and write
``confirm = "never"``; the person's next ordinary run would then ask nothing. So the values that
decide what holodesk may do without asking (:data:`SAFETY_KEYS`, and each automation's
confirmation mode, bound to what that automation does) are kept a second time, in
``approved.json`` beside the settings, with an HMAC-SHA256 tag. Its key is 32 random bytes in the
system keyring (service ``holodesk``, entry :data:`KEY_ENTRY`), under the rules of the API key:
only a secure keyring, never a plain file (:mod:`app.secrets`). Every write makes a new key, so
a record written before (one that approved ``never``, kept by a program and put back after the
person went back to ``risky``) no longer verifies. Only holodesk's own writers update the
record (`config set`/`unset`, the Settings dialog, the automation commands and window, an
import, and the person's answer when asked).

Reading compares each value of the file with the approved one (:func:`judge`):

* equal: used;
* stricter (confirm towards ``always``; ``never_touch`` and ``protected_paths`` gaining entries;
  ``only_in`` narrowing but never to empty, which means anywhere; ``plain_http_ok`` losing
  entries): used without asking, since nobody gains from a stricter holodesk, and recorded as
  approved at holodesk's next write;
* anything else: not used. The approved value is, and the change is a :class:`PendingChange`
  that the front ends show and ask about.

With no record (a fresh install, or one from before this check) the defaults are the approved
values, so a looser value written by hand is asked about once. A record whose tag does not
verify (edited, or copied from another machine or account) is not trusted: the defaults again,
and the person is told. Without a usable keyring the record can neither be checked nor written:
the defaults are the approved values, stricter values still apply, and a looser one can only
be given for one process, through the environment.

This module holds the record, its tag and the comparisons; :mod:`app.settings` and
:mod:`app.automations` apply them when they read and write their files, and
:mod:`app.safety_review` is what the front ends ask with.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from app import paths
from app.secrets import KeyringStore, SecretsError, SecretStore
from control.policy import ConfirmMode
from control.target import app_names
from model.problem import Fix, HolodeskError

__all__ = [
    "KEY_ENTRY",
    "RECORD_FILE",
    "SAFETY_KEYS",
    "ApprovalUnavailable",
    "Approvals",
    "ApprovedAutomation",
    "PendingChange",
    "Record",
    "RecordState",
    "ValueState",
    "automation_digest",
    "confirm_rank",
    "judge",
    "keyring_problem",
    "no_keyring_fix",
    "read_record",
    "record_path",
    "show_value",
    "write_record",
]

log = logging.getLogger(__name__)

#: The settings that decide what holodesk does without asking. ``protected_paths`` belongs to
#: the protected-files tripwire; a settings model without it simply has nothing to compare.
SAFETY_KEYS: tuple[str, ...] = (
    "confirm", "never_touch", "only_in", "protected_paths", "stop_hotkey", "tls_fingerprint",
    "plain_http_ok",
)
RECORD_FILE = "approved.json"
#: The keyring entry (service ``holodesk``) of the tag's key. An API key's entry is named by its
#: endpoint URL and a secret parameter's ``automation:...``: the names never meet.
KEY_ENTRY = "safety-settings-approval-key"
FORMAT = 1
_KEY_BYTES = 32
_ABOUT = ("holodesk's record of the safety settings you approved. It is signed with a key kept "
          "in your keyring: an edit here is noticed and the record is then not trusted.")

_CONFIRM_RANK = {ConfirmMode.NEVER: 0, ConfirmMode.RISKY: 1, ConfirmMode.ALWAYS: 2}


class RecordState(Enum):
    """What reading the record found."""

    VALID = "valid"
    MISSING = "no record yet"          # the defaults are the approved values
    TAMPERED = "record not trusted"    # the tag does not verify: the defaults again
    NO_KEYRING = "no keyring"          # nothing can be verified or remembered


class ValueState(Enum):
    """What a value in the file is, next to the approved one."""

    APPROVED = "approved"
    STRICTER = "stricter, applied"
    NEEDS_APPROVAL = "needs approval"


class ApprovalUnavailable(HolodeskError):
    """The approval cannot be remembered: no usable keyring for the record's key."""


@dataclass(frozen=True)
class ApprovedAutomation:
    """An automation's approved confirmation mode, for what it did when approved (``digest``,
    :func:`automation_digest`)."""

    confirm: ConfirmMode
    digest: str


@dataclass(frozen=True)
class Record:
    """The approved values: settings by name (JSON values, as ``Settings.model_dump(mode=
    "json")`` gives them; a key left out is at its default) and automations by key (the name
    ignoring case)."""

    settings: Mapping[str, Any] = field(default_factory=dict)
    automations: Mapping[str, ApprovedAutomation] = field(default_factory=dict)


@dataclass(frozen=True)
class Approvals:
    """The record as read: trusted only when ``state`` is VALID (otherwise ``record`` is empty).
    ``problem`` says what the person should know about it ("" when nothing)."""

    state: RecordState
    record: Record = field(default_factory=Record)
    problem: str = ""

    def setting(self, key: str, default: Any) -> Any:
        """The approved value of setting ``key`` (its default when none is approved)."""
        return self.record.settings.get(key, default)

    def automation(self, key: str) -> ApprovedAutomation | None:
        return self.record.automations.get(key)


@dataclass(frozen=True)
class PendingChange:
    """A safety value the file holds and the person has not approved: not in effect.

    ``key`` is the setting (``confirm`` also for an automation's mode, then ``automation`` is
    the automation's name); ``approved`` is the value in effect instead and ``in_file`` the
    one written in the file (JSON values).
    """

    key: str
    approved: Any
    in_file: Any
    automation: str | None = None

    def label(self) -> str:
        """``confirm``, or ``automation "timesheet": confirm``."""
        return self.key if self.automation is None else \
            f"automation {self.automation!r}: {self.key}"

    def describe(self) -> str:
        """One line for the person: what the file says, and what is used instead."""
        return (f"{self.label()} = {show_value(self.in_file)} in the file; not applied, "
                f"{show_value(self.approved)} (approved) is used")


def show_value(value: Any) -> str:
    """A value as `config set` takes it: a list comma-separated, ``(none)`` for nothing."""
    if value is None or value == [] or value == ():
        return "(none)"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def record_path(folder: Path) -> Path:
    """The record in ``folder`` (the folder of the settings and automations files)."""
    return folder / RECORD_FILE


# -- comparing ------------------------------------------------------------------------------


def confirm_rank(mode: ConfirmMode | str) -> int:
    """0 for never, 1 for risky, 2 for always: a higher rank asks more."""
    return _CONFIRM_RANK[ConfirmMode(mode)]


def judge(key: str, approved: Any, in_file: Any) -> ValueState:
    """Whether ``in_file`` (the value written in the file) is the approved value of setting
    ``key``, a stricter one, or a change that needs the person's approval."""
    if _same(key, approved, in_file):
        return ValueState.APPROVED
    if _stricter(key, approved, in_file):
        return ValueState.STRICTER
    return ValueState.NEEDS_APPROVAL


def _names(key: str, value: Any) -> frozenset[str]:
    items = [str(v) for v in (value or ())]
    if key in ("never_touch", "only_in"):
        return app_names(*items)  # as the policy matches them: case and .desktop ignored
    if key == "protected_paths":
        return frozenset(os.path.normpath(os.path.expanduser(p)) for p in items)
    return frozenset(items)


def _same(key: str, approved: Any, in_file: Any) -> bool:
    if key in ("never_touch", "only_in", "protected_paths", "plain_http_ok"):
        return _names(key, approved) == _names(key, in_file)
    return bool(approved == in_file)


def _stricter(key: str, approved: Any, in_file: Any) -> bool:
    if key == "confirm":
        try:
            return confirm_rank(in_file) > confirm_rank(approved)
        except ValueError:
            return False
    if key in ("never_touch", "protected_paths"):
        return _names(key, in_file) >= _names(key, approved)
    if key == "only_in":
        # Empty means anywhere: narrowing to some applications is stricter, emptying is not.
        new, old = _names(key, in_file), _names(key, approved)
        return bool(new) and (not old or new <= old)
    if key == "plain_http_ok":
        return _names(key, in_file) <= _names(key, approved)
    return False  # stop_hotkey, tls_fingerprint: any other value is a different trust


def automation_digest(table: Mapping[str, Any]) -> str:
    """What an automation does, as a digest: everything in its table but its name and its
    confirmation mode (the task, parameters, applications, monitor, hotkey and schedule). A
    change to any of them outside holodesk unbinds the approved mode."""
    what = {k: v for k, v in table.items() if k not in ("name", "confirm")}
    return hashlib.sha256(_canonical(what)).hexdigest()


# -- the record -----------------------------------------------------------------------------


def no_keyring_fix(setting: str | None = None) -> Fix:
    """How to get a looser value approved when there is no keyring to remember it."""
    env = f" (HOLODESK_{setting.upper()})" if setting else " (HOLODESK_<KEY>)"
    return Fix(
        "holodesk remembers an approved safety setting with a key kept in the system keyring. "
        "Install or unlock one (Linux: `sudo apt-get install gnome-keyring` and a desktop "
        "session that unlocks it; `holodesk doctor` checks it), or give the value for one "
        f"process in the environment{env}, which a program cannot change in a file."
    )


def keyring_problem(store: SecretStore | None = None) -> str:
    """Why an approval cannot be remembered now ("" when it can): the keyring's own words."""
    store = KeyringStore() if store is None else store
    try:
        store.get(KEY_ENTRY)
    except SecretsError:
        return _keyring_words(store)
    return ""


def read_record(path: Path, store: SecretStore | None = None) -> Approvals:
    """The record at ``path``, checked against its tag; never raises."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Approvals(RecordState.MISSING)
    except OSError as e:
        return _untrusted(path, f"it cannot be read ({e.strerror or e})")
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        tag = data.pop("tag")
        if not isinstance(tag, str):
            raise ValueError("no tag")
    except (ValueError, KeyError) as e:
        return _untrusted(path, f"it is not holodesk's record ({e})")
    store = KeyringStore() if store is None else store
    try:
        key = _read_key(store)
    except SecretsError:
        words = _keyring_words(store)
        return Approvals(RecordState.NO_KEYRING, problem=(
            f"the safety settings you approved ({path}) cannot be checked: {words}; until it "
            "can, holodesk uses the defaults for them"))
    if key is None:
        return _untrusted(path, "the keyring holds no key for it (a new keyring, or the record "
                                "was copied from elsewhere)")
    if not hmac.compare_digest(_tag(key, data), tag):
        return _untrusted(path, "it was changed outside holodesk, or copied from elsewhere")
    try:
        record = _parse(data)
    except (ValueError, TypeError, KeyError) as e:
        return _untrusted(path, f"it cannot be understood ({e})")
    return Approvals(RecordState.VALID, record)


def write_record(path: Path, record: Record, store: SecretStore | None = None) -> None:
    """Sign ``record`` with a new key and replace the file.

    A new key at every write: every record written before stops verifying, so an old one put
    back (approving what the person has since taken back) is not trusted. A crash between the
    keyring and the file leaves a record that does not verify: the defaults, asked again.
    :class:`ApprovalUnavailable` (nothing written) when the keyring cannot be used.
    """
    store = KeyringStore() if store is None else store
    try:
        store.set(KEY_ENTRY, secrets.token_bytes(_KEY_BYTES).hex())
        log.debug("new key of the approved safety settings in the keyring (%s)",
                  store.backend_name())
        # Read back: another holodesk writing at the same moment may have stored its own, and
        # the last one stored is the one every reader gets.
        key = _read_key(store)
        if key is None:
            raise SecretsError("the keyring did not keep the key")
    except SecretsError:
        raise ApprovalUnavailable(
            f"the change cannot be remembered as approved: {_keyring_words(store)}",
            no_keyring_fix()) from None
    data = _payload(record)
    text = json.dumps({**data, "tag": _tag(key, data)}, indent=1, sort_keys=True,
                      ensure_ascii=False)
    paths.write_atomic(path, text + "\n")


def _untrusted(path: Path, why: str) -> Approvals:
    return Approvals(RecordState.TAMPERED, problem=(
        f"the record of the safety settings you approved ({path}) is not trusted: {why}. "
        "holodesk uses the defaults as the approved values; a safety setting you changed is "
        "asked about again"))


def _keyring_words(store: SecretStore) -> str:
    # Not the exception's words: they speak of the API key and of HOLODESK_API_KEY.
    name = store.backend_name()
    if name.startswith("unavailable"):
        detail = name.removeprefix("unavailable ")[1:-1]
        return f"no secure system keyring is usable here ({detail})"
    return f"the keyring ({name}) could not be used; if it is locked, unlock it"


def _read_key(store: SecretStore) -> bytes | None:
    text = store.get(KEY_ENTRY)
    if not text:
        return None
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        return None
    return key if len(key) == _KEY_BYTES else None


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _tag(key: bytes, data: Mapping[str, Any]) -> str:
    return hmac.new(key, _canonical(dict(data)), hashlib.sha256).hexdigest()


def _payload(record: Record) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "about": _ABOUT,
        "settings": {k: record.settings[k] for k in sorted(record.settings)},
        "automations": {
            k: {"confirm": str(a.confirm), "digest": a.digest}
            for k, a in sorted(record.automations.items())
        },
    }


def _parse(data: Mapping[str, Any]) -> Record:
    if data.get("format") != FORMAT:
        raise ValueError(f"format {data.get('format')!r}, this holodesk writes {FORMAT}")
    settings = data["settings"]
    automations = data["automations"]
    if not isinstance(settings, dict) or not isinstance(automations, dict):
        raise TypeError("settings and automations must be tables")
    return Record(
        settings={str(k): v for k, v in settings.items() if k in SAFETY_KEYS},
        automations={
            str(k): ApprovedAutomation(ConfirmMode(v["confirm"]), str(v["digest"]))
            for k, v in automations.items()
        },
    )
