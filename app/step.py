"""What one step of the agent loop (app/agent.py) computes, as values: the action judged, the
person's edit checked, the decision taken, and how the run ends."""

from __future__ import annotations

from dataclasses import dataclass

from app.events import Decision, Outcome
from app.result import RunResult
from control.policy import Aim, Verdict
from control.settle_frames import SettleFrames
from model.coords import Point
from model.problem import Fix
from model.schema import Action


@dataclass(frozen=True)
class Ended:
    """How a run ended: what :class:`~app.events.RunFinished` reports and the log keeps."""

    outcome: Outcome
    reason: str
    answer: str = ""  # the model's answer, when it answered the task
    fix: Fix | None = None  # what the person can do about an error
    #: The task's own check's verdict, when it decided (app/result.py ``TaskCheck``).
    checked: RunResult | None = None

    @property
    def result(self) -> RunResult:
        """What the run came to: the check's verdict, else what the outcome means."""
        return self.checked if self.checked is not None else self.outcome.result


@dataclass(frozen=True)
class Judged:
    """An action as it would run: its screen points, the application that receives it, and
    what the safety policy says of it there."""

    action: Action
    points: tuple[Point, ...]
    aim: Aim
    verdict: Verdict


@dataclass(frozen=True)
class EditRefused:
    """Why the person's edit at the confirmation cannot be used (they are asked again)."""

    reason: str


@dataclass(frozen=True)
class StepOutcome:
    """What was decided for a step: the decision, the action it applies to (the person's
    edit, when they edited it) judged where it goes, and what the model hears of it."""

    decision: Decision
    judged: Judged
    #: The outcome the next prompts tell the model (model/prompt.py's ``OUTCOME_*`` texts).
    told: str

    @property
    def action(self) -> Action:
        return self.judged.action

    @property
    def carried_out(self) -> bool:
        """Whether the decision lets the action run (still subject to the target check)."""
        return self.decision in (Decision.AUTO, Decision.APPROVED, Decision.EDITED)

    @property
    def person_answered(self) -> bool:
        """Whether the person looked and answered (what came before is theirs to have
        judged: the policy's look-back rules start after it)."""
        return self.decision in (Decision.APPROVED, Decision.EDITED, Decision.SKIPPED)

    @property
    def changes_course(self) -> bool:
        """Whether the step is not done as proposed: a replay's later saved steps assumed it
        was."""
        return self.decision not in (Decision.AUTO, Decision.APPROVED)


@dataclass(frozen=True)
class Acted:
    """An action that ran and the screen's settle wait after it."""

    #: The wait's frames when it ended settled: the next screenshot may come from its last
    #: look (control/settle_frames.py); None when the screen was still changing.
    settled: SettleFrames | None
