"""Sharing an automation: one file with the automation, its parameters' declarations, its
schedule and (when the person says so) its saved steps; and reading such a file back.

The file is a zip (``NAME.holodesk.zip``) holding:

* ``automation.toml``: ``format`` (:data:`FORMAT_VERSION`, this file's own format),
  ``automations_version`` (the automations file's format the table is written in) and the
  ``[automation]`` table exactly as ``automations.toml`` has it. A secret parameter is only
  declared there: its value lives in the keyring and is never exported (and an export that
  would contain a stored secret anywhere is refused, in case one slipped past the recorder);
* ``trajectory.json`` and the PNG pictures it names (the screen crops and the tiny grey "state
  before" thumbnails), only when the saved steps are included. The crops show parts of the
  screen as it was, which may be personal data: :class:`ExportPlan` lists them so the front ends
  can show them before the person decides; no front end includes them without being told.

Reading (:func:`read_share`) trusts nothing in the file: the size of the file and of each member
is bounded before anything is decompressed (a zip bomb), only the expected member names are
accepted (nothing else, no folders, no ``..``, no duplicates), the automation goes through the
same model as ``automations.toml`` (and the file's migrations), the steps through the trajectory's
own loader (its model, its format version, every action parsed, every picture present), and
every picture must decode as a PNG of bounded size. Nothing is written until all of it passed.

Importing (:func:`import_automation`) then adds the automation with the same rules across entries
as an edit: a taken name is refused unless the person renames it or replaces theirs; a hotkey that
fires with another one or with the stop hotkey is refused with the reason. Two choices keep an
imported automation from acting before the person looked at it: its schedule is not kept unless
they ask for it (it is reported, with how to set it), and a confirmation mode of ``never`` becomes
``risky``. Its steps are untrusted input, replayed under the same safety net as the model's
actions (docs/safety.md).
"""

from __future__ import annotations

import io
import json
import logging
import re
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w
from PIL import Image

from app import paths
from app.automations import (
    FORMAT_VERSION as AUTOMATIONS_VERSION,
)
from app.automations import (
    MIGRATIONS,
    Automation,
    AutomationError,
    add_automation,
    automation_table,
    automations_path,
    find_automation,
    load_automations,
    replace_automation,
)
from app.parameter_values import SecretParameterError, forget_secrets, stored_secrets
from app.secrets import SecretStore
from app.toml_text import toml_data
from app.trajectory import (
    TRAJECTORY_FILE,
    Trajectory,
    TrajectoryError,
    forget_trajectory,
    load_trajectory,
    picture_names,
    save_trajectory,
    sign_steps,
    trajectory_dir,
)
from control.policy import ConfirmMode
from model.problem import HolodeskError
from model.run_secrets import MIN_REDACT_LEN, RunSecrets, forms_of

__all__ = [
    "AUTOMATION_MEMBER",
    "FORMAT_VERSION",
    "SUFFIX",
    "ExportPlan",
    "Imported",
    "NameTaken",
    "ShareError",
    "Shared",
    "default_output",
    "export_automation",
    "import_automation",
    "plan_export",
    "read_share",
    "write_pictures",
]

log = logging.getLogger(__name__)

#: The format of the shared file itself (its members and automation.toml's top level).
FORMAT_VERSION = 1
SUFFIX = ".holodesk.zip"
AUTOMATION_MEMBER = "automation.toml"
#: Bounds checked before anything is decompressed: far above any real export (a step keeps
#: crops of at most 384 px and a thumbnail of the screen / 16), far below a zip bomb.
MAX_FILE = 64 * 1024 * 1024
MAX_MEMBERS = 2000
MAX_TEXT = 1024 * 1024
MAX_TRAJECTORY = 8 * 1024 * 1024
MAX_PICTURE = 4 * 1024 * 1024
MAX_TOTAL = 128 * 1024 * 1024
MAX_PIXELS = 4096 * 4096
_PICTURE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,120}\.png\Z")


