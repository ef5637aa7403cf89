"""Saved automations: a named task with its confirmation mode, monitor and optional hotkey.

They live in ``config_dir()/automations.toml``, one ``[[automation]]`` table each, in the
order the person made them::

    [[automation]]
    name = "timesheet"
    task = "open the timesheet page and file today's hours"
    confirm = "risky"
    monitor = "1"
    hotkey = "ctrl+alt+1"
    only_in = ["firefox"]   # optional: the only applications it may act in
    schedule = "weekly on mon,thu at 17:30"   # optional: see app/schedule.py

    [automation.parameters.file]   # optional: a {file} placeholder in the task (app/parameters.py)
    default = "report.pdf"

The file starts with its format version (``version = 2``). A file without one was written
before versions existed (version 1, the same tables without parameters); it is read through
:data:`MIGRATIONS` and written back as the current version at the next change only, so reading
never changes a file. In a version this holodesk knows, an unknown field is an error naming it
(a typo must not be dropped silently); a file from a *newer* holodesk is refused as a whole,
with a message to update, and never overwritten: its fields would be lost.

Everything is validated on the way in (pydantic, then rules across entries) and an error names
the file and the entry. Nothing here ever writes a file it could not read: every change loads
the file, applies the change, validates the whole list and only then replaces the file
atomically, so a broken file stays as the person left it until they fix it.

Rules a person would expect:

* a name is usable on the command line (``holodesk trigger NAME``): letters, digits, spaces,
  ``.``, ``_`` and ``-``, starting with a letter or digit; names are unique ignoring case, and
  ``show``, ``stop`` and ``run`` are taken by ``holodesk trigger`` itself;
* a hotkey parses (:func:`control.hotkeys.parse_combo`), can be listened for globally, and
  is not a chord the person presses all day or holodesk's own typing presses (plain letters,
  Shift+letter, Ctrl+V, Ctrl+S, Alt+Tab, arrows...), nor one the system acts on (Ctrl+Alt+Del,
  Ctrl+Alt+F1..F12, Alt+F4): the listener does not grab keys, so the press also reaches the
  window in front. It needs two of Ctrl, Alt and Super with a key, or an F-key or Pause
  (alone or with one modifier);
* no two hotkeys fire together (:func:`control.hotkeys.conflicts`: Ctrl+Alt+S and
  Ctrl+Alt+Shift+S do), and none fires with the emergency stop hotkey. The stop hotkey is a
  setting that may change after an automation was saved, so that check is made when an
  automation is added or changed and when the app registers the hotkeys
  (:func:`stop_conflicts`), not when the file is read: a changed stop hotkey must not make the
  whole file unreadable.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from app import paths
from app.approval import (
    AUTOMATION_CHANGE,
    Approvals,
    ApprovalUnavailable,
    ApprovedAutomation,
    PendingChange,
    Record,
    RecordState,
    automation_digest,
    confirm_rank,
    no_keyring_fix,
    read_record,
    record_path,
    write_record,
    write_unsigned,
)
from app.lock import editing
from app.parameters import (
    Filled,
    Parameter,
    ParameterError,
    check_param_name,
    check_value,
    declared,
    escape,
    fill,
    placeholders,
)
from app.schedule import Schedule, ScheduleError, parse_schedule
from app.secrets import SecretStore
from app.settings import (
    RunValues,
    Settings,
    SettingsError,
    app_list,
    load_settings,
    normalize_monitor,
)
from app.toml_text import toml_data
from control.hotkeys import Combo, HotkeyError, check_bindable, conflicts, parse_combo
from control.policy import ConfirmMode
from model.problem import Fix, HolodeskError

__all__ = [
    "AUTOMATIONS_FILE",
    "FORMAT_VERSION",
    "MIGRATIONS",
    "RESERVED_NAMES",
    "Automation",
    "AutomationError",
    "NewerFileError",
    "Verdict",
    "add_automation",
    "approve_confirm",
    "automation_table",
    "automation_values",
    "automations_path",
    "check_name",
    "confirm_in_effect",
    "find_automation",
    "held_problem",
    "judge_automation",
    "keep_confirm",
    "load_automations",
    "narrow_only_in",
    "pending_confirms",
    "remove_automation",
    "replace_automation",
    "run_settings",
    "save_automations",
    "stop_conflicts",
    "test_run_values",
    "validate_automations",
    "validate_hotkey",
]

log = logging.getLogger(__name__)

AUTOMATIONS_FILE = "automations.toml"
#: The format this holodesk writes; it reads this one and every older one (:data:`MIGRATIONS`).
FORMAT_VERSION = 2
#: Words ``holodesk trigger`` takes as its own commands: no automation may be called so.
RESERVED_NAMES = frozenset({"show", "stop", "run"})
MAX_NAME = 64
_NAME_PUNCTUATION = frozenset(" ._-")
_HEADER = (
    "# holodesk automations: saved tasks, each runnable with `holodesk trigger NAME` and by its\n"
    "# hotkey while the desktop app runs. Edit them with `holodesk automation ...`, in the app,\n"
    "# or by hand (comments are not kept). `version` is the file's format: leave it as it is.\n"
)


class AutomationError(HolodeskError, ValueError):
    """An automation, or the automations file, is invalid; the message says which and why."""


class NewerFileError(AutomationError):
    """The file was written by a newer holodesk: not read, and never overwritten."""


def automations_path() -> Path:
    """The automations file, next to ``settings.toml``."""
    return paths.config_dir() / AUTOMATIONS_FILE


def check_name(value: str) -> str:
    """``value`` stripped, if it is a usable automation name; ValueError saying why if not."""
    # One spelling of "é" whichever way it was typed (one code point, or e and an accent), so
    # `holodesk trigger café` finds the automation saved from the app.
    name = unicodedata.normalize("NFC", value.strip())
    if not name:
        raise ValueError("the name is empty")
    if len(name) > MAX_NAME:
        raise ValueError(f"the name is longer than {MAX_NAME} characters")
    if not name[0].isalnum():
        raise ValueError(f"{name!r} must start with a letter or digit")
    bad = sorted({c for c in name if not (c.isalnum() or c in _NAME_PUNCTUATION)})
    if bad:
        shown = " ".join(repr(c) for c in bad)
        raise ValueError(
            f"{name!r} has characters a command line would trip over ({shown}); use letters, "
            "digits, spaces, '.', '_' and '-'"
        )
    if name.casefold() in RESERVED_NAMES:
        raise ValueError(
            f"{name!r} is taken by `holodesk trigger {name.lower()}`; choose another name"
        )
    return name


def validate_hotkey(text: str) -> str:
    """A hotkey in canonical form (``ctrl+alt+1``), or :class:`HotkeyError` saying why not.

    The rule of every hotkey a person binds, the stop hotkey's too
    (:func:`control.hotkeys.check_bindable`): a chord the person types in daily work, or that
    holodesk's own typing presses, would start the automation by accident, and a system chord
    (Ctrl+Alt+Del, Ctrl+Alt+F2) would start it on a desktop being left.
    """
    combo = check_bindable(
        text, shift_example="f5", example="ctrl+alt+1",
        typing="is pressed in ordinary typing; use Ctrl+Alt with a key (e.g. ctrl+alt+1), or "
               "a key typing never produces (e.g. f9)",
    )
    return str(combo)


class Automation(BaseModel):
    """One saved task. Immutable; validated field by field (rules across entries are in
    :func:`validate_automations`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="how it is called: `holodesk trigger NAME`, the tray menu")
    task: str = Field(description="what to do, in plain words, as for `holodesk run`")
    confirm: ConfirmMode = Field(
        default=ConfirmMode.RISKY, description="which actions to confirm first"
    )
    monitor: str = Field(default="1", description="as the monitor setting: 1, 0, mouse, WxH+X+Y")
    hotkey: str | None = Field(default=None, description="a global hotkey, e.g. ctrl+alt+1")
    only_in: tuple[str, ...] = Field(
        default=(), description="the only applications it may act in (empty: any)")
    schedule: str | None = Field(
        default=None, description="when it runs by itself, e.g. daily at 09:00 (app/schedule.py)")
    parameters: dict[str, Parameter] = Field(
        default_factory=dict, description="the {name} placeholders of the task, declared")

    @field_validator("name", mode="before")
    @classmethod
    def _check_name(cls, value: object) -> object:
        return check_name(value) if isinstance(value, str) else value

    @field_validator("task", mode="before")
    @classmethod
    def _check_task(cls, value: object) -> object:
        if isinstance(value, str):
            if not value.strip():
                raise ValueError("the task is empty; say what to do")
            placeholders(value)  # a stray brace is named here, with the task
            return value.strip()
        return value

    @field_validator("parameters", mode="before")
    @classmethod
    def _check_parameters(cls, value: object) -> object:
        if isinstance(value, Mapping):
            for name in value:
                check_param_name(str(name))
        return value

    @model_validator(mode="after")
    def _check_placeholders(self) -> Automation:
        # The task's braces are checked here, not in the task's own validator: the message
        # names both what the task uses and what is declared.
        problems = declared(self.task, self.parameters)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @field_validator("only_in", mode="before")
    @classmethod
    def _check_only_in(cls, value: object) -> object:
        return app_list(value)

    @field_validator("monitor", mode="before")
    @classmethod
    def _check_monitor(cls, value: object) -> object:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        return normalize_monitor(value) if isinstance(value, str) else value

    @field_validator("hotkey", mode="before")
    @classmethod
    def _check_hotkey(cls, value: object) -> object:
        if isinstance(value, str):
            return validate_hotkey(value) if value.strip() else None
        return value

    @field_validator("schedule", mode="before")
    @classmethod
    def _check_schedule(cls, value: object) -> object:
        # Stored in its canonical text: the file stays readable and one spelling compares equal.
        if isinstance(value, str):
            if not value.strip():
                return None
            try:
                return parse_schedule(value).text()
            except ScheduleError as e:
                raise ValueError(str(e)) from None
        return value

    @classmethod
    def make(cls, source: str = "", **values: object) -> Automation:
        """Validate ``values`` into an automation; :class:`AutomationError` naming the field
        (after ``source``, when given) when one is bad."""
        try:
            return cls.model_validate(values)
        except ValidationError as e:
            raise AutomationError(_explain(e, source)) from None

    @property
    def key(self) -> str:
        """The name as compared: case does not matter."""
        return self.name.casefold()

    @property
    def combo(self) -> Combo | None:
        return parse_combo(self.hotkey) if self.hotkey else None

    @property
    def when(self) -> Schedule | None:
        """Its schedule, read (the field holds the canonical text)."""
        return parse_schedule(self.schedule) if self.schedule else None

    def hotkey_label(self) -> str:
        """``Ctrl+Alt+1`` for people, or an empty string."""
        combo = self.combo
        return combo.label() if combo is not None else ""

    def needs(self) -> list[str]:
        """The parameters the task uses, in order of first use."""
        return placeholders(self.task)

    def secret_parameters(self) -> list[str]:
        return [n for n, p in self.parameters.items() if p.secret]

    def fill(self, values: Mapping[str, str]) -> Filled:
        """The task filled with ``values`` (checked: one printable line each; parameters not
        declared are refused); :class:`AutomationError` naming what is missing or bad."""
        unknown = sorted(set(values) - set(self.parameters))
        if unknown:
            known = ", ".join(self.parameters) or "none"
            raise AutomationError(
                f"{self.name!r} has no parameter {', '.join(map(repr, unknown))} "
                f"(its parameters: {known})")
        try:
            checked = {k: check_value(f"the value of {k}", v) for k, v in values.items()}
            task = fill(self.task, checked)
        except ParameterError as e:
            raise AutomationError(f"automation {self.name!r}: {e}") from None
        return Filled(task, checked, frozenset(self.secret_parameters()) & set(checked))

    def changed(self, **values: object) -> Automation:
        """A validated copy with ``values`` changed (``hotkey=None`` removes the hotkey)."""
        return Automation.make(f"automation {self.name!r}",
                               **{**self.model_dump(mode="json"), **values})


