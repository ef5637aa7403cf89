"""One run's request: what it does and within which limits.

Built in one place, :func:`make_run_request`, from the settings read, the automation it runs
(if any) and the person's own choices for this run (a command line's options, the task
window's fields), by `holodesk run`, `automation run`, a terminal `trigger NAME` and the
desktop app alike; the run's session is built from it (:func:`app.session.build_session`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from app.agent import RunLimits
from app.approval import Approvals
from app.automations import (
    Automation,
    AutomationError,
    automation_values,
    held_problem,
    test_run_values,
)
from app.parameters import Filled
from app.result import TaskCheck
from app.settings import RunValues, Settings
from control.policy import ConfirmMode
from model.problem import Fix


class AutomationMode(Enum):
    """How a run of an automation goes."""

    #: What the person approved for it applies (app/automations.py ``judge_automation``); its
    #: saved steps replay first, and an answered run's steps are saved for the next time.
    RUN = "run"
    #: As :attr:`RUN`, but the model does every step (`automation run --no-replay`).
    WITHOUT_REPLAY = "without replay"
    #: Every step confirmed, proving the task as it stands: nothing replayed or saved; it
    #: runs while a change made outside holodesk waits for approval (the Automations window's
    #: Test run).
    TEST = "test run"


@dataclass(frozen=True)
class RunRequest:
    """What one run is asked to do, typed; the session is built from it.

    ``confirm``, ``monitor``, ``only_in`` and ``limits`` are what the run gets (the settings'
    with this run's own values on top); ``values`` are those own values, each with where it
    came from (the command line, an automation). ``settings`` are the settings the run's
    parts are built from: the ones read, with ``values`` on top (never saved).
    """

    task: str
    settings: Settings
    confirm: ConfirmMode
    monitor: str
    only_in: tuple[str, ...]
    limits: RunLimits
    values: RunValues
    parameters: Filled | None = None
    automation: Automation | None = None
    mode: AutomationMode = AutomationMode.RUN
    dry_run: bool = False
    #: The task's own check of its goal (app/result.py): its verdict is the run's result
    #: (done or not done) whatever the model said. None: the run's outcome decides.
    check: TaskCheck | None = None

    @property
    def saved_steps(self) -> Automation | None:
        """The automation whose saved steps this run replays and replaces (None: a task of
        its own, or a test run)."""
        return None if self.mode is AutomationMode.TEST else self.automation

    @property
    def replay(self) -> bool:
        """Whether the automation's saved steps replay before the model is asked."""
        return self.mode is AutomationMode.RUN


def make_run_request(
    settings: Settings,
    task: str,
    choices: RunValues | None = None,
    *,
    automation: Automation | None = None,
    mode: AutomationMode = AutomationMode.RUN,
    parameters: Filled | None = None,
    dry_run: bool = False,
    approvals: Approvals | None = None,
    check: TaskCheck | None = None,
) -> RunRequest:
    """The request of a run of ``task`` (with ``parameters``: their filled task) over
    ``settings``, with the person's ``choices`` for it on top.

    With ``automation``, the run is its: its confirmation mode, monitor and applications
    apply as the person approved them (``approvals``, default: the record beside the
    automations file; app/automations.py ``automation_values``), under ``choices``. ``check``
    is the task's own check of its goal, asked as the run ends (the demo's practice window:
    app/demo/run.py). Raises
    :class:`~app.automations.AutomationError` when it may not run now (changed outside
    holodesk and not approved; or it may act in no application the settings allow), and
    :class:`~app.settings.SettingsError` naming a bad choice.
    """
    values = choices or RunValues()
    if automation is not None and parameters is not None:
        _check_task(automation, parameters)
    if automation is not None:
        if mode is AutomationMode.TEST:
            own = test_run_values(settings, automation)
        else:
            held = held_problem(automation, settings, approvals)
            if held is not None:
                raise held
            own = automation_values(settings, automation, approvals=approvals)
        values = own.then(values)
    run = settings.for_run(values)
    return RunRequest(
        task=parameters.task if parameters is not None else task,
        settings=run,
        confirm=run.confirm,
        monitor=run.monitor,
        only_in=run.only_in,
        limits=RunLimits(max_steps=run.max_steps, max_seconds=run.max_seconds,
                         loop_limit=run.loop_limit, settle_min=run.settle_min,
                         settle_max=run.settle_max),
        values=values,
        parameters=parameters,
        automation=automation,
        mode=mode,
        dry_run=dry_run,
        check=check,
    )


def _check_task(automation: Automation, parameters: Filled) -> None:
    """Refuse a task that is not ``automation``'s as it is now: what the person approved (or
    refused) is judged on ``automation``, so a task filled from another version of it (read
    before a question whose answer wrote the approved one back) must not be the one run
    (tests/app/test_redteam13_refused_task_runs.py)."""
    if parameters.task != automation.fill(parameters.values).task:
        raise AutomationError(
            f"{automation.name!r} was not run: the task given is not the automation's as it "
            "is now (it changed while the run was being prepared)",
            Fix(f"run it again: `holodesk automation run {automation.name}`"))