class ShareError(HolodeskError):
    """A shared automation file cannot be written or read; the message says which and why."""


class NameTaken(ShareError):
    """The imported automation's name is taken here; the front end says how to choose."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"an automation named {name!r} exists already; nothing was imported")


@dataclass(frozen=True)
class ExportPlan:
    """What an export of ``automation`` can hold: ``trajectory`` and its ``pictures`` (file
    name: PNG bytes) when it has usable saved steps; ``problem`` says why not when they are
    there but unusable."""

    automation: Automation
    trajectory: Trajectory | None = None
    pictures: dict[str, bytes] = field(default_factory=dict)
    problem: str = ""

    @property
    def crops(self) -> list[str]:
        """The pictures that are screen crops (what the person should look at)."""
        if self.trajectory is None:
            return []
        return [a.crop for s in self.trajectory.steps for a in s.anchors]

    def typed(self) -> list[str]:
        """The texts the saved steps type, as they will be in the file (secrets are empty)."""
        if self.trajectory is None:
            return []
        return [str(s.action.get("text", "")) for s in self.trajectory.steps
                if s.action.get("action") == "type" and not s.secret]

    def summary(self) -> list[str]:
        """What goes in, one line each, for people."""
        a = self.automation
        lines = [f"automation {a.name!r}: {a.task}",
                 f"confirm {a.confirm}, monitor {a.monitor}"
                 + (f", hotkey {a.hotkey_label()}" if a.hotkey else "")
                 + (f", only in {', '.join(a.only_in)}" if a.only_in else "")]
        for name, p in a.parameters.items():
            if p.secret:
                lines.append(f"parameter {name}: secret (its value stays in your keyring)")
            else:
                default = f"default {p.default!r}" if p.default else "no default"
                lines.append(f"parameter {name}: {default}")
        if a.when is not None:
            lines.append(f"schedule: {a.when.label()}")
        if self.trajectory is not None:
            size = sum(len(self.pictures[n]) for n in self.crops)
            lines.append(f"saved steps: {len(self.trajectory.steps)}, with "
                         f"{len(self.crops)} screen crops ({_kib(size)})")
            lines += [f"  a step types {t!r}" for t in self.typed()]
        elif self.problem:
            lines.append(f"saved steps: not exported ({self.problem})")
        else:
            lines.append("saved steps: none")
        return lines


@dataclass(frozen=True)
class Shared:
    """A shared file read and validated: nothing in it has been written anywhere yet."""

    source: Path
    automation: Automation
    trajectory: Trajectory | None = None
    pictures: dict[str, bytes] = field(default_factory=dict)

    def summary(self) -> list[str]:
        return ExportPlan(self.automation, self.trajectory, self.pictures).summary()


@dataclass(frozen=True)
class Imported:
    """What an import did, and the notes to tell the person."""

    automation: Automation
    steps: int
    notes: tuple[str, ...]


# -- export -------------------------------------------------------------------------------------


def plan_export(name: str, *, automations: Path | None = None,
                root: Path | None = None) -> ExportPlan:
    """What exporting automation ``name`` can include (reads its saved steps, if any)."""
    automation = find_automation(load_automations(automations), name)
    try:
        trajectory = load_trajectory(automation.key, root)
    except TrajectoryError as e:
        return ExportPlan(automation, problem=f"they cannot be read: {e}")
    if trajectory is None:
        return ExportPlan(automation)
    if trajectory.template != automation.task:
        # They would not replay here either (the task changed since they were recorded).
        return ExportPlan(automation, problem="the task changed since they were recorded")
    folder = trajectory_dir(automation.key, root)
    pictures = {n: (folder / n).read_bytes() for n in picture_names(trajectory)}
    return ExportPlan(automation, trajectory, pictures)


def write_pictures(plan: ExportPlan, folder: Path) -> list[Path]:
    """Write the plan's screen crops into ``folder`` for the person to look at; their paths."""
    paths.ensure_private_dir(folder)
    out = []
    for index, name in enumerate(plan.crops, start=1):
        path = folder / f"crop-{index:03d}-{name}"
        path.write_bytes(plan.pictures[name])
        out.append(path)
    return out


