"""Trajectories: the steps of an automation's last answered run, kept to replay without the model.

One folder per automation under the data folder, never in ``automations.toml`` (the crops are
pictures of the screen, possibly of personal data, and the file is the person's to edit)::

    trajectories/<automation key>/trajectory.json     what this module's Trajectory says
    trajectories/<automation key>/<run>-s01-p1.png    the crop around step 1's point
    trajectories/<automation key>/<run>-s01-p1-context.png  a larger area around it (480x320)
    trajectories/<automation key>/<run>-s01-state.png the whole screen before step 1, tiny, grey

The API is :func:`load_trajectory`, :func:`save_trajectory`, :func:`forget_trajectory` and
:func:`trajectory_dir`; :class:`Recorder` builds a trajectory from the events of a run.

The JSON file carries ``format`` (:data:`FORMAT_VERSION`). Saving writes the pictures under
names new to this recording, then replaces the JSON atomically, then deletes the pictures it no
longer names: a crash leaves the old trajectory or the new one, never one naming a missing
picture. A file that cannot be read (damaged, edited, a newer format) raises
:class:`TrajectoryError`; the replay reports it and leaves the run to the model.

Pixels: crops and positions are in pixels of the screenshot as captured and sent (physical
pixels of the monitor unless the monitor is over 2048 pixels wide, where the screenshot is
downscaled); ``geometry`` (sent size, monitor rectangle, scale) says which, so a replay knows
how large the crops should look on today's screen. A typed secret is never stored: its step
keeps ``secret: true`` and no text, and, when the text was exactly the value of one of the
automation's secret parameters, that parameter's name (``secret_parameter``): a replay types
that run's value of it (:func:`app.parameters.secret_typed`).

Parameters (format 2): ``template`` is the automation's task as written, placeholders unfilled
(a replay runs for any values of them), ``values`` the plain parameter values the recorded run
used (a replayed ``type`` step types this run's values in their place:
:func:`app.parameters.replayed_text`); never a secret's value. A format 1 file (written before
parameters reached the trajectory) loads as format 2 with its filled task as the template and
no values: it replays only for an automation without placeholders, exactly as before.

The file is plain JSON any program can change, and what a replay does comes from it. So holodesk
keeps the digest of the steps it wrote (:func:`steps_digest`: the JSON and every picture) in the
signed record of approved settings (:func:`sign_steps`, app/approval.py), with whether they came
with an import; a replay trusts only steps that verify there (:func:`signed_steps`). Any other
(edited, swapped, saved where no keyring could sign them) replays as an import's: every step
asked. The ``imported`` field of the file itself is only a note.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app import paths
from app.events import (
    ActionExecuted,
    Decision,
    Event,
    FrameCaptured,
    Outcome,
    RunFinished,
    RunStarted,
    StepDecided,
    StepProposed,
)
from app.parameters import Filled, secret_typed
from app.result import RunResult
from app.secrets import SecretStore, redact
from control import match
from model.coords import Convention, FrameGeometry, to_image_point
from model.problem import HolodeskError
from model.prompt import hidden_keys
from model.schema import ACTION_ADAPTER, Action, Drag, HoldAndTap, Hotkey, KeyDown, Type
from model.schema import Answer as AnswerAction

if TYPE_CHECKING:
    from app.approval import ApprovedSteps
    from app.automations import Automation

__all__ = [
    "CONTEXT_SIZE",
    "CROP_SIDES",
    "FORMAT_VERSION",
    "STATE_FACTOR",
    "TRAJECTORIES_DIR",
    "Anchor",
    "Loaded",
    "Recorder",
    "Trajectory",
    "TrajectoryError",
    "TrajectoryStep",
    "anchor_problem",
    "follow_edit",
    "forget_trajectory",
    "has_trajectory",
    "load_trajectory",
    "move_trajectory",
    "picture_names",
    "read_steps",
    "save_trajectory",
    "sign_steps",
    "signed_steps",
    "state_thumbnail",
    "steps_digest",
    "trajectory_dir",
    "trajectory_time",
]

log = logging.getLogger(__name__)

FORMAT_VERSION = 2
#: The formats this holodesk reads (older ones are migrated when read: see the module doc).
READABLE_FORMATS = (1, 2)
TRAJECTORIES_DIR = "trajectories"
TRAJECTORY_FILE = "trajectory.json"
#: The "state before" thumbnail is the screenshot box-reduced by this (1920 px -> 120 px).
STATE_FACTOR = 16
#: Crop sides tried, smallest first, until the crop is unique on its own screenshot.
CROP_SIDES = (96, 160, 256, 384)
#: The picture of what surrounds a point (a dialog's question around its button), pixels.
CONTEXT_SIZE = (480, 320)
#: The names of the pictures a recording writes: saving deletes no other file.
PICTURE_NAME = re.compile(r"r[0-9a-f]+-s[0-9]{2,}-[a-z0-9-]+\.png")
#: The most read of a trajectory's JSON and of one picture (as a shared file bounds them).
MAX_STEPS_FILE = 8 * 1024 * 1024
MAX_PICTURE_FILE = 4 * 1024 * 1024


class TrajectoryError(HolodeskError):
    """A saved trajectory cannot be used; the message says which file and why."""


class Anchor(BaseModel):
    """Where one point of a step was: a crop around it and the point inside the crop."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    crop: str = Field(description="PNG file name in the trajectory's folder")
    x: float = Field(description="the point in the screenshot, pixels")
    y: float
    crop_x: float = Field(description="the point inside the crop, pixels")
    crop_y: float
    context: str | None = Field(default=None, description="PNG of a larger area around the "
                                "point (CONTEXT_SIZE); none in trajectories recorded before it")
    context_x: float = Field(default=0.0, description="the point inside the context, pixels")
    context_y: float = 0.0


