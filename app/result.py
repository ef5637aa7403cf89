"""What a run came to for the person: done, not done, stopped, failed or refused.

A run ends with an :class:`~app.events.Outcome`, the mechanism of its end (the model answered,
a limit, a stop ...). That is not what the person asks ("is it done?"): a model may answer "I
did nothing" and a run may reach its step limit with the work finished. The result is decided
once, as the run ends (app/agent.py), before the action log records it and before any front
end shows it: by the task's own check when it has one (:data:`TaskCheck`, e.g. the demo's
practice window), else by what the outcome means (:data:`OUTCOME_RESULTS`). Every surface (the
terminal's last line and exit code, ``holodesk log``, the task window, the tray, the log
window, a notification) shows this one value.

A module of its own, below app/events.py and app/store.py, so that the log, the events and
every front end reach it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["CHECKED", "OUTCOME_RESULTS", "Check", "RunResult", "TaskCheck"]


class RunResult(StrEnum):
    """What a run came to; the values are the action log's ``runs.result`` column's text."""

    DONE = "done"  # the task is done: the only success
    NOT_DONE = "not_done"  # the run ended and the task is not done (or not known to be)
    STOPPED = "stopped"  # the person (or a guard on their behalf) stopped it
    FAILED = "failed"  # the server, the model's output, the machine or holodesk failed
    REFUSED = "refused"  # holodesk, or the person at a question, refused it before it acted

    @property
    def words(self) -> str:
        """The result in running text: "not done"."""
        return self.value.replace("_", " ")

    @property
    def heading(self) -> str:
        """The result as a headline: "Not done"."""
        return self.words.capitalize()


#: The result of a run whose task has no check of its own, by the outcome's text
#: (app/events.py ``Outcome``; ``interrupted``: the action log's mark for a run whose process
#: died before it ended, which did not finish, so failed).
OUTCOME_RESULTS: Mapping[str, RunResult] = {
    "answered": RunResult.DONE,
    "asked_user": RunResult.NOT_DONE,
    "limit": RunResult.NOT_DONE,
    "loop": RunResult.NOT_DONE,
    "stopped": RunResult.STOPPED,
    "error": RunResult.FAILED,
    "interrupted": RunResult.FAILED,
}

#: The results a task's own check decides between: a stopped or a failed run stays so,
#: whatever the check would say.
CHECKED = frozenset({RunResult.DONE, RunResult.NOT_DONE})


@dataclass(frozen=True)
class Check:
    """Whether a task's goal was reached, read from its own state (a window's), and what it
    saw, in words for the person."""

    passed: bool
    detail: str


#: A task's own check, asked as its run ends: the model's final answer (None when the run
#: ended without one) in, the verdict out. It runs on the run's thread.
TaskCheck = Callable[[str | None], Check]
