"""The agent loop: see, think, confirm, act, record; a small state machine emitting events.

The loop runs on one worker thread. It never talks to a person directly: it emits
:mod:`app.events` and, when the policy asks for confirmation, blocks on a
:class:`~app.events.ConfirmRequest` that a front end (terminal or Qt) answers.

A step is a short sequence of stages (:meth:`Agent._step`) passing values along: the action
judged, the decision taken, how the run ended (app/step.py); whether the steps still come from
a replay is app/replay_state.py.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from app.events import (
    ActionExecuted,
    Answer,
    AwaitingConfirmation,
    ConfirmReply,
    ConfirmRequest,
    Decision,
    Event,
    FrameCaptured,
    ModelText,
    Outcome,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StepDecided,
    StepFailed,
    StepProposed,
)
from app.logs import watch
from app.parts import ContractChoice
from app.pause import PauseGate
from app.replay_state import ReplayState
from app.result import CHECKED, RunResult, TaskCheck
from app.step import Acted, EditRefused, Ended, Judged, StepOutcome
from app.store import ActionLog, Source, StepRecord, StepResult, points_text
from app.way import MakeWay, WorkArea
from control.capture import Capturer, Frame, frame_small, thumbnail
from control.input import Executor, TimeLimitReached, normalized
from control.policy import Aim, SafetyPolicy, Verdict, key_text, typed_by
from control.settle import GrayFrame, SettleProfile, settle_for, wait_until_settled
from control.settle_frames import SettleFrames
from control.stop import StopLatch, StoppedError
from control.target import NoTargetFinder, Target, TargetFinder
from model.client import HolotronClient, ServedModel
from model.contracts import ContractKind
from model.coords import Convention, FrameGeometry, MappedPoint, Point, Rect, to_screen
from model.errors import Cancelled, HolotronError, InvalidOutput
from model.prompt import (
    OUTCOME_DONE,
    OUTCOME_SKIPPED,
    PromptConfig,
    Turn,
    build_messages,
    describe_action,
    hidden_key_step,
    hidden_keys,
)
from model.run_secrets import RunSecrets
from model.schema import (
    Action,
    AskUser,
    Drag,
    DragTo,
    HoldAndTap,
    Hotkey,
    KeyDown,
    KeyUp,
    Move,
    Step,
    Type,
    UpdatePlan,
    Wait,
)
from model.schema import Answer as AnswerAction

log = logging.getLogger(__name__)

#: Mean absolute difference (0-255 grey levels) of the small frames below which the screen
#: counts as unchanged for loop detection: JPEG-free raw pixels, so noise is near zero.
UNCHANGED_THRESHOLD = 0.5

#: How long an approved action waits for holodesk's own confirmation to leave the screen (and
#: the focus to return) before a window still in the way counts as a change.
_CONFIRMATION_GONE_S = 2.0

#: How long the screen may take to settle once holodesk's own windows made way (the windows
#: under them repaint): a window that keeps changing is looked at after this anyway.
_WAY_SETTLE_MAX_S = 2.0
#: How long an unchanged screen is given to start repainting after a window left it.
_WAY_REACTION_S = 0.15

#: What the model hears about a step discarded because the run was paused before it ran.
OUTCOME_PAUSED = "not done: the person paused the run here; the screen may have changed"
#: Starts the reason shown when the person's edit could not be used and they are asked again.
EDIT_REFUSED = "your edit was not used"


@dataclass(frozen=True)
class RunLimits:
    """When a run ends on its own, whatever the model says."""

    max_steps: int = 30
    max_seconds: float = 900.0
    loop_limit: int = 3  # the same action on an unchanged screen this many times in a row
    settle_min: float = 0.0  # the floor; each action's own wait is control/settle.settle_for
    settle_max: float = 3.0


@dataclass
class RunConfig:
    """One run: the task and how to carry it out."""

    task: str
    convention: Convention = Convention.NORM1000
    limits: RunLimits = field(default_factory=RunLimits)
    thinking: bool = False
    dry_run: bool = False
    monitor_label: str = "1"
    endpoint: str = ""
    settings: dict[str, Any] = field(default_factory=dict)  # a snapshot for the log; no secrets


@dataclass(frozen=True)
class Seen:
    """What a source of actions sees at a step: the task, the step's screenshot, the convention
    its points are to be given in, and the steps done so far."""

    task: str
    step_no: int
    frame: Frame
    convention: Convention
    turns: tuple[Turn, ...] = ()


@dataclass(frozen=True)
class Proposal:
    """The next step from a source other than the model, with why it is what it is (for the
    log: e.g. where a replayed target was found again)."""

    step: Step
    note: str = ""
    #: Why the person is asked before this step whatever the policy says ("": as it says).
    ask: str = ""


@dataclass(frozen=True)
class Cannot:
    """The source cannot give this step: ``reason`` says why; the model takes over."""

    reason: str


class ActionSource(Protocol):
    """Where a step's action comes from when not from the model: a replayed trajectory
    (app/replay.py). The loop asks it first, until it answers :class:`Cannot` once; from then
    on the model gives every step. Whatever it proposes goes through the same policy,
    confirmation, stop, execution, settle and log as the model's proposals."""

    @property
    def active(self) -> bool:
        """Whether it has anything to give (a run without one resolves the model at once)."""
        ...

    def next_step(self, seen: Seen) -> Proposal | Cannot:
        """The next step, or why there is none."""
        ...


@dataclass
class AgentParts:
    """Everything the loop drives, injected so tests and front ends can swap parts."""

    client: HolotronClient
    capturer: Capturer
    executor: Executor
    policy: SafetyPolicy
    store: ActionLog
    latch: StopLatch
    clock: Callable[[], float] = time.monotonic
    today: Callable[[], dt.date] = dt.date.today
    pause: PauseGate | None = None  # checked before each screenshot and each action
    #: Which application receives each action (the policy's rules depend on it).
    finder: TargetFinder = field(default_factory=NoTargetFinder)
    #: Asked for each step before the model, until it cannot give one (a replay).
    replay: ActionSource | None = None
    #: Called after each action's settle wait and once as the run ends, on the run's thread;
    #: it may pull the stop latch (the protected files' tripwire compares them here).
    after_settle: Callable[[], object] | None = None
    #: Called instead of ``after_settle`` as the run ends, however it ended (stopped too); it
    #: may pull the stop latch, and returns what it found to tell when the latch was pulled
    #: already (added to the reason the run ended for), else None.
    last_look: Callable[[], str | None] | None = None
    #: Given what the server serves, the contract to speak and what to tell the person of it
    #: (None: keep the client's); asked once, before the first step (app/session.py).
    choose_codec: Callable[[ServedModel], ContractChoice | None] | None = None
    #: The task's own check of its goal, asked as the run ends (not when it was stopped or
    #: failed): its verdict is the run's result (app/result.py). None: the outcome decides.
    check: TaskCheck | None = None
    #: Asked before each screenshot with where the run works, so that the front end's own
    #: windows get out of it (app/way.py); None: no front end has windows on this screen.
    make_way: MakeWay | None = None

    @property
    def secrets(self) -> RunSecrets:
        """The run's secrets (model/run_secrets.py): the ones the action log was opened with,
        so the log, the prompt and the events mask the same."""
        return self.store.secrets()


