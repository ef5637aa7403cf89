"""Sequences of actions judged one after another by the policy, as the agent judges a run's
steps (each normalized as the executor would press it, the earlier ones as history)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from control.input import normalized
from control.policy import Aim, SafetyPolicy, Verdict
from control.target import Target
from model.schema import Action

RISKY = SafetyPolicy()


def verdicts(target: Target, actions: Sequence[Action],
             policy: SafetyPolicy = RISKY) -> Iterator[tuple[Action, Verdict]]:
    """Each action (normalized) with its verdict, ``target`` focused throughout."""
    done: list[Action] = []
    for action in actions:
        action = normalized(action)
        yield action, policy.assess(action, history=done, aim=Aim(target))
        done.append(action)


def last_verdict(target: Target, actions: Sequence[Action],
                 policy: SafetyPolicy = RISKY) -> Verdict:
    """The verdict on the last of ``actions``."""
    judged = list(verdicts(target, actions, policy))
    assert judged, "no action to judge"
    return judged[-1][1]
