"""Replaying an automation's trajectory: the recorded steps, acted on where their targets are now.

A :class:`Replayer` is the agent loop's :class:`~app.agent.ActionSource` for an automation with
a saved trajectory (app/trajectory.py). At each step it looks at the step's screenshot:

* a step that acted on a point finds the crop recorded around that point
  (:func:`control.match.find`: confident, unique, same colours, at the scale the screen's
  geometry calls for) and proposes the recorded action at the point's position now, once the
  larger area recorded around the point looks as it did (block by block, aligned on the found
  crop: the question of a dialog around an unchanged button);
* a keys-only step (``type`` without a point, ``hotkey``) and a ``wait`` replay as recorded,
  once the whole screen looks as it did before the step when it was recorded (a tiny grey
  thumbnail compared block by block; moved by as much as the last target moved, so a window
  opened elsewhere still counts as the same screen);
* the final ``answer`` never replays: the model answers from the screen as it is now;
* a ``type`` step types this run's parameter values where the recorded run typed its own
  (:func:`app.parameters.replayed_text`); a step that typed a secret parameter's value types
  this run's value of that parameter (the policy knows it as a secret: masked as when the
  model types it); any other step that typed a secret cannot replay: the secret was never
  stored.

Anything else (a target not found, found twice or changed, a changed screen, a screen whose
size or scale differs beyond what matching handles, a damaged trajectory, a task edited since
the recording: other parameter values are no edit) is a :class:`~app.agent.Cannot` with the
reason, and the model takes over from that step with the task and the steps done so far.
What the replay proposes is judged, confirmed, executed and logged exactly as the model's
proposals are: the loop does all that (the text a replayed step types now is what is judged).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from app.agent import Cannot, Proposal, Seen
from app.parameters import replayed_text
from app.secrets import SecretStore
from app.trajectory import (
    STATE_FACTOR,
    Anchor,
    Loaded,
    Trajectory,
    TrajectoryError,
    anchor_problem,
    decode,
    read_picture,
    read_steps,
    signed_steps,
)
from control import match
from model.coords import Convention, FrameGeometry
from model.prompt import describe_action
from model.schema import (
    ACTION_ADAPTER,
    Action,
    Drag,
    DragTo,
    HoldAndTap,
    Hotkey,
    KeyDown,
    KeyUp,
    Step,
    Type,
    UpdatePlan,
    Wait,
)
from model.schema import Answer as AnswerAction

__all__ = ["MAX_CONTEXT_DIFF", "MAX_STATE_DIFF", "SCALE_RANGE", "Replayer"]

log = logging.getLogger(__name__)

#: The largest mean difference (grey levels, 0-255) of any :data:`STATE_BLOCK` block between
#: the recorded and the current thumbnail for the screen to count as unchanged before a
#: keys-only step: a dialog covering a tenth of the screen changes its blocks by far more, a
#: blinking caret or a clock's digits by a few levels.
MAX_STATE_DIFF = 12.0
#: Thumbnail pixels per block side (4: 64x64 screen pixels at STATE_FACTOR 16).
STATE_BLOCK = 4
#: The largest mean difference of any :data:`CONTEXT_BLOCK` block between the area recorded
#: around a pointing step's target and the same area now (a dialog's question reworded).
MAX_CONTEXT_DIFF = 16.0
#: Why every step of saved steps that came with an import is asked.
IMPORTED_STEPS = ("these saved steps came with an imported automation: each is asked until a "
                  "run of it is answered here")
#: Why every step of saved steps holodesk did not sign (app/trajectory.py) is asked.
UNSIGNED_STEPS = ("these saved steps are not signed as holodesk's own (changed outside "
                  "holodesk, or saved without a keyring to sign them): each is asked")
#: Screenshot pixels per block side in the context comparison.
CONTEXT_BLOCK = 32
#: How much larger or smaller the recorded crops may have to look on today's screen (a
#: changed display scale, a monitor captured at another size) for matching to handle it.
SCALE_RANGE = (0.5, 2.0)


@dataclass
class Replayer:
    """Replays automation ``key``'s trajectory for ``task``, its task as written (placeholders
    unfilled), with this run's parameter ``values``, secret ones too (see the module doc)."""

    key: str
    task: str
    root: Path | None = None
    trajectory: Trajectory | None = None
    problem: str = ""
    _index: int = 0
    _shift: tuple[float, float] = (0.0, 0.0)  # how far the last found target moved, pixels
    _scale: float | None = None
    _pictures: dict[str, Image.Image] = field(default_factory=dict)
    values: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: Which of ``values`` are secret: never put in place of a recorded run's plain value.
    secret_names: frozenset[str] = frozenset()
    #: A step of this replay typed other text than when recorded (another parameter value).
    _typed_otherwise: bool = False
    #: The last step this replay gave acted at a point found again on the screen: the pointer
    #: is where that step put it, the start a ``drag_to`` drags from.
    _pointer_found: bool = False
    #: Why every step is asked ("" when the steps are holodesk's own, signed: the policy
    #: decides): they came with an import, or do not verify (see :meth:`load`).
    untrusted: str = ""
    #: The pictures as read and checked with the steps: never read from the files again.
    _bytes: Mapping[str, bytes] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, key: str, task: str, root: Path | None = None, *,
             values: Mapping[str, str] | None = None,
             secret_names: frozenset[str] = frozenset(),
             store: SecretStore | None = None) -> Replayer:
        """The replayer of automation ``key``; inactive when it has no usable trajectory (a
        broken one is logged and counts as none). ``secret_names``: which ``values`` are
        secret. Steps the signed record does not hold as holodesk wrote them (app/trajectory.py
        :func:`~app.trajectory.signed_steps`; ``store`` holds its key), and steps that came
        with an import, have every step asked."""
        values = dict(values or {})

        def made(loaded: Loaded | None, problem: str = "", untrusted: str = "") -> Replayer:
            return cls(key, task, root, loaded.trajectory if loaded is not None else None,
                       problem, values=values, secret_names=secret_names, untrusted=untrusted,
                       _bytes=dict(loaded.pictures) if loaded is not None else {})

        try:
            loaded = read_steps(key, root)
        except TrajectoryError as e:
            log.warning("the saved steps are not used: %s", e)
            return made(None, f"the saved steps cannot be used: {e}")
        if loaded is None:
            return made(None)
        trajectory = loaded.trajectory
        if trajectory.template != task:
            return made(None, "the task changed since the steps were recorded")
        # A recorded value may only stand for a plain parameter: one kept under a secret's
        # name would have the secret typed wherever that text is (shown masked, unasked).
        plain = set(values) - secret_names
        odd = sorted(set(trajectory.values) - plain)
        if odd:
            return made(None, f"the saved steps hold a value for {odd[0]!r}, which is not a "
                        "plain parameter of this automation")
        signed = signed_steps(key, loaded, store)
        if signed is None:
            log.info("the saved steps of %r do not verify: every replayed step is asked", key)
            return made(loaded, untrusted=UNSIGNED_STEPS)
        return made(loaded, untrusted=IMPORTED_STEPS if signed.imported else "")

    @property
    def active(self) -> bool:
        return self.trajectory is not None

    def next_step(self, seen: Seen) -> Proposal | Cannot:
        trajectory = self.trajectory
        if trajectory is None:
            return Cannot(self.problem or "there are no saved steps")
        if self._index >= len(trajectory.steps):
            return Cannot("every saved step was done, yet the task is not answered")
        if self._scale is None:
            scale = _expected_scale(trajectory.frame_geometry, seen.frame.geometry)
            if not SCALE_RANGE[0] <= scale <= SCALE_RANGE[1]:
                return Cannot(f"the screen's size or scale changed since the recording "
                              f"(its contents would look {scale:.2f} times as large)")
            self._scale = scale
        number = self._index + 1
        recorded = trajectory.steps[self._index]
        secret = recorded.secret
        try:
            action = self._retyped(recorded.parsed(), trajectory.values)
            if secret:
                typed = self._secret_value(recorded.secret_parameter)
                if typed is None or not isinstance(action, Type):
                    return Cannot(f"saved step {number} typed a secret, which is never saved")
                action = _with_text(action, typed)
        except ValueError as e:  # this run's value cannot be typed (the model may manage)
            return Cannot(f"saved step {number} cannot type this run's values ({e})")
        screen = decode(seen.frame.data)
        if not recorded.anchors:
            if isinstance(action, AnswerAction):
                return self._answer(number, action, recorded.state, screen)
            if not isinstance(action, Type | Hotkey | HoldAndTap | KeyDown | KeyUp | Wait
                              | UpdatePlan):
                return Cannot(f"saved step {number} ({action.action}) cannot be replayed")
            # A wait and a plan do nothing to the screen, and a release is always safe (handed
            # over, the key would stay down for the model to release).
            if not isinstance(action, Wait | UpdatePlan | KeyUp):
                changed = self._screen_changed(recorded.state, screen)
                if changed:
                    return Cannot(f"before saved step {number}: {changed}")
            self._index += 1
            self._pointer_found = False
            if secret or action != recorded.parsed():
                self._typed_otherwise = True
            return Proposal(Step(thought=f"Replaying saved step {number}: "
                                         f"{_words(action, secret=secret)}.",
                                 action=action), f"saved step {number}, screen as recorded",
                            self._ask)
        if isinstance(action, DragTo) and not self._pointer_found:
            # Its start is where the pointer is, which no recorded picture checks: only right
            # after a step this replay found again (the pointer where that step left it).
            return Cannot(f"saved step {number} drags from where the pointer was, and the "
                          "step before it was not one this replay pointed at")
        found: list[tuple[float, float]] = []
        notes: list[str] = []
        for anchor in recorded.anchors:
            crop = self._picture(anchor.crop)
            result = match.find(screen, crop, scale=self._scale,
                                focus=(anchor.crop_x, anchor.crop_y))
            left, top = 0.0, 0.0  # where the part of the crop found starts in the crop
            if isinstance(result, match.NoMatch) and self._typed_otherwise:
                result, left, top = self._find_closer(screen, crop, anchor, result)
            element = getattr(action, "element", "") or "its target"
            if isinstance(result, match.NoMatch):
                return Cannot(f"saved step {number} ({element}): {result.reason}")
            x = result.left + (anchor.crop_x - left) * result.scale
            y = result.top + (anchor.crop_y - top) * result.scale
            around = self._context_changed(anchor, crop, screen, (x, y), result.scale,
                                           trajectory)
            if around:
                return Cannot(f"saved step {number} ({element}): {around}")
            found.append((x, y))
            notes.append(f"{element} found again at ({x:.0f}, {y:.0f}) of the screenshot, "
                         f"likeness {result.score:.2f}")
            # The whole screen as recorded, shifted by where the first target is now.
            self._shift = (x - anchor.x * self._scale, y - anchor.y * self._scale)
        moved = _moved(action, found, seen.convention, seen.frame.geometry)
        self._index += 1
        self._pointer_found = True
        return Proposal(Step(thought=f"Replaying saved step {number}: {_words(moved)}.",
                             action=moved), f"saved step {number}: " + "; ".join(notes),
                        self._ask)

    @property
    def _ask(self) -> str:
        """Why every replayed step is asked, or "" (the policy decides)."""
        return self.untrusted if self.trajectory is not None else ""

    def _find_closer(self, screen: Image.Image, crop: Image.Image, anchor: Anchor,
                     missed: match.NoMatch) -> tuple[match.Match | match.NoMatch, float, float]:
        """The recorded crop not found after this run typed other values: the text typed may
        show inside it (a field just below the next button), so the crop is looked for again
        with a quarter cut off one side at a time, each part held to the same tests (confident,
        unique, same colours, the details around the point unchanged). Every part found must
        put the point at the same place. The match and where its part starts in the crop;
        ``missed`` when no part is found."""
        w, h = crop.size
        qw, qh = w // 4, h // 4
        boxes = [(0, 0, w, h - qh), (0, qh, w, h), (0, 0, w - qw, h), (qw, 0, w, h)]
        found: list[tuple[match.Match, float, float]] = []
        for box in boxes:
            if not (box[0] <= anchor.crop_x < box[2] and box[1] <= anchor.crop_y < box[3]):
                continue  # the point acted on must stay inside
            result = match.find(screen, crop.crop(box), scale=self._scale or 1.0,
                                focus=(anchor.crop_x - box[0], anchor.crop_y - box[1]))
            if isinstance(result, match.Match):
                found.append((result, float(box[0]), float(box[1])))
        if not found:
            return missed, 0.0, 0.0
        points = {(round(m.left + (anchor.crop_x - x) * m.scale),
                   round(m.top + (anchor.crop_y - y) * m.scale)) for m, x, y in found}
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        if max(xs) - min(xs) > 2 or max(ys) - min(ys) > 2:
            return match.NoMatch("parts of the recorded patch were found in different "
                                 "places", missed.score), 0.0, 0.0
        return max(found, key=lambda f: f[0].score)

    def _retyped(self, action: Action, used: Mapping[str, str]) -> Action:
        """``action`` with the parameter values of the recorded run (``used``) in its text
        replaced by this run's: what a ``type`` step types, what the answer says."""
        if not isinstance(action, Type | AnswerAction) or not used:
            return action
        plain = {k: v for k, v in self.values.items() if k not in self.secret_names}
        text = replayed_text(action.text, used, plain)
        return action if text == action.text else _with_text(action, text)

    def _secret_value(self, parameter: str | None) -> str | None:
        """This run's value of the secret ``parameter`` a recorded step typed; None when the
        step recorded none (a secret that was no parameter's value) or this run has none."""
        if parameter is None or parameter not in self.secret_names:
            return None
        return self.values.get(parameter) or None

    def _picture(self, name: str) -> Image.Image:
        if name not in self._pictures:
            data = self._bytes.get(name)
            if data is None:  # a replayer made without load(): from the file
                self._pictures[name] = read_picture(self.key, name, self.root)
            else:
                with Image.open(io.BytesIO(data)) as image:
                    self._pictures[name] = image.convert("RGB") if image.mode != "L" \
                        else image.copy()
        return self._pictures[name]

    def _context_changed(self, anchor: Anchor, crop: Image.Image, screen: Image.Image,
                         point: tuple[float, float], scale: float,
                         trajectory: Trajectory) -> str:
        """Why the area around a found target is not as recorded, or an empty string: the
        matched patch may be only the button, the question around it is what it answers."""
        if anchor.context is None:
            return ("it was recorded without the picture of what surrounds it, so what "
                    "surrounds it now cannot be checked")
        recorded = self._picture(anchor.context)
        problem = anchor_problem(anchor, crop.size, recorded.size, trajectory.frame_geometry)
        if problem:
            return f"the saved step is damaged ({problem})"
        width, height = round(recorded.width * scale), round(recorded.height * scale)
        left = round(point[0] - anchor.context_x * scale)
        top = round(point[1] - anchor.context_y * scale)
        if (width, height) != recorded.size:
            recorded = recorded.resize((width, height), Image.Resampling.BILINEAR)
        # Only the part of the area on today's screen counts, as long as it is most of it.
        x0, y0 = max(0, -left), max(0, -top)
        x1, y1 = min(width, screen.width - left), min(height, screen.height - top)
        if (x1 - x0) * 2 < width or (y1 - y0) * 2 < height:
            return "most of what surrounded it when recorded is off the screen now"
        now = np.asarray(screen.convert("L").crop((left + x0, top + y0, left + x1, top + y1)))
        then = np.asarray(recorded.convert("L").crop((x0, y0, x1, y1)))
        diff = match.largest_block_difference(now, then, CONTEXT_BLOCK)
        if diff > MAX_CONTEXT_DIFF:
            return (f"what surrounds it changed since the recording (a part differs by "
                    f"{diff:.0f}, at most {MAX_CONTEXT_DIFF:g})")
        return ""

    def _answer(self, number: int, action: AnswerAction, state: str,
                screen: Image.Image) -> Proposal | Cannot:
        """The recorded answer, only when it can still be true: this run typed what the
        recorded one did and the screen is as it was then (a new dialog, another result
        hands over: the model reads the screen and answers). It says it is the recorded
        run's answer, so a stale "it worked" is never passed off as seen."""
        trajectory = self.trajectory
        recorded_values = trajectory.values if trajectory is not None else {}
        if self._typed_otherwise or any(self.values.get(k) != v
                                        for k, v in recorded_values.items()):
            return Cannot("this run typed other text or values than the recorded one, so the "
                          "recorded answer may not hold: the model reads the screen and answers")
        changed = self._screen_changed(state, screen)
        if changed:
            return Cannot(f"before the answer: {changed}")
        self._index += 1
        # An answer replayed before already ends with the note: said once, not piled up.
        text = action.text
        while text.endswith(f" {RECORDED_ANSWER_NOTE}"):
            text = text.removesuffix(f" {RECORDED_ANSWER_NOTE}")
        said = _with_text(action, f"{text} {RECORDED_ANSWER_NOTE}")
        return Proposal(Step(thought=f"Replaying saved step {number}: the recorded answer.",
                             action=said), f"saved step {number}, screen as recorded")

    def _screen_changed(self, state_name: str, screen: Image.Image) -> str:
        """Why the screen is not as recorded before the step, or an empty string."""
        recorded = self._picture(state_name)
        if self._scale is not None and abs(self._scale - 1.0) > 0.01:
            return "the screen's scale changed, so it cannot be compared with the recording"
        diff = match.shifted_difference(np.asarray(recorded.convert("L")), screen,
                                        round(self._shift[0]), round(self._shift[1]),
                                        STATE_FACTOR, block=STATE_BLOCK)
        if diff > MAX_STATE_DIFF:
            return (f"the screen is not as it was when the steps were recorded (a part differs "
                    f"by {diff:.1f}, at most {MAX_STATE_DIFF:g})")
        return ""