@dataclass
class _Current:
    """The step under way: its number, its record so far, its timings."""

    run_id: str
    no: int
    record: StepRecord
    timings: dict[str, float] = field(default_factory=dict)
    ask: str = ""  # the step's source wants it asked, and why


@dataclass
class _History:
    """What the run carries from step to step."""

    deadline: float
    turns: list[Turn] = field(default_factory=list)
    previous: Action | None = None  # the last action proposed (loop detection)
    done: list[Action] = field(default_factory=list)  # the actions executed, for the policy
    #: How many of ``done`` came before the person last answered a question: the policy's
    #: look-back rules read everything since.
    asked_at: int = 0
    #: How many screenshots each prompt sends, the current one included.
    max_images: int = PromptConfig.max_images
    last_small: np.ndarray[Any, Any] | None = None
    repeats: int = 0
    #: Whether steps still come from the replay (``AgentParts.replay``), not the model.
    replay: ReplayState = field(default_factory=ReplayState)
    #: The last settle wait's frames, when it ended settled: the next screenshot may come
    #: from its last look (control/settle_frames.py). Dropped by anything in between.
    settled: SettleFrames | None = None
    #: The secret typed so far in pieces (text and chords of keys), until other keys or text.
    secret_typed: str = ""
    #: Where the run works, for the front end's windows to keep off (app/way.py): the
    #: captured rectangle once known, then the window and points of the last action done.
    work: WorkArea | None = None

    def repeats_on_unchanged_screen(self, action: Action, small: np.ndarray[Any, Any]) -> int:
        """Count ``action`` proposed again on a screen that did not change since last time."""
        unchanged = self.last_small is not None and _same_screen(self.last_small, small)
        if self.previous is not None and unchanged and _same_action(self.previous, action):
            self.repeats += 1
        else:
            self.repeats = 1
        self.last_small = small
        return self.repeats

    def add(self, turn: Turn, action: Action) -> None:
        self.turns.append(turn)
        self.previous = action
        # The turn that just left the prompt's image window keeps its text only: a long run
        # would otherwise hold every screenshot it ever took (0.5-2 MB a step).
        aged = len(self.turns) - self.max_images
        if aged >= 0 and self.turns[aged].image:
            self.turns[aged] = dataclasses.replace(self.turns[aged], image=b"")


