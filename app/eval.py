"""`holodesk eval`: a small fixed suite of desktop tasks with checkable outcomes (docs/eval.md).

Each :class:`EvalTask` opens a throwaway window of its own (:class:`Subject`), tells the model
its goal, and runs it exactly as `holodesk run` would (:func:`app.runner.open_run` and
:func:`app.runner.drive`: the real capture, policy, executor, stop and action log), then asks the
window itself, never the screen, whether the goal was reached. Confirmation is off (nobody is
there to answer; a confirmation that still comes is answered Stop), and the run may act only in
the task's window twice over: ``only_in`` names its window class and the capture is the window's
own rectangle, as the demo does (app/demo/run.py).

Per task the report has: passed or not, the run's outcome, steps, seconds, and the prompt and
answer tokens the action log keeps per step (app/store.py). Reasoning tokens are None: holodesk's
client does not record them (the report says "n/a"). :func:`run_suite` runs the same tasks under
one or more profiles (``--compare``), against an endpoint or the built-in demo model
(app/demo), which answers in holodesk's own dialect and in H's structured contract.
"""

from __future__ import annotations

import functools
import logging
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.agent import AgentParts
from app.demo.look import NAME, PRACTICE_WM_CLASS
from app.demo.practice import PracticeWindow
from app.demo.rows import ROW_COUNT, ROWS_WM_CLASS, WANTED_ROW, RowsWindow
from app.demo.server import DEMO_MODEL_NAME, DemoServer
from app.demo.window_process import capture_region, watch_window

# Re-exported: what a task is was defined here first, and its callers still import it here.
from app.eval_task import Check as Check
from app.eval_task import EvalError as EvalError
from app.eval_task import EvalTask as EvalTask
from app.eval_task import Subject as Subject
from app.eval_task import confined_to as confined_to
from app.eval_windows import WINDOW_TASKS
from app.events import Answer, AwaitingConfirmation, ConfirmReply, Event, RunFinished
from app.settings import Settings
from app.store import StepRecord
from control.stop import StopLatch
from model.coords import Rect
from model.profiles import DEFAULT_PROFILE

log = logging.getLogger(__name__)

#: The steps a task may take unless ``--max-steps`` says otherwise.
DEFAULT_MAX_STEPS = 20
#: The longest a task may run, in seconds (a slow model on a GPU takes a few seconds a step).
MAX_SECONDS = 600.0
#: What the report says where a figure is not recorded.
NOT_RECORDED = "n/a"


class PracticeSubject:
    """The demo's practice window (ui/practice): its checklist is the goal's state."""

    wm_class = PRACTICE_WM_CLASS

    def __init__(self, folder: Path, preset: str | None = None) -> None:
        self._window = PracticeWindow(folder, preset)

    def open(self) -> Rect:
        try:
            state = self._window.start()
        except RuntimeError as e:
            raise EvalError(str(e)) from e
        assert state.window is not None
        return state.window

    def check(self, answer: str | None = None) -> Check:
        state = self._window.state()
        if state is None:
            return Check(False, "the practice window wrote no state")
        items = ", ".join(f"{k}: {v}" for k, v in state.steps.items())
        if state.done:
            return Check(True, f"checklist done ({items})")
        return Check(False, f"still to do: {', '.join(state.missing())} ({items})")

    @property
    def alive(self) -> bool:
        return self._window.alive

    def where(self) -> Rect | None:
        state = self._window.state()
        return state.window if state is not None else None

    def close(self) -> None:
        self._window.close()


class RowsSubject:
    """The rows window (app/demo/rows.py): which row is selected is the goal's state."""

    wm_class = ROWS_WM_CLASS

    def __init__(self, folder: Path) -> None:
        self._window = RowsWindow(folder)

    def open(self) -> Rect:
        try:
            return self._window.start()
        except RuntimeError as e:
            raise EvalError(str(e)) from e

    def check(self, answer: str | None = None) -> Check:
        state = self._window.state()
        if state is None:
            return Check(False, "the rows window wrote no state")
        chosen = state.get("selected")
        if chosen == WANTED_ROW:
            return Check(True, f"{WANTED_ROW} is selected")
        return Check(False, f"selected: {chosen or 'nothing'} (wanted {WANTED_ROW})")

    @property
    def alive(self) -> bool:
        return self._window.alive

    def where(self) -> Rect | None:
        state = self._window.state()
        return self._window.placed(state) if state is not None else None

    def close(self) -> None:
        self._window.close()


