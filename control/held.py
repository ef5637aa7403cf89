"""Keys held down across steps, and every action as the plain presses it amounts to.

``key_down`` leaves a key down until its ``key_up`` (or the end of the run): while it is down,
everything the keyboard and the mouse do happens with it held. ``type "s"`` with Ctrl held is
Ctrl+S, a typed chord with Shift held types capitals, a click with Ctrl held is a Ctrl-click.
``hold_and_tap`` is one chord per tapped key, and a ``hotkey`` repeated N times is N presses.

The safety policy judges what the machine receives, so it judges every action as
:func:`lower` makes it: the older actions (``hotkey`` of one press, ``type``, the pointer
actions) with the held keys folded in, which all of its rules already know. The executor keeps
the same state (:attr:`control.input.Executor.sticky_keys`): both follow :func:`held_keys`,
and a ``key_up`` releases every held key that is the same key as it names, whichever side
(:func:`control.keys.same_key`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from control.input import split_text
from control.keys import (
    KEYPAD_CHARS,
    KEYPAD_OTHER,
    MODIFIERS,
    US_SHIFTED,
    canonical_key,
    generic_key,
    same_key,
    split_combo,
)
from model.schema import (
    Action,
    AskUser,
    HoldAndTap,
    Hotkey,
    KeyDown,
    KeyUp,
    Type,
    UpdatePlan,
    Wait,
)

__all__ = ["held_keys", "is_modifier", "lower", "lower_all", "shifted"]


def _generic(name: str) -> str:
    return generic_key(canonical_key(name))


def is_modifier(name: str) -> bool:
    """Whether ``name`` is Ctrl, Alt, Shift or Super (either side, any spelling)."""
    return _generic(name) in MODIFIERS


def held_keys(history: Sequence[Action]) -> tuple[str, ...]:
    """The keys still held down after ``history`` (the actions executed so far, in order), as
    the model named them, in the order they went down."""
    held: list[str] = []
    for done in history:
        if isinstance(done, KeyDown):
            if not any(same_key(done.key, k) for k in held):
                held.append(done.key)
        elif isinstance(done, KeyUp):
            held = [k for k in held if not same_key(done.key, k)]
    return tuple(held)


def shifted(text: str) -> str:
    """``text`` as typed with Shift held down: each key's character with Shift (letters in
    capitals, ``1`` as ``!``); what already needs Shift and what is not on the keyboard
    (pasted) unchanged."""
    return "".join(c.upper() if c.isascii() and c.isalpha() else US_SHIFTED.get(c, c)
                   for c in text)


def _chord(held: Sequence[str], keys: Sequence[str]) -> Hotkey:
    out: list[str] = list(held)
    for key in keys:
        if not any(same_key(key, k) for k in out):
            out.append(key)
    # Past Hotkey's five keys the chord is still judged whole: a copy without the check.
    return Hotkey.model_construct(keys=out, repeat=1)


def lower(action: Action, held: Sequence[str] = ()) -> tuple[Action, ...]:
    """``action`` as the presses the machine receives with ``held`` held down: a
    ``hotkey`` of one press each time (held keys added), a ``type`` (with only Shift held,
    its text in capitals) or one chord per typed key, the pointer actions unchanged (what a
    held key does to them is the caller's to say). A ``key_down`` is the chord it completes,
    a ``key_up``, a plan, a wait, a question or an answer press nothing: ``()`` for a
    ``key_up`` and a plan, the action itself for the others."""
    if isinstance(action, KeyUp | UpdatePlan):
        return ()
    if isinstance(action, Wait | AskUser):
        return (action,)
    if isinstance(action, KeyDown):
        return (_chord(held, [action.key]),)
    if isinstance(action, HoldAndTap):
        # The hold keys go down one by one before the first tap, and one that is no modifier
        # acts as it goes down (Menu opens a menu, Tab moves the focus): a press of its own.
        out: list[Action] = []
        down: list[str] = []
        for key in split_combo(action.hold):
            if not is_modifier(key):
                out.append(_chord([*held, *down], [key]))
            down.append(key)
        return (*out, *(_chord([*held, *action.hold], keys)
                         for tap in action.tap for keys in _presses([tap])))
    if isinstance(action, Hotkey):
        presses = _presses(action.keys)
        if not held and action.repeat == 1 and len(presses) == 1:
            return (action,)
        return tuple(_chord(held, keys) for _ in range(action.repeat) for keys in presses)
    if isinstance(action, Type) and held:
        if all(_generic(k) == "shift" for k in held):
            return (action.model_copy(update={"text": shifted(action.text)}),)
        return _typed_chords(action, held)
    return (action,)


def _presses(keys: Sequence[str]) -> list[list[str]]:
    """A chord as the presses it makes: X sends each key as it goes down, so in a chord of
    several keys that are no modifiers, each one before the last that types nothing (Tab,
    Menu, Backspace) acts on its own first (``tab+space`` moves the focus, then presses the
    button there): a press of it with the chord's modifiers, then the whole chord (which
    the rules read as they always have, its typing included)."""
    parts = split_combo(list(keys))
    mods = [k for k in parts if is_modifier(k)]
    others = [k for k in parts if not is_modifier(k)]
    # Space types and acts (it presses the focused button): wherever it is in the chord.
    early = [[*mods, key] for i, key in enumerate(others) if len(others) > 1 and (
        canonical_key(key) == "space" or (i < len(others) - 1 and not _types(key)))]
    # A keypad key's other meaning (Num Lock off, or Shift): the dot is also Delete.
    other = [[*mods, KEYPAD_OTHER[canonical_key(k)]] for k in others
             if canonical_key(k) in KEYPAD_OTHER]
    return [*early, list(keys), *other]


def _types(key: str) -> bool:
    """Whether ``key`` types a character (a printable key, Space, a keypad digit or sign)."""
    name = canonical_key(key)
    return (name == "space" or len(name) == 1 or name in KEYPAD_CHARS
            or re.fullmatch(r"num\d", name) is not None)


def _typed_chords(action: Type, held: Sequence[str]) -> tuple[Action, ...]:
    """A ``type`` with keys other than Shift held: each key it presses, as a chord."""
    out: list[Action] = []
    if action.clear_first:
        out += [_chord(held, ["ctrl", "a"]), _chord(held, ["backspace"])]
    for kind, chunk in split_text(action.text):
        if kind == "paste":
            out.append(_chord(held, ["ctrl", "v"]))
        elif kind == "key":
            out.append(_chord(held, [chunk]))
        elif chunk.isupper():
            out.append(_chord(held, ["shift", chunk.lower()]))
        else:
            out.append(_chord(held, [chunk]))
    if action.press_enter:
        out.append(_chord(held, ["enter"]))
    return tuple(out)


def lower_all(history: Sequence[Action]) -> tuple[list[Action], list[int]]:
    """Every action of ``history`` lowered with the keys held before it, and, for each
    prefix length of ``history`` (0 to its length), the length of its lowered form."""
    out: list[Action] = []
    ends = [0]
    held: tuple[str, ...] = ()
    for i, done in enumerate(history):
        out += lower(done, held)
        if isinstance(done, KeyDown | KeyUp):
            held = held_keys(history[: i + 1])
        ends.append(len(out))
    return out, ends