class TrajectoryStep(BaseModel):
    """One executed action (or the final answer) with what the screen showed before it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: dict[str, Any] = Field(description="the action as the model's schema has it")
    secret: bool = Field(default=False, description="typed a secret: its text is not kept")
    secret_parameter: str | None = Field(
        default=None, description="the secret parameter whose value the step typed, by name")
    anchors: tuple[Anchor, ...] = ()
    state: str = Field(description="PNG of the whole screen before the step, tiny and grey")

    def parsed(self) -> Action:
        return ACTION_ADAPTER.validate_python(self.action)


class Trajectory(BaseModel):
    """The steps of one answered run of an automation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int = FORMAT_VERSION
    automation: str
    task: str = Field(description="the task as the run's log shows it (secrets masked)")
    template: str = Field(default="", description="the automation's task as written")
    values: dict[str, str] = Field(
        default_factory=dict, description="the plain parameter values the run used")
    run_id: str = ""
    recorded_at: float = 0.0
    imported: bool = Field(default=False, description="came with an imported automation: "
                           "every replayed step is asked until a run of it records its own")
    geometry: dict[str, Any]
    steps: tuple[TrajectoryStep, ...]

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """Format 1 (and a trajectory made without a template) as format 2: the task it ran
        is its template, with no parameter values."""
        if not isinstance(data, dict):
            return data
        if data.get("format") == 1:
            data = {**data, "format": FORMAT_VERSION}
        if not data.get("template") and isinstance(data.get("task"), str):
            data = {**data, "template": data["task"]}
        return data

    @property
    def frame_geometry(self) -> FrameGeometry:
        return FrameGeometry.from_dict(self.geometry)


def trajectory_dir(key: str, root: Path | None = None) -> Path:
    """The folder of the automation whose key (casefolded name) is ``key``."""
    base = paths.data_dir() if root is None else root
    if not key or key.startswith(".") or "/" in key or "\\" in key or "\0" in key:
        raise TrajectoryError(f"not an automation key: {key!r}")
    return base / TRAJECTORIES_DIR / key


def has_trajectory(key: str, root: Path | None = None) -> bool:
    """Whether automation ``key`` has saved steps (cheap: the file is not read)."""
    try:
        return (trajectory_dir(key, root) / TRAJECTORY_FILE).is_file()
    except TrajectoryError:
        return False