#: Added to a replayed answer: the person reads it as the recorded run's words, not a new look.
RECORDED_ANSWER_NOTE = "(the recorded run's answer; the screen looked as it did then)"


def _expected_scale(recorded: FrameGeometry, now: FrameGeometry) -> float:
    """How many times larger the recorded crops look in today's screenshots."""
    def pixels_per_point(g: FrameGeometry) -> float:
        # Screenshot pixels per logical point: what a control's drawn size follows.
        return g.sent_width / g.monitor.width * g.scale
    return pixels_per_point(now) / pixels_per_point(recorded)


def _moved(action: Action, points: list[tuple[float, float]], convention: Convention,
           geometry: FrameGeometry) -> Action:
    """``action`` with its point(s) at ``points`` (screenshot pixels), in ``convention``."""
    data = ACTION_ADAPTER.dump_python(action, mode="json")
    data["x"], data["y"] = _in_convention(*points[0], convention, geometry)
    if isinstance(action, Drag) and len(points) > 1:
        data["to_x"], data["to_y"] = _in_convention(*points[1], convention, geometry)
    return ACTION_ADAPTER.validate_python(data)


def _in_convention(x: float, y: float, convention: Convention,
                   geometry: FrameGeometry) -> tuple[float, float]:
    if convention is Convention.NORM1000:
        return round(x / geometry.sent_width * 1000, 3), round(y / geometry.sent_height * 1000, 3)
    if convention is Convention.NORM1:
        return round(x / geometry.sent_width, 6), round(y / geometry.sent_height, 6)
    return round(x, 2), round(y, 2)


def _with_text(action: Type | AnswerAction, text: str) -> Action:
    """``action`` typing (or answering) ``text``, validated as the model's would be."""
    return ACTION_ADAPTER.validate_python({**action.model_dump(mode="json"), "text": text})


def _words(action: Action, *, secret: bool = False) -> str:
    # A typed secret is never in the step's thought: the log keeps the thought as written.
    return describe_action(action, secret=secret)
