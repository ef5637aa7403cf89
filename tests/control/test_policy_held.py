"""The policy with H's tool vocabulary (issue 22): keys held down across steps, repeated chords,
hold-and-tap, a drag from the cursor and the model's plan, judged by what the machine
receives. The corpus (test_policy_corpus.py) holds the sequences; these pin the rules."""

from __future__ import annotations

from control.held import held_keys, lower, shifted
from control.policy import Aim, ConfirmMode, SafetyPolicy, key_text, typed_by
from model.run_secrets import RunSecrets
from model.schema import Action, Hotkey
from tests.support.actions import act, click, key, typing
from tests.support.fake_targets import FIREFOX, XTERM, window

RISKY = SafetyPolicy()
KEEPASS = window("KeePassXC", title="Passwords.kdbx - KeePassXC")


def down(k: str) -> Action:
    return act(action="key_down", key=k)


def up(k: str) -> Action:
    return act(action="key_up", key=k)


def hold_tap(hold: list[str], *taps: str) -> Action:
    return act(action="hold_and_tap", hold=hold, tap=list(taps))


PLAN = act(action="update_plan", goals=[{"title": "save", "status": "in_progress"}])


def test_a_key_down_stays_held_until_its_key_up_whichever_side() -> None:
    assert held_keys([down("ctrl_l"), down("shift")]) == ("ctrl_l", "shift")
    assert held_keys([down("ctrl_l"), up("Control_R")]) == ()
    assert held_keys([down("shift"), down("Shift"), typing("x")]) == ("shift",)


def test_ctrl_held_then_s_typed_is_ctrl_s() -> None:
    # ctrl+a typed as "a" with ctrl held, the selection typed over, then "s" with ctrl held:
    # the rule about saving an emptied document sees ctrl+a and ctrl+s.
    history = [down("ctrl"), typing("a"), up("ctrl"), typing("x"), down("ctrl")]
    verdict = RISKY.assess(typing("s"), history=history, aim=Aim(window("gedit")))
    assert verdict.confirm
    assert any("saves after the whole content" in r for r in verdict.reasons)
    assert lower(typing("s"), ("ctrl",)) == (Hotkey.model_construct(keys=["ctrl", "s"]),)


def test_shift_held_types_capitals_for_every_rule() -> None:
    assert shifted("ab1;") == 'AB!:'
    assert typed_by(typing("abc"), [down("shift")]) == "ABC"
    assert typed_by(key("a"), [down("shift")]) == "A"
    assert typed_by(key("a"), [down("shift"), up("shift")]) == "a"
    assert typed_by(key("a"), [down("ctrl")]) == ""
    assert key_text(hold_tap(["shift"], "a", "1")) == "A!"
    assert key_text(act(action="hotkey", keys=["a"], repeat=3)) == "aaa"


def test_a_secret_typed_with_shift_held_is_a_secret() -> None:
    policy = SafetyPolicy(secrets=RunSecrets(parameters=["QWERTYsecret9"]))
    history = [down("shift"), typing("qwerty"), up("shift")]
    verdict = policy.assess(typing("secret9"), history=history, aim=Aim(FIREFOX))
    assert verdict.confirm and verdict.secret
    # Tap keys type too: a password field's text typed by hold-and-tap is a secret.
    verdict = RISKY.assess(hold_tap(["shift"], "h", "i"), history=[click("Password")],
                           aim=Aim(FIREFOX))
    assert verdict.confirm and verdict.secret


def test_held_keys_make_a_chord_forbidden() -> None:
    verdict = RISKY.assess(key("escape"), history=[down("ctrl"), down("alt"), down("shift")],
                           aim=Aim(FIREFOX))
    assert verdict.forbidden
    assert any("emergency stop" in r for r in verdict.reasons)
    verdict = RISKY.assess(down("delete"), history=[down("ctrl"), down("alt")],
                           aim=Aim(FIREFOX))
    assert verdict.forbidden
    assert RISKY.assess(hold_tap(["ctrl", "alt"], "f2"), aim=Aim(FIREFOX)).forbidden


def test_a_modified_click_asks_and_says_what_is_held() -> None:
    verdict = RISKY.assess(click("Search"), history=[down("ctrl")], aim=Aim(FIREFOX))
    assert verdict.confirm
    assert any("with ctrl held down" in r for r in verdict.reasons)
    assert not RISKY.assess(click("Search"), history=[down("ctrl"), up("ctrl")],
                            aim=Aim(FIREFOX)).confirm


def test_a_repeated_enter_asks_a_single_one_does_not() -> None:
    enter_twice = act(action="hotkey", keys=["enter"], repeat=2)
    verdict = RISKY.assess(enter_twice, history=[click("Result")], aim=Aim(FIREFOX))
    assert verdict.confirm
    assert any("2 times" in r for r in verdict.reasons)
    assert not RISKY.assess(key("enter"), history=[click("Result")], aim=Aim(FIREFOX)).confirm
    assert not RISKY.assess(act(action="hotkey", keys=["down"], repeat=5),
                            aim=Aim(FIREFOX)).confirm


def test_a_held_key_that_types_asks() -> None:
    verdict = RISKY.assess(down("a"), aim=Aim(FIREFOX))
    assert verdict.confirm and any("repeats" in r for r in verdict.reasons)
    assert not RISKY.assess(down("shift"), aim=Aim(FIREFOX)).confirm


def test_in_a_terminal_every_new_acting_action_asks() -> None:
    for action in (down("shift"), hold_tap(["alt"], "tab"),
                   act(action="hotkey", keys=["up"], repeat=2),
                   act(action="drag_to", element="row", x=1, y=2)):
        assert RISKY.assess(action, aim=Aim(XTERM)).confirm, action


def test_never_touch_and_only_in_apply_to_the_new_actions() -> None:
    guarded = SafetyPolicy(never_touch=["KeePassXC"])
    only = SafetyPolicy(only_in=["firefox"])
    for action in (down("shift"), hold_tap(["ctrl"], "c"),
                   act(action="hotkey", keys=["down"], repeat=2),
                   act(action="drag_to", element="entry", x=1, y=2)):
        assert guarded.assess(action, aim=Aim(KEEPASS)).forbidden, action
        assert only.assess(action, aim=Aim(KEEPASS)).forbidden, action
    # A drag from the cursor onto a window holodesk never touches.
    drag = act(action="drag_to", element="entry", x=1, y=2)
    assert guarded.assess(drag, aim=Aim(FIREFOX, KEEPASS)).forbidden


def test_a_key_up_and_a_plan_are_never_asked_nor_refused() -> None:
    always = SafetyPolicy(ConfirmMode.ALWAYS, never_touch=["KeePassXC"], only_in=["gedit"])
    for aim in (Aim(XTERM), Aim(KEEPASS), Aim(FIREFOX)):
        for action in (up("ctrl"), PLAN):
            verdict = always.assess(action, history=[down("ctrl")], aim=aim)
            assert not verdict.confirm and not verdict.forbidden, (action, aim)