@dataclass(frozen=True)
class Verdict:
    """What the person approved for a run of an automation (:func:`judge_automation`).

    ``confirm`` is the mode a run gets: the approved one, or the file's when it asks more;
    ``only_in`` the applications: the approved ones, or the file's when narrower. ``held``:
    what it does was changed (or it was added) outside holodesk and is not approved, so it does
    not run until the person approves it (a test run, every step confirmed, excepted).
    ``change`` is the question waiting for the person, if any.
    """

    confirm: ConfirmMode
    only_in: tuple[str, ...]
    held: bool = False
    change: PendingChange | None = None


def judge_automation(automation: Automation, baseline: ConfirmMode | str,
                     approvals: Approvals) -> Verdict:
    """What the record approves for ``automation`` as the file has it.

    The approved entry is the floor whenever there is one for what the automation does now
    (its digest, :func:`app.approval.automation_digest`): its mode, unless the file's asks
    more. One never approved, or changed outside holodesk since, has ``baseline`` (the
    settings' mode) approved, or the entry's mode when that asks more, and the applications it
    was approved with; while the keyring holds a record's key (``approvals.binding``) it is
    also held. A record that cannot be checked counts only where it asks more than the baseline.
    """
    baseline = ConfirmMode(baseline)
    table = automation_table(automation)
    digest = automation_digest(table)
    entry = approvals.automation(automation.key) \
        if approvals.state is RecordState.VALID or approvals.floor_only else None
    matches = entry is not None and entry.digest == digest
    approved = baseline
    only_in = automation.only_in
    held = False
    change: PendingChange | None = None
    if matches and entry is not None:
        if not approvals.floor_only or confirm_rank(entry.confirm) > confirm_rank(baseline):
            approved = entry.confirm
    elif approvals.binding:
        held = True
        if entry is not None and confirm_rank(entry.confirm) > confirm_rank(baseline):
            approved = entry.confirm
        before = entry.table if entry is not None else None
        if before is not None:
            was = tuple(str(a) for a in before.get("only_in", ()))
            narrower = bool(only_in) and (not was or {a.casefold() for a in only_in}
                                          <= {a.casefold() for a in was})
            only_in = only_in if narrower or tuple(only_in) == was else was
        change = PendingChange(AUTOMATION_CHANGE, dict(before) if before is not None else None,
                               table, automation=automation.name, digest=digest)
    confirm = automation.confirm if confirm_rank(automation.confirm) >= confirm_rank(approved) \
        else approved
    if change is None and confirm is not automation.confirm:
        change = PendingChange("confirm", str(approved), str(automation.confirm),
                               automation=automation.name, digest=digest, task=automation.task)
    return Verdict(confirm, tuple(only_in), held, change)


