"""The safety settings the person approved: a record that a program editing the files cannot
forge, and the comparison that keeps a change made outside holodesk from being obeyed.

A hijacked model working a text editor can open ``settings.toml`` and write
``confirm = "never"``; the person's next ordinary run would then ask nothing. So the values that
decide what holodesk may do without asking (:data:`SAFETY_KEYS`, each automation's confirmation
mode and what it does, its saved steps) are kept a second time, in ``approved.json`` beside the
settings, with an HMAC-SHA256 tag. Its key is 32 random bytes in the system keyring (service
``holodesk``, entry :data:`KEY_ENTRY`), under the rules of the API key: only a secure keyring,
never a plain file (:mod:`app.secrets`). Every write makes a new key, so a record written
before (one that approved ``never``, kept by a program and put back after the person went back
to ``risky``) no longer verifies. Only holodesk's own writers update the record (`config
set`/`unset`, the Settings dialog, the automation commands and window, an import, the saved
steps of an answered run, and the person's answer when asked).

The keyring entry is also the record's *anchor*: beside the key it keeps the settings folder,
a digest of the record and the approved settings themselves. A record deleted, damaged or left
behind (``XDG_CONFIG_HOME`` pointed at another folder) is then no fresh install: the anchor's
values are the approved ones, every automation waits for the person's approval again, and the
person is told.

Reading compares each value of the file with the approved one (:func:`judge`):

* equal: used;
* stricter (confirm towards ``always``; ``never_touch`` and ``protected_paths`` gaining entries;
  ``only_in`` narrowing but never to empty, which means anywhere; ``plain_http_ok`` losing
  entries): used without asking, since nobody gains from a stricter holodesk, and recorded as
  approved at holodesk's next write;
* anything else: not used. The approved value is, and the change is a :class:`PendingChange`
  that the front ends show and ask about.

With no record and no key (a fresh install, or one from before this check) the defaults are the
approved values, so a looser value written by hand is asked about once. Without a usable
keyring nothing can be checked or signed: the record is kept unsigned and counts only where it
is stricter than the defaults (a *floor*: a program that edits the settings file alone cannot
loosen what the person set with holodesk; one that also edits the record can, down to the
defaults).

This module holds the record, its tag and anchor and the comparisons; :mod:`app.settings` and
:mod:`app.automations` apply them when they read and write their files, :mod:`app.trajectory`
for the saved steps, and :mod:`app.safety_review` is what the front ends ask with.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from app import paths
from app.secrets import KeyringStore, SecretsError, SecretStore
from control.policy import ConfirmMode
from control.target import app_names
from model.plain_http import host_address, is_loopback_url, is_plain_name
from model.problem import Fix, HolodeskError

__all__ = [
    "AUTOMATION_CHANGE",
    "KEY_ENTRY",
    "RECORD_FILE",
    "SAFETY_KEYS",
    "ApprovalUnavailable",
    "Approvals",
    "ApprovedAutomation",
    "ApprovedSteps",
    "PendingChange",
    "Record",
    "RecordState",
    "ValueState",
    "automation_digest",
    "confirm_rank",
    "describe_automation_change",
    "judge",
    "keyring_problem",
    "local_endpoint",
    "no_keyring_fix",
    "read_record",
    "record_path",
    "remember_steps",
    "show_value",
    "write_record",
    "write_unsigned",
]

log = logging.getLogger(__name__)

#: The settings that decide what holodesk does without asking, where every screenshot goes
#: (``endpoint``) and what code `holodesk serve` runs (``serve_model``: vLLM imports the Python
#: a model folder names, --trust-remote-code). ``protected_paths`` belongs to the
#: protected-files tripwire; a settings model without it simply has nothing to compare.
SAFETY_KEYS: tuple[str, ...] = (
    "confirm", "never_touch", "only_in", "protected_paths", "stop_hotkey", "tls_fingerprint",
    "plain_http_ok", "serve_model", "endpoint",
)
#: Host names that stay on the person's network (besides IP addresses of private ranges and
#: names without a dot): an endpoint there applies without a keyring (:func:`local_endpoint`).
_LAN_SUFFIXES = (".local", ".lan", ".home.arpa", ".internal")
#: The key of a :class:`PendingChange` about what an automation does (its table changed outside
#: holodesk, or it was added there), not only its mode.
AUTOMATION_CHANGE = "automation"
RECORD_FILE = "approved.json"
#: The keyring entry (service ``holodesk``) of the tag's key. An API key's entry is named by its
#: endpoint URL and a secret parameter's ``automation:...``: the names never meet.
KEY_ENTRY = "safety-settings-approval-key"
FORMAT = 1
_KEY_BYTES = 32
#: The most of approved.json that is read: far above any record (a link to /dev/zero is no file).
MAX_RECORD = 4 * 1024 * 1024
_ABOUT = ("holodesk's record of the safety settings you approved. It is signed with a key kept "
          "in your keyring: an edit here is noticed and the record is then not trusted.")

_CONFIRM_RANK = {ConfirmMode.NEVER: 0, ConfirmMode.RISKY: 1, ConfirmMode.ALWAYS: 2}


class RecordState(Enum):
    """What reading the record found."""

    VALID = "valid"
    MISSING = "no record yet"          # the defaults are the approved values
    TAMPERED = "record not trusted"    # missing, damaged or left behind: the anchor's values
    NO_KEYRING = "no keyring"          # nothing can be verified: the record is a floor only


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
    :func:`automation_digest`, and ``table``, its TOML table then, to show what changed; None
    in a record from before tables were kept)."""

    confirm: ConfirmMode
    digest: str
    table: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ApprovedSteps:
    """An automation's saved steps as holodesk wrote them: the digest of their file and
    pictures (:func:`app.trajectory.steps_digest`), and whether they came with an import."""

    digest: str
    imported: bool = False