def trajectory_time(key: str, root: Path | None = None) -> float | None:
    """When automation ``key``'s steps were saved (a timestamp), or None when it has none
    (cheap: the file is not read)."""
    try:
        return (trajectory_dir(key, root) / TRAJECTORY_FILE).stat().st_mtime
    except (TrajectoryError, OSError):
        return None


@dataclass(frozen=True)
class Loaded:
    """A trajectory as read, with what it was read from: ``digest`` (:func:`steps_digest`) of
    the file and ``pictures`` (file name: PNG bytes), the bytes that were checked. A replay
    uses these bytes, never the files again: a picture swapped after the check is not seen."""

    trajectory: Trajectory
    digest: str
    pictures: Mapping[str, bytes]


def steps_digest(raw: bytes, pictures: Mapping[str, bytes]) -> str:
    """The digest of saved steps: their JSON file's bytes and every picture it names, by name.
    What the signed record keeps for steps holodesk wrote (app/approval.py)."""
    whole = hashlib.sha256(hashlib.sha256(raw).digest())
    for name in sorted(pictures):
        whole.update(name.encode("utf-8") + b"\0" + hashlib.sha256(pictures[name]).digest())
    return whole.hexdigest()


def load_trajectory(key: str, root: Path | None = None) -> Trajectory | None:
    """The saved trajectory of automation ``key``; None when there is none.

    Raises :class:`TrajectoryError` when there is one that cannot be used.
    """
    loaded = read_steps(key, root)
    return None if loaded is None else loaded.trajectory


def read_steps(key: str, root: Path | None = None) -> Loaded | None:
    """:func:`load_trajectory` with the bytes it read and their digest; None when there is no
    trajectory. Raises :class:`TrajectoryError` when there is one that cannot be used."""
    folder = trajectory_dir(key, root)
    path = folder / TRAJECTORY_FILE
    try:
        raw_bytes = paths.read_limited(path, MAX_STEPS_FILE)
        raw = raw_bytes.decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise TrajectoryError(f"{path}: cannot be read ({e})") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise TrajectoryError(f"{path}: is not valid JSON ({e})") from None
    version = data.get("format") if isinstance(data, dict) else None
    if version not in READABLE_FORMATS:
        raise TrajectoryError(f"{path}: format {version!r} is not one this holodesk knows "
                              f"({FORMAT_VERSION}); it will be recorded again")
    try:
        trajectory = Trajectory.model_validate(data)
        trajectory.frame_geometry  # noqa: B018 - validates the geometry
        for step in trajectory.steps:
            step.parsed()
    except (ValidationError, ValueError) as e:
        raise TrajectoryError(f"{path}: is damaged ({_first_error(e)})") from None
    for number, step in enumerate(trajectory.steps, start=1):
        # A drag with one anchor would keep the file's destination as written, unchecked.
        wanted = _point_count(step.parsed())
        if len(step.anchors) != wanted:
            kind = step.action.get("action")
            raise TrajectoryError(f"{path}: is damaged (step {number} ({kind}) has "
                                  f"{len(step.anchors)} anchors, not {wanted})")
    pictures: dict[str, bytes] = {}
    for name in sorted(_pictures(trajectory)):
        try:
            if Path(name).name != name:
                raise FileNotFoundError(name)
            pictures[name] = paths.read_limited(folder / name, MAX_PICTURE_FILE)
        except FileNotFoundError:
            raise TrajectoryError(f"{path}: names a picture that is missing: {name}") from None
        except OSError as e:
            raise TrajectoryError(f"{folder / name}: cannot be read ({e})") from None
    _check_anchors(trajectory, pictures, folder, path)
    return Loaded(trajectory, steps_digest(raw_bytes, pictures), pictures)