class Agent:
    """Runs one task to its end; :meth:`run` returns the final event."""

    def __init__(self, parts: AgentParts, emit: Callable[[Event], None]) -> None:
        self.parts = parts
        self._emit = emit
        self._approve_rest = False
        self._steps_done = 0
        self._notice = ""

    def run(self, config: RunConfig) -> RunFinished:
        """Carry out ``config.task``; never raises for anything a run can meet."""
        p = self.parts
        remove_listener = p.latch.add_listener(lambda _info: p.client.cancel())
        run_id = ""
        try:
            # A replay may not need the model at all: it is asked for once the replay hands
            # over (the client resolves it with the first request).
            replaying = p.replay is not None and p.replay.active
            model = "" if replaying else p.client.resolve_model()
            if model:
                config = self._contract(config)
            run = p.store.start_run(config.task, config.endpoint, model or None, config.settings)
            run_id = run.id
            self._emit(
                # The task may carry a secret parameter's value: shown masked, as in the log.
                RunStarted(run_id, self._masked(config.task), config.endpoint, model,
                           config.monitor_label, config.dry_run, notice=self._notice)
            )
            end = self._loop(run_id, config)
        except StoppedError as e:
            end = Ended(Outcome.STOPPED, _stop_reason(e))
        except HolotronError as e:
            end = Ended(Outcome.ERROR, _error_text(e), fix=e.fix)
        except Exception as e:  # the run must end with a reason, never a silent crash
            log.exception("run crashed")
            end = Ended(Outcome.ERROR, f"internal error: {type(e).__name__}: {e}")
        finally:
            remove_listener()
            try:
                p.executor.release_all()
            except Exception:
                log.exception("could not release held keys and buttons")
        if run_id:
            end = self._last_look(end)
            # Decided once, here: the log and every front end then say the same.
            end = self._checked(end)
            try:
                p.store.finish_run(run_id, end.outcome.value, end.reason, end.result)
            except Exception:  # the person must still hear how the run ended
                log.exception("could not record the end of run %s", run_id)
        finished = RunFinished(run_id, end.outcome, self._masked(end.reason), self._steps_done,
                               self._masked(end.answer), fix=end.fix, result=end.result)
        self._emit(finished)
        return finished

    def _contract(self, config: RunConfig) -> RunConfig:
        """The run's config once the served model is known: its profile's contract when the
        session asks for one by the model (``choose_codec``), with the coordinates that
        contract fixes."""
        p = self.parts
        entry = p.client.served_entry()
        choice = p.choose_codec(entry) if p.choose_codec is not None and entry else None
        if choice is None:
            return config
        codec = choice.codec
        self._notice = choice.notice
        p.client.codec = codec
        log.info("speaking the %s contract (%s)", codec.kind.value, entry.name if entry else "")
        if codec.kind is ContractKind.LEGACY:
            return config
        return dataclasses.replace(config, convention=Convention.NORM1000)

    def _last_look(self, end: Ended) -> Ended:
        """The check after each action once more as the run ends (what changed since the last
        one, while the model thought, is seen too), however the run ended: a stop it pulls is
        how the run ended; what it found when the run was stopped already is added to why."""
        latch = self.parts.latch
        hook = self.parts.last_look
        if hook is None:
            if self.parts.after_settle is None or latch.is_set:
                return end
            self._after_settle()
            info = latch.info
            return end if info is None else Ended(Outcome.STOPPED,
                                                   _stop_reason(StoppedError(info)))
        stopped_before = latch.is_set
        try:
            said = hook()
        except Exception:  # a check that fails must not hide how the run ended
            log.exception("the last look as the run ended failed")
            said = None
        info = latch.info
        if not stopped_before and info is not None:
            end = Ended(Outcome.STOPPED, _stop_reason(StoppedError(info)))
        if said:
            end = dataclasses.replace(end, reason=f"{end.reason}; then {said}")
        return end

    def _checked(self, end: Ended) -> Ended:
        """``end`` with the task's own check's verdict (``AgentParts.check``) as its result, and
        the check's words as its reason: a model's answer is no proof the task is done. A
        stopped or failed run is not checked: it stays so."""
        check = self.parts.check
        if check is None or end.outcome.result not in CHECKED:
            return end
        try:
            verdict = check(end.answer if end.outcome is Outcome.ANSWERED else None)
        except Exception as e:  # nobody can tell whether it is done: never "done"
            log.exception("the task's check failed")
            return dataclasses.replace(
                end, checked=RunResult.FAILED,
                reason=f"{end.reason}; then whether the task is done could not be checked: "
                       f"{type(e).__name__}: {e}")
        # The answer is told on its own; any other end says how the run got there.
        how = "" if end.outcome is Outcome.ANSWERED else f" ({end.reason})"
        return dataclasses.replace(
            end, checked=RunResult.DONE if verdict.passed else RunResult.NOT_DONE,
            reason=f"{verdict.detail}{how}")

    def _after_settle(self) -> None:
        hook = self.parts.after_settle
        if hook is None:
            return
        try:
            hook()
        except Exception:  # a check that fails must not end the run it guards
            log.exception("the check after the action failed")

    def _loop(self, run_id: str, config: RunConfig) -> Ended:
        p = self.parts
        limits = config.limits
        history = _History(deadline=p.clock() + limits.max_seconds,
                           replay=ReplayState.starting(p.replay is not None and p.replay.active))
        for step_no in range(1, limits.max_steps + 1):
            p.latch.check()
            if self._hold(run_id, history):
                history.settled = None  # the screen of before the pause is gone
            if p.clock() > history.deadline:
                return _time_limit(limits)
            ended = self._step(run_id, step_no, config, history)
            if ended is not None:
                return ended
        return Ended(Outcome.LIMIT, f"step limit of {limits.max_steps} reached")

    def _step(
        self, run_id: str, step_no: int, config: RunConfig, history: _History
    ) -> Ended | None:
        """One step: see, think, check, confirm, act, record; None when the run goes on."""
        settled, history.settled = history.settled, None
        if self._make_way(step_no, history):
            settled = None  # made before holodesk's windows moved: no longer the screen
        cur, frame, small = self._capture(run_id, step_no, settled)
        step, raw = self._next_step(cur, frame, config, history)
        # Judged, shown, logged and executed: one text, the one really typed.
        proposed = self._judge_proposal(cur, step.action, frame, config.convention, history)
        self._track_secret(proposed, history)
        description = self._announce(cur, step, raw, proposed)
        ended = self._end_unasked(cur, proposed.action, small, description, config, history)
        if ended is not None:
            return ended
        decided = self._decide(cur, proposed, description, frame, config.convention, history)
        decided = self._recheck(cur, decided, history)
        carried = self._carry_out(cur, decided, description, config, history)
        if isinstance(carried, Ended):
            return carried
        self._remember(cur, step, frame, carried, history)
        return None

    def _next_step(self, cur: _Current, frame: Frame, config: RunConfig,
                   history: _History) -> tuple[Step, str]:
        """The step to take and its raw text: the replay's while it gives them, else the
        model's."""
        replayed = self._replayed(cur, frame, config, history)
        if replayed is not None:
            return replayed, replayed.model_dump_json()
        return self._think(cur, frame, config, history)

    def _judge(self, action: Action, frame: Frame, convention: Convention, history: _History,
               start: Point | None = None) -> Judged:
        """``action`` normalized, with its points, the window it goes to and the policy's
        verdict on it there (``start``: see :meth:`_points`)."""
        action = normalized(action)
        mapped = _map_points(action, convention, frame.geometry)
        points = self._points(action, mapped, start)
        aim = self._aim(action, points)
        verdict = self.parts.policy.assess(action, history=history.done, aim=aim,
                                           outside_monitor=any(m.clamped for m in mapped),
                                           start_outside_monitor=_start_outside(
                                               action, points, frame.geometry),
                                           asked_at=history.asked_at)
        return Judged(action, points, aim, verdict)

    def _judge_proposal(self, cur: _Current, action: Action, frame: Frame,
                        convention: Convention, history: _History) -> Judged:
        """The proposed action judged; asked about when its source wants it asked."""
        judged = self._judge(action, frame, convention, history)
        cur.record.target = judged.aim.target.label()
        verdict = judged.verdict
        if cur.ask and not verdict.forbidden:
            verdict = dataclasses.replace(verdict, confirm=True,
                                          reasons=(*verdict.reasons, cur.ask))
            judged = dataclasses.replace(judged, verdict=verdict)
        return judged

    def _track_secret(self, proposed: Judged, history: _History) -> None:
        """Follow a secret typed over several steps, and hide what this step types of it."""
        action, verdict = proposed.action, proposed.verdict
        typed = typed_by(action, history.done)
        if verdict.secret:
            history.secret_typed += typed
        elif typed or isinstance(action, Type | Hotkey | HoldAndTap | KeyDown):
            # Other keys or text: what comes next is another secret, if any. A wait, a move, a
            # scroll or a click between the pieces of one secret leaves it whole.
            history.secret_typed = ""
        self._hide_secret(typed, verdict, history.secret_typed, own=_written(action))

    def _announce(self, cur: _Current, step: Step, raw: str, proposed: Judged) -> str:
        """Describe the proposal in the step's record and to the front ends (StepProposed),
        with the secrets masked; its description in words."""
        action, points, verdict = proposed.action, proposed.points, proposed.verdict
        # In words for every front end (log line, question, progress): a typed secret its
        # words echo (an element's name, a plan) masked as in the log.
        description = self._masked(_describe(action, points, verdict))
        self._describe_record(cur.record, action, points, verdict)
        # The front ends print and show the thought: the secrets masked in the log are masked
        # there too (the step's own action keeps its text: an edit at the confirmation needs it).
        shown = step.model_copy(update={
            "thought": self._masked(step.thought), "note": self._masked(step.note),
            # Its words (an element's name, a plan, an answer) may echo a typed secret.
            "action": _masked_action(_recorded(action, verdict), self.parts.secrets,
                                     keep_text=True)})
        if verdict.secret or _recorded(action, verdict) is not action:
            # The model's own answer may spell a typed secret in a form no mask knows (a JSON
            # escape, a control character typing drops): stored and shown is what was parsed,
            # said again, with the secret masked.
            if _recorded(action, verdict) is not action:
                # Keys that type a secret: the model's own answer and words spell them out.
                shown = hidden_key_step(shown)
            raw = shown.model_dump_json()
            cur.record.raw_output = raw
            cur.record.thought, cur.record.note = shown.thought, shown.note
        self._emit(StepProposed(cur.run_id, cur.no, shown, points, description,
                                self._masked_verdict(verdict),
                                self._masked(raw), cur.record.source,
                                self._masked(cur.record.source_note or "")))
        return description

    def _end_unasked(self, cur: _Current, action: Action, small: np.ndarray[Any, Any],
                     description: str, config: RunConfig, history: _History) -> Ended | None:
        """How the run ends at this step before anyone is asked: the model answered or asks
        the person, the same action again on an unchanged screen, or no time left."""
        if isinstance(action, AnswerAction | AskUser):
            cur.record.decision = Decision.AUTO.value
            cur.record.result = StepResult.OK
            self._finish_step(cur)
            if isinstance(action, AnswerAction):
                return Ended(Outcome.ANSWERED, "the model answered the task", action.text)
            return Ended(Outcome.ASKED_USER, f"the model asks: {action.question}")

        if history.repeats_on_unchanged_screen(action, small) >= config.limits.loop_limit:
            cur.record.decision = Decision.AUTO.value
            self._finish_step(cur, StepResult.SKIPPED, "loop detected")
            return Ended(
                Outcome.LOOP,
                f"the same action ({description}) was proposed {history.repeats} times "
                "on an unchanged screen",
            )

        # A slow model must not stretch the run past its time limit with one more action.
        if self.parts.clock() > history.deadline:
            cur.record.decision = Decision.AUTO.value
            self._finish_step(cur, StepResult.SKIPPED, "time limit reached")
            return _time_limit(config.limits)
        return None

    def _recheck(self, cur: _Current, decided: StepOutcome, history: _History) -> StepOutcome:
        """Record the decision; hand a replay over when the step is not done as saved; refuse
        an action whose window changed since it was judged."""
        cur.record.decision = decided.decision.value
        if decided.changes_course:
            # The person (or the policy) changed the course: the recorded steps after this one
            # assumed this one was done as recorded. The model carries on from here.
            history.replay.hand_over(f"the replayed step {cur.no} was {decided.decision.value}")
        if not decided.carried_out:
            return decided
        try:
            changed = self._target_changed(decided.judged, decided.decision, history)
        except StoppedError as e:
            self._finish_step(cur, StepResult.STOPPED, _stop_reason(e))
            raise
        if changed is None:
            return decided
        cur.record.decision = Decision.FORBIDDEN.value
        return dataclasses.replace(decided, decision=Decision.FORBIDDEN,
                                   told=f"not done: {changed}")

    def _carry_out(self, cur: _Current, decided: StepOutcome, description: str,
                   config: RunConfig, history: _History) -> StepOutcome | Ended:
        """Run the decided action (unless refused, skipped or paused before) and write the
        step's row; the decision as done (a pause changes what the model hears), or how the
        run ended while acting."""
        if decided.decision is Decision.FORBIDDEN:
            self._finish_step(cur, StepResult.SKIPPED, decided.told)
            return decided
        if decided.decision is Decision.SKIPPED:
            self._finish_step(cur, StepResult.SKIPPED)
            return decided
        if self._hold_before_acting(cur, history):
            # The person took over: the action was meant for a screen that may be gone, so
            # the next step starts again from a fresh screenshot.
            self._finish_step(cur, StepResult.SKIPPED, "paused before execution")
            history.replay.hand_over(f"the run was paused before the replayed step {cur.no}")
            return dataclasses.replace(decided, told=OUTCOME_PAUSED)
        action, points, verdict = decided.action, decided.judged.points, decided.judged.verdict
        if decided.decision is Decision.EDITED:
            cur.record.action = _recorded(action, verdict).model_dump(mode="json")
            cur.record.screen_point = points_text(points)
            # What is done is the edit: the log and the task window must say so (and mask
            # its text if the edit looks like a secret).
            self._hide_secret(typed_by(action, history.done), verdict, own=_written(action))
            description = self._masked(_describe(action, points, verdict))
        acted = self._act(cur, action, points, description, config.limits, history.deadline)
        if isinstance(acted, Ended):
            return acted
        history.settled = acted.settled
        self._finish_step(cur, StepResult.OK)
        history.done.append(action)
        if history.work is not None:
            aim = decided.judged.aim
            history.work = dataclasses.replace(
                history.work, windows=_worked_in(aim.target, aim.drop) or history.work.windows,
                points=points, doing=description)
        return decided

    def _remember(self, cur: _Current, step: Step, frame: Frame, decided: StepOutcome,
                  history: _History) -> None:
        """Carry the step into the history the next prompts and policy checks read."""
        if decided.person_answered:
            # The person looked and answered: what came before is theirs to have judged.
            history.asked_at = len(history.done)
        action = decided.action
        history.add(
            Turn(cur.no, frame.data, frame.mime,
                 Step(note=step.note, thought=step.thought, action=action), decided.told,
                 secret=decided.judged.verdict.secret),
            action,
        )

    def _replayed(self, cur: _Current, frame: Frame, config: RunConfig,
                  history: _History) -> Step | None:
        """The step the replay gives, or None when the model is to give it (from the step where
        the replay could not go on, for the rest of the run)."""
        replay = self.parts.replay
        if history.replay.replaying and replay is not None:
            seen = Seen(config.task, cur.no, frame, config.convention, tuple(history.turns))
            try:
                given = replay.next_step(seen)
            except Exception as e:  # a broken replay must not end the run: the model can go on
                log.exception("the replay failed at step %d", cur.no)
                given = Cannot(f"the replay failed ({type(e).__name__}: {e})")
            if not isinstance(given, Cannot):
                cur.record.source = Source.REPLAYED
                cur.record.source_note = given.note or None
                cur.ask = given.ask
                cur.record.thought = given.step.thought
                cur.record.note = given.step.note
                return given.step
            log.info("replay handed over to the model at step %d: %s", cur.no, given.reason)
            # This very step is the model's first: its row says why.
            history.replay.hand_over(given.reason)
        reason = history.replay.take_handover()
        if reason is not None:
            cur.record.source_note = f"replay handed over: {reason}"
        return None

    def _make_way(self, step_no: int, history: _History) -> bool:
        """Ask the front end to take its windows out of where the run works before it looks
        (app/way.py), and let the screen settle when they moved; whether anything did.

        Before the first look the run works in the captured rectangle and, once holodesk's
        windows are out of the way, in the window that has the focus; after that in the window
        of the last action done.
        """
        p = self.parts
        if p.make_way is None:
            return False
        try:
            if history.work is None:
                history.work = WorkArea(p.capturer.monitor(), step=step_no)
                changed = p.make_way(history.work)
                focused = p.finder.focused()
                if focused.rect is not None and not focused.own and not focused.desktop:
                    history.work = dataclasses.replace(history.work, windows=(focused.rect,))
                    changed = p.make_way(history.work) or changed
            else:
                history.work = dataclasses.replace(history.work, step=step_no)
                changed = p.make_way(history.work)
        except Exception:  # a front end that fails must not end the run: it only looks worse
            log.warning("holodesk's windows could not make way", exc_info=True)
            return False
        if changed:
            # The windows under the ones that left repaint now: the model must see them whole.
            wait_until_settled(p.capturer.small_grabber(), p.latch, min_s=0.0,
                               max_s=_WAY_SETTLE_MAX_S, reaction_s=_WAY_REACTION_S)
        return changed

    def _hold(self, run_id: str, history: _History) -> bool:
        """The pause checkpoint: block while paused; True if it did.

        Emits RunPaused and RunResumed around the wait; paused time does not count against
        the run's time limit. A stop while paused raises StoppedError.
        """
        p = self.parts
        if p.pause is None:
            return False
        t0 = p.clock()
        waited = p.pause.wait_if_paused(
            p.latch, on_pause=lambda reason: self._emit(RunPaused(run_id, reason))
        )
        if waited:
            history.deadline += p.clock() - t0
            self._emit(RunResumed(run_id))
        return waited

    def _hold_before_acting(self, cur: _Current, history: _History) -> bool:
        """The checkpoint before an action; a stop while paused is logged as the step's end."""
        try:
            return self._hold(cur.run_id, history)
        except StoppedError as e:
            self._finish_step(cur, StepResult.STOPPED, _stop_reason(e))
            raise

    def _capture(
        self, run_id: str, step_no: int, settled: SettleFrames | None = None
    ) -> tuple[_Current, Frame, np.ndarray[Any, Any]]:
        """Take the step's screenshot (made during the last settle wait when its last look is
        still the screen), save it, and start the step's record."""
        p = self.parts
        started_at = time.time()
        t0 = p.clock()
        frame = settled.frame() if settled is not None else None
        if frame is None:
            frame = p.capturer.grab()
        # For loop detection: compared only with the previous step's, made the same way.
        small = frame.small if frame.small is not None else frame_small(frame)
        if small is None:
            small = p.capturer.grab_small()
        capture_ms = (p.clock() - t0) * 1000
        t0 = p.clock()
        shot, thumb = p.store.save_screenshot(
            run_id, step_no, frame.data, frame.mime,
            frame.thumb if frame.thumb is not None else thumbnail(frame)
        )
        save_ms = (p.clock() - t0) * 1000
        record = StepRecord(
            run_id=run_id,
            step_no=step_no,
            started_at=started_at,
            screenshot_path=str(shot) if shot else None,
            thumbnail_path=str(thumb) if thumb else None,
            geometry=frame.geometry.to_dict(),
        )
        self._emit(FrameCaptured(run_id, step_no, frame.geometry, str(shot) if shot else "",
                                 capture_ms, str(thumb) if thumb else "", frame.data))
        # The pixels were for the thumbnail: the history keeps the encoded frame only.
        frame = dataclasses.replace(frame, pixels=None, thumb=None, small=None)
        timings = {"capture_ms": capture_ms, "save_ms": save_ms}
        return _Current(run_id, step_no, record, timings), frame, small

    def _think(
        self, cur: _Current, frame: Frame, config: RunConfig, history: _History
    ) -> tuple[Step, str]:
        """Ask the model for the next step; a failure is recorded before it propagates."""
        p = self.parts
        # The history goes out with the secrets the action log masks masked too: a typed
        # secret and every copy of it (the model's own thought and note echo it) stay on this
        # machine. Masked anew at every step, so a secret found late hides earlier copies.
        past = [self._masked_turn(t) for t in history.turns]
        messages = build_messages(
            config.task,
            [*past, Turn(cur.no, frame.data, frame.mime, None, None)],
            PromptConfig(
                convention=config.convention,
                sent_width=frame.geometry.sent_width,
                sent_height=frame.geometry.sent_height,
                today=p.today(),
                thinking=config.thinking,
                max_images=history.max_images,
            ),
            codec=p.client.codec,
        )

        def on_text(text: str) -> None:
            # The secrets known so far (the API key, text typed as a secret in earlier steps)
            # never stream to a screen, not even their first characters while the rest is on
            # its way. One this very step types is known only once its action is parsed:
            # StepProposed then replaces the streamed thought with a masked one.
            shown = self.parts.secrets.mask_unfinished(text)
            self._emit(ModelText(cur.run_id, cur.no, shown))

        t0 = p.clock()
        try:
            # The codec's own schema: the contract decides which actions may be answered.
            reply = p.client.next_step(
                messages, None, on_text=on_text,
                should_stop=lambda: p.latch.is_set,
            )
        except Cancelled as e:
            # The stop latch cancelled the request: a stop, not a model error.
            info = p.latch.info
            if info is None:
                raise
            stopped = StoppedError(info)
            self._finish_step(cur, StepResult.STOPPED, _stop_reason(stopped))
            raise stopped from e
        except HolotronError as e:
            if isinstance(e, InvalidOutput):
                # Kept, so the person can see what went wrong; masked as a text still
                # arriving: an answer cut off (at the length limit) may end with the start of a
                # secret, which is no form of it (tests/app/test_redteam12_cut_answer.py).
                cur.record.raw_output = self.parts.secrets.mask_unfinished(e.raw)
            self._finish_step(cur, StepResult.FAILED, _error_text(e))
            self._emit(StepFailed(cur.run_id, cur.no, e.message, e.fix))
            raise
        cur.timings["model_ms"] = (p.clock() - t0) * 1000
        if reply.ttft is not None:
            cur.timings["ttft_ms"] = reply.ttft * 1000
        record = cur.record
        record.raw_output = reply.raw
        record.prompt_tokens = reply.prompt_tokens
        record.completion_tokens = reply.completion_tokens
        record.reasoning_tokens = reply.reasoning_tokens
        record.reasoning_estimated = reply.reasoning_estimated
        record.thought = reply.step.thought
        record.note = reply.step.note
        return reply.step, reply.raw

    def _act(
        self,
        cur: _Current,
        action: Action,
        points: tuple[Point, ...],
        description: str,
        limits: RunLimits,
        deadline: float,
    ) -> Acted | Ended:
        """Execute the action (cut short at ``deadline``), then wait for the screen to settle;
        how the run ended when the action could not be done (cut short, or it failed)."""
        profile = settle_for(action.action)
        # The settle detector compares against the screen just before the action, so a
        # change that is over before its first look still counts.
        grab_small = self.parts.capturer.small_grabber()
        before = grab_small()
        executed, watched = _split_wait(action, profile)
        ended = self._execute(cur, executed, points, description, limits, deadline)
        if ended is not None:
            return ended
        settled = self._settle(cur, grab_small, before, profile, watched, limits)
        # Before the next step: a protected file the action changed stops the run there,
        # whether or not an event about it arrived.
        self._after_settle()
        self._emit(ActionExecuted(cur.run_id, cur.no, description, cur.timings["exec_ms"],
                                  cur.timings["settle_ms"], settled))
        return Acted(grab_small if settled else None)

    def _execute(self, cur: _Current, executed: Action, points: tuple[Point, ...],
                 description: str, limits: RunLimits, deadline: float) -> Ended | None:
        """Run the action's input; how the run ended when it was cut short or failed."""
        p = self.parts
        t0 = p.clock()
        try:
            p.executor.execute(executed, points, time_left=lambda: deadline - p.clock())
        except StoppedError as e:
            self._finish_step(cur, StepResult.STOPPED, _stop_reason(e))
            raise
        except TimeLimitReached:
            # Like a stop, the action may be half done (text typed up to the deadline).
            self._finish_step(cur, StepResult.STOPPED,
                              f"stopped by the time limit of {limits.max_seconds:g} s")
            return _time_limit(limits, during=description)
        except Exception as e:
            error = f"{type(e).__name__}: {e}"
            self._finish_step(cur, StepResult.FAILED, error)
            self._emit(StepFailed(cur.run_id, cur.no, error))
            return Ended(Outcome.ERROR, f"executing the action failed: {error}")
        cur.timings["exec_ms"] = (p.clock() - t0) * 1000
        return None

    def _settle(self, cur: _Current, grab_small: SettleFrames, before: GrayFrame,
                profile: SettleProfile, watched: float, limits: RunLimits) -> bool:
        """Wait for the screen to settle after the action; whether it did."""
        p = self.parts
        # A wait's floor counts from its start: the part already slept is part of it.
        floor = limits.settle_min - (cur.timings["exec_ms"] / 1000 if watched else 0.0)
        t0 = p.clock()
        try:
            settle = wait_until_settled(
                grab_small, p.latch,
                min_s=max(watched, floor), max_s=max(limits.settle_max, watched), before=before,
                reaction_s=profile.reaction_s, quiet_s=profile.quiet_s,
                on_still=grab_small.prepare, looked_at=grab_small.looked_at,
            )
        except BaseException as e:
            # The action did happen: the log must say so, whatever ends the wait.
            why = _stop_reason(e) if isinstance(e, StoppedError) else f"{type(e).__name__}: {e}"
            self._finish_step(cur, StepResult.OK, f"done, then while the screen settled: {why}")
            raise
        cur.timings["settle_ms"] = (p.clock() - t0) * 1000
        return settle.settled

    def _decide(self, cur: _Current, proposed: Judged, description: str, frame: Frame,
                convention: Convention, history: _History) -> StepOutcome:
        """Ask the person when the policy says so: what to do, on which action judged where
        (the edit, when the person edited it), and what the model hears of it."""
        verdict = proposed.verdict
        if verdict.forbidden:
            self._emit(StepDecided(cur.run_id, cur.no, Decision.FORBIDDEN, proposed.action))
            why = "; ".join(verdict.reasons)
            return StepOutcome(Decision.FORBIDDEN, proposed,
                               f"refused by the safety policy: {why}")
        # "Approve the rest" cannot cover a step its source wants asked: none of it was seen.
        if not verdict.confirm or (self._approve_rest and not cur.ask):
            self._emit(StepDecided(cur.run_id, cur.no, Decision.AUTO, proposed.action))
            return StepOutcome(Decision.AUTO, proposed, OUTCOME_DONE)
        return self._confirm(cur, proposed, description, frame, convention, history)

    def _confirm(self, cur: _Current, proposed: Judged, description: str, frame: Frame,
                 convention: Convention, history: _History) -> StepOutcome:
        """Ask the person, again as long as their edit cannot be used, and take the answer."""
        p = self.parts
        asked = proposed
        t0 = p.clock()
        while True:
            reply = self._ask(cur, asked, description, frame)
            if reply.answer is not Answer.EDIT:
                break
            checked = self._check_edit(proposed.action, proposed.points, reply.edited, frame,
                                       convention, history)
            if isinstance(checked, Judged):
                cur.timings["confirm_ms"] = (p.clock() - t0) * 1000
                self._emit(StepDecided(cur.run_id, cur.no, Decision.EDITED, checked.action))
                return StepOutcome(Decision.EDITED, checked, "done as edited by the person")
            # Ask again about the model's action, saying why the edit was not used: never run
            # the original the person meant to change, never skip it silently. A loop, not a
            # recursion: however many edits are refused, Approve, Skip and Stop still end it.
            kept = tuple(r for r in asked.verdict.reasons if not r.startswith(EDIT_REFUSED))
            asked = dataclasses.replace(asked, verdict=dataclasses.replace(
                asked.verdict, confirm=True, reasons=(f"{EDIT_REFUSED}: {checked.reason}", *kept)))
        cur.timings["confirm_ms"] = (p.clock() - t0) * 1000
        return self._answered(cur, reply.answer, asked)

    def _answered(self, cur: _Current, answer: Answer, asked: Judged) -> StepOutcome:
        """The decision the person's answer (other than an edit) makes; a Stop stops the run."""
        p = self.parts
        if answer is Answer.STOP:
            p.latch.stop("user", "stopped at the confirmation")
            self._emit(StepDecided(cur.run_id, cur.no, Decision.STOPPED, asked.action))
            cur.record.decision = Decision.STOPPED.value
            info = p.latch.info
            self._finish_step(cur, StepResult.STOPPED,
                              f"stopped by {info.source}" if info else None)
            p.latch.check()
        if answer is Answer.SKIP:
            self._emit(StepDecided(cur.run_id, cur.no, Decision.SKIPPED, asked.action))
            return StepOutcome(Decision.SKIPPED, asked, OUTCOME_SKIPPED)
        if answer is Answer.APPROVE_REST:
            self._approve_rest = True
        self._emit(StepDecided(cur.run_id, cur.no, Decision.APPROVED, asked.action))
        return StepOutcome(Decision.APPROVED, asked, OUTCOME_DONE)

    def _points(self, action: Action, mapped: list[MappedPoint],
                start: Point | None = None) -> tuple[Point, ...]:
        """The screen points of ``action``: a ``drag_to`` starts where the pointer is now (or
        at ``start``, the one already judged and shown), so that start is judged (the window
        under it, and whether it lies on the chosen monitor), shown and executed, whatever the
        pointer does while the person answers (it goes to the confirmation's buttons)."""
        points = tuple(m.point for m in mapped)
        if isinstance(action, DragTo) and points:
            return (start if start is not None else self.parts.executor.pointer(), *points)
        return points

    def _aim(self, action: Action, points: tuple[Point, ...]) -> Aim:
        """The application that receives ``action``: under its point for the mouse, the focused
        window for keys; a finder that fails makes the target unknown, never ends the run."""
        finder = self.parts.finder
        try:
            if not points:
                return Aim(finder.focused())
            target = finder.at(points[0].x, points[0].y)
            drop = finder.at(points[1].x, points[1].y) if len(points) > 1 else None
            return Aim(target, drop)
        except Exception as e:
            log.warning("could not find the window an action goes to", exc_info=True)
            return Aim(Target(note=f"could not find the window ({type(e).__name__})"))

    def _target_changed(self, judged: Judged, decision: Decision,
                        history: _History) -> str | None:
        """Why the action must not run after all, when the window it goes to changed since it
        was judged (a window opened, or the focus moved while the person decided); else None.
        """
        action, points, aim = judged.action, judged.points, judged.aim
        if isinstance(action, Wait | Move | UpdatePlan | KeyUp):
            return None  # nothing a window receives (a release is always safe)
        now = self._aim(action, points)
        if decision is not Decision.AUTO and not _same_window(now.target, aim.target):
            now = self._after_confirmation(action, points, aim, now)
        if _same_window(now.target, aim.target) and _same_window(now.drop, aim.drop):
            return None
        verdict = self.parts.policy.assess(action, history=history.done, aim=now,
                                           asked_at=history.asked_at)
        if decision is Decision.AUTO and not (verdict.confirm or verdict.forbidden):
            return None
        return (f"the window it goes to changed since it was checked (was {aim.target.label()}, "
                f"now {now.target.label()}); nothing was done: look at the screen again")

    def _after_confirmation(self, action: Action, points: tuple[Point, ...], aim: Aim,
                            now: Aim) -> Aim:
        """Where the action goes once holodesk's own confirmation is out of the way.

        Answering took the focus (and the panel may still be on screen for a moment): keys go
        back to the window the person approved them for, and a point waits for the panel to
        go. Anything else that took its place stays a change.
        """
        p = self.parts
        deadline = p.clock() + _CONFIRMATION_GONE_S
        while True:
            if not points and aim.target.found and not aim.target.own:
                p.finder.activate(aim.target)
                now = self._aim(action, points)
            if not (now.target.own or (now.drop is not None and now.drop.own)):
                return now
            if p.clock() > deadline:
                return now
            p.latch.sleep(0.02)
            now = self._aim(action, points)

    def _ask(self, cur: _Current, asked: Judged, description: str,
             frame: Frame) -> ConfirmReply:
        """Show the person one confirmation and wait for the answer (Stop when stopped)."""
        action, points, verdict, aim = asked.action, asked.points, asked.verdict, asked.aim
        request = ConfirmRequest(
            description=description,
            element=getattr(action, "element", ""),
            points=points,
            reasons=self._masked_verdict(verdict).reasons + self._replayed_reason(cur),
            action=action,
            screenshot_path=cur.record.screenshot_path or "",
            geometry=frame.geometry,
            secret=verdict.secret,
            target=aim.target.label(),
            target_rect=aim.target.rect,
            screenshot=frame.data,
        )
        self._emit(AwaitingConfirmation(cur.run_id, cur.no, request))
        return request.wait(self.parts.latch)

    def _check_edit(
        self,
        proposed: Action,
        proposed_points: tuple[Point, ...],
        edited: Action | None,
        frame: Frame,
        convention: Convention,
        history: _History,
    ) -> Judged | EditRefused:
        """The person's edit judged (its points, target and verdict), or why it cannot be used.

        An edited ``drag_to`` starts where the proposal's did (the start the person was shown),
        not where their pointer went to answer."""
        if edited is None:
            return EditRefused("the edit was empty")
        if edited.action != proposed.action:
            # An edited answer or question would not end the run as the person expects.
            return EditRefused(
                f"an edit keeps the kind of action ({proposed.action}), not {edited.action}")
        start = proposed_points[0] if isinstance(proposed, DragTo) and proposed_points else None
        # The person's edit gets the same hard limits as the model's proposal.
        judged = self._judge(edited, frame, convention, history, start)
        verdict = judged.verdict
        if verdict.forbidden:
            return EditRefused("; ".join(verdict.reasons) or "the safety policy forbids it")
        return judged

    @staticmethod
    def _replayed_reason(cur: _Current) -> tuple[str, ...]:
        """Said in the question when the step comes from the automation's saved steps: the
        person judges it knowing no model looked at this screen for it."""
        if cur.record.source != Source.REPLAYED:
            return ()
        where = f" ({cur.record.source_note})" if cur.record.source_note else ""
        return (f"replayed from this automation's saved steps, not asked of the model{where}",)

    def _masked_verdict(self, verdict: Verdict) -> Verdict:
        """``verdict`` as the front ends may show it: its reasons quote what was typed (a
        terminal's line since the last submit), which can hold a secret."""
        return dataclasses.replace(verdict,
                                   reasons=tuple(self._masked(r) for r in verdict.reasons))

    def _masked(self, text: str) -> str:
        """``text`` with every secret the action log masks (the API key, typed secrets)
        replaced by ``***``: for what the front ends print and show."""
        return self.parts.secrets.mask(text)

    def _masked_turn(self, turn: Turn) -> Turn:
        """``turn`` as the prompt may show it: every secret the action log masks is masked in
        its step's text fields and its outcome (the task, the person's own words, is not)."""
        secrets = self.parts.secrets
        step = turn.step
        if step is None or not secrets:
            return turn
        # A secret turn's typed text is left whole here: the prompt replaces all of it by its
        # length (build_messages), which "***" in its place would misstate.
        masked = step.model_copy(update={
            "note": secrets.mask(step.note),
            "thought": secrets.mask(step.thought),
            "action": _masked_action(step.action, secrets, keep_text=turn.secret),
        })
        outcome = None if turn.outcome is None else secrets.mask(turn.outcome)
        return dataclasses.replace(turn, step=masked, outcome=outcome)

    def _hide_secret(self, typed: str, verdict: Verdict, run: str = "", *,
                     own: str = "") -> None:
        """Text that looks like a password or card number never reaches the action log or the
        log file: masked in every form it is stored in (as typed, and JSON-escaped inside the
        stored action and the model's raw answer). ``typed`` is what the step types (keys
        held down by earlier steps counted: Shift held types "ABC"), ``own`` the same as the
        action writes it ("abc"). ``run`` is all the secret typed by the steps up to this one
        with no other typing between (a secret typed in pieces, chords
        of keys among them): the model's later words may quote it whole."""
        if not verdict.secret:
            return
        for text in {typed, own, run} - {""}:
            # The run's RunSecrets derives every form it is stored in (model/run_secrets.py).
            self.parts.secrets.add_typed(text)
        watch(self.parts.secrets)  # the log file too: the client logs a rejected answer raw

    def _describe_record(
        self, record: StepRecord, action: Action, points: tuple[Point, ...], verdict: Verdict
    ) -> None:
        record.action = _recorded(action, verdict).model_dump(mode="json")
        record.element = getattr(action, "element", None)
        record.screen_point = points_text(points)
        record.reason_for_confirm = "; ".join(verdict.reasons) or None

    def _finish_step(self, cur: _Current, result: StepResult | None = None,
                     error: str | None = None) -> None:
        """Write the step's row: from here on it survives even a SIGKILL."""
        record = cur.record
        if result is not None:
            record.result = result
        if error is not None:
            record.error = error
        record.timings = dict(cur.timings)
        record.finished_at = time.time()
        self.parts.store.add_step(record)
        self._steps_done = record.step_no