@dataclass(frozen=True)
class Record:
    """The approved values: settings by name (JSON values, as ``Settings.model_dump(mode=
    "json")`` gives them; a key left out is at its default), automations by key (the name
    ignoring case) and their saved steps by the same key."""

    settings: Mapping[str, Any] = field(default_factory=dict)
    automations: Mapping[str, ApprovedAutomation] = field(default_factory=dict)
    steps: Mapping[str, ApprovedSteps] = field(default_factory=dict)


@dataclass(frozen=True)
class Approvals:
    """The record as read. ``record`` holds what counts as approved: the whole record when
    ``state`` is VALID; the anchor's settings (no automation, no saved steps) when the keyring
    holds a key and the record is missing or not trusted; with ``floor_only`` (no keyring to
    check it, or a record kept without one) values that count only where they are stricter
    than the defaults. ``binding``: the keyring holds the key of a record, so an automation
    without an approved entry is not approved. ``problem`` says what the person should know
    about it ("" when nothing)."""

    state: RecordState
    record: Record = field(default_factory=Record)
    problem: str = ""
    floor_only: bool = False
    binding: bool = False
    keyring: bool = True  # a keyring could be asked (nothing says whether it holds a key)

    def setting(self, key: str, default: Any) -> Any:
        """The approved value of setting ``key`` (its default when none is approved)."""
        return self.record.settings.get(key, default)

    def automation(self, key: str) -> ApprovedAutomation | None:
        return self.record.automations.get(key)

    def steps(self, key: str) -> ApprovedSteps | None:
        """The saved steps of automation ``key`` as holodesk wrote them: only from a record
        that verifies."""
        return self.record.steps.get(key) if self.state is RecordState.VALID else None