def anchor_problem(anchor: Anchor, crop: tuple[int, int], context: tuple[int, int] | None,
                   geometry: FrameGeometry) -> str:
    """Why ``anchor`` cannot be used with crop and context pictures of these sizes, or "".

    The replay acts at the matched patch plus the point inside it: a point outside the patch
    would be acted on away from anything that was checked (an edited file could aim a click
    anywhere once a harmless patch is found).
    """
    if not (0 <= anchor.crop_x <= crop[0] and 0 <= anchor.crop_y <= crop[1]):
        return (f"the point ({anchor.crop_x:g}, {anchor.crop_y:g}) lies outside its "
                f"{crop[0]}x{crop[1]} picture {anchor.crop}")
    if context is not None and not (0 <= anchor.context_x <= context[0]
                                    and 0 <= anchor.context_y <= context[1]):
        return (f"the point ({anchor.context_x:g}, {anchor.context_y:g}) lies outside its "
                f"{context[0]}x{context[1]} picture {anchor.context}")
    if not (0 <= anchor.x <= geometry.sent_width and 0 <= anchor.y <= geometry.sent_height):
        return f"the point ({anchor.x:g}, {anchor.y:g}) lies outside the recorded screen"
    return ""


def _check_anchors(trajectory: Trajectory, pictures: Mapping[str, bytes], folder: Path,
                   path: Path) -> None:
    geometry = trajectory.frame_geometry
    for step in trajectory.steps:
        for anchor in step.anchors:
            crop = _picture_size(pictures, anchor.crop, folder)
            context = None if anchor.context is None else \
                _picture_size(pictures, anchor.context, folder)
            problem = anchor_problem(anchor, crop, context, geometry)
            if problem:
                raise TrajectoryError(f"{path}: is damaged ({problem})")


def _picture_size(pictures: Mapping[str, bytes], name: str, folder: Path) -> tuple[int, int]:
    try:
        with Image.open(io.BytesIO(pictures[name])) as image:
            return image.size
    except (OSError, ValueError) as e:
        raise TrajectoryError(f"{folder / name}: cannot be read ({e})") from None


def sign_steps(key: str, *, imported: bool, root: Path | None = None,
               store: SecretStore | None = None) -> bool:
    """Record automation ``key``'s saved steps, as they are now, as holodesk's own in the
    signed record (app/approval.py), with whether they came with an import: only steps that
    verify there replay as the person's, every other one is asked like an import's. Whether
    they could be signed (no keyring, no record that verifies: not)."""
    from app.approval import ApprovedSteps, remember_steps

    try:
        loaded = read_steps(key, root)
    except TrajectoryError as e:
        log.info("the saved steps of %r are not signed: %s", key, e)
        return False
    if loaded is None:
        return False
    return remember_steps(paths.config_dir(), key, ApprovedSteps(loaded.digest, imported),
                          store)


def signed_steps(key: str, loaded: Loaded, store: SecretStore | None = None
                 ) -> ApprovedSteps | None:
    """The record's entry for automation ``key``'s saved steps when it is for exactly
    ``loaded`` (a record that verifies, the same digest); None otherwise."""
    from app.approval import read_record, record_path

    entry = read_record(record_path(paths.config_dir()), store).steps(key)
    return entry if entry is not None and entry.digest == loaded.digest else None


def save_trajectory(key: str, trajectory: Trajectory, pictures: dict[str, bytes],
                    root: Path | None = None) -> Path:
    """Write ``trajectory`` and its ``pictures`` (file name: PNG bytes) for automation ``key``,
    replacing the one before; returns the JSON file's path."""
    folder = _own_folder(key, root)
    with paths.own_write(folder):
        paths.ensure_private_dir(folder)
        for name, data in pictures.items():
            paths.write_atomic_bytes(folder / name, data)
        path = folder / TRAJECTORY_FILE
        paths.write_atomic(path, json.dumps(trajectory.model_dump(mode="json"), indent=1,
                                            ensure_ascii=False))
        keep = _pictures(trajectory) | {TRAJECTORY_FILE}
        for old in folder.iterdir():
            if (old.name not in keep and PICTURE_NAME.fullmatch(old.name)
                    and not old.is_symlink()):
                with contextlib.suppress(OSError):
                    old.unlink()
    log.info("recorded %d step(s) for automation %r", len(trajectory.steps),
             trajectory.automation)
    return path


