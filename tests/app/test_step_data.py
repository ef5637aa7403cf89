"""The values one step of the agent loop computes (app/step.py): which decisions run the
action, which mean the person answered, which change a replay's course."""

from __future__ import annotations

import pytest

from app.events import Decision
from app.step import Judged, StepOutcome
from control.policy import Aim, Verdict
from model.schema import Wait

JUDGED = Judged(Wait(seconds=1), (), Aim(), Verdict(confirm=False, forbidden=False, reasons=()))

#: decision: (the action runs, the person answered, a replay's course changed)
EXPECTED = {
    Decision.AUTO: (True, False, False),
    Decision.APPROVED: (True, True, False),
    Decision.EDITED: (True, True, True),
    Decision.SKIPPED: (False, True, True),
    Decision.FORBIDDEN: (False, False, True),
    Decision.STOPPED: (False, False, True),
}


def test_every_decision_is_covered() -> None:
    assert set(EXPECTED) == set(Decision)


@pytest.mark.parametrize("decision", list(EXPECTED))
def test_what_each_decision_means_for_the_step(decision: Decision) -> None:
    outcome = StepOutcome(decision, JUDGED, "done")
    assert (outcome.carried_out, outcome.person_answered,
            outcome.changes_course) == EXPECTED[decision]
    assert outcome.action is JUDGED.action