def run_settings(settings: Settings, automation: Automation, *,
                 approvals: Approvals | None = None) -> Settings:
    """``settings`` with what a run of ``automation`` gets (:func:`automation_values`), not
    saved. Whether it may run at all is :func:`held_problem`'s; a run's whole request, the
    person's choices included, is app/run_request.py's."""
    return settings.for_run(automation_values(settings, automation, approvals=approvals))


def automation_values(settings: Settings, automation: Automation, *,
                      approvals: Approvals | None = None) -> RunValues:
    """What a run of ``automation`` gets over ``settings``: its confirmation mode, monitor
    and the applications it may act in, never looser than ``settings`` (see
    :func:`narrow_only_in`), nor than what the person approved for it
    (:func:`judge_automation`; ``approvals`` defaults to the record beside the automations
    file)."""
    if approvals is None:
        approvals = read_record(record_path(automations_path().parent))
    verdict = judge_automation(automation, settings.confirm, approvals)
    return _own_values(settings, automation, verdict.confirm, verdict.only_in)


def test_run_values(settings: Settings, automation: Automation) -> RunValues:
    """What a test run of ``automation`` gets over ``settings``: every step confirmed, its
    monitor, and its applications (never more than ``settings`` allow)."""
    return _own_values(settings, automation, ConfirmMode.ALWAYS, automation.only_in)