def _own_folder(key: str, root: Path | None = None) -> Path:
    """:func:`trajectory_dir`, refused when it or ``trajectories`` is a symbolic link: saving
    deletes old pictures in it, and must never do so in a folder it points to elsewhere."""
    folder = trajectory_dir(key, root)
    for part in (folder.parent, folder):
        if part.is_symlink():
            raise TrajectoryError(f"{part}: is a link to another folder, so no steps are saved "
                                  f"there; remove the link to record this automation's steps")
    return folder


def move_trajectory(old_key: str, new_key: str, name: str, root: Path | None = None) -> bool:
    """Give automation ``old_key``'s trajectory to ``new_key`` (the automation was renamed to
    ``name``), replacing any left under the new key; whether there was one to move."""
    old, new = _own_folder(old_key, root), _own_folder(new_key, root)
    if old_key == new_key or not old.exists():
        return False
    # Steps holodesk signed stay signed under the new name (the edit's record update moved
    # their entry); steps that do not verify stay unsigned: a rename launders nothing.
    try:
        loaded = read_steps(old_key, root)
    except TrajectoryError:
        loaded = None
    signed = None if loaded is None else (signed_steps(new_key, loaded)
                                          or signed_steps(old_key, loaded))
    with paths.own_write(old, new):
        if new.exists():  # steps of a removed automation of that name: not this one's
            shutil.rmtree(new)
        os.replace(old, new)
        path = new / TRAJECTORY_FILE
        try:  # the file names its automation: the new name (a damaged file is left as it is)
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                data["automation"] = name
                paths.write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False))
        except (OSError, ValueError) as e:
            log.warning("the moved steps of automation %r keep their old name: %s", name, e)
    if signed is not None:
        sign_steps(new_key, imported=signed.imported, root=root)
    return True


def follow_edit(old: Automation, new: Automation, root: Path | None = None) -> str:
    """Keep ``old``'s saved steps for ``new``, the same automation edited: a renamed one takes
    them along; one whose task changed loses them (they were steps of another task, and would
    never replay: the next answered run saves its own). What happened to them, in words for
    the person ("" when nothing did)."""
    if old.task != new.task:
        if forget_trajectory(old.key, root):
            log.info("the task of automation %r changed: its saved steps are forgotten",
                     new.name)
            return "its saved steps were of the old task and are forgotten"
    elif old.key != new.key and move_trajectory(old.key, new.key, new.name, root):
        return "its saved steps go with the new name"
    return ""


def forget_trajectory(key: str, root: Path | None = None) -> bool:
    """Delete automation ``key``'s trajectory; whether there was one."""
    folder = _own_folder(key, root)
    if not folder.exists():
        return False
    with paths.own_write(folder):
        shutil.rmtree(folder)
    return True


def state_thumbnail(image: Image.Image) -> NDArray[np.uint8]:
    """The tiny grey picture of a whole screenshot that "state before" compares."""
    return np.asarray(image.convert("L").reduce(STATE_FACTOR), dtype=np.uint8)


def decode(data: bytes) -> Image.Image:
    """A screenshot's bytes (JPEG or PNG) as an RGB image."""
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB")


def read_picture(key: str, name: str, root: Path | None = None) -> Image.Image:
    """One picture of automation ``key``'s trajectory."""
    path = trajectory_dir(key, root) / name
    try:
        with Image.open(path) as image:
            return image.convert("RGB") if image.mode != "L" else image.copy()
    except (OSError, ValueError) as e:
        raise TrajectoryError(f"{path}: cannot be read ({e})") from None


# -- recording -------------------------------------------------------------------------------


@dataclass
class _Pending:
    frame: bytes = b""
    geometry: FrameGeometry | None = None
    secret: bool = False
    action: Action | None = None


@dataclass
class _Done:
    frame: bytes
    geometry: FrameGeometry
    action: Action
    secret: bool


