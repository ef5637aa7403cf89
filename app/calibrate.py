"""`holodesk calibrate`'s core: show known targets, ask the model to click each, score conventions.

Holotron's coordinate convention is not published (docs/holotron.md, Coordinates), so
the person can measure it: targets of known position are shown one at a time, full-screen on
the chosen monitor; each is captured exactly as a run captures the screen and sent with a run's
system prompt and a task asking for a click on it; every answer is then mapped under each
convention (:func:`model.coords.to_screen`, as a run would click) and compared with where the
target really is. The convention under which every click lands within a tolerance, with the
lowest median error, is the model's.

Threads and layers: this module never imports Qt. The target window is a :class:`TargetScreen`
made by a :data:`ScreenFactory` the caller injects (ui/calibrate_screen.py for the real one);
:func:`run_with_screen` runs the calibration on a worker thread while the calling (main) thread
runs the screen's event loop, so the window stays responsive and Ctrl+C reaches the process.
"""

from __future__ import annotations

import datetime
import io
import logging
import math
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from model.coords import Convention, FrameGeometry, Point, Rect, from_screen, to_screen
from model.problem import HolodeskError

if TYPE_CHECKING:
    from app.settings import Settings
    from control.capture import Capturer, Frame
    from control.stop import StopLatch
    from model.client import Localized, StepReply

log = logging.getLogger(__name__)

T = TypeVar("T")

#: The order conventions are listed in (and ties broken in, after the prompt's own).
CONVENTIONS = (Convention.NORM1000, Convention.NORM1, Convention.PIXELS)
#: The share of the monitor's diagonal a click may miss by and still count as on target.
TOLERANCE_SHARE = 0.015
#: A verdict needs at least this many answered targets (fewer when fewer targets are shown).
MIN_ANSWERS = 3
#: Largest per-channel difference at which a captured pixel still counts as the target colour.
COLOR_TOLERANCE = 60
BACKGROUND = (236, 236, 236)
INK = (40, 40, 40)


# -- targets -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CalibrationTarget:
    """A target before it is placed: a coloured disc at a fraction of the monitor.

    Colours differ from each other, the background and the ink by far more than JPEG shifts
    them, so a model (or the test's colour-finding fake) can tell them apart.
    """

    label: str
    color_name: str
    rgb: tuple[int, int, int]
    fx: float
    fy: float
    place: str

    @property
    def description(self) -> str:
        """How the prompt and the report name it, e.g. ``red circle labelled A``."""
        return f"{self.color_name} circle labelled {self.label}"


#: Four corners inset by 10 % and the centre: a wrong scale or offset moves the corners apart.
TARGETS: tuple[CalibrationTarget, ...] = (
    CalibrationTarget("A", "red", (220, 0, 0), 0.1, 0.1, "top left"),
    CalibrationTarget("B", "blue", (0, 0, 230), 0.9, 0.1, "top right"),
    CalibrationTarget("C", "green", (0, 170, 0), 0.5, 0.5, "centre"),
    CalibrationTarget("D", "magenta", (200, 0, 200), 0.1, 0.9, "bottom left"),
    CalibrationTarget("E", "orange", (255, 140, 0), 0.9, 0.9, "bottom right"),
)


@dataclass(frozen=True)
class PlacedTarget:
    """A target on the screen: ``center`` and ``radius`` in logical points (pyautogui's space).

    ``area`` is the monitor in logical points: the window showing the target covers it.
    ``index`` (from 1) of ``count`` is shown on screen as progress.
    """

    target: CalibrationTarget
    center: Point
    radius: int
    area: Rect
    index: int
    count: int


def target_radius(area: Rect) -> int:
    """The disc radius for a monitor: big enough to find, small enough to need aiming."""
    return max(10, round(min(area.width, area.height) * 0.025))


def place_targets(
    area: Rect, targets: Sequence[CalibrationTarget] = TARGETS
) -> list[PlacedTarget]:
    """The targets' positions on ``area`` (the monitor in logical points)."""
    radius = target_radius(area)
    placed = []
    for index, target in enumerate(targets, start=1):
        x = area.left + min(area.width - 1, max(0, math.floor(target.fx * area.width)))
        y = area.top + min(area.height - 1, max(0, math.floor(target.fy * area.height)))
        placed.append(PlacedTarget(target, Point(x, y), radius, area, index, len(targets)))
    return placed