#: The suite, in the order it runs.
TASKS: tuple[EvalTask, ...] = (
    EvalTask(
        name="practice-form",
        goal=(f"In the holodesk practice window, type the name {NAME}, choose Blue, save the "
              "entry, then delete the draft"),
        summary=f"fill a form: type {NAME}, choose Blue in a list, save, delete the draft "
                "(the demo's practice window)",
        subject=PracticeSubject,
    ),
    EvalTask(
        name="practice-resume",
        goal=("The holodesk practice window's form is already filled in: save the entry, then "
              "delete the draft"),
        summary="pick up part way: the form is filled in; read that from the screen, save, "
                "delete the draft (typing the name again would spoil it)",
        subject=functools.partial(PracticeSubject, preset="filled"),
    ),
    EvalTask(
        name="practice-fix-colour",
        goal=(f"In the holodesk practice window the name {NAME} is typed but the wrong colour "
              "is chosen: choose Blue instead, save the entry, then delete the draft"),
        summary="correct a value: Red is chosen; choose Blue, save, delete the draft",
        subject=functools.partial(PracticeSubject, preset="wrong-colour"),
    ),
    EvalTask(
        name="scroll-to-row",
        goal=f"In the holodesk rows window, scroll the list to the row named {WANTED_ROW} and "
             "select it",
        summary=f"scroll to a row: {WANTED_ROW} of {ROW_COUNT} is out of view in a Tk list; "
                "find it and select it",
        subject=RowsSubject,
    ),
    *WINDOW_TASKS,
)


def task_names() -> tuple[str, ...]:
    return tuple(task.name for task in TASKS)


def select_tasks(names: Sequence[str] | None) -> tuple[EvalTask, ...]:
    """The tasks named (all when None or empty), in the suite's order; EvalError for a name the
    suite does not have."""
    if not names:
        return TASKS
    unknown = [name for name in names if name not in task_names()]
    if unknown:
        raise EvalError(f"no eval task named {', '.join(unknown)} (there is: "
                        f"{', '.join(task_names())})")
    return tuple(task for task in TASKS if task.name in names)


@dataclass(frozen=True)
class TaskResult:
    """How one task went under one profile."""

    task: str
    passed: bool
    detail: str
    outcome: str
    steps: int
    seconds: float
    prompt_tokens: int | None
    completion_tokens: int | None
    #: Reasoning tokens summed over the steps; None: no step's figure is known (docs/eval.md).
    reasoning_tokens: int | None = None
    #: True: some step's figure is holodesk's count of streamed reasoning deltas, not the
    #: server's (model.client.reasoning_count).
    reasoning_estimated: bool = False
    run_id: str = ""


@dataclass(frozen=True)
class EvalReport:
    """The suite under one profile (or contract) against one endpoint."""

    profile: str
    endpoint: str
    model: str
    results: tuple[TaskResult, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def success_rate(self) -> float:
        return sum(r.passed for r in self.results) / len(self.results) if self.results else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"profile": self.profile, "endpoint": self.endpoint, "model": self.model,
                "passed": self.passed, "success_rate": self.success_rate,
                "tasks": [asdict(r) for r in self.results]}


def reasoning_total(records: Sequence[StepRecord]) -> tuple[int | None, bool]:
    """A run's reasoning tokens over its steps, and whether any step's figure is holodesk's
    estimate (streamed reasoning deltas counted, docs/eval.md); None: no step's is known."""
    known = [r for r in records if r.reasoning_tokens is not None]
    return _sum([r.reasoning_tokens for r in known]), any(r.reasoning_estimated for r in known)