def _own_values(settings: Settings, automation: Automation, confirm: ConfirmMode,
                only_in: Sequence[str]) -> RunValues:
    source = f"automation {automation.name!r}"
    apps = narrow_only_in(settings, only_in, automation.name) if only_in else None
    given = ("confirm", "monitor") + (("only_in",) if apps is not None else ())
    return RunValues(confirm=confirm, monitor=automation.monitor, only_in=apps,
                     sources=tuple((name, source) for name in given))


def held_problem(automation: Automation, settings: Settings,
                 approvals: Approvals | None = None) -> AutomationError | None:
    """Why ``automation`` does not run now: what it does was changed (or it was added)
    outside holodesk and the person has not approved it; None when it may run."""
    if approvals is None:
        approvals = read_record(record_path(automations_path().parent))
    verdict = judge_automation(automation, settings.confirm, approvals)
    if not verdict.held:
        return None
    return AutomationError(
        f"{automation.name!r} was not run: it was changed or added outside holodesk (not with "
        "the automation commands or the Automations window), and what it does now is not "
        "approved",
        Fix("look at the change and approve or refuse it: `holodesk config approve` in a "
            "terminal, or the window the desktop app shows"))


def confirm_in_effect(automation: Automation, baseline: ConfirmMode | str,
                      approvals: Approvals) -> tuple[ConfirmMode, PendingChange | None]:
    """The confirmation mode a run of ``automation`` gets, and the change waiting for the
    person's approval (:func:`judge_automation`)."""
    verdict = judge_automation(automation, baseline, approvals)
    return verdict.confirm, verdict.change


def pending_confirms(items: Sequence[Automation], baseline: ConfirmMode | str,
                     approvals: Approvals) -> list[PendingChange]:
    """The automations' modes, and what they do, changed outside holodesk and not approved."""
    return [c for a in items if (c := confirm_in_effect(a, baseline, approvals)[1]) is not None]


