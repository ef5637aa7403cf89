"""Where a run's steps come from: an automation's saved steps (app/replay.py) until they hand
over, then the model for the rest of the run. The log row of the model's first step says why
the replay handed over."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ReplayPhase(enum.Enum):
    #: The saved steps give the steps.
    REPLAYING = "replaying"
    #: The replay handed over; the model's next step's row is to say why.
    HANDED_OVER = "handed over"
    #: The model gives every step, and nothing about the replay is left to say (or the run
    #: had no replay).
    MODEL = "model"


@dataclass
class ReplayState:
    """The run's :class:`ReplayPhase`, and why the replay handed over while that is still to
    be said. Changed only through :meth:`_enter`, so the reason never outlives its phase."""

    phase: ReplayPhase = ReplayPhase.MODEL
    reason: str = ""

    @classmethod
    def starting(cls, replay_active: bool) -> ReplayState:
        """The state a run starts in: replaying when it has a replay with steps to give."""
        return cls(ReplayPhase.REPLAYING if replay_active else ReplayPhase.MODEL)

    @property
    def replaying(self) -> bool:
        return self.phase is ReplayPhase.REPLAYING

    def hand_over(self, reason: str) -> bool:
        """The model gives the steps from here on, because of ``reason``; True if the replay
        was still giving them (else nothing changes: it handed over already)."""
        if self.phase is not ReplayPhase.REPLAYING:
            return False
        self._enter(ReplayPhase.HANDED_OVER, reason)
        return True

    def take_handover(self) -> str | None:
        """Why the replay handed over, once, for the row of the model's first step; None
        when there is nothing to say (still replaying, or said already)."""
        if self.phase is not ReplayPhase.HANDED_OVER:
            return None
        reason = self.reason
        self._enter(ReplayPhase.MODEL)
        return reason

    def _enter(self, phase: ReplayPhase, reason: str = "") -> None:
        self.phase = phase
        self.reason = reason
