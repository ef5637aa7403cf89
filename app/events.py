"""Typed events the agent loop emits; the terminal, the log store and the Qt UI consume them.

Events are frozen dataclasses of plain data, so they cross threads through a queue or a queued
Qt signal as they are. Two hold a screenshot's bytes: :class:`FrameCaptured` ``image`` (what was
sent to the model, for the windows that show it) and the :class:`ConfirmRequest` of
:class:`AwaitingConfirmation` ``screenshot`` (when the action log keeps no screenshot file).
``bytes`` are immutable and passed by reference: no pixels are copied on the way. The one
mutable object is :class:`ConfirmRequest` itself: the worker waits on it and any thread answers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import StrEnum

from app.result import OUTCOME_RESULTS, RunResult
from app.store import Source
from control.policy import Verdict
from control.stop import StopLatch
from model.coords import FrameGeometry, Point, Rect
from model.problem import Fix, Problem, as_fix
from model.schema import Action, Step


class Outcome(StrEnum):
    """How a run ended: the mechanism of its end. What it came to for the person is its
    :class:`~app.result.RunResult` (:attr:`result`, unless the task's own check decides)."""

    ANSWERED = "answered"  # the model answered the task: the only success
    ASKED_USER = "asked_user"  # the model handed control back with a question
    STOPPED = "stopped"  # the emergency stop, or the person chose Stop
    LIMIT = "limit"  # maximum steps or time reached
    LOOP = "loop"  # the same action on an unchanged screen, again and again
    ERROR = "error"  # the server, the model output or the machine failed

    @property
    def result(self) -> RunResult:
        """What a run that ended so came to, when its task has no check of its own."""
        return OUTCOME_RESULTS[self.value]


class Decision(StrEnum):
    """What happened to a proposed step before execution."""

    AUTO = "auto"  # the policy did not ask
    APPROVED = "approved"
    SKIPPED = "skipped"
    EDITED = "edited"
    FORBIDDEN = "forbidden"  # never executed, whatever the person says
    STOPPED = "stopped"


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    task: str
    endpoint: str
    model: str
    monitor: str
    dry_run: bool
    #: What the person should know of the contract chosen for the model (an unknown model,
    #: a setting that does not apply); "" when nothing.
    notice: str = ""


@dataclass(frozen=True)
class FrameCaptured:
    """A step's screenshot. ``screenshot_path`` is empty when the action log keeps no
    screenshots; ``image`` always holds the bytes sent to the model (for the windows that show
    it), ``thumbnail_path`` the stored thumbnail when there is one."""

    run_id: str
    step_no: int
    geometry: FrameGeometry
    screenshot_path: str
    capture_ms: float
    thumbnail_path: str = ""
    image: bytes = field(default=b"", repr=False)


@dataclass(frozen=True)
class ModelText:
    """The model's output so far for this step, as it streams in."""

    run_id: str
    step_no: int
    text: str


@dataclass(frozen=True)
class StepProposed:
    """The next step, before the policy's decision: from the model or, when ``source`` says
    so, replayed from the automation's saved steps (``source_note`` says where the replay
    found its target, or why it handed over to the model at this step)."""

    run_id: str
    step_no: int
    step: Step
    points: tuple[Point, ...]
    description: str
    verdict: Verdict
    raw: str
    source: Source = Source.MODEL
    source_note: str = ""


@dataclass(frozen=True)
class AwaitingConfirmation:
    """The loop is blocked until ``request`` is answered (or the stop latch is set)."""

    run_id: str
    step_no: int
    request: ConfirmRequest


@dataclass(frozen=True)
class StepDecided:
    run_id: str
    step_no: int
    decision: Decision
    action: Action


@dataclass(frozen=True)
class ActionExecuted:
    run_id: str
    step_no: int
    description: str
    exec_ms: float
    settle_ms: float
    settled: bool


@dataclass(frozen=True)
class StepFailed:
    """A step failed: ``error`` says what happened, ``fix`` what to do (plain words become a
    :class:`Fix`)."""

    run_id: str
    step_no: int
    error: str
    fix: Fix | None = None

    def __post_init__(self) -> None:
        fix: Fix | str | None = self.fix
        object.__setattr__(self, "fix", as_fix(fix))

    @property
    def problem(self) -> Problem:
        return Problem(self.error, self.fix)


@dataclass(frozen=True)
class RunFinished:
    """How a run ended: ``result`` what it came to (decided once, app/agent.py: every front end
    shows it), ``outcome`` the mechanism of its end. ``reason`` is in plain words, why the
    result is what it is (it is what the action log keeps); an error that ended the run also
    hands its ``fix`` over, so each front end can say it in its terms."""

    run_id: str
    outcome: Outcome
    reason: str
    steps: int
    answer: str = ""
    fix: Fix | None = None
    result: RunResult = field(kw_only=True)


@dataclass(frozen=True)
class RunPaused:
    """The loop holds before its next screenshot or action until resumed or stopped."""

    run_id: str
    reason: str


@dataclass(frozen=True)
class RunResumed:
    """The loop goes on, from a fresh screenshot."""

    run_id: str


Event = (
    RunStarted
    | FrameCaptured
    | ModelText
    | StepProposed
    | AwaitingConfirmation
    | StepDecided
    | ActionExecuted
    | StepFailed
    | RunFinished
    | RunPaused
    | RunResumed
)


class Answer(StrEnum):
    """The person's answers to a confirmation."""

    APPROVE = "approve"
    APPROVE_REST = "approve_rest"  # approve this and every later step of this run
    SKIP = "skip"
    STOP = "stop"
    EDIT = "edit"


@dataclass
class ConfirmReply:
    answer: Answer
    edited: Action | None = None  # with Answer.EDIT: the action to run instead


@dataclass
class ConfirmRequest:
    """A question the worker asks and a front end answers (the Dangerzone pattern).

    The worker blocks in :meth:`wait`; any thread answers with :meth:`reply`. A stop while
    waiting ends the wait at once with ``Answer.STOP``.
    """

    description: str
    element: str
    points: tuple[Point, ...]
    reasons: tuple[str, ...]
    action: Action
    screenshot_path: str
    geometry: FrameGeometry
    #: The typed text looks like a secret: show it masked (the description already does).
    secret: bool = False
    #: The application the action goes to, in words ("xterm — bash"), and its window.
    target: str = ""
    target_rect: Rect | None = None
    #: The screenshot's bytes, for when ``screenshot_path`` is empty (the log keeps none).
    screenshot: bytes = field(default=b"", repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _reply: ConfirmReply | None = field(default=None, repr=False)

    def reply(self, reply: ConfirmReply) -> None:
        """Answer the request; only the first answer counts."""
        if not self._done.is_set():
            self._reply = reply
            self._done.set()

    @property
    def answered(self) -> bool:
        return self._done.is_set()

    def wait(self, stop: StopLatch) -> ConfirmReply:
        """Block until answered or stopped."""
        while not self._done.wait(0.05):
            if stop.is_set:
                return ConfirmReply(Answer.STOP)
        assert self._reply is not None
        return self._reply