def narrow_only_in(settings: Settings, only_in: Sequence[str], name: str) -> tuple[str, ...]:
    """The applications a run of automation ``name`` limited to ``only_in`` may act in over
    ``settings``: those both allow (compared ignoring case), since an automation's list only
    narrows (an imported one's too); :class:`AutomationError` when none is allowed by both."""
    allowed = {app.casefold() for app in settings.only_in}
    both = tuple(app for app in only_in if not allowed or app.casefold() in allowed)
    if not both:
        raise AutomationError(
            f"{name!r} was not run: it may act only in {', '.join(only_in)}, and the "
            f"settings allow only {', '.join(settings.only_in)}",
            "add one of its applications to the settings' list of the only applications "
            "a run may act in, or change the automation's")
    return both


def validate_automations(
    items: Sequence[Automation], *, stop_hotkey: str | None = None, source: str = "automations"
) -> list[Automation]:
    """``items`` as a list, once names are unique and no two hotkeys fire together (nor with
    ``stop_hotkey``, when given); :class:`AutomationError` naming the entries otherwise."""
    problems: list[str] = []
    seen: dict[str, Automation] = {}
    for item in items:
        other = seen.get(item.key)
        if other is not None:
            problems.append(f"the name {item.name!r} is used twice (names ignore case: "
                            f"{other.name!r})")
        else:
            seen[item.key] = item
    with_keys = [a for a in items if a.hotkey]
    for i, a in enumerate(with_keys):
        for b in with_keys[:i]:
            if a.key != b.key and conflicts(a.hotkey or "", b.hotkey or ""):
                problems.append(_conflict_text(a, f"the hotkey of {b.name!r} ({b.hotkey_label()})"))
    if stop_hotkey:
        problems += stop_conflicts(items, stop_hotkey)
    if problems:
        raise AutomationError("\n".join(f"{source}: {p}" for p in problems))
    return list(items)


def stop_conflicts(items: Sequence[Automation], stop_hotkey: str) -> list[str]:
    """One sentence per automation whose hotkey would fire with the emergency stop hotkey."""
    try:
        stop = parse_combo(stop_hotkey)
    except HotkeyError:
        return []  # the settings validate it; nothing to compare with here
    return [
        _conflict_text(a, f"the emergency stop hotkey ({stop.label()})")
        for a in items
        if a.hotkey and conflicts(a.hotkey, stop)
    ]


def _conflict_text(a: Automation, other: str) -> str:
    return (f"the hotkey {a.hotkey_label()} of {a.name!r} conflicts with {other}: pressing "
            "one would fire both; choose another hotkey")


def find_automation(items: Sequence[Automation], name: str) -> Automation:
    """The automation called ``name`` (any case); :class:`AutomationError` listing the known
    names when there is none."""
    wanted = unicodedata.normalize("NFC", name.strip()).casefold()
    for item in items:
        if item.key == wanted:
            return item
    known = ", ".join(repr(a.name) for a in items)
    hint = f"known: {known}" if known else "there are none yet; add one with " \
        "`holodesk automation add NAME --task TEXT`"
    raise AutomationError(f"no automation named {name.strip()!r} ({hint})")


# -- the file --------------------------------------------------------------------------------


def load_automations(path: Path | None = None) -> list[Automation]:
    """The saved automations, in order (none when the file does not exist).

    Raises :class:`AutomationError` naming the file, the entry and the problem.
    """
    path = automations_path() if path is None else path
    data = _read(path)
    version = _version(data, path)
    raw = data.get("automation", [])
    extra = sorted(set(data) - {"automation", "version"})
    if extra:
        raise AutomationError(
            f"{path}: unexpected {extra[0]!r}; each automation is an [[automation]] table"
        )
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        raise AutomationError(f"{path}: 'automation' must be a list of [[automation]] tables")
    for old in range(version, FORMAT_VERSION):
        raw = MIGRATIONS[old](raw, path)
    items: list[Automation] = []
    errors: list[str] = []  # every bad entry at once: the person fixes them in one go
    for i, entry in enumerate(raw, start=1):
        try:
            items.append(Automation.make(f"{path}: automation {i} ({_entry_name(entry)})",
                                         **entry))
        except AutomationError as e:
            errors.append(str(e))
    if errors:
        raise AutomationError("\n".join(errors))
    return validate_automations(items, source=str(path))


