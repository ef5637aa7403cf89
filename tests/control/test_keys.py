"""The one key vocabulary: every spelling means one key to the executor, the hotkeys and the
safety policy alike, and no spelling of Print Screen or SysRq slips past the SysRq rule."""

from __future__ import annotations

import pytest

from control.hotkeys import DEFAULT_STOP_HOTKEY, HotkeyError, parse_combo
from control.keys import (
    ALIASES,
    MODIFIERS,
    PYAUTOGUI_KEYS,
    UnknownKeyError,
    canonical_key,
    chord_keys,
    generic_key,
    normalize_key,
    to_pyautogui,
)
from control.policy import ConfirmMode, SafetyPolicy
from model.schema import Hotkey

PLATFORMS = ("linux", "darwin", "win32")
# Every name the vocabulary knows: the alias table's spellings and pyautogui's own names.
SPELLINGS = sorted(set(ALIASES) | PYAUTOGUI_KEYS)
POLICIES = [SafetyPolicy(mode) for mode in ConfirmMode]


def _forbidden(keys: list[str]) -> bool:
    verdicts = [p.assess(Hotkey(keys=keys))
                for p in POLICIES]
    return all(v.forbidden for v in verdicts)


def _written(spelling: str) -> list[str]:
    # How a person or a model may write one table entry: as is, in upper and title case, and
    # in pynput's brackets.
    forms = {spelling, spelling.upper(), spelling.capitalize()}
    if len(spelling) > 1:
        forms.add(f"<{spelling}>")
    return sorted(forms)


# -- the table ---------------------------------------------------------------------------------


def test_every_alias_names_a_canonical_key() -> None:
    for spelling, key in ALIASES.items():
        assert canonical_key(key) == key, (spelling, key)
        assert canonical_key(spelling) == key, spelling


def test_sided_modifiers_are_their_generic_modifier_in_a_chord() -> None:
    for name in ("ctrlleft", "Control_R", "lalt", "altgr", "shift_r", "winleft", "cmd_r",
                 "Super_L", "optionright", "<alt_gr>", "<cmd_l>"):
        assert generic_key(canonical_key(name)) in MODIFIERS, name
    assert chord_keys(["ctrlleft", "altright", "shiftleft", "superright"]) == set(MODIFIERS)


def test_stored_hotkeys_read_back_unchanged() -> None:
    # str(Combo) is what settings and automation files hold: it must parse to itself.
    for stored in (DEFAULT_STOP_HOTKEY, "ctrl+alt+s", "alt+super+h", "pause", "ctrl+f12",
                   "ctrl+alt+pagedown", "ctrl+alt+printscreen", "ctrl+alt+menu"):
        assert str(parse_combo(stored)) == stored
    assert parse_combo(DEFAULT_STOP_HOTKEY).label() == "Ctrl+Alt+Shift+Esc"


# -- one table for the executor, the hotkeys and the policy ----------------------------------


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_alias_resolves_the_same_in_hotkeys_and_input(platform: str) -> None:
    pressed_count = listened_count = 0
    for spelling in SPELLINGS:
        judged = chord_keys(["ctrl", "alt", spelling])
        try:
            pressed = normalize_key(spelling, platform)
        except UnknownKeyError:
            pass
        else:
            # The policy judges the key the executor presses, whatever the spelling.
            assert chord_keys(["ctrl", "alt", pressed]) == judged, (spelling, pressed)
            pressed_count += 1
        try:
            combo = parse_combo(f"ctrl+alt+{spelling}")
        except HotkeyError:
            continue
        # A hotkey holds the keys the policy judges, and pynput's form reads back the same.
        assert combo.keys == judged, spelling
        assert parse_combo(combo.to_pynput()) == combo, spelling
        listened_count += 1
    assert pressed_count > 250 and listened_count > 150


# -- the SysRq rule ----------------------------------------------------------------------------

_PRINT_SCREEN = "printscreen"
# pyautogui's names of the Print Screen (SysRq) key on X11 and Windows (its KEY_NAMES), fixed
# here rather than read from the table under test.
_PYAUTOGUI_PRINT_SCREEN = frozenset({"print", "printscreen", "prntscrn", "prtsc", "prtscr"})
_ALT_SPELLINGS = sorted(s for s, key in ALIASES.items() if generic_key(key) == "alt")


def _print_screen_spellings() -> list[str]:
    """Every spelling the table resolves to Print Screen, and every name the executor would
    press as pyautogui's Print Screen key on some platform."""
    found = {_PRINT_SCREEN}
    for spelling in SPELLINGS:
        if canonical_key(spelling) == _PRINT_SCREEN:
            found.add(spelling)
        for platform in PLATFORMS:
            try:
                if to_pyautogui(canonical_key(spelling), platform) in _PYAUTOGUI_PRINT_SCREEN:
                    found.add(spelling)
            except UnknownKeyError:
                pass
    return sorted(found)


def test_the_known_spellings_of_print_screen_and_sysrq_are_in_the_table() -> None:
    for name in ("printscr", "PrintScr", "prtsc", "PrtSc", "Prt Sc", "PrtScn", "prtscr", "print",
                 "Print", "snapshot", "Snapshot", "prntscrn", "printscrn", "Print Screen",
                 "print_screen", "<print_screen>", "PRINTSCREEN"):
        assert canonical_key(name) == _PRINT_SCREEN, name
    for name in ("sysrq", "SysRq", "Sys Rq", "Sys_Req", "sysreq", "SysRequest", "<sysrq>"):
        assert canonical_key(name) == "sysrq", name


@pytest.mark.parametrize("spelling", _print_screen_spellings())
def test_no_spelling_of_print_screen_escapes_the_sysrq_rule(spelling: str) -> None:
    for written in _written(spelling):
        for alt in _ALT_SPELLINGS:
            assert _forbidden([alt, written, "b"]), (alt, written)
        assert _forbidden([f"alt+{written}+o"]), written
        assert _forbidden(["s", written, "Alt"]), written
        # Alt+Print Screen alone is a window screenshot, not SysRq.
        assert not _forbidden(["alt", written]), written


@pytest.mark.parametrize(
    "spelling", sorted({"sysrq"} | {s for s, key in ALIASES.items() if key == "sysrq"})
)
def test_no_spelling_of_sysrq_escapes_the_sysrq_rule(spelling: str) -> None:
    for written in _written(spelling):
        assert _forbidden([written]), written
        assert _forbidden(["alt", written, "b"]), written