def _written(action: Action) -> str:
    """The characters ``action`` types as it is written, without keys held by earlier steps:
    a ``type`` step's text, a chord's printable keys."""
    return action.text if isinstance(action, Type) else key_text(action)


def _masked_action(action: Action, secrets: RunSecrets, *,
                   keep_text: bool) -> Action:
    """``action`` with every secret masked in its words (an element's name, an answer, a
    question, the plan's goals); a ``type`` step's text kept whole when ``keep_text`` (an
    edit at the confirmation needs it; a secret one is shown hidden by its verdict)."""
    if not secrets:
        return action
    kept = {"action", "text"} if keep_text else {"action"}
    fields: dict[str, Any] = {
        name: secrets.mask(value)
        for name, value in action.model_dump().items()
        if name not in kept and isinstance(value, str)
    }
    if isinstance(action, UpdatePlan):  # the plan's words may echo a typed secret
        fields["goals"] = [g.model_copy(update={"title": secrets.mask(g.title)})
                           for g in action.goals]
    return action.model_copy(update=fields) if fields else action


def _recorded(action: Action, verdict: Verdict) -> Action:
    """``action`` as the log keeps it and the front ends show it: keys that type a secret go
    as :data:`~model.prompt.SECRET_KEYS` (each is one character of it, too short to mask
    wherever it appears); anything else as it is (a typed secret is masked by its text)."""
    if verdict.secret and isinstance(action, Hotkey | HoldAndTap | KeyDown):
        return hidden_keys(action)
    return action