def save_automations(
    items: Sequence[Automation], path: Path | None = None, *, stop_hotkey: str | None = None
) -> Path:
    """Validate ``items`` as a whole, then replace the file atomically; returns its path."""
    path = automations_path() if path is None else path
    validate_automations(items, stop_hotkey=stop_hotkey)
    _refuse_newer(path)
    tables = [automation_table(a) for a in items]
    text = tomli_w.dumps({"version": FORMAT_VERSION, "automation": tables})
    paths.write_atomic(path, _HEADER + text)
    log.info("saved %d automation(s) to %s", len(items), path)
    return path


def add_automation(
    automation: Automation, *, path: Path | None = None, stop_hotkey: str | None = None,
    store: SecretStore | None = None,
) -> list[Automation]:
    """Append ``automation`` to the file; the new list. Refuses a taken name or hotkey.

    Its confirmation mode is the person's choice: approved for what it does (``store`` holds
    the record's key, :mod:`app.approval`)."""
    path = automations_path() if path is None else path
    with editing(path):
        items = load_automations(path)
        for other in items:
            if other.key == automation.key:
                raise AutomationError(
                    f"an automation named {other.name!r} exists already; edit it, or choose "
                    "another name"
                )
        items.append(automation)
        _check_new(items, automation, stop_hotkey)
        _refuse_newer(path)
        _remember(path, None, automation, chosen=True, store=store)
        save_automations(items, path)
    return items


def replace_automation(
    name: str,
    automation: Automation,
    *,
    path: Path | None = None,
    stop_hotkey: str | None = None,
    confirm_chosen: bool = False,
    store: SecretStore | None = None,
) -> list[Automation]:
    """Replace the automation called ``name`` (it may be renamed); the new list.

    ``confirm_chosen``: the person chose the new confirmation mode in this change (an edit's
    ``--confirm``, the window's field as shown), so it is approved for what the automation now
    does. Otherwise the mode approved before carries over, and a file's mode that asks less
    than that stays waiting for approval: an edit of something else approves nothing."""
    path = automations_path() if path is None else path
    with editing(path):
        items = load_automations(path)
        old = find_automation(items, name)
        items = [automation if a is old else a for a in items]
        for other in items:
            if other.key == automation.key and other is not automation:
                raise AutomationError(
                    f"an automation named {other.name!r} exists already; choose another name"
                )
        _check_new(items, automation, stop_hotkey)
        _refuse_newer(path)
        _remember(path, old, automation, chosen=confirm_chosen, store=store)
        save_automations(items, path)
    return items


def remove_automation(name: str, *, path: Path | None = None,
                      store: SecretStore | None = None) -> list[Automation]:
    """Delete the automation called ``name`` (and its approved confirmation mode); the list
    left."""
    path = automations_path() if path is None else path
    with editing(path):
        items = load_automations(path)
        old = find_automation(items, name)
        items = [a for a in items if a is not old]
        _refuse_newer(path)
        _remember(path, old, None, chosen=False, store=store)
        save_automations(items, path)
    return items


def approve_confirm(change: PendingChange, *, path: Path | None = None,
                    store: SecretStore | None = None) -> bool:
    """Approve what the person was shown for an automation (``change``: its mode, or what it
    does), while the file still holds exactly that; False when it does not any more (nothing
    approved: a task swapped while the question waited is asked about again).

    :class:`app.approval.ApprovalUnavailable` when there is no keyring to remember it.
    """
    path = automations_path() if path is None else path
    with editing(path):
        current = _still(change, load_automations(path))
        if current is None:
            return False
        _remember(path, current, current, chosen=True, store=store, strict=True)
    return True


def keep_confirm(change: PendingChange, *, path: Path | None = None,
                 store: SecretStore | None = None) -> bool:
    """Write the approved automation back into the file for a change the person refused (while
    the file still holds what was shown): its approved mode, or everything it was approved
    with; one never approved (added outside holodesk) is taken out of the file. What was
    refused goes to the log only. False when the file holds something else by now."""
    path = automations_path() if path is None else path
    with editing(path):
        items = load_automations(path)
        current = _still(change, items)
        if current is None:
            return False
        kept: Automation | None
        if change.key != AUTOMATION_CHANGE:
            kept = current.changed(confirm=change.approved)
        elif isinstance(change.approved, Mapping):
            kept = Automation.make(f"automation {current.name!r}", **dict(change.approved))
        else:
            kept = None
        log.info("refused by you, not applied: %s in %s (%s)", change.describe(), path,
                 "the approved one is written back" if kept is not None else
                 f"it is taken out of the file; it was {automation_table(current)}")
        items = [k for a in items if (k := (kept if a is current else a)) is not None]
        _refuse_newer(path)
        _remember(path, current, kept, chosen=True, store=store)
        save_automations(items, path)
    return True