def default_output(automation: Automation, folder: Path | None = None) -> Path:
    """``NAME.holodesk.zip`` in ``folder`` (the current one by default)."""
    stem = automation.name.replace(" ", "-")
    return (Path.cwd() if folder is None else folder) / f"{stem}{SUFFIX}"


def export_automation(plan: ExportPlan, dest: Path, *, with_steps: bool,
                      store: SecretStore | None = None,
                      secrets: RunSecrets | None = None) -> Path:
    """Write the plan to ``dest`` at once (a crash leaves no half file); the saved steps only
    when ``with_steps``. Refuses to replace an existing file, and refuses an export that would
    contain, in any form (:mod:`model.run_secrets`), a secret parameter's stored value or one
    of ``secrets`` (a run's: the API key, what it typed as a secret)."""
    if dest.exists():
        raise ShareError(f"{dest} exists already; choose another file name, or move it away "
                         "first (nothing was written)")
    members: dict[str, bytes] = {AUTOMATION_MEMBER: _automation_toml(plan.automation)}
    steps = with_steps and plan.trajectory is not None
    if steps:
        assert plan.trajectory is not None
        members[TRAJECTORY_FILE] = json.dumps(plan.trajectory.model_dump(mode="json"),
                                              indent=1, ensure_ascii=False).encode()
        members.update(plan.pictures)
    _refuse_secrets(plan.automation, members, store)
    if secrets is not None:
        _refuse_run_secrets(plan.automation, members, secrets)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, content in members.items():
            kind = zipfile.ZIP_STORED if name.endswith(".png") else zipfile.ZIP_DEFLATED
            zf.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), content,
                        compress_type=kind)
    paths.write_atomic_bytes(dest, buffer.getvalue(), private_dir=False)
    log.info("exported automation %r to %s (%s)", plan.automation.name, dest,
             "with its saved steps" if steps else "without saved steps")
    return dest


def _automation_toml(automation: Automation) -> bytes:
    text = tomli_w.dumps({"format": FORMAT_VERSION, "automations_version": AUTOMATIONS_VERSION,
                          "automation": automation_table(automation)})
    return ("# a holodesk automation, shared: import it with `holodesk automation import FILE`\n"
            + text).encode()


def _refuse_secrets(automation: Automation, members: Mapping[str, bytes],
                    store: SecretStore | None) -> None:
    """The recorder never keeps a typed secret and the table never holds one; this checks the
    result anyway, against the values the keyring holds now. Saved steps are exported only when
    that check could be made."""
    if not automation.secret_parameters():
        return
    try:
        secrets = stored_secrets(automation, store)
    except SecretParameterError as e:
        if TRAJECTORY_FILE not in members:
            return  # the table alone cannot hold a secret's value: the model refuses one
        raise ShareError(
            f"the saved steps of {automation.name!r} are exported only once holodesk has "
            f"checked that they hold none of its secret parameters' values, and the keyring "
            f"cannot be read ({e}); unlock it, or export without the saved steps") from None
    for param, value in secrets.items():
        name = _holding(members, forms_of(value))
        if name is not None:
            raise ShareError(
                f"the export of {automation.name!r} would contain the value of its secret "
                f"parameter {param} (in {name}); nothing was written. Export it without "
                "the saved steps, or forget them and record them again")