def _sum(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _unattended(event: Event) -> None:
    """The eval's front end: nobody is there, so a confirmation is answered Stop."""
    if isinstance(event, AwaitingConfirmation):
        event.request.reply(ConfirmReply(Answer.STOP))
    elif isinstance(event, RunFinished):
        log.info("eval run %s ended %s after %d step(s): %s", event.run_id,
                 event.outcome.value, event.steps, event.reason)


def task_settings(settings: Settings, window: Rect, subject: Subject, *,
                  max_steps: int) -> Settings:
    """``settings`` for one task (in memory, never saved): no confirmation, acting only in the
    task's window, which is all the model sees."""
    region = capture_region(window)
    return settings.with_overrides({
        "confirm": "never",
        "only_in": confined_to(subject),
        "monitor": region,
        "max_steps": max_steps,
        "max_seconds": MAX_SECONDS,
    }, source="the eval")


def _watch(subject: Subject, latch: StopLatch, poll: float = 0.2) -> Callable[[], None]:
    """Stop the run behind ``latch`` when the task's window goes away (as the demo does)."""
    return watch_window(lambda: subject.alive, latch, "eval", "the task's window closed", poll)


def _stay_in_place(parts: AgentParts, subject: Subject, window: Rect,
                   latch: StopLatch) -> None:
    """Stop the run when the task's window moved or changed size, checked after each action
    and before the next screenshot: the capture is the window's first rectangle, and what
    shows there once it moved is the person's desktop behind it, not for the endpoint."""
    before = parts.after_settle

    def check() -> object:
        result = before() if before is not None else None
        now = subject.where()
        if now is not None and now != window:
            latch.stop("eval", f"the task's window moved ({window} to {now}): the capture "
                       "would show what is behind it")
        return result

    parts.after_settle = check


def run_task(task: EvalTask, settings: Settings, *, max_steps: int = DEFAULT_MAX_STEPS,
             folder: Path | None = None,
             on_event: Callable[[Event], None] = _unattended) -> TaskResult:
    """Run ``task`` once with ``settings`` (endpoint, model and profile already set)."""
    from app.run_request import make_run_request
    from app.runner import drive, foreground, open_run

    with tempfile.TemporaryDirectory(prefix="holodesk-eval-") as tmp:
        subject = task.subject(folder or Path(tmp))
        try:
            window = subject.open()
            config = task_settings(settings, window, subject, max_steps=max_steps)
            latch = StopLatch()
            session = open_run(make_run_request(config, task.goal), latch=latch)
            _stay_in_place(session.parts, subject, window, latch)
            started = time.monotonic()
            unwatch = _watch(subject, latch)
            try:
                with foreground(session):
                    finished = drive(session, on_event)
                    seconds = time.monotonic() - started
                    records = session.parts.store.steps(finished.run_id) if finished else []
            finally:
                unwatch()
            check = subject.check(finished.answer if finished is not None else None)
        finally:
            subject.close()
    if finished is None:
        return TaskResult(task.name, False, "the run ended without a result (see the log file)",
                          "crashed", 0, seconds, None, None)
    detail = check.detail if check.passed else f"{check.detail}; run: {finished.reason}"
    return TaskResult(
        task=task.name, passed=check.passed, detail=detail, outcome=finished.outcome.value,
        steps=finished.steps, seconds=round(seconds, 2),
        prompt_tokens=_sum([r.prompt_tokens for r in records]),
        completion_tokens=_sum([r.completion_tokens for r in records]),
        reasoning_tokens=reasoning_total(records)[0],
        reasoning_estimated=reasoning_total(records)[1],
        run_id=finished.run_id,
    )


@contextmanager
def demo_model() -> Iterator[str]:
    """The built-in demo model served on the loopback while inside; its base URL."""
    with DemoServer() as server:
        yield server.base_url


def target_settings(settings: Settings, *, endpoint: str | None, model: str | None,
                    demo: bool) -> Settings:
    """``settings`` aimed at the model the eval runs against (the demo model when ``demo``)."""
    overrides: dict[str, object] = {}
    if endpoint:
        overrides["endpoint"] = endpoint
    if demo:
        # As `holodesk demo` sets them: its name, no pinned certificate, norm1000 points.
        overrides.update({"model": DEMO_MODEL_NAME, "tls_fingerprint": None,
                          "convention": "norm1000", "thinking": False,
                          # It stands in for the default model, in that model's contract.
                          "model_profile": settings.model_profile or DEFAULT_PROFILE.key})
    elif model:
        overrides["model"] = model
    return settings.with_overrides(overrides, source="the eval") if overrides else settings


def run_eval(tasks: Sequence[EvalTask], settings: Settings, profile: str | None, *,
             max_steps: int = DEFAULT_MAX_STEPS,
             on_result: Callable[[str, TaskResult], None] | None = None) -> EvalReport:
    """Run ``tasks`` in order under ``profile`` (a profile key, docs/models.md; None: the
    contract holodesk picks for the served model, as `holodesk run` does)."""
    config = settings.with_overrides({"model_profile": profile}, source="the eval") \
        if profile else settings
    label = profile or config.model_profile or "auto"
    results: list[TaskResult] = []
    for task in tasks:
        result = run_task(task, config, max_steps=max_steps)
        results.append(result)
        if on_result is not None:
            on_result(label, result)
    return EvalReport(profile=label, endpoint=config.endpoint, model=config.model or "",
                      results=tuple(results))


def run_suite(settings: Settings, profiles: Sequence[str | None], *,
              endpoint: str | None = None, model: str | None = None,
              tasks: Sequence[EvalTask] = TASKS, max_steps: int = DEFAULT_MAX_STEPS,
              on_result: Callable[[str, TaskResult], None] | None = None) -> list[EvalReport]:
    """The same ``tasks`` under each of ``profiles``, one report each. Without ``endpoint``
    the built-in demo model answers (it speaks holodesk's dialect and H's structured one)."""
    if endpoint:
        aimed = target_settings(settings, endpoint=endpoint, model=model, demo=False)
        return [run_eval(tasks, aimed, p, max_steps=max_steps, on_result=on_result)
                for p in profiles]
    with demo_model() as url:
        aimed = target_settings(settings, endpoint=url, model=None, demo=True)
        return [run_eval(tasks, aimed, p, max_steps=max_steps, on_result=on_result)
                for p in profiles]