def _still(change: PendingChange, items: Sequence[Automation]) -> Automation | None:
    """The automation of ``change`` if the file still holds what the person was shown: the
    same mode, and the same task, applications and all (its digest)."""
    if change.automation is None:
        return None
    try:
        current = find_automation(items, change.automation)
    except AutomationError:
        return None
    table = automation_table(current)
    if change.digest and automation_digest(table) != change.digest:
        return None
    if change.key == AUTOMATION_CHANGE:
        return current if table == change.in_file else None
    return current if str(current.confirm) == change.in_file else None


def _remember(path: Path, old: Automation | None, new: Automation | None, *, chosen: bool,
              store: SecretStore | None, strict: bool = False) -> None:
    """Update the record of approved automations for a change the person made with holodesk
    (``old`` replaced by ``new``; either may be None), before the file is written.

    ``new`` is approved as it is, with its mode when the person chose it (``chosen``, or a new
    automation); otherwise ``old``'s approved mode carries over unless the new one asks more.
    Without a keyring the record is kept unsigned (a floor): a mode that asks less than the
    settings' is then refused (AutomationError, nothing written), as is any approval with
    ``strict``.
    """
    record_file = record_path(path.parent)
    approvals = read_record(record_file, store)
    valid = approvals.state is RecordState.VALID
    entries = dict(approvals.record.automations) if valid else {}
    floor = dict(approvals.record.automations) if approvals.floor_only else {}
    steps = dict(approvals.record.steps) if valid else {}
    baseline = _settings_confirm(path)
    looser = False
    if old is not None:
        entries.pop(old.key, None)
        floor.pop(old.key, None)
        moved = steps.pop(old.key, None)
        if moved is not None and new is not None:
            steps[new.key] = moved  # renamed: the steps go along (app/trajectory.py signs them)
    if new is not None:
        mode = new.confirm
        if old is not None and not chosen:
            before = confirm_in_effect(old, baseline, approvals)[0]
            if confirm_rank(mode) < confirm_rank(before):
                mode = before
        table = automation_table(new.changed(confirm=mode) if mode is not new.confirm else new)
        entries[new.key] = floor[new.key] = ApprovedAutomation(
            ConfirmMode(mode), automation_digest(table), table)
        looser = confirm_rank(mode) < confirm_rank(baseline)
    # The settings approved so far: the record's, or the anchor's when it is not trusted.
    settings = approvals.record.settings if valid or approvals.binding else {}
    try:
        write_record(record_file, Record(settings, entries, steps), store)
    except ApprovalUnavailable as e:
        if (looser or strict) and new is not None:
            raise AutomationError(
                f"{new.name!r} was not saved: its confirmation mode {new.confirm} asks less than "
                f"the settings' ({baseline}), and {e.message}", no_keyring_fix("confirm")) from None
        write_unsigned(record_file, Record(approvals.record.settings, floor))
        log.info("automations saved without a record of approval: %s", e.message)


def _settings_confirm(path: Path) -> ConfirmMode:
    """The settings' confirmation mode beside the automations file (risky when they cannot be
    read: they are reported where they are used)."""
    try:
        return load_settings(path.parent / paths.SETTINGS_FILE).confirm
    except SettingsError:
        return ConfirmMode.RISKY


def _check_new(items: Sequence[Automation], new: Automation, stop_hotkey: str | None) -> None:
    # The entry being saved is named first: it is the one to change.
    if new.hotkey:
        for other in items:
            if other is not new and other.hotkey and conflicts(new.hotkey, other.hotkey):
                raise AutomationError(_conflict_text(
                    new, f"the hotkey of {other.name!r} ({other.hotkey_label()})"))
    validate_automations(items, source=f"automation {new.name!r}")
    # The stop hotkey is checked for the entry being saved only: an older entry that conflicts
    # (the stop hotkey changed since) must not block every other edit.
    if stop_hotkey:
        problems = stop_conflicts([new], stop_hotkey)
        if problems:
            raise AutomationError(problems[0])


def automation_table(a: Automation) -> dict[str, Any]:
    """``a`` as its TOML table: unset values left out (a parameter's too)."""
    table = {k: v for k, v in a.model_dump(mode="json").items() if v is not None}
    params = {
        name: {k: v for k, v in p.items() if v not in (None, False, "")}
        for name, p in table.pop("parameters", {}).items()
    }
    if params:
        table["parameters"] = params
    return table