@dataclass(frozen=True)
class _Anchor:
    """The keyring entry: the record's key, and (from entries written since anchors exist)
    the settings folder, the digest of the record signed and the approved settings."""

    key: bytes
    folder: str | None = None
    record: str | None = None
    settings: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class PendingChange:
    """A safety value the files (or the environment) hold and the person has not approved:
    not in effect.

    ``key`` is the setting (``confirm`` also for an automation's mode, then ``automation`` is
    the automation's name; :data:`AUTOMATION_CHANGE` for what an automation does, then
    ``approved`` and ``in_file`` are its tables, ``approved`` None for one never approved);
    ``approved`` is the value in effect instead and ``in_file`` the one written in the file
    (JSON values). ``source`` is where ``in_file`` comes from: "" the file, ``$HOLODESK_X``
    the environment. ``digest`` is, for an automation, what it does as shown
    (:func:`automation_digest`): the answer holds only while the file still says so; ``task``
    its task, shown with a change of its mode.
    """

    key: str
    approved: Any
    in_file: Any
    automation: str | None = None
    source: str = ""
    digest: str = ""
    task: str = ""

    def label(self) -> str:
        """``confirm``, ``automation "timesheet": confirm``, or ``automation "timesheet"``."""
        if self.automation is None:
            return self.key
        if self.key == AUTOMATION_CHANGE:
            return f"automation {self.automation!r}"
        return f"automation {self.automation!r}: {self.key}"

    def describe(self) -> str:
        """One line for the person: what the file says, and what is used instead."""
        if self.key == AUTOMATION_CHANGE:
            return describe_automation_change(self.automation or "", self.approved,
                                              self.in_file)
        where = f"in the environment ({self.source})" if self.source else "in the file"
        return (f"{self.label()} = {show_value(self.in_file)} {where}; not applied, "
                f"{show_value(self.approved)} (approved) is used")


def show_value(value: Any) -> str:
    """A value as `config set` takes it: a list comma-separated, ``(none)`` for nothing."""
    if value is None or value == [] or value == ():
        return "(none)"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def describe_automation_change(name: str, approved: Mapping[str, Any] | None,
                               in_file: Mapping[str, Any]) -> str:
    """What the files say an automation does, next to what was approved (every field that
    differs), and that it does not run until the person approves it."""
    held = "it does not run until you approve it"
    if approved is None:
        what = "; ".join(f"{k} {_field(v)}" for k, v in in_file.items() if k != "name")
        return f"automation {name!r} is not approved (added or changed outside holodesk): " \
               f"{what}; {held}"
    fields = [k for k in dict.fromkeys([*approved, *in_file]) if k != "name"]
    diff = "; ".join(f"{k} {_field(approved.get(k))} -> {_field(in_file.get(k))}"
                     for k in fields if approved.get(k) != in_file.get(k))
    return f"automation {name!r} was changed outside holodesk: {diff or 'no field'}; {held}"


def _field(value: Any) -> str:
    if value is None or value == [] or value == {}:
        return "(none)"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
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
    if key == "endpoint":  # the screenshots stay on this machine
        return isinstance(in_file, str) and is_loopback_url(in_file)
    # stop_hotkey, tls_fingerprint, serve_model: any other value is a different trust
    return False


#: A network's own addresses, listed: ``ipaddress``'s ``is_private`` also holds ranges routed
#: on the internet (all of 2001::/23, Teredo's 2001::/32 among them). Shared address space
#: (100.64/10) is a carrier's or a VPN's (Tailscale) network, not the internet.
_LAN_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10",
    "fc00::/7", "fe80::/10"))


def local_endpoint(url: str) -> bool:
    """Whether ``url`` is this machine or the person's network: loopback, an IP address of a
    private or link-local range, or a host name without a dot or ending in .local, .lan,
    .home.arpa or .internal. Without a keyring such an endpoint applies as the file has it
    (nothing can tell holodesk's own write from another program's): the screenshots may go
    to another machine of the network, never to one on the internet. A name is taken at its
    word: where the network's DNS answers for it is not checked; digits a resolver reads as
    an address (``134744072`` is 8.8.8.8) are that address, not a name."""
    if is_loopback_url(url):
        return True
    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return False
    address = host_address(host)
    if address is None:
        return is_plain_name(host) and ("." not in host or host.endswith(_LAN_SUFFIXES))
    return any(address in network for network in _LAN_NETWORKS)