def _refuse_run_secrets(automation: Automation, members: Mapping[str, bytes],
                        secrets: RunSecrets) -> None:
    """As :func:`_refuse_secrets`, for a run's secrets (those long enough to be told from
    ordinary text, as everywhere they are masked)."""
    name = _holding(members, [f for f in secrets.forms() if len(f) >= MIN_REDACT_LEN])
    if name is not None:
        raise ShareError(
            f"the export of {automation.name!r} would contain a secret of this run (the "
            f"API key or text it typed as a secret, in {name}); nothing was written. Export "
            "it without the saved steps, or forget them and record them again")


def _holding(members: Mapping[str, bytes], forms: Iterable[str]) -> str | None:
    """The first text member (not a picture) holding one of ``forms``; None when none does."""
    needles = [form.encode() for form in forms]
    for name, data in members.items():
        if not name.endswith(".png") and any(n in data for n in needles):
            return name
    return None


# -- import -------------------------------------------------------------------------------------


def read_share(path: Path) -> Shared:
    """Read and validate the shared file at ``path``; :class:`ShareError` saying why not."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise ShareError(f"{path}: cannot be read ({e.strerror or e})") from None
    if size > MAX_FILE:
        raise ShareError(f"{path}: is {_kib(size)}, more than a shared automation can be "
                         f"({_kib(MAX_FILE)}); it is not one holodesk wrote")
    try:
        with zipfile.ZipFile(path) as zf:
            members = _read_members(path, zf)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as e:
        raise ShareError(f"{path}: is not a shared automation (not a readable zip: {e})"
                         ) from None
    except OSError as e:
        raise ShareError(f"{path}: cannot be read ({e.strerror or e})") from None
    automation = _parse_automation(path, members.pop(AUTOMATION_MEMBER))
    raw_trajectory = members.pop(TRAJECTORY_FILE, None)
    if raw_trajectory is None:
        if members:
            raise ShareError(f"{path}: holds pictures ({sorted(members)[0]}) but no "
                             f"{TRAJECTORY_FILE}; it is damaged")
        return Shared(path, automation)
    trajectory = _parse_trajectory(path, raw_trajectory, members)
    if trajectory.template != automation.task:
        raise ShareError(f"{path}: its saved steps were recorded for another task "
                         f"({trajectory.template!r}); it is damaged or was edited")
    _check_values(path, automation, trajectory)
    return Shared(path, automation, trajectory, members)


def _check_values(path: Path, automation: Automation, trajectory: Trajectory) -> None:
    """The saved steps may keep values of the plain parameters only, and type only a secret
    parameter's value as a secret: a secret put in place of a kept value would be typed
    wherever that text is (into an address), shown masked."""
    secret = set(automation.secret_parameters())
    plain = set(automation.parameters) - secret
    odd = sorted(set(trajectory.values) - plain)
    if odd:
        raise ShareError(f"{path}: its saved steps keep a value for {odd[0]!r}, which is not a "
                         "plain parameter of the automation; it is damaged or was edited")
    for number, step in enumerate(trajectory.steps, start=1):
        if step.secret_parameter is not None and step.secret_parameter not in secret:
            raise ShareError(f"{path}: its saved step {number} types {step.secret_parameter!r} "
                             "as a secret, which is not a secret parameter of the automation; "
                             "it is damaged or was edited")


def _read_members(path: Path, zf: zipfile.ZipFile) -> dict[str, bytes]:
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise ShareError(f"{path}: holds {len(infos)} files, more than a shared automation can "
                         f"({MAX_MEMBERS})")
    seen: set[str] = set()
    total = 0
    for info in infos:
        name = info.filename
        if name in seen:
            raise ShareError(f"{path}: holds {name!r} twice")
        seen.add(name)
        if name not in (AUTOMATION_MEMBER, TRAJECTORY_FILE) and not _PICTURE_NAME.match(name):
            raise ShareError(
                f"{path}: holds {name!r}, which is not part of a shared automation (expected "
                f"{AUTOMATION_MEMBER}, {TRAJECTORY_FILE} and the PNG pictures it names, in no "
                "folder); it was not written by holodesk or was changed since")
        limit = _limit(name)
        if info.file_size > limit:
            raise ShareError(f"{path}: {name} is {_kib(info.file_size)} unpacked, more than it "
                             f"can be ({_kib(limit)})")
        total += info.file_size
    if total > MAX_TOTAL:
        raise ShareError(f"{path}: unpacks to {_kib(total)}, more than a shared automation can "
                         f"({_kib(MAX_TOTAL)})")
    if AUTOMATION_MEMBER not in seen:
        raise ShareError(f"{path}: has no {AUTOMATION_MEMBER}; it is not a shared automation")
    out: dict[str, bytes] = {}
    for info in infos:
        limit = _limit(info.filename)
        with zf.open(info) as member:
            data = member.read(limit + 1)  # the header's size may lie: never read past it
        if len(data) > limit:
            raise ShareError(f"{path}: {info.filename} is larger than it can be "
                             f"({_kib(limit)})")
        out[info.filename] = data
    return out


def _limit(name: str) -> int:
    if name == AUTOMATION_MEMBER:
        return MAX_TEXT
    if name == TRAJECTORY_FILE:
        return MAX_TRAJECTORY
    return MAX_PICTURE


def _parse_automation(path: Path, raw: bytes) -> Automation:
    where = f"{path}: {AUTOMATION_MEMBER}"
    data = toml_data(raw, where, ShareError)
    version = data.get("format")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ShareError(f"{where}: has no format version; it is not a shared automation")
    if version > FORMAT_VERSION:
        raise ShareError(f"{where}: written by a newer holodesk (format {version}; this one "
                         f"reads up to {FORMAT_VERSION}); update holodesk to import it")
    table_version = data.get("automations_version")
    if isinstance(table_version, bool) or not isinstance(table_version, int) or \
            table_version < 1:
        raise ShareError(f"{where}: automations_version = {table_version!r} is not a format "
                         "version")
    if table_version > AUTOMATIONS_VERSION:
        raise ShareError(f"{where}: the automation is in a newer format ({table_version}; this "
                         f"holodesk reads up to {AUTOMATIONS_VERSION}); update holodesk to "
                         "import it")
    extra = sorted(set(data) - {"format", "automations_version", "automation"})
    if extra:
        raise ShareError(f"{where}: unexpected {extra[0]!r}")
    table = data.get("automation")
    if not isinstance(table, dict):
        raise ShareError(f"{where}: has no [automation] table")
    entries = [table]
    try:
        for old in range(table_version, AUTOMATIONS_VERSION):
            entries = MIGRATIONS[old](entries, path)
        return Automation.make(where, **entries[0])
    except AutomationError as e:
        raise ShareError(str(e)) from None


def _parse_trajectory(path: Path, raw: bytes, pictures: Mapping[str, bytes]) -> Trajectory:
    """The steps through the trajectory's own loader, from a private scratch folder."""
    where = f"{path}: {TRAJECTORY_FILE}"
    # Every picture is checked (format, pixel count) before the loader opens any of them.
    for name in sorted(pictures):
        _check_png(path, name, pictures[name])
    with tempfile.TemporaryDirectory(prefix="holodesk-import-") as scratch:
        folder = paths.ensure_private_dir(trajectory_dir("import", Path(scratch)))
        (folder / TRAJECTORY_FILE).write_bytes(raw)
        for name, data in pictures.items():
            (folder / name).write_bytes(data)
        try:
            trajectory = load_trajectory("import", Path(scratch))
        except TrajectoryError as e:
            raise ShareError(f"{where}: {str(e).split(': ', 1)[-1]}") from None
    if trajectory is None:  # pragma: no cover - the file was just written
        raise ShareError(f"{where}: cannot be read")
    named = picture_names(trajectory)
    bad = sorted(n for n in named if not _PICTURE_NAME.match(n))
    if bad:
        raise ShareError(f"{where}: names a picture {bad[0]!r} that is not a plain PNG name")
    unused = sorted(set(pictures) - named)
    if unused:
        raise ShareError(f"{path}: holds {unused[0]!r}, which its saved steps do not name")
    return trajectory