def tolerance_for(area: Rect, radius: int) -> float:
    """How far (logical points) a click may land from a target's centre and still count.

    The larger of the disc's radius (a click on the disc hits it) and a share of the
    monitor's diagonal (grounding models are a few pixels off on a large screen).
    """
    return max(float(radius), TOLERANCE_SHARE * math.hypot(area.width, area.height))


# -- measuring ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Landing:
    """Where an answer lands under one convention and how far from the target's centre."""

    point: Point
    error: float
    clamped: bool


def land(x: float, y: float, center: Point, geometry: FrameGeometry) -> dict[Convention, Landing]:
    """The model's point ``(x, y)`` mapped under every convention, as a run would click it."""
    out: dict[Convention, Landing] = {}
    for convention in CONVENTIONS:
        mapped = to_screen(x, y, convention, geometry)
        error = math.hypot(mapped.point.x - center.x, mapped.point.y - center.y)
        out[convention] = Landing(mapped.point, error, mapped.clamped)
    return out


@dataclass(frozen=True)
class TargetResult:
    """One target's outcome: the model's point and its landings, or why there is none.

    ``answer`` is the point as the model wrote it, ``action`` the action it used (``click``
    unless the server ignored the schema), ``raw`` the model's text. ``visible`` is False
    when the target could not be seen in the captured frame (another window on top, or the
    capture and the window disagree about where the monitor is).
    """

    placed: PlacedTarget
    answer: tuple[float, float] | None = None
    action: str | None = None
    raw: str = ""
    landings: dict[Convention, Landing] = field(default_factory=dict)
    error: str | None = None
    visible: bool = True
    geometry: FrameGeometry | None = None  # of the frame the model saw

    @property
    def answered(self) -> bool:
        return self.answer is not None


@dataclass(frozen=True)
class ConventionScore:
    """How one convention did over the answered targets."""

    convention: Convention
    median: float
    worst: float
    within: int
    answered: int

    @property
    def fits(self) -> bool:
        """Every answered target lands within the tolerance."""
        return self.answered > 0 and self.within == self.answered


@dataclass(frozen=True)
class Verdict:
    """The conventions ranked (best first) and the one that fits, if any."""

    tolerance: float
    answered: int
    total: int
    needed: int
    scores: tuple[ConventionScore, ...]

    @property
    def enough(self) -> bool:
        """Enough targets were answered to judge."""
        return self.answered >= self.needed

    @property
    def best(self) -> ConventionScore | None:
        """The fitting convention with the lowest median error; None when none fits."""
        if not self.enough or not self.scores or not self.scores[0].fits:
            return None
        return self.scores[0]

    @property
    def also_fitting(self) -> list[Convention]:
        """Other conventions that fit too (e.g. pixels and norm1000 on a 1000 px image)."""
        if self.best is None:
            return []
        return [s.convention for s in self.scores[1:] if s.fits]

    @property
    def closest(self) -> ConventionScore | None:
        """The best-ranked convention, fitting or not (for the warning)."""
        return self.scores[0] if self.scores else None


def score(
    results: Sequence[TargetResult],
    tolerance: float,
    *,
    prefer: Convention | None = None,
    min_answers: int = MIN_ANSWERS,
) -> Verdict:
    """Rank the conventions over ``results``: fitting first, then by the number of targets
    within ``tolerance``, then by median and worst error.

    Ties go to ``prefer`` (the convention the prompt asked for), then to the order of
    :data:`CONVENTIONS`.
    """
    answered = [r for r in results if r.answered]
    scores = []
    for convention in CONVENTIONS:
        errors = [r.landings[convention].error for r in answered]
        if not errors:
            continue
        scores.append(ConventionScore(
            convention,
            median=statistics.median(errors),
            worst=max(errors),
            within=sum(1 for e in errors if e <= tolerance),
            answered=len(errors),
        ))

    def rank(s: ConventionScore) -> tuple[bool, int, float, float, bool, int]:
        return (not s.fits, -s.within, round(s.median, 3), round(s.worst, 3),
                s.convention != prefer, CONVENTIONS.index(s.convention))

    scores.sort(key=rank)
    needed = min(min_answers, len(results)) if results else min_answers
    return Verdict(tolerance, len(answered), len(results), max(1, needed), tuple(scores))