@dataclass
class Recorder:
    """Listens to a run's events (on the run's own thread) and, when the run ends answered,
    saves its executed steps as automation ``key``'s trajectory.

    A run stopped, failed, asking or cut by a limit saves nothing: the trajectory before it
    stays. ``secrets`` gives the texts the action log masks: a typed text containing one is
    kept as a secret (no text) even when the policy did not call it one.

    ``task`` is the run's task as its log shows it, ``template`` the automation's task as
    written (default: ``task``), ``parameters`` the values the run filled it with: the plain
    ones are kept, of a secret one only its name on the step that typed it.
    """

    key: str
    name: str
    task: str
    convention: Convention
    secrets: Callable[[], Collection[str]] = frozenset
    root: Path | None = None
    run_id: str = ""
    saved: Path | None = None
    _current: dict[int, _Pending] = field(default_factory=dict)
    _done: list[_Done] = field(default_factory=list)
    _last: _Pending | None = None
    template: str | None = None
    parameters: Filled | None = field(default=None, repr=False)

    def __call__(self, event: Event) -> None:
        try:
            self._on(event)
        except Exception:  # recording must never end the run it records
            log.exception("could not record the steps of automation %r", self.name)

    def _on(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.run_id = event.run_id
        elif isinstance(event, FrameCaptured):
            self._current = {event.step_no: _Pending(event.image, event.geometry)}
        elif isinstance(event, StepProposed):
            pending = self._current.get(event.step_no)
            if pending is not None:
                pending.secret = event.verdict.secret
                pending.action = event.step.action
                self._last = pending
        elif isinstance(event, StepDecided):
            pending = self._current.get(event.step_no)
            if pending is not None and event.decision in (Decision.AUTO, Decision.APPROVED,
                                                          Decision.EDITED):
                pending.action = event.action
        elif isinstance(event, ActionExecuted):
            pending = self._current.pop(event.step_no, None)
            if pending is not None and pending.action is not None and pending.geometry:
                self._done.append(_Done(pending.frame, pending.geometry, pending.action,
                                        pending.secret or self._holds_secret(pending.action)))
        elif (isinstance(event, RunFinished) and event.outcome is Outcome.ANSWERED
              and event.result is RunResult.DONE):
            # An answer the task's own check denies is no way to do it again.
            self._finish(event)

    def _holds_secret(self, action: Action) -> bool:
        return isinstance(action, Type) and any(s and s in action.text for s in self.secrets())

    def _finish(self, finished: RunFinished) -> None:
        last = self._last
        if last is None or not isinstance(last.action, AnswerAction) or last.geometry is None:
            return
        steps: list[TrajectoryStep] = []
        pictures: dict[str, bytes] = {}
        prefix = f"r{int(time.time() * 1000):x}"
        done = [*self._done, _Done(last.frame, last.geometry, last.action, False)]
        for number, item in enumerate(done, start=1):
            steps.append(self._step(item, f"{prefix}-s{number:02d}", pictures))
        filled = self.parameters
        trajectory = Trajectory(
            automation=self.name, task=self.task, template=self.template or self.task,
            values={k: v for k, v in filled.values.items() if k not in filled.secret_names}
            if filled is not None else {},
            run_id=finished.run_id or self.run_id,
            recorded_at=time.time(), geometry=done[0].geometry.to_dict(), steps=tuple(steps),
        )
        self.saved = save_trajectory(self.key, self._masked(trajectory), pictures, self.root)
        # This machine's own answered run: its steps are the person's, signed as such.
        sign_steps(self.key, imported=False, root=self.root)

    def _masked(self, trajectory: Trajectory) -> Trajectory:
        """``trajectory`` with every secret masked in every text it keeps (the answer, element
        names, typed text, the task): a secret never lands in the file."""
        secrets = self.secrets()
        data = _redacted(trajectory.model_dump(mode="json"), secrets)
        return Trajectory.model_validate(data)

    def _step(self, item: _Done, stem: str, pictures: dict[str, bytes]) -> TrajectoryStep:
        image = decode(item.frame)
        state = f"{stem}-state.png"
        pictures[state] = _png(Image.fromarray(state_thumbnail(image)))
        action = item.action.model_dump(mode="json")
        parameter = None
        if item.secret and isinstance(item.action, Type):
            action["text"] = ""
            parameter = secret_typed(item.action.text, self._secret_values())
        elif item.secret and isinstance(item.action, Hotkey | HoldAndTap | KeyDown):
            # Keys that typed a secret are its characters: saved as the log shows them, and a
            # replay hands that step over to the model.
            action = hidden_keys(item.action).model_dump(mode="json")
        anchors: list[Anchor] = []
        for index, (x, y) in enumerate(_image_points(item.action, self.convention,
                                                     item.geometry), start=1):
            crop, box = _unique_crop(image, x, y)
            name = f"{stem}-p{index}.png"
            pictures[name] = _png(crop)
            context, around = _context_crop(image, x, y)
            pictures[f"{stem}-p{index}-context.png"] = _png(context)
            anchors.append(Anchor(crop=name, x=x, y=y, crop_x=x - box[0], crop_y=y - box[1],
                                  context=f"{stem}-p{index}-context.png",
                                  context_x=x - around[0], context_y=y - around[1]))
        return TrajectoryStep(action=action, secret=item.secret, secret_parameter=parameter,
                              anchors=tuple(anchors), state=state)

    def _secret_values(self) -> Mapping[str, str]:
        filled = self.parameters
        if filled is None:
            return {}
        return {k: v for k, v in filled.values.items() if k in filled.secret_names}


def _point_count(action: Action) -> int:
    """How many points ``action`` acts on: the anchors its recorded step has."""
    if getattr(action, "x", None) is None or getattr(action, "y", None) is None:
        return 0
    return 2 if isinstance(action, Drag) else 1


def _image_points(action: Action, convention: Convention,
                  geometry: FrameGeometry) -> list[tuple[float, float]]:
    x, y = getattr(action, "x", None), getattr(action, "y", None)
    if x is None or y is None:
        return []
    points = [to_image_point(x, y, convention, geometry)]
    if isinstance(action, Drag):
        points.append(to_image_point(action.to_x, action.to_y, convention, geometry))
    return points


def _unique_crop(image: Image.Image, x: float, y: float
                 ) -> tuple[Image.Image, tuple[int, int, int, int]]:
    """The smallest crop around (x, y) that is found once, and only once, on its own screen:
    a crop of a plain field would match all along the field, so it grows to take in more."""
    box = (0, 0, 0, 0)
    for side in CROP_SIDES:
        half = side // 2
        box = (max(0, round(x) - half), max(0, round(y) - half),
               min(image.width, round(x) + half), min(image.height, round(y) + half))
        crop = image.crop(box)
        if isinstance(match.find(image, crop, scales=(1.0,), focus=(x - box[0], y - box[1])),
                      match.Match):
            return crop, box
    return image.crop(box), box  # the replay will not find it with confidence: hands over


def _context_crop(image: Image.Image, x: float, y: float
                  ) -> tuple[Image.Image, tuple[int, int, int, int]]:
    """The larger area around (x, y) a replay compares too (see :data:`CONTEXT_SIZE`)."""
    half_w, half_h = CONTEXT_SIZE[0] // 2, CONTEXT_SIZE[1] // 2
    box = (max(0, round(x) - half_w), max(0, round(y) - half_h),
           min(image.width, round(x) + half_w), min(image.height, round(y) + half_h))
    return image.crop(box), box


#: The keys whose strings are file names, not text that could hold a secret.
_NAME_KEYS = frozenset({"crop", "context", "state"})


def _redacted(value: Any, secrets: Collection[str], key: str = "") -> Any:
    if isinstance(value, str):
        return value if key in _NAME_KEYS else redact(value, secrets)
    if isinstance(value, dict):
        return {k: _redacted(v, secrets, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, secrets) for v in value]
    return value


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)
    return out.getvalue()


def picture_names(trajectory: Trajectory) -> set[str]:
    """The file names of every picture ``trajectory`` uses (crops and state thumbnails)."""
    return _pictures(trajectory)


def _pictures(trajectory: Trajectory) -> set[str]:
    names = set()
    for step in trajectory.steps:
        names.add(step.state)
        names.update(a.crop for a in step.anchors)
        names.update(a.context for a in step.anchors if a.context is not None)
    return names


def _first_error(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}"
    return str(error)