def automation_digest(table: Mapping[str, Any]) -> str:
    """What an automation does, as a digest: everything in its table but its name and its
    confirmation mode (the task, parameters, applications, monitor, hotkey and schedule). A
    change to any of them outside holodesk unbinds the approved mode."""
    what = {k: v for k, v in table.items() if k not in ("name", "confirm")}
    return hashlib.sha256(_canonical(what)).hexdigest()


# -- the record -----------------------------------------------------------------------------


def no_keyring_fix(setting: str | None = None) -> Fix:
    """How to get a looser value approved when there is no keyring to remember it."""
    option = {"confirm": " (`holodesk run --confirm ...`)",
              "only_in": " (`holodesk run --only-in ...`)",
              "endpoint": " (`holodesk run --endpoint ...`; without a keyring an endpoint on "
                          "this machine or your network applies as set)",
              "serve_model": " (`holodesk serve --model ...`)"}.get(setting or "", "")
    return Fix(
        "holodesk remembers an approved safety setting with a key kept in the system keyring. "
        "Install or unlock one (Linux: `sudo apt-get install gnome-keyring` and a desktop "
        "session that unlocks it; `holodesk doctor` checks it), or give the value for one run "
        f"on the command line{option}, where the command has an option for it. A value in "
        "the environment (HOLODESK_<KEY>) that asks less is asked about like one in the file: "
        "a file (~/.config/environment.d, ~/.profile) may have set it."
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
    """The record at ``path``, checked against its tag and the keyring's anchor; never
    raises. See :class:`Approvals` for what each outcome counts as approved."""
    store = KeyringStore() if store is None else store
    try:
        raw: bytes | None = paths.read_limited(path, MAX_RECORD)
        unreadable = ""
    except FileNotFoundError:
        raw, unreadable = None, ""
    except OSError as e:
        raw, unreadable = None, f"it cannot be read ({e.strerror or e})"
    data = _json_object(raw) if raw is not None else None
    try:
        anchor = _read_anchor(store)
    except SecretsError:
        if raw is None and not unreadable:
            return Approvals(RecordState.MISSING, keyring=False)
        signed = data is not None and "tag" in data
        return Approvals(RecordState.NO_KEYRING, _lenient(data), floor_only=True, keyring=False,
                         problem=(
            f"the safety settings you approved ({path}) cannot be checked: "
            f"{_keyring_words(store)}; until it can, holodesk uses the defaults for them, or "
            "a value you set that asks more") if signed or unreadable else "")
    if anchor is None:
        if raw is None and not unreadable:
            return Approvals(RecordState.MISSING)
        if data is not None and "tag" not in data and data.get("signed") is False:
            # Kept without a keyring (before one was installed): a floor, nothing to tell.
            return Approvals(RecordState.MISSING, _lenient(data), floor_only=True)
        return Approvals(RecordState.TAMPERED, _lenient(data), floor_only=True,
                         problem=_untrusted_text(path, unreadable or (
                             "the keyring holds no key for it (a new keyring, or the record "
                             "was copied from elsewhere)"), anchored=False))
    why = unreadable or _why_untrusted(anchor, data, path)
    if not why and data is not None:
        try:
            record = _parse(data)
        except (ValueError, TypeError, KeyError) as e:
            why = f"it cannot be understood ({e})"
        else:
            return Approvals(RecordState.VALID, record, binding=True)
    anchored = anchor.settings is not None
    return Approvals(RecordState.TAMPERED, Record(settings=dict(anchor.settings or {})),
                     binding=True, problem=_untrusted_text(path, why, anchored=anchored))


def _why_untrusted(anchor: _Anchor, data: dict[str, Any] | None, path: Path) -> str:
    """Why the record does not hold what the anchor says ("" when it does)."""
    moved = anchor.folder is not None and anchor.folder != str(path.parent)
    if data is None:
        if moved:
            return (f"it is not there: the settings folder is {path.parent} now, and the "
                    f"values you approved are those of {anchor.folder} (XDG_CONFIG_HOME "
                    "changed?)")
        return "it was deleted or is not holodesk's record"
    tag = data.get("tag")
    body = {k: v for k, v in data.items() if k != "tag"}
    if not isinstance(tag, str) or not hmac.compare_digest(_tag(anchor.key, body), tag):
        return "it was changed outside holodesk, or copied from elsewhere"
    if anchor.record is not None and anchor.record != _digest(body):
        return "it is not the record last written (an older one put back?)"
    return ""


def write_record(path: Path, record: Record, store: SecretStore | None = None) -> None:
    """Sign ``record`` with a new key, anchor it in the keyring and replace the file.

    A new key at every write: every record written before stops verifying, so an old one put
    back (approving what the person has since taken back) is not trusted. A crash between the
    keyring and the file leaves a record that does not match its anchor: the anchor's values,
    asked again. :class:`ApprovalUnavailable` (nothing written) when the keyring cannot be used.
    """
    store = KeyringStore() if store is None else store
    data = _payload(record)
    key = secrets.token_bytes(_KEY_BYTES)
    anchor = {"format": FORMAT, "key": key.hex(), "folder": str(path.parent),
              "record": _digest(data), "settings": data["settings"]}
    try:
        store.set(KEY_ENTRY, json.dumps(anchor, sort_keys=True, separators=(",", ":")))
        log.debug("new key of the approved safety settings in the keyring (%s)",
                  store.backend_name())
        # Read back: another holodesk writing at the same moment may have stored its own, and
        # the last one stored is the one every reader gets (this record then does not match
        # its anchor: asked again).
        back = _read_anchor(store)
        if back is None:
            raise SecretsError("the keyring did not keep the key")
    except SecretsError:
        raise ApprovalUnavailable(
            f"the change cannot be remembered as approved: {_keyring_words(store)}",
            no_keyring_fix()) from None
    text = json.dumps({**data, "tag": _tag(back.key, data)}, indent=1, sort_keys=True,
                      ensure_ascii=False)
    paths.write_atomic(path, text + "\n")


def write_unsigned(path: Path, record: Record) -> bool:
    """Keep ``record`` unsigned (no keyring): a floor, see the module doc. Never over a signed
    record (a keyring locked for now: it is checked again once unlocked); whether it was
    written."""
    try:
        current = _json_object(paths.read_limited(path, MAX_RECORD))
    except FileNotFoundError:
        current = None
    except OSError:
        return False
    if current is not None and "tag" in current:
        return False
    data = {**_payload(record), "signed": False}
    paths.write_atomic(path, json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)
                       + "\n")
    return True


