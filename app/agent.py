"""The agent loop: see, think, confirm, act, record; a small state machine emitting events.

The loop runs on one worker thread. It never talks to a person directly: it emits
:mod:`app.events` and, when the policy asks for confirmation, blocks on a
:class:`~app.events.ConfirmRequest` that a front end (terminal or Qt) answers.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.events import (
    ActionExecuted,
    Answer,
    AwaitingConfirmation,
    ConfirmRequest,
    Decision,
    Event,
    FrameCaptured,
    ModelText,
    Outcome,
    RunFinished,
    RunStarted,
    StepDecided,
    StepFailed,
    StepProposed,
)
from app.store import ActionLog, StepRecord
from control.capture import Capturer, Frame, thumbnail
from control.input import Executor
from control.policy import SafetyPolicy, Verdict
from control.settle import wait_until_settled
from control.stop import StopLatch, StoppedError
from model.client import HolotronClient
from model.coords import Convention, FrameGeometry, MappedPoint, Point, to_screen
from model.errors import HolotronError, InvalidOutput
from model.prompt import (
    OUTCOME_DONE,
    OUTCOME_SKIPPED,
    PromptConfig,
    Turn,
    build_messages,
    describe_action,
)
from model.schema import Action, AskUser, Drag, Step
from model.schema import Answer as AnswerAction
from model.structured import step_output_schema

log = logging.getLogger(__name__)

#: Mean absolute difference (0-255 grey levels) of the small frames below which the screen
#: counts as unchanged for loop detection: JPEG-free raw pixels, so noise is near zero.
UNCHANGED_THRESHOLD = 0.5


@dataclass(frozen=True)
class RunLimits:
    """When a run ends on its own, whatever the model says."""

    max_steps: int = 30
    max_seconds: float = 900.0
    loop_limit: int = 3  # the same action on an unchanged screen this many times in a row
    settle_min: float = 0.1
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


@dataclass
class _Ended(Exception):
    outcome: Outcome
    reason: str
    answer: str = ""


class Agent:
    """Runs one task to its end; :meth:`run` returns the final event."""

    def __init__(self, parts: AgentParts, emit: Callable[[Event], None]) -> None:
        self.parts = parts
        self._emit = emit
        self._approve_rest = False
        self._steps_done = 0

    def run(self, config: RunConfig) -> RunFinished:
        """Carry out ``config.task``; never raises for anything a run can meet."""
        p = self.parts
        remove_listener = p.latch.add_listener(lambda _info: p.client.cancel())
        run_id = ""
        try:
            model = p.client.resolve_model()
            run = p.store.start_run(config.task, config.endpoint, model, config.settings)
            run_id = run.id
            self._emit(
                RunStarted(run_id, config.task, config.endpoint, model, config.monitor_label,
                           config.dry_run)
            )
            end = self._loop(run_id, config)
        except _Ended as e:
            end = e
        except StoppedError as e:
            end = _Ended(Outcome.STOPPED, _stop_reason(e))
        except HolotronError as e:
            end = _Ended(Outcome.ERROR, _error_text(e))
        except Exception as e:  # the run must end with a reason, never a silent crash
            log.exception("run crashed")
            end = _Ended(Outcome.ERROR, f"internal error: {type(e).__name__}: {e}")
        finally:
            remove_listener()
            try:
                p.executor.release_all()
            except Exception:
                log.exception("could not release held keys and buttons")
        if run_id:
            p.store.finish_run(run_id, end.outcome.value, end.reason)
        finished = RunFinished(run_id, end.outcome, end.reason, self._steps_done, end.answer)
        self._emit(finished)
        return finished

    def _loop(self, run_id: str, config: RunConfig) -> _Ended:
        p = self.parts
        limits = config.limits
        started = p.clock()
        turns: list[Turn] = []
        previous: Action | None = None
        last_small: np.ndarray[Any, Any] | None = None
        repeats = 0
        schema = step_output_schema()
        for step_no in range(1, limits.max_steps + 1):
            p.latch.check()
            if p.clock() - started > limits.max_seconds:
                return _Ended(Outcome.LIMIT, f"time limit of {limits.max_seconds:.0f} s reached")
            timings: dict[str, float] = {}
            t0 = p.clock()
            frame = p.capturer.grab()
            small = p.capturer.grab_small()
            timings["capture_ms"] = (p.clock() - t0) * 1000
            shot, thumb = p.store.save_screenshot(
                run_id, step_no, frame.data, frame.mime, thumbnail(frame)
            )
            self._emit(FrameCaptured(run_id, step_no, frame.geometry, str(shot),
                                     timings["capture_ms"]))
            record = StepRecord(
                run_id=run_id,
                step_no=step_no,
                started_at=time.time(),
                screenshot_path=str(shot),
                thumbnail_path=str(thumb) if thumb else None,
                geometry=_geometry_dict(frame.geometry),
            )
            messages = build_messages(
                config.task,
                [*turns, Turn(step_no, frame.data, frame.mime, None, None)],
                PromptConfig(
                    convention=config.convention,
                    sent_width=frame.geometry.sent_width,
                    sent_height=frame.geometry.sent_height,
                    today=p.today(),
                    thinking=config.thinking,
                ),
            )
            t0 = p.clock()

            def on_text(text: str, n: int = step_no) -> None:
                self._emit(ModelText(run_id, n, text))

            try:
                reply = p.client.next_step(messages, schema, on_text=on_text)
            except InvalidOutput as e:
                record.raw_output = e.raw
                record.result = "failed"
                record.error = _error_text(e)
                self._finish_step(record)
                self._emit(StepFailed(run_id, step_no, e.message, e.fix))
                raise
            except (HolotronError, StoppedError) as e:
                record.result = "stopped" if isinstance(e, StoppedError) else "failed"
                record.error = _stop_reason(e) if isinstance(e, StoppedError) else _error_text(e)
                self._finish_step(record)
                if isinstance(e, HolotronError):
                    self._emit(StepFailed(run_id, step_no, e.message, e.fix))
                raise
            timings["model_ms"] = (p.clock() - t0) * 1000
            if reply.ttft is not None:
                timings["ttft_ms"] = reply.ttft * 1000
            record.raw_output = reply.raw
            record.prompt_tokens = reply.prompt_tokens
            record.completion_tokens = reply.completion_tokens
            step = reply.step
            record.thought = step.thought
            record.note = step.note

            action = step.action
            mapped = _map_points(action, config.convention, frame.geometry)
            points = tuple(m.point for m in mapped)
            verdict = p.policy.assess(
                action, previous=previous, outside_monitor=any(m.clamped for m in mapped)
            )
            description = _describe(action, points, verdict)
            self._describe_record(record, action, points, verdict)
            self._emit(StepProposed(run_id, step_no, step, points, description, verdict,
                                    reply.raw))

            if isinstance(action, AnswerAction):
                record.decision = Decision.AUTO.value
                record.result = "ok"
                self._finish_step(record)
                return _Ended(Outcome.ANSWERED, "the model answered the task", action.text)
            if isinstance(action, AskUser):
                record.decision = Decision.AUTO.value
                record.result = "ok"
                self._finish_step(record)
                return _Ended(Outcome.ASKED_USER, f"the model asks: {action.question}")

            # Loop detection: the same action again while the screen did not change.
            unchanged = last_small is not None and _same_screen(last_small, small)
            if previous is not None and unchanged and _same_action(previous, action):
                repeats += 1
            else:
                repeats = 1
            last_small = small
            if repeats >= limits.loop_limit:
                record.decision = Decision.AUTO.value
                record.result = "skipped"
                record.error = "loop detected"
                self._finish_step(record)
                return _Ended(
                    Outcome.LOOP,
                    f"the same action ({description}) was proposed {repeats} times "
                    "on an unchanged screen",
                )

            decision, action, points, outcome_text = self._decide(
                run_id, step_no, step, action, points, verdict, description, frame, shot,
                config.convention, timings,
            )
            record.decision = decision.value
            if decision is Decision.FORBIDDEN:
                record.result = "skipped"
                record.error = "; ".join(verdict.reasons)
            elif decision is Decision.SKIPPED:
                record.result = "skipped"
            else:
                if decision is Decision.EDITED:
                    record.action = action.model_dump(mode="json")
                    record.screen_point = _points_text(points)
                t0 = p.clock()
                try:
                    p.executor.execute(action, points)
                except StoppedError as e:
                    record.result = "stopped"
                    record.error = _stop_reason(e)
                    self._finish_step(record)
                    raise
                except Exception as e:
                    record.result = "failed"
                    record.error = f"{type(e).__name__}: {e}"
                    self._finish_step(record)
                    self._emit(StepFailed(run_id, step_no, record.error))
                    reason = f"executing the action failed: {record.error}"
                    raise _Ended(Outcome.ERROR, reason) from e
                timings["exec_ms"] = (p.clock() - t0) * 1000
                t0 = p.clock()
                settle = wait_until_settled(
                    p.capturer.grab_small, p.latch,
                    min_s=limits.settle_min, max_s=limits.settle_max,
                )
                timings["settle_ms"] = (p.clock() - t0) * 1000
                record.result = "ok"
                self._emit(ActionExecuted(run_id, step_no, description, timings["exec_ms"],
                                          timings["settle_ms"], settle.settled))
            record.timings = timings
            self._finish_step(record)
            turns.append(Turn(step_no, frame.data, frame.mime,
                              Step(note=step.note, thought=step.thought, action=action),
                              outcome_text))
            previous = action
        return _Ended(Outcome.LIMIT, f"step limit of {limits.max_steps} reached")

    def _decide(
        self,
        run_id: str,
        step_no: int,
        step: Step,
        action: Action,
        points: tuple[Point, ...],
        verdict: Verdict,
        description: str,
        frame: Frame,
        shot: Any,
        convention: Convention,
        timings: dict[str, float],
    ) -> tuple[Decision, Action, tuple[Point, ...], str]:
        """Ask the person when the policy says so; returns what to do and the outcome text."""
        p = self.parts
        if verdict.forbidden:
            self._emit(StepDecided(run_id, step_no, Decision.FORBIDDEN, action))
            why = "; ".join(verdict.reasons)
            return Decision.FORBIDDEN, action, points, f"refused by the safety policy: {why}"
        if not verdict.confirm or self._approve_rest:
            self._emit(StepDecided(run_id, step_no, Decision.AUTO, action))
            return Decision.AUTO, action, points, OUTCOME_DONE
        request = ConfirmRequest(
            description=description,
            element=getattr(action, "element", ""),
            points=points,
            reasons=verdict.reasons,
            action=action,
            screenshot_path=str(shot),
            geometry=frame.geometry,
        )
        t0 = p.clock()
        self._emit(AwaitingConfirmation(run_id, step_no, request))
        reply = request.wait(p.latch)
        timings["confirm_ms"] = (p.clock() - t0) * 1000
        if reply.answer is Answer.STOP:
            p.latch.stop("user", "stopped at the confirmation")
            self._emit(StepDecided(run_id, step_no, Decision.STOPPED, action))
            p.latch.check()
        if reply.answer is Answer.SKIP:
            self._emit(StepDecided(run_id, step_no, Decision.SKIPPED, action))
            return Decision.SKIPPED, action, points, OUTCOME_SKIPPED
        if reply.answer is Answer.EDIT and reply.edited is not None:
            action = reply.edited
            points = tuple(m.point for m in _map_points(action, convention, frame.geometry))
            self._emit(StepDecided(run_id, step_no, Decision.EDITED, action))
            return Decision.EDITED, action, points, "done as edited by the person"
        if reply.answer is Answer.APPROVE_REST:
            self._approve_rest = True
        self._emit(StepDecided(run_id, step_no, Decision.APPROVED, action))
        return Decision.APPROVED, action, points, OUTCOME_DONE

    def _describe_record(
        self, record: StepRecord, action: Action, points: tuple[Point, ...], verdict: Verdict
    ) -> None:
        record.action = action.model_dump(mode="json")
        record.element = getattr(action, "element", None)
        record.screen_point = _points_text(points)
        record.reason_for_confirm = "; ".join(verdict.reasons) or None

    def _finish_step(self, record: StepRecord) -> None:
        record.finished_at = time.time()
        self.parts.store.add_step(record)
        self._steps_done = record.step_no


def _map_points(action: Action, convention: Convention, geom: FrameGeometry) -> list[MappedPoint]:
    x = getattr(action, "x", None)
    y = getattr(action, "y", None)
    if x is None or y is None:
        return []
    mapped = [to_screen(x, y, convention, geom)]
    if isinstance(action, Drag):
        mapped.append(to_screen(action.to_x, action.to_y, convention, geom))
    return mapped


def _describe(action: Action, points: tuple[Point, ...], verdict: Verdict) -> str:
    return describe_action(
        action,
        points[0] if points else None,
        end=points[1] if len(points) > 1 else None,
        secret=verdict.secret,
    )


def _points_text(points: tuple[Point, ...]) -> str | None:
    return " -> ".join(str(p) for p in points) or None


def _same_action(a: Action, b: Action) -> bool:
    return a.model_dump() == b.model_dump()


def _same_screen(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
    if a.shape != b.shape:
        return False
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16))
    return float(diff.mean()) < UNCHANGED_THRESHOLD


def _geometry_dict(g: FrameGeometry) -> dict[str, Any]:
    m = g.monitor
    return {
        "sent_width": g.sent_width,
        "sent_height": g.sent_height,
        "monitor": {"left": m.left, "top": m.top, "width": m.width, "height": m.height},
        "scale": g.scale,
    }


def _error_text(e: HolotronError) -> str:
    return f"{e.message} Fix: {e.fix}" if e.fix else e.message


def _stop_reason(e: StoppedError) -> str:
    info = e.info
    return f"stopped by {info.source}" + (f": {info.reason}" if info.reason else "")
