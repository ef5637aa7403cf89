"""A session: the parts of one run wired from settings, shared by the CLI and the GUI."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from app import protected
from app.agent import Agent, AgentParts, RunConfig, RunLimits
from app.events import Event, RunFinished
from app.logs import settle, watch
from app.parameters import Filled
from app.parts import (
    Closeable,
    ContractChoice,
    auto_codec,
    client_config,
    convention_notice,
    make_capturer,
    run_codec,
    run_convention,
)
from app.pause import PauseGate
from app.replay import Replayer
from app.secrets import api_key
from app.settings import Settings
from app.store import ActionLog
from app.trajectory import Recorder
from app.way import MakeWay
from control import release
from control.capture import EVERYTHING, ExcludeRects
from control.display import check_display
from control.failsafe import CornerWatch, pointer_source
from control.input import DryRunBackend, Executor, InputBackend, PyAutoGuiBackend
from control.policy import SafetyPolicy
from control.stop import StopLatch
from control.target import NoTargetFinder, TargetFinder
from control.target_x11 import make_target_finder
from control.touch import TouchDetector
from control.tripwire import STOP_SOURCE, Trip
from model.client import HolotronClient, ServedModel
from model.coords import Rect
from model.plain_http import check_plain_http
from model.problem import HolodeskError
from model.run_secrets import RunSecrets

if TYPE_CHECKING:
    from app.automations import Automation
    from app.run_request import RunRequest

log = logging.getLogger(__name__)

#: How long the person's input is not yet taken as a touch after they answered a confirmation
#: or pressed Resume: the global input listener's thread hears of the key or click that did it
#: after the front end does (much later on a busy machine), and would pause the run on it.
TOUCH_GRACE_S = 0.5


class NeverTouchUnseen(HolodeskError, RuntimeError):
    """``never_touch`` is set where no target finder can tell which window is which."""


@dataclass
class Session:
    """One task with everything it drives. :meth:`run` blocks: call it on a worker thread."""

    task: str
    settings: Settings
    dry_run: bool
    parts: AgentParts
    _closers: list[Callable[[], None]] = field(default_factory=list)
    _last_closers: list[Callable[[], None]] = field(default_factory=list)
    #: The run's hand-back-on-touch detector, when the front end set one up.
    touch: TouchDetector | None = None
    #: The automation's parameters this run fills in: their filled task is the one run, its
    #: secret values masked from the start.
    parameters: Filled | None = None
    #: The automation this run is: its saved steps replay first (with ``replay``) and an
    #: answered run's steps are saved in their place (not for a dry run).
    automation: Automation | None = None
    replay: bool = True

    #: Saves the run's steps as the automation's trajectory when it ends answered.
    recorder: Recorder | None = None
    #: What the person is told once before the run starts (the protected files are only
    #: compared after each action, not watched).
    notices: list[str] = field(default_factory=list)
    #: What the person is told once the session closed (protected files changed after the
    #: run's last look); the front ends say it after the run's end.
    after_close: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # The parameters first: the automation's saved steps are read and recorded with their
        # values, and its task as the log keeps it is masked with their secrets.
        if self.parameters is not None:
            self._use_parameters(self.parameters)
        if self.automation is not None:
            self._for_automation(self.automation.key, self.automation.name,
                                 replay=self.replay, template=self.automation.task)

    def _for_automation(self, key: str, name: str, *, replay: bool, template: str) -> None:
        """Make this the run of automation ``name`` (``key``: its name as compared): replay
        its saved steps first unless ``replay`` is False, and save this run's steps in their
        place if it ends answered (not for a dry run: nothing it did happened).

        ``template`` is the automation's task as written, placeholders unfilled: the saved
        steps replay for any values of them (this run's, typed in place of the recorded
        run's).
        """
        # The task as the log keeps it: a secret parameter's value is in the filled task and
        # must never reach the saved steps (stored masked).
        task = self.parts.secrets.mask(self.task)
        values = dict(self.parameters.values) if self.parameters else {}
        try:
            secret = self.parameters.secret_names if self.parameters else frozenset()
            replayer = (Replayer.load(key, template, values=values, secret_names=secret)
                        if replay else None)
        except Exception:  # never a reason not to run: the model does it all then
            log.exception("could not load the saved steps of automation %r", name)
            replayer = None
        if replayer is not None and replayer.problem:
            log.info("automation %r runs with the model: %s", name, replayer.problem)
        self.parts.replay = replayer
        if not self.dry_run:
            convention = run_convention(self.settings, self.parts.client.codec)
            self.recorder = Recorder(key, name, task, convention,
                                     secrets=self.parts.secrets.forms, template=template,
                                     parameters=self.parameters)

    @property
    def latch(self) -> StopLatch:
        return self.parts.latch

    def choose_codec(self, entry: ServedModel) -> ContractChoice:
        """The contract the run speaks: the named profile's, else the served model's
        (app/parts.py ``auto_codec``); saved steps then record the coordinates that contract
        fixes. The notice says what the person should know of the choice."""
        if self.settings.model_profile:
            codec = self.parts.client.codec
            return ContractChoice(codec, convention_notice(self.settings, codec))
        choice = auto_codec(entry)
        if self.recorder is not None:
            self.recorder.convention = run_convention(self.settings, choice.codec)
        said = [n for n in (choice.notice, convention_notice(self.settings, choice.codec)) if n]
        return ContractChoice(choice.codec, "; ".join(said))

    def run(self, emit: Callable[[Event], None]) -> RunFinished:
        """Carry out the task, with the failsafe corner watched throughout (real input only)."""
        watch = None if self.dry_run else _start_corner_watch(self.latch)
        try:
            return self._run(emit)
        finally:
            if watch is not None:
                watch()

    def _run(self, emit: Callable[[Event], None]) -> RunFinished:
        s = self.settings
        config = RunConfig(
            task=self.task,
            convention=run_convention(s, self.parts.client.codec),
            limits=RunLimits(
                max_steps=s.max_steps,
                max_seconds=s.max_seconds,
                loop_limit=s.loop_limit,
                settle_min=s.settle_min,
                settle_max=s.settle_max,
            ),
            thinking=s.thinking,
            dry_run=self.dry_run,
            monitor_label=s.monitor,
            endpoint=s.endpoint,
            settings={**s.model_dump(mode="json"),
                      **(self.parameters.record() if self.parameters else {})},
        )
        recorder = self.recorder
        if recorder is not None:
            def emit_and_record(event: Event) -> None:
                recorder(event)  # on this worker thread: decoding and cropping take a while
                emit(event)

            return Agent(self.parts, emit_and_record).run(config)
        return Agent(self.parts, emit).run(config)

    def _use_parameters(self, filled: Filled) -> None:
        """Run ``filled``'s task. Its secret values are masked from here on wherever typed
        secrets are (the log file, the action log, the prompt history, what the front ends
        show), and typing one counts as typing a secret; the run's settings snapshot records
        the plain values and the secret names (a replay retypes from them)."""
        if self.parts.policy.secrets is not self.parts.secrets:
            # Else typing a secret parameter's value would not be judged a secret.
            raise ValueError(
                "the session's safety policy does not share the run's secrets with its action "
                "log; build both with the same RunSecrets (as RealParts does)")
        self.task = filled.task
        self.parameters = filled
        # The run's one set of secrets (model/run_secrets.py): the store, the policy and the
        # log file took it when the parts were made, and derive every form from it.
        self.parts.secrets.add_parameters(filled.secrets())
        watch(self.parts.secrets)

    def watch_protected_files(self, finder: TargetFinder, *, watch: bool = True) -> None:
        """Guard the protected files through the run (:mod:`app.protected`): a change stops it
        at once, naming the files, what happened to them and the application in front
        (``finder``'s focused window then); they are compared after each action too (with
        ``watch`` False only then), and all of them once more as the run ends, however it
        ended (a change found then, when the run was stopped already, is added to the reason
        it ended for). As the session closes, the record for the next run is taken from what
        the tripwire compared, and what changed since its last look goes to
        :attr:`after_close`. Never raises: what limits the watch is in :attr:`notices`."""
        latch = self.latch
        untold: list[str] = []
        lock = threading.Lock()
        ended = threading.Event()  # the last look is over: a stop would stop nothing

        def on_trip(trip: Trip) -> None:
            try:
                front = finder.focused().label()
            except Exception:
                log.warning("could not find the window in front", exc_info=True)
                front = "an application holodesk could not find"
            reason = f"protected files changed while {front} was in front: {trip.describe()}"
            if not ended.is_set() and latch.stop(STOP_SOURCE, reason):
                log.info("%s", reason)  # the run's end says it
            else:  # stopped already, for another reason: told with the run's end, or after
                log.warning("%s", reason)
                with lock:
                    untold.append(reason)

        def take_untold() -> str | None:
            with lock:
                said = "; ".join(untold)
                untold.clear()
            return said or None

        def last_look() -> str | None:
            wire.check(everything=True)
            ended.set()
            return take_untold()

        try:
            wire = protected.start_tripwire(self.settings, on_trip, watch=watch)
        except Exception as e:  # never a reason not to run: said, and nothing is compared
            log.exception("the protected files are not watched")
            self.notices.append(f"the protected files are not watched in this run: {e}")
            return
        self.notices += [f"protected files: {problem}" for problem in wire.problems]
        self.parts.after_settle = wire.check
        self.parts.last_look = last_look
        settings = self.settings

        def close() -> None:
            changed = protected.close_tripwire(settings, wire)
            late = take_untold()
            if late:
                self.after_close.append(f"after the run ended, {late}")
            if changed:
                self.after_close.append(protected.changed_after_message(changed))

        self.on_close(close)

    def on_close(self, closer: Callable[[], None], *, last: bool = False) -> None:
        """Also call ``closer`` when the session closes (e.g. a listener tied to the run):
        before the parts close, or with ``last`` after them (e.g. the desktop lock, freed only
        once every key and button is released)."""
        (self._last_closers if last else self._closers).append(closer)

    def close(self) -> None:
        """Release the capture, the log and the input backend; safe to call twice."""
        closers = [*self._closers, self.parts.capturer.close, self.parts.store.close]
        self._closers = []
        # Its secrets stay masked in the log file; the filter stops following this run.
        closers.append(lambda: settle(self.parts.secrets))
        backend = self.parts.executor.backend
        if isinstance(backend, Closeable):  # a dry run's holds nothing
            closers.append(backend.close)
        closers += self._last_closers
        self._last_closers = []
        for closer in closers:
            try:
                closer()
            except Exception:
                log.exception("closing the session")


@dataclass
class RunParts:
    """What a :class:`PartsFactory` made for one run."""

    agent: AgentParts
    #: Closed as the session closes, before the agent's parts (the target finder's
    #: connection).
    closeables: list[Closeable] = field(default_factory=list)
    #: Guard the protected files through the run, telling the application in front with this
    #: finder (:meth:`Session.watch_protected_files`); None: not watched.
    protect: TargetFinder | None = None
    #: Let the served model choose the contract when no profile is named (real runs).
    choose_codec: bool = False
    #: The input acts on nothing (a dry run's backend, or a test's): the run is a dry run
    #: whatever the request says (no failsafe corner to watch, no saved steps recorded).
    dry_run: bool = False


class PartsFactory(Protocol):
    """Makes the parts of one run: the real ones (:class:`RealParts`), or a test's. ``pause``
    goes into the agent's parts: the run pauses there before each screenshot and action."""

    def __call__(self, request: RunRequest, latch: StopLatch,
                 pause: PauseGate | None) -> RunParts: ...


@dataclass(frozen=True)
class RealParts:
    """The real parts of a run on this desktop, wired from the request's settings.

    ``backend`` is the input (default: real input, or a dry run's for a dry-run request);
    ``exclude`` gives the rectangles of holodesk's own windows, painted out of every frame so
    they never confuse the model; the windows of the ``never_touch`` applications are painted
    out too. ``finder`` tells which application each action goes to (default: the
    platform's). A real run (not a dry run) first releases every key and button left pressed
    on the desktop (:mod:`control.release`). Raises :class:`~control.display.NoDisplayError`
    when there is no screen to drive.
    """

    backend: InputBackend | None = None
    exclude: ExcludeRects | None = None
    finder: TargetFinder | None = None

    def __call__(self, request: RunRequest, latch: StopLatch,
                 pause: PauseGate | None) -> RunParts:
        settings, dry_run = request.settings, request.dry_run
        # First of all: a screenshot or the key must not cross a network unencrypted without
        # the person's say-so (and the refusal must not wait on a display or the keyring).
        check_plain_http(settings.endpoint, settings.plain_http_ok)
        check_display()
        key = api_key(settings.endpoint)
        # The run's secrets, one object that the action log, the policy and the log file take.
        secrets = RunSecrets(api_key=key)
        watch(secrets)
        client = HolotronClient(client_config(settings, key), run_codec(settings))
        finder = self.finder if self.finder is not None else make_target_finder()
        if settings.never_touch and isinstance(finder, NoTargetFinder):
            raise NeverTouchUnseen(
                "holodesk cannot see which window is which here "
                f"({finder.focused().label()}), so it cannot keep the applications it never "
                f"touches ({', '.join(settings.never_touch[:4])}...) out of the screenshots or "
                "away from its clicks and typing",
                "run holodesk in an X11 session; or close those applications and allow runs "
                "here with: holodesk config set never_touch \"\" (every screenshot then shows "
                "whatever is on the screen)")
        capturer = make_capturer(settings,
                                 exclude=_with_never_touch(self.exclude, finder, settings))
        # A monitor that does not exist is a bad argument: say so before anything starts.
        try:
            capturer.monitor()
        except Exception:
            capturer.close()
            raise
        if not dry_run:
            # A holodesk killed mid-drag released nothing: its button (or Shift) would still
            # be down, and this run's first click would continue that drag. Inside the
            # desktop lock (open_run), so no other run's held keys are released under it.
            release.release_everything()
        backend = self.backend
        if backend is None:
            backend = DryRunBackend() if dry_run else PyAutoGuiBackend(latch)
        parts = AgentParts(
            client=client,
            capturer=capturer,
            executor=Executor(backend, latch),
            policy=SafetyPolicy(settings.confirm, reserved_hotkeys=(settings.stop_hotkey,),
                                never_touch=settings.never_touch, only_in=settings.only_in,
                                secrets=secrets),
            store=ActionLog.open(secrets=secrets,
                                 keep_screenshots=settings.log_screenshots),
            latch=latch,
            pause=pause,
            finder=finder,
        )
        return RunParts(parts, closeables=[finder] if isinstance(finder, Closeable) else [],
                        protect=None if dry_run else finder, choose_codec=True)


def build_session(
    request: RunRequest,
    parts: PartsFactory | None = None,
    *,
    latch: StopLatch | None = None,
    pause: PauseGate | None = None,
    touch: TouchDetector | None = None,
    make_way: MakeWay | None = None,
) -> Session:
    """The session of ``request``, its parts made by ``parts`` (default: the real ones,
    :class:`RealParts`); the one way `holodesk run`, `automation run`, a terminal trigger and
    the desktop app build a run (app/runner.py ``open_run`` takes the desktop lock around it).

    Everything the run is given is an input here, in no order: ``latch`` its stop (the GUI
    passes its own), ``pause`` the pause it checks before each screenshot and action,
    ``touch`` the detector that pauses it when the person uses mouse or keys (started here,
    stopped as the session closes), ``make_way`` how the front end takes its windows out of
    where the run works before each screenshot (app/way.py), and from the request the
    parameters it fills in, the automation whose saved steps it replays and the task's own
    check of its goal (asked as the run ends: its verdict is the run's result).
    """
    latch = latch or StopLatch()
    made = (parts or RealParts())(request, latch, pause)
    try:
        touching = _start_touch(touch, pause)
        session = Session(task=request.task, settings=request.settings,
                          dry_run=request.dry_run or made.dry_run, parts=made.agent,
                          touch=touching,
                          parameters=request.parameters, automation=request.saved_steps,
                          replay=request.replay)
    except BaseException:
        if touch is not None:
            touch.stop()
        for part in (*made.closeables, made.agent.capturer, made.agent.store):
            part.close()
        raise
    made.agent.check = request.check
    if made.choose_codec:
        made.agent.choose_codec = session.choose_codec
    if make_way is not None:
        made.agent.make_way = make_way
    if made.protect is not None:
        session.watch_protected_files(made.protect)  # closed first: its callback asks the finder
    for part in made.closeables:
        session.on_close(part.close)
    if touching is not None:
        session.on_close(touching.stop)
    return session


def _start_touch(touch: TouchDetector | None, pause: PauseGate | None) -> TouchDetector | None:
    """Start ``touch``, the run's hand back on touch; None when there is none, or it cannot
    listen (the run goes on without it)."""
    if touch is None:
        return None
    try:
        touch.start()
    except Exception:
        log.warning("hand back on touch is off: the input listener did not start",
                    exc_info=True)
        return None
    if pause is not None:
        detector = touch

        def rearm_after_resume(reason: str | None) -> None:
            if reason is None:  # resumed: the click on Resume itself must not pause again
                timer = threading.Timer(TOUCH_GRACE_S, detector.rearm)
                timer.daemon = True
                timer.start()

        pause.add_listener(rearm_after_resume)
    return touch


def _with_never_touch(exclude: ExcludeRects | None, finder: TargetFinder,
                      settings: Settings) -> ExcludeRects | None:
    """``exclude`` plus the windows of the applications holodesk never touches: what a password
    manager shows never reaches the model."""
    apps = settings.never_touch
    if not apps:
        return exclude

    def rects() -> list[Rect]:
        out = list(exclude()) if exclude is not None else []
        try:
            out += [t.rect for t in finder.windows() if t.rect is not None and t.matches(apps)]
        except Exception:
            # Where a never-touch window is is unknown: the frame shows nothing rather than it.
            log.warning("could not list the windows to paint out; this frame is painted out "
                        "entirely", exc_info=True)
            out.append(EVERYTHING)
        return out

    return rects


def _start_corner_watch(latch: StopLatch) -> Callable[[], None] | None:
    """Start watching the failsafe corners; returns the function that ends the watch."""
    try:
        position, points, close = pointer_source()
    except Exception:
        log.warning("the failsafe corner is checked only when holodesk acts", exc_info=True)
        return None
    watch = CornerWatch(latch, position, points)
    watch.start()

    def end() -> None:
        watch.stop()
        close()

    return end