def _check_png(path: Path, name: str, data: bytes) -> None:
    try:
        with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise ShareError(f"{path}: {name} is {width}x{height} pixels, larger than a "
                                 "saved step's picture can be")
            image.load()
    except ShareError:
        raise
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as e:
        raise ShareError(f"{path}: {name} is not a readable PNG picture ({e})") from None


def import_automation(
    shared: Shared,
    *,
    as_name: str | None = None,
    replace: bool = False,
    keep_schedule: bool = False,
    drop_hotkey: bool = False,
    stop_hotkey: str | None = None,
    automations: Path | None = None,
    root: Path | None = None,
    store: SecretStore | None = None,
) -> Imported:
    """Add the automation of ``shared`` (as ``as_name`` when given; replacing the one of that
    name when ``replace``; without its hotkey when ``drop_hotkey``) with its saved steps.
    Refuses a taken name (:class:`NameTaken`), a hotkey clash or anything else the automations
    file refuses, before writing anything."""
    notes: list[str] = []
    changes: dict[str, object] = {}
    incoming = shared.automation
    if as_name is not None:
        changes["name"] = as_name
    if drop_hotkey and incoming.hotkey:
        changes["hotkey"] = None
    when = incoming.when
    if when is not None and not keep_schedule:
        changes["schedule"] = None
        notes.append(f"the file schedules it ({when.label()}); it does not run by itself here "
                     "until you schedule it")
    elif when is not None:
        notes.append(f"scheduled: {when.label()}; it runs while the desktop app runs, with "
                     "its confirmations")
    if incoming.confirm is ConfirmMode.NEVER:
        changes["confirm"] = ConfirmMode.RISKY
        notes.append("it confirmed nothing in the file; here it asks before risky actions "
                     "until you change that")
    try:
        automation = incoming.changed(**changes) if changes else incoming
    except AutomationError as e:
        raise ShareError(str(e)) from None
    file = automations_path() if automations is None else automations
    existing = next((a for a in load_automations(file) if a.key == automation.key), None)
    if existing is not None and not replace:
        raise NameTaken(automation.name)
    try:
        # The person imports it: its mode (never `never`, above) is approved for its task.
        if existing is not None:
            replace_automation(existing.name, automation, path=file, stop_hotkey=stop_hotkey,
                               confirm_chosen=True, store=store)
        else:
            add_automation(automation, path=file, stop_hotkey=stop_hotkey, store=store)
    except AutomationError as e:
        raise ShareError(f"{e}; nothing was imported") from None
    if existing is not None:
        # Their stored secrets must never be typed by an automation from someone else.
        forget_secrets(existing, store)
        notes.append(f"it replaced your automation {existing.name!r} and its saved steps; "
                     "the stored values of its secret parameters were deleted")
    steps = 0
    forget_trajectory(automation.key, root)
    if shared.trajectory is not None:
        # Its element names decide which clicks the policy asks about: not trusted until a
        # run of it, every step asked, records steps of this machine's own.
        trajectory = shared.trajectory.model_copy(update={"automation": automation.name,
                                                          "imported": True})
        save_trajectory(automation.key, trajectory, dict(shared.pictures), root)
        # Kept as imported in the signed record too: the file's own mark can be cleared by
        # hand (app/trajectory.py).
        sign_steps(automation.key, imported=True, root=root, store=store)
        steps = len(trajectory.steps)
    for name in automation.secret_parameters():
        notes.append(f"its secret parameter {name} has no value here yet")
    log.info("imported automation %r from %s (%d saved steps)", automation.name,
             shared.source, steps)
    return Imported(automation, steps, tuple(notes))


# -- helpers ------------------------------------------------------------------------------------


def _kib(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    return f"{max(1, round(size / 1024))} KB"