# -- asking ------------------------------------------------------------------------------------


def calibration_schema() -> dict[str, Any]:
    """The step schema with ``click`` as the only action: the grammar makes the answer a click."""
    from model.structured import step_output_schema

    schema = step_output_schema()
    action = schema["properties"]["action"]
    action["anyOf"] = [
        variant for variant in action["anyOf"]
        if variant["properties"]["action"].get("const") == "click"
    ]
    return schema


def calibration_task(placed: PlacedTarget) -> str:
    """The task text for one target."""
    t = placed.target
    return (
        f"Calibration: the screen shows a {t.description}. Click the centre of the "
        f"{t.color_name} circle."
    )


def calibration_messages(
    placed: PlacedTarget,
    frame: Frame,
    convention: Convention,
    *,
    thinking: bool = False,
    today: datetime.date | None = None,
) -> list[dict[str, Any]]:
    """A run's first-step messages for the target: same system prompt, one screenshot.

    The prompt names ``convention`` (the one in the settings) exactly as a run does, so the
    measurement is of what runs get: a model that follows the prompt fits that convention, a
    model trained on another one shows it.
    """
    from model.prompt import PromptConfig, Turn, build_messages

    config = PromptConfig(
        convention=convention,
        sent_width=frame.width,
        sent_height=frame.height,
        today=today or datetime.date.today(),
        thinking=thinking,
    )
    return build_messages(calibration_task(placed), [Turn(1, frame.data, frame.mime)], config)


def target_visible(frame: Frame, placed: PlacedTarget) -> bool:
    """Whether the frame shows the target's colour where the target should be.

    Checks holodesk's own side before blaming the model: the window and the capture must agree
    on where the monitor is (offsets, scaling), and nothing may cover the window.
    """
    import numpy as np
    from PIL import Image

    geom = frame.geometry
    ix, iy = from_screen(placed.center.x + 0.5, placed.center.y + 0.5, Convention.PIXELS, geom)
    # A box a third of the disc wide, in sent-image pixels: inside the disc, clear of its edge.
    half = max(1, math.floor(placed.radius * geom.scale * geom.sent_width / geom.monitor.width / 3))
    box = (max(0, math.floor(ix) - half), max(0, math.floor(iy) - half),
           min(geom.sent_width, math.floor(ix) + half + 1),
           min(geom.sent_height, math.floor(iy) + half + 1))
    if box[2] <= box[0] or box[3] <= box[1]:
        return False
    with Image.open(io.BytesIO(frame.data)) as image:
        region = np.asarray(image.convert("RGB").crop(box), dtype=np.float64)
    mean = region.reshape(-1, 3).mean(axis=0)
    return bool(np.all(np.abs(mean - np.array(placed.target.rgb)) <= COLOR_TOLERANCE))


# -- the screen (implemented in ui/, injected) ---------------------------------------------------


class ScreenClosed(Exception):
    """The target window was closed (by the person, or because the calibration stops)."""


class TargetScreen(Protocol):
    """A full-screen window showing one target at a time.

    ``show`` and ``close`` are called from the calibration's worker thread (close also from
    others); ``run_until`` is called on the thread that made the screen and runs its event loop.
    """

    def show(self, target: PlacedTarget) -> None:
        """Show ``target`` (alone) and return once it is painted; raise :class:`ScreenClosed`
        when the screen is closed, or cannot show it."""
        ...

    def close(self) -> None:
        """Take the window down; a waiting or later ``show`` raises :class:`ScreenClosed`."""
        ...

    def run_until(self, done: Callable[[], bool]) -> None:
        """Run the event loop on the calling thread until ``done()`` holds (polled)."""
        ...


ScreenFactory = Callable[[Callable[[], None]], TargetScreen]
"""Makes the screen on the calling (main) thread; the argument is called when the person
closes the window or presses Escape."""