def _split_wait(action: Action, profile: SettleProfile) -> tuple[Action, float]:
    """What the executor runs, and how many seconds at its end the settle detector watches.

    A ``wait`` sleeps blind except for its last ``quiet_s``, which the detector polls: a screen
    still at the end of the wait is settled when the wait is over (no reaction time after it,
    nothing more to react to), one still changing is waited for as after any action. Any other
    action runs whole and nothing of it is watched.
    """
    if not isinstance(action, Wait):
        return action, 0.0
    watched = min(action.seconds, profile.quiet_s)
    return action.model_copy(update={"seconds": action.seconds - watched}), watched


def _map_points(action: Action, convention: Convention, geom: FrameGeometry) -> list[MappedPoint]:
    x = getattr(action, "x", None)
    y = getattr(action, "y", None)
    if x is None or y is None:
        return []
    mapped = [to_screen(x, y, convention, geom)]
    if isinstance(action, Drag):
        mapped.append(to_screen(action.to_x, action.to_y, convention, geom))
    return mapped


def _start_outside(action: Action, points: tuple[Point, ...], geom: FrameGeometry) -> bool:
    """Whether a ``drag_to`` starts (at the pointer) outside the monitor or region the run
    captures and acts on: the model never saw what the button would go down on there."""
    if not isinstance(action, DragTo) or len(points) < 2:
        return False
    return not geom.logical_monitor.contains(points[0].x, points[0].y)