def remember_steps(folder: Path, key: str, steps: ApprovedSteps | None,
                   store: SecretStore | None = None) -> bool:
    """Record automation ``key``'s saved steps as holodesk wrote them (None: forget them) in
    the signed record in ``folder``; whether it could. A record that verifies is updated, and
    a first one made when there is none yet; one not trusted is left for the person's answer
    (steps not recorded are replayed as if imported, every step asked)."""
    path = record_path(folder)
    approvals = read_record(path, store)
    valid = approvals.state is RecordState.VALID
    if not valid and (approvals.state is not RecordState.MISSING or approvals.binding):
        log.info("the saved steps of %r are not signed: %s", key,
                 approvals.problem or "the record of approved settings cannot be used")
        return False
    # A first record approves the defaults only: an unsigned one's values are no approval.
    record = approvals.record if valid else Record()
    updated = dict(record.steps)
    if steps is None:
        if updated.pop(key, None) is None:
            return True
    else:
        updated[key] = steps
    try:
        write_record(path, replace(record, steps=updated), store)
    except ApprovalUnavailable as e:
        log.info("the saved steps of %r are not signed: %s", key, e.message)
        return False
    return True


def _untrusted_text(path: Path, why: str, *, anchored: bool) -> str:
    used = ("holodesk uses the values you approved, kept with its key in your keyring; every "
            "automation is asked about again before it runs" if anchored else
            "holodesk uses the defaults as the approved values (or a value of it that asks "
            "more); a safety setting you changed is asked about again")
    return f"the record of the safety settings you approved ({path}) is not trusted: {why}. {used}"