def run_with_screen(
    factory: ScreenFactory, latch: StopLatch, work: Callable[[TargetScreen], T]
) -> T:
    """Run ``work(screen)`` on a worker thread while this thread runs the screen's event loop.

    The screen closing (Escape) pulls ``latch``; the latch being pulled (Ctrl+C) closes the
    screen. Returns what ``work`` returned, or raises what it raised.
    """
    def closed_by_person() -> None:
        latch.stop("screen", "the calibration window was closed")

    screen = factory(closed_by_person)
    remove = latch.add_listener(lambda _info: screen.close())
    out: list[T] = []
    failed: list[BaseException] = []

    def body() -> None:
        try:
            out.append(work(screen))
        except BaseException as exc:  # handed to the calling thread
            failed.append(exc)

    worker = threading.Thread(target=body, name="calibrate", daemon=True)
    worker.start()
    try:
        screen.run_until(lambda: not worker.is_alive())
    finally:
        remove()
        screen.close()
        worker.join(timeout=30)
    if failed:
        raise failed[0]
    if not out:
        raise RuntimeError("the calibration did not finish")
    return out[0]


# -- the loop ------------------------------------------------------------------------------------


class StepAsker(Protocol):
    """What the calibration needs of :class:`model.client.HolotronClient`."""

    def next_step(
        self,
        messages: list[dict[str, Any]],
        schema: dict[str, Any],
        on_text: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> StepReply: ...

    def localize(self, image_url: str, element: str, *,
                 thinking_switch: str | None = ...) -> Localized: ...

    def cancel(self) -> None: ...


@dataclass(frozen=True)
class Localization:
    """Ask each target as H's element localization (one point, temperature 0, thinking off)
    instead of a run's first step: for a model on H's contract, whose points are 0-1000 of
    the image (docs/contract.md). ``thinking_switch`` is its chat template's switch."""

    thinking_switch: str | None = "enable_thinking"


@dataclass(frozen=True)
class CalibrationReport:
    """Everything measured: per target, the verdict, and the set-up it was measured on."""

    results: tuple[TargetResult, ...]
    verdict: Verdict
    geometry: FrameGeometry
    prompt_convention: Convention
    model: str = ""
    monitor_label: str = ""
    stopped: str | None = None  # why it ended early, None when every target was asked


class Calibrator:
    """Runs the calibration against a model, a capturer and a screen (see the module doc).

    ``on_result`` is called (on the worker thread) after each target, for progress output.
    ``visible_timeout`` bounds the wait for a shown target to appear in the capture.
    """

    def __init__(
        self,
        client: StepAsker,
        capturer: Capturer,
        latch: StopLatch,
        *,
        convention: Convention,
        thinking: bool = False,
        targets: Sequence[CalibrationTarget] = TARGETS,
        model: str = "",
        monitor_label: str = "",
        on_result: Callable[[TargetResult], None] | None = None,
        visible_timeout: float = 3.0,
        localization: Localization | None = None,
    ) -> None:
        self.localization = localization
        self.client = client
        self.capturer = capturer
        self.latch = latch
        self.convention = convention
        self.thinking = thinking
        self.targets = list(targets)
        self.model = model
        self.monitor_label = monitor_label
        self.on_result = on_result
        self.visible_timeout = visible_timeout

    def run(self, screen: TargetScreen) -> CalibrationReport:
        """Show, capture, ask and measure each target in turn; blocks (call it on a worker)."""
        from model.errors import Cancelled

        remove = self.latch.add_listener(lambda _info: self.client.cancel())
        try:
            # A first frame tells where the monitor is (logical points) before anything shows.
            geometry = self.capturer.grab().geometry
            placed = place_targets(geometry.logical_monitor, self.targets)
            results: list[TargetResult] = []
            stopped: str | None = None
            for target in placed:
                if self.latch.is_set:
                    break
                try:
                    result = self._one(screen, target)
                except ScreenClosed as exc:
                    stopped = str(exc) or "the calibration window was closed"
                    break
                except Cancelled:
                    break
                results.append(result)
                geometry = result.geometry or geometry
                if self.on_result is not None:
                    self.on_result(result)
            info = self.latch.info
            if info is not None:
                stopped = info.reason or info.source
        finally:
            remove()
        tolerance = tolerance_for(geometry.logical_monitor, target_radius(
            geometry.logical_monitor))
        verdict = score(results, tolerance, prefer=self.convention)
        return CalibrationReport(tuple(results), verdict, geometry, self.convention,
                                 self.model, self.monitor_label, stopped)

    def _one(self, screen: TargetScreen, target: PlacedTarget) -> TargetResult:
        from model.errors import Cancelled, HolotronError
        from model.schema import Click, DoubleClick, Move

        screen.show(target)
        frame, visible = self._capture(target)
        if not visible:
            log.warning("target %s is not visible in the capture at %s", target.target.label,
                        target.center)
        if self.localization is not None:
            return self._localized(target, frame, visible, self.localization)
        messages = calibration_messages(target, frame, self.convention, thinking=self.thinking)
        try:
            reply = self.client.next_step(messages, calibration_schema(),
                                          should_stop=lambda: self.latch.is_set)
        except Cancelled:
            raise
        except HolotronError as exc:
            return TargetResult(target, error=exc.message, visible=visible,
                                geometry=frame.geometry)
        action = reply.step.action
        if not isinstance(action, Click | DoubleClick | Move):
            return TargetResult(
                target, action=action.action, raw=reply.raw, visible=visible,
                error=f"the model answered {action.action!r} instead of a click",
                geometry=frame.geometry,
            )
        landings = land(action.x, action.y, target.center, frame.geometry)
        return TargetResult(target, (action.x, action.y), action.action, reply.raw, landings,
                            visible=visible, geometry=frame.geometry)

    def _localized(self, target: PlacedTarget, frame: Frame, visible: bool,
                   how: Localization) -> TargetResult:
        from model.errors import Cancelled, HolotronError
        from model.prompt import data_url

        t = target.target
        try:
            found = self.client.localize(data_url(frame.data, frame.mime),
                                         f"the centre of the {t.color_name} circle",
                                         thinking_switch=how.thinking_switch)
        except Cancelled:
            raise
        except HolotronError as exc:
            return TargetResult(target, error=exc.message, visible=visible,
                                geometry=frame.geometry)
        landings = land(found.x, found.y, target.center, frame.geometry)
        return TargetResult(target, (found.x, found.y), "click", found.raw, landings,
                            visible=visible, geometry=frame.geometry)

    def _capture(self, target: PlacedTarget) -> tuple[Frame, bool]:
        """Grab until the target shows in the frame (the window may need a moment to appear)."""
        deadline = time.monotonic() + self.visible_timeout
        while True:
            frame = self.capturer.grab()
            if target_visible(frame, target):
                return frame, True
            if time.monotonic() >= deadline or self.latch.wait(0.05):
                return frame, False


# -- the report ----------------------------------------------------------------------------------


def _num(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.3g}"


def describe_answer(result: TargetResult) -> str:
    """The model's answer in a few words, or the error."""
    if result.answer is not None:
        x, y = result.answer
        return f"{result.action or 'click'} ({_num(x)}, {_num(y)})"
    return f"no answer: {result.error}" if result.error else "no answer"


def format_report(report: CalibrationReport) -> str:
    """The report printed by ``holodesk calibrate``: the table, then the verdict."""
    geom = report.geometry
    verdict = report.verdict
    lines = [
        f"Monitor {report.monitor_label or '?'}: {geom.monitor} physical pixels, scale "
        f"{geom.scale:g}; screenshots sent at {geom.sent_width}x{geom.sent_height}"
        + (f"; model {report.model!r}" if report.model else "") + ".",
        f"The prompt asked for {report.prompt_convention.value} coordinates (the convention in "
        "the settings). Errors are in screen pixels; * = beyond the tolerance of "
        f"{verdict.tolerance:.0f} px.",
        "",
    ]
    header = ["target", "at", "model answered", *(c.value for c in CONVENTIONS)]
    rows = [header]
    for r in report.results:
        t = r.placed.target
        name = f"{t.label} {t.color_name}, {t.place}"
        cells = [name, str(r.placed.center), describe_answer(r) if r.answered else "-"]
        if r.answered:
            for c in CONVENTIONS:
                error = r.landings[c].error
                cells.append(f"{error:.1f}" + ("*" if error > verdict.tolerance else ""))
        else:
            cells.extend("-" for _ in CONVENTIONS)
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        head = "  ".join(row[i].ljust(widths[i]) for i in range(3))
        tail = "".join(cell.rjust(10) for cell in row[3:])
        lines.append((head + tail).rstrip())
    failed = [r for r in report.results if not r.answered]
    if failed:
        lines.append("")
        lines.extend(f"No answer for {r.placed.target.label}: {r.error or 'unknown error'}"
                     for r in failed)
    hidden = [r.placed.target.label for r in report.results if not r.visible]
    if hidden:
        lines += ["", f"Note: target(s) {', '.join(hidden)} did not show in the screenshot where "
                  "they were drawn: another window may cover them, or the monitor (or its "
                  "scaling) is not the one captured."]
    lines.append("")
    lines.extend(verdict_lines(report))
    return "\n".join(lines)


def verdict_lines(report: CalibrationReport) -> list[str]:
    """The conclusion: the convention that fits, or the warning."""
    verdict = report.verdict
    lines: list[str] = []
    if report.stopped:
        lines.append(f"Stopped early ({report.stopped}): {len(report.results)} of "
                     f"{report.results[0].placed.count if report.results else '?'} targets "
                     "measured.")
    if not verdict.enough:
        lines.append(
            f"Too few answers to judge: {verdict.answered} of {verdict.total} targets answered "
            f"(at least {verdict.needed} needed). See the errors above."
        )
        return lines
    best = verdict.best
    if best is not None:
        lines.append(
            f"The model uses {best.convention.value}: median error {best.median:.1f} px, "
            f"worst {best.worst:.1f} px, all {best.answered} answered targets within "
            f"{verdict.tolerance:.0f} px."
        )
        if verdict.also_fitting:
            others = ", ".join(c.value for c in verdict.also_fitting)
            lines.append(f"({others} fits too on this screenshot size; "
                         f"{best.convention.value} has the lower error.)")
        return lines
    closest = verdict.closest
    near = (
        f" (closest: {closest.convention.value}, median error {closest.median:.0f} px, "
        f"{closest.within} of {closest.answered} targets within {verdict.tolerance:.0f} px)"
        if closest is not None else ""
    )
    lines += [
        f"WARNING: the model's clicks miss under every convention{near}.",
        "Do not trust this model's clicks. Likely causes: the wrong model is served, the wrong "
        "monitor or display scaling (check the monitor setting), or the model does not ground "
        "(point at what it sees).",
    ]
    return lines


# -- the real parts ------------------------------------------------------------------------------


class CalibrationUnavailable(HolodeskError):
    """The calibration cannot start: no display, no such monitor, no model server, ...

    ``message`` and ``fix`` are for the person; nothing was shown on the screen yet.
    """


@contextmanager
def open_calibrator(
    settings: Settings,
    latch: StopLatch,
    *,
    on_result: Callable[[TargetResult], None] | None = None,
) -> Iterator[Calibrator]:
    """A :class:`Calibrator` over the real client and capturer, as a run would build them.

    Checks the display, the monitor and the model server first (raising
    :class:`CalibrationUnavailable`), so a full-screen window never appears for nothing; the
    client and the capturer are closed on leaving.
    """
    from app.logs import mask
    from app.parts import client_config, make_capturer, run_codec, run_convention
    from app.secrets import api_key
    from control.display import NoDisplayError, check_display
    from model.client import HolotronClient
    from model.contracts import ContractKind
    from model.errors import HolotronError
    from model.plain_http import PlainHttpRefused, check_plain_http
    from model.profiles import profile_by_key

    # The screen and the key go to the server as in a run: the same consent first.
    try:
        check_plain_http(settings.endpoint, settings.plain_http_ok)
    except PlainHttpRefused as e:
        raise CalibrationUnavailable(e.message, e.fix) from None
    try:
        check_display()
    except NoDisplayError as e:
        raise CalibrationUnavailable(str(e)) from None
    key = api_key(settings.endpoint)
    mask(key)
    codec = run_codec(settings)
    client = HolotronClient(client_config(settings, key, temperature=0.0), codec)
    localization = None
    convention = run_convention(settings, codec)
    if codec is not None and codec.kind is not ContractKind.LEGACY:
        # H's contracts: the point is measured as H documents asking for one.
        profile = profile_by_key(settings.model_profile)
        localization = Localization(profile.reasoning.switch_kwarg)
    capturer = make_capturer(settings)
    try:
        try:
            capturer.monitor()
        except ValueError as e:
            raise CalibrationUnavailable(str(e)) from None
        try:
            model = client.resolve_model()
        except HolotronError as e:
            raise CalibrationUnavailable(e.message, e.fix) from None
        yield Calibrator(client, capturer, latch, convention=convention,
                         thinking=settings.thinking, model=model,
                         monitor_label=settings.monitor, on_result=on_result,
                         localization=localization)
    finally:
        client.close()
        capturer.close()