def _describe(action: Action, points: tuple[Point, ...], verdict: Verdict) -> str:
    return describe_action(
        action,
        points[0] if points else None,
        end=points[1] if len(points) > 1 else None,
        secret=verdict.secret,
    )


def _time_limit(limits: RunLimits, *, during: str = "") -> Ended:
    reason = f"time limit of {limits.max_seconds:g} s reached"
    if during:
        reason += f" during the action ({during}), which was cut short there"
    return Ended(Outcome.LIMIT, reason)


def _worked_in(*targets: Target | None) -> tuple[Rect, ...]:
    """The rectangles of the windows an action went to, holodesk's own and the desktop's
    background left out (nothing to keep clear there)."""
    return tuple(t.rect for t in targets
                 if t is not None and t.rect is not None and not t.own and not t.desktop)


def _same_window(a: Target | None, b: Target | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.window, a.desktop, a.own, a.finder) == (b.window, b.desktop, b.own, b.finder)


def _same_action(a: Action, b: Action) -> bool:
    return a.model_dump() == b.model_dump()


def _same_screen(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
    if a.shape != b.shape:
        return False
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16))
    return float(diff.mean()) < UNCHANGED_THRESHOLD


def _error_text(e: HolotronError) -> str:
    return f"{e.message} Fix: {e.fix}" if e.fix else e.message


def _stop_reason(e: StoppedError) -> str:
    info = e.info
    return f"stopped by {info.source}" + (f": {info.reason}" if info.reason else "")
