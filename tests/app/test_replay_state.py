"""The replay's state in a run (app/replay_state.py): replaying until it hands over, then the
reason said once, on the row of the model's first step."""

from __future__ import annotations

from app.replay_state import ReplayPhase, ReplayState


def test_a_run_with_steps_to_replay_starts_replaying() -> None:
    state = ReplayState.starting(replay_active=True)
    assert state.phase is ReplayPhase.REPLAYING and state.replaying
    assert state.take_handover() is None  # nothing to say while it replays
    assert state.replaying


def test_a_run_without_a_replay_has_nothing_to_hand_over() -> None:
    state = ReplayState.starting(replay_active=False)
    assert state.phase is ReplayPhase.MODEL and not state.replaying
    assert not state.hand_over("the person skipped it")
    assert state.take_handover() is None
    assert state.phase is ReplayPhase.MODEL


def test_the_reason_for_handing_over_is_said_once() -> None:
    state = ReplayState.starting(replay_active=True)
    assert state.hand_over("the replayed step 2 was skipped")
    assert state.phase is ReplayPhase.HANDED_OVER and not state.replaying
    assert state.take_handover() == "the replayed step 2 was skipped"
    assert state.phase is ReplayPhase.MODEL and state.reason == ""
    assert state.take_handover() is None


def test_a_second_hand_over_keeps_the_first_reason() -> None:
    # A step refused, then paused before acting: the replay handed over at the refusal.
    state = ReplayState.starting(replay_active=True)
    assert state.hand_over("the replayed step 3 was forbidden")
    assert not state.hand_over("the run was paused before the replayed step 3")
    assert state.take_handover() == "the replayed step 3 was forbidden"


def test_an_empty_reason_is_still_a_hand_over() -> None:
    state = ReplayState.starting(replay_active=True)
    assert state.hand_over("")
    assert state.take_handover() == ""
    assert state.take_handover() is None
