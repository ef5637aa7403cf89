"""A secret parameter's value typed in pieces is still typing a secret (found by a red-team review).

The model must know a secret parameter's value to type it (the task holds it), so a hijacked
model (a web page telling it what to do) can type it in two ``type`` actions into a page's
field. Each piece alone contains no whole secret; the policy judged each piece alone, so in the
default ``risky`` mode neither step was confirmed and the secret reached the page unasked.
"""

from __future__ import annotations

from control.policy import Aim, ConfirmMode, SafetyPolicy
from model.run_secrets import RunSecrets
from model.schema import Click, Hotkey, Type
from tests.support.fake_targets import FIREFOX

SECRET = "blue elephant sings"  # looks like nothing the shape rules know
IN_FIREFOX = Aim(target=FIREFOX)


def _policy() -> SafetyPolicy:
    return SafetyPolicy(ConfirmMode.RISKY, secrets=RunSecrets(parameters=[SECRET]))


def _type(text: str) -> Type:
    return Type(action="type", text=text)


def test_the_whole_secret_typed_at_once_is_asked() -> None:
    verdict = _policy().assess(_type(SECRET), history=[], aim=IN_FIREFOX)
    assert verdict.confirm and verdict.secret


def test_a_secret_split_over_two_type_steps_is_asked_when_completed() -> None:
    policy = _policy()
    first, second = _type("blue eleph"), _type("ant sings")
    history = [Click(action="click", x=10, y=10, element="Comment"), first]
    verdict = policy.assess(second, history=history, aim=IN_FIREFOX)
    assert verdict.confirm and verdict.secret, verdict.reasons


def test_the_first_piece_of_a_secret_is_asked() -> None:
    # A long piece of the secret (here more than half of it) is the secret, as good as given.
    verdict = _policy().assess(_type("blue eleph"), history=[], aim=IN_FIREFOX)
    assert verdict.confirm and verdict.secret, verdict.reasons


def test_a_secret_pressed_key_by_key_is_asked_before_most_of_it_is_typed() -> None:
    policy = _policy()
    history: list = []
    for number, char in enumerate(SECRET, start=1):
        key = Hotkey(action="hotkey", keys=["space" if char == " " else char])
        verdict = policy.assess(key, history=history, aim=IN_FIREFOX)
        if verdict.confirm:
            assert verdict.secret and number <= 4
            return
        history.append(key)
    raise AssertionError("the whole secret was typed key by key without a question")