def _version(data: Mapping[str, Any], path: Path) -> int:
    """The file's format version (1 when it has none: written before versions existed)."""
    if not data:
        return FORMAT_VERSION
    version = data.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise AutomationError(
            f"{path}: version = {version!r} is not a format version (a whole number; this "
            f"holodesk writes {FORMAT_VERSION}); leave it as holodesk wrote it")
    if version > FORMAT_VERSION:
        raise NewerFileError(
            f"{path}: written by a newer holodesk (format version {version}; this one knows "
            f"versions up to {FORMAT_VERSION}). Update holodesk to use these automations; "
            "the file is left as it is and is not changed from here.")
    return version


def _refuse_newer(path: Path) -> None:
    """Raise :class:`NewerFileError` when ``path`` holds a newer holodesk's automations: a
    save would drop what this version does not know. A file that cannot be read at all is
    replaced as before (the edits that read it first already refused it)."""
    try:
        data = _read(path)
    except AutomationError:
        return
    _version(data, path)


#: Fields of a version 1 automation (a file without ``version``).
V1_FIELDS = frozenset({"name", "task", "confirm", "monitor", "hotkey", "only_in"})


def _from_v1(entries: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    """Version 1 -> 2: braces in a task were plain text, now they mark parameters, so they are
    doubled (``{x}`` stays the text "{x}"). A field version 1 did not have is an error: it
    was written for version 2 by hand, without the line that says so."""
    out = []
    for i, entry in enumerate(entries, start=1):
        extra = sorted(set(entry) - V1_FIELDS)
        if extra:
            raise AutomationError(
                f"{path}: automation {i} ({_entry_name(entry)}): {extra[0]!r} is not a field of "
                f"a version 1 file (fields: {', '.join(sorted(V1_FIELDS))}); to use it, add "
                f"version = {FORMAT_VERSION} as the first line of the file and write braces "
                "in tasks as {{ and }}")
        task = entry.get("task")
        out.append({**entry, "task": escape(task)} if isinstance(task, str) else dict(entry))
    return out


#: One step per format version: ``MIGRATIONS[n]`` turns version n's entries into version n+1's.
MIGRATIONS: dict[int, Callable[[list[dict[str, Any]], Path], list[dict[str, Any]]]] = {
    1: _from_v1,
}


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = paths.read_limited(path)
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise AutomationError(f"{path}: cannot be read ({e.strerror or e})") from None
    return toml_data(raw, str(path), AutomationError)


def _entry_name(entry: Mapping[str, Any]) -> str:
    name = entry.get("name")
    return repr(name) if isinstance(name, str) and name.strip() else "no name"


def _explain(error: ValidationError, source: str) -> str:
    lines = []
    for err in error.errors():
        loc = err["loc"]
        field = str(loc[0]) if loc else ""
        kind = err["type"]
        if field == "parameters" and len(loc) > 1:
            # A parameter's own field: name the parameter and the field.
            inner = ".".join(str(p) for p in loc[1:])
            detail = str((err.get("ctx") or {}).get("error") or err["msg"])
            if kind == "extra_forbidden":
                detail = (f"is not a field of a parameter (fields: "
                          f"{', '.join(Parameter.model_fields)})")
            text = f"parameters.{inner} {detail}" if kind == "extra_forbidden" else \
                f"parameters.{inner}: {detail}"
        elif not field:
            ctx_error = (err.get("ctx") or {}).get("error")
            text = str(ctx_error) if ctx_error is not None else str(err["msg"])
        elif kind == "extra_forbidden":
            text = (f"{field!r} is not a field of an automation (fields: "
                    f"{', '.join(Automation.model_fields)})")
        elif kind == "missing":
            text = f"{field} is missing"
        elif kind == "enum":
            expected = (err.get("ctx") or {}).get("expected", "")
            text = f"{field} = {err.get('input')!r} must be one of: {expected}"
        elif kind == "value_error":
            ctx_error = (err.get("ctx") or {}).get("error")
            detail = str(ctx_error) if ctx_error is not None else str(err["msg"])
            # The name, task and hotkey checks quote the value themselves.
            text = f"{field}: {detail}" if field in ("name", "task", "hotkey", "schedule",
                                                     "parameters") else \
                f"{field} = {err.get('input')!r} {detail}"
        else:
            text = f"{field}: {str(err['msg']).lower()}"
        lines.append(f"{source}: {text}" if source else text)
    return "\n".join(lines)