def _keyring_words(store: SecretStore) -> str:
    # Not the exception's words: they speak of the API key and of HOLODESK_API_KEY.
    name = store.backend_name()
    if name.startswith("unavailable"):
        detail = name.removeprefix("unavailable ")[1:-1]
        return f"no secure system keyring is usable here ({detail})"
    return f"the keyring ({name}) could not be used; if it is locked, unlock it"


def _read_anchor(store: SecretStore) -> _Anchor | None:
    """The keyring's entry (None when there is none, or it is not one holodesk wrote)."""
    text = store.get(KEY_ENTRY)
    if not text:
        return None
    text = text.strip()
    if not text.startswith("{"):  # an entry from before anchors: the key alone
        key = _key(text)
        return None if key is None else _Anchor(key)
    try:
        data = json.loads(text)
        key = _key(str(data["key"]))
        settings = data.get("settings")
        if key is None or not isinstance(settings, dict):
            return None
        return _Anchor(key, str(data.get("folder") or "") or None,
                       str(data.get("record") or "") or None, settings)
    except (ValueError, KeyError, TypeError):
        return None


def _key(text: str) -> bytes | None:
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        return None
    return key if len(key) == _KEY_BYTES else None


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _tag(key: bytes, data: Mapping[str, Any]) -> str:
    return hmac.new(key, _canonical(dict(data)), hashlib.sha256).hexdigest()


def _digest(data: Mapping[str, Any]) -> str:
    return hashlib.sha256(_canonical(dict(data))).hexdigest()


def _payload(record: Record) -> dict[str, Any]:
    automations: dict[str, Any] = {}
    for k, a in sorted(record.automations.items()):
        entry: dict[str, Any] = {"confirm": str(a.confirm), "digest": a.digest}
        if a.table is not None:
            entry["table"] = dict(a.table)
        automations[k] = entry
    return {
        "format": FORMAT,
        "about": _ABOUT,
        "settings": {k: record.settings[k] for k in sorted(record.settings)},
        "automations": automations,
        "steps": {k: {"digest": v.digest, "imported": v.imported}
                  for k, v in sorted(record.steps.items())},
    }


def _parse(data: Mapping[str, Any]) -> Record:
    if data.get("format") != FORMAT:
        raise ValueError(f"format {data.get('format')!r}, this holodesk writes {FORMAT}")
    settings = data["settings"]
    automations = data["automations"]
    steps = data.get("steps", {})
    if not all(isinstance(x, dict) for x in (settings, automations, steps)):
        raise TypeError("settings, automations and steps must be tables")
    return Record(
        settings={str(k): v for k, v in settings.items() if k in SAFETY_KEYS},
        automations={
            str(k): ApprovedAutomation(ConfirmMode(v["confirm"]), str(v["digest"]),
                                       dict(v["table"]) if isinstance(v.get("table"), dict)
                                       else None)
            for k, v in automations.items()
        },
        steps={str(k): ApprovedSteps(str(v["digest"]), v.get("imported") is True)
               for k, v in steps.items()},
    )


def _lenient(data: Mapping[str, Any] | None) -> Record:
    """What an unverified record says (a floor at most); nothing when it cannot be read."""
    if data is None:
        return Record()
    try:
        record = _parse(data)
    except (ValueError, TypeError, KeyError):
        return Record()
    return Record(record.settings, record.automations)  # saved steps: never from it
