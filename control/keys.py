"""Key names: one vocabulary for what the model writes, the hotkeys people set, and what gets
pressed.

Every spelling ("Control", "cmd", "PageDown", "Print Screen", pynput's "<esc>") resolves
through one alias table (:data:`ALIASES`) to one canonical name (:func:`canonical_key`). The
safety policy matches canonical names, a stored hotkey is written in them
("ctrl+alt+shift+escape"), and the executor and the hotkey listener convert them at their edge:
:func:`to_pyautogui` (what gets pressed) and :func:`to_pynput` (what gets listened for).
One table means a spelling cannot be known to the executor and unknown to the policy.

Modifiers have sided variants (``ctrlleft``, ``superright``...) so the executor presses the key
named; hotkeys and the policy compare the generic modifier (:func:`generic_key`), because a
chord fires whichever side is held.

pyautogui silently does nothing for a name it does not know (and for names another platform
knows, e.g. "command" on X11), so every pressed name is checked here, before anything is
pressed: an unknown key fails the whole hotkey instead of pressing half of it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "ALIASES",
    "MODIFIERS",
    "PYAUTOGUI_KEYS",
    "UnknownKeyError",
    "canonical_key",
    "chord_keys",
    "generic_key",
    "normalize_hotkey",
    "normalize_key",
    "paste_keys",
    "pynput_token",
    "select_all_keys",
    "split_combo",
    "to_pyautogui",
    "to_pynput",
    "x11_keysym_name",
]

from model.problem import HolodeskError

# pyautogui.KEY_NAMES (0.9.54), copied so this module needs no display to import.
PYAUTOGUI_KEYS: frozenset[str] = frozenset(
    [chr(c) for c in range(0x21, 0x7F) if not chr(c).isupper()]
    + [
        "accept", "add", "alt", "altleft", "altright", "apps", "backspace", "browserback",
        "browserfavorites", "browserforward", "browserhome", "browserrefresh", "browsersearch",
        "browserstop", "capslock", "clear", "convert", "ctrl", "ctrlleft", "ctrlright", "decimal",
        "del", "delete", "divide", "down", "end", "enter", "esc", "escape", "execute", "final",
        "fn", "hanguel", "hangul", "hanja", "help", "home", "insert", "junja", "kana", "kanji",
        "launchapp1", "launchapp2", "launchmail", "launchmediaselect", "left", "modechange",
        "multiply", "nexttrack", "nonconvert", "num0", "num1", "num2", "num3", "num4", "num5",
        "num6", "num7", "num8", "num9", "numlock", "pagedown", "pageup", "pause", "pgdn", "pgup",
        "playpause", "prevtrack", "print", "printscreen", "prntscrn", "prtsc", "prtscr", "return",
        "right", "scrolllock", "select", "separator", "shift", "shiftleft", "shiftright", "sleep",
        "space", "stop", "subtract", "tab", "up", "volumedown", "volumemute", "volumeup", "win",
        "winleft", "winright", "yen", "command", "option", "optionleft", "optionright",
    ]
    + [f"f{i}" for i in range(1, 25)]
)

#: The generic modifiers, in the order a combination is written.
MODIFIERS: tuple[str, ...] = ("ctrl", "alt", "shift", "super")

# Spellings of each generic modifier. "super" is the system modifier: Command on macOS, the
# Windows/Super key elsewhere.
_MODIFIER_STEMS: Mapping[str, tuple[str, ...]] = {
    "ctrl": ("ctrl", "control", "ctl", "strg"),
    "alt": ("alt", "option", "opt"),
    "shift": ("shift",),
    "super": ("super", "win", "windows", "cmd", "command", "meta", "os", "logo", "mod4"),
}
_SIDES = ("left", "right")


def _add(table: dict[str, str], spelling: str, canonical: str) -> None:
    if table.setdefault(spelling, canonical) != canonical:
        raise AssertionError(f"key alias {spelling!r} names two keys")


def _modifier_aliases(table: dict[str, str]) -> None:
    # Every side spelling of every stem: ctrlleft (pyautogui), control_l (X11), cmd_r (pynput),
    # lctrl, rightalt... -> the sided canonical name (ctrlleft, altright, ...).
    for generic, stems in _MODIFIER_STEMS.items():
        for stem in stems:
            _add(table, stem, generic)
            for side in _SIDES:
                for mark in (side, side[0]):
                    _add(table, stem + mark, generic + side)
                    _add(table, mark + stem, generic + side)
    _add(table, "altgr", "altright")


_NAMED_ALIASES: Mapping[str, tuple[str, ...]] = {
    "escape": ("esc",),
    "enter": ("return", "ret", "cr", "newline", "kpenter", "numpadenter", "\n", "\r"),
    "delete": ("del", "forwarddelete"),
    "backspace": ("bksp", "backspc", "bs", "back"),
    "insert": ("ins",),
    "pageup": ("pgup", "prior"),
    "pagedown": ("pgdn", "pgdown", "next"),
    "up": ("arrowup", "uparrow"),
    "down": ("arrowdown", "downarrow"),
    "left": ("arrowleft", "leftarrow"),
    "right": ("arrowright", "rightarrow"),
    "space": ("spacebar", " "),
    "tab": ("\t",),
    "capslock": ("caps",),
    # The SysRq rule of the safety policy matches these two names: every spelling of the
    # key belongs here (tests/control/test_keys.py fails on one that escapes the rule).
    "printscreen": ("print", "printscr", "printscrn", "prtsc", "prtscr", "prtscn", "prntscrn",
                    "snapshot"),
    "sysrq": ("sysreq", "sysrequest"),
    "pause": ("break",),
    "menu": ("apps", "contextmenu"),
    "super": ("⌘",), "alt": ("⌥",), "shift": ("⇧",), "ctrl": ("⌃",),
    "+": ("plus",), "-": ("minus",), "=": ("equal", "equals"), ",": ("comma",),
    ".": ("period", "dot"), "/": ("slash",), "\\": ("backslash",), ";": ("semicolon",),
    "'": ("quote", "apostrophe"), "`": ("backquote", "grave"), "~": ("tilde",),
    "[": ("bracketleft",), "]": ("bracketright",),
}


def _aliases() -> dict[str, str]:
    table: dict[str, str] = {}
    _modifier_aliases(table)
    for canonical, spellings in _NAMED_ALIASES.items():
        for spelling in spellings:
            _add(table, spelling, canonical)
    return table


#: Spelling (lower case, without spaces, "_" and "-"; or one character) -> canonical name.
#: A name not in the table is its own canonical name (``f5``, ``home``, ``a``, ``power``).
ALIASES: Mapping[str, str] = _aliases()

_GENERIC = {generic + side: generic for generic in MODIFIERS for side in _SIDES}

# Canonical name -> pyautogui's name where they differ. On macOS pyautogui gives "alt" and
# "option" the same key code: the Mac's own name is used.
_PYAUTOGUI_NAMES = {"escape": "esc", "menu": "apps", "super": "win", "superleft": "winleft",
                    "superright": "winright"}
_PYAUTOGUI_MAC = _PYAUTOGUI_NAMES | {
    "super": "command", "superleft": "command", "superright": "command",
    "alt": "option", "altleft": "optionleft", "altright": "optionright",
}

# Canonical name -> pynput's Key member (only generic modifiers: a chord is side-free).
_PYNPUT_NAMES = {
    "ctrl": "ctrl", "alt": "alt", "shift": "shift", "super": "cmd",
    "escape": "esc", "enter": "enter", "tab": "tab", "space": "space",
    "backspace": "backspace", "delete": "delete", "insert": "insert",
    "home": "home", "end": "end", "pageup": "page_up", "pagedown": "page_down",
    "up": "up", "down": "down", "left": "left", "right": "right",
    "pause": "pause", "printscreen": "print_screen", "scrolllock": "scroll_lock",
    "capslock": "caps_lock", "numlock": "num_lock", "menu": "menu",
    **{f"f{n}": f"f{n}" for n in range(1, 21)},
}


class UnknownKeyError(HolodeskError, ValueError):
    """A key name we cannot map to a key pyautogui can press on this platform."""


def canonical_key(name: str) -> str:
    """The canonical name of one key as anyone spells it; an unknown name, cleaned up.

    Case, spaces, "_" and "-" do not matter, nor pynput's ``<name>`` brackets. One character
    is that key (upper case means the same key: Shift is explicit in a chord).
    """
    if name and not name.strip():
        # A blank name is the key that types it: " " is Space, "\t" Tab, "\n" Enter.
        return ALIASES.get(name[0], "space")
    text = name.strip()
    if len(text) > 2 and text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    if len(text) == 1:
        return ALIASES.get(text, text.lower())
    cleaned = re.sub(r"[\s_\-]", "", text.lower())
    return ALIASES.get(cleaned, cleaned)


def generic_key(key: str) -> str:
    """A canonical name with a sided modifier made generic (``ctrlleft`` -> ``ctrl``)."""
    return _GENERIC.get(key, key)


def split_combo(keys: Sequence[str]) -> list[str]:
    """Split entries like "ctrl+shift+t" into their keys; a lone "+" stays the plus key."""
    out: list[str] = []
    for entry in keys:
        if "+" in entry and entry.strip() != "+":
            # "ctrl++" means ctrl and the plus key: empty parts mark where a "+" was a key.
            expanded: list[str] = []
            pending_plus = False
            for part in entry.split("+"):
                if part.strip():
                    expanded.append(part.strip())
                    pending_plus = False
                elif not pending_plus and expanded:
                    expanded.append("+")
                    pending_plus = True
            out.extend(expanded)
        else:
            out.append(entry)
    return out


def chord_keys(keys: Iterable[str]) -> frozenset[str]:
    """The keys of a chord as generic canonical names ("ctrl+s" given as one key is split).

    What the policy judges and what a hotkey compares: sides and spellings do not matter.
    """
    return frozenset(generic_key(canonical_key(k)) for k in split_combo(list(keys)))


#: What a US layout types with Shift held, key by key (the layout the policy reads keys in;
#: on another layout the character differs, that something was typed does not).
US_SHIFTED: Mapping[str, str] = dict(zip("`1234567890-=[]\\;',./", '~!@#$%^&*()_+{}|:"<>?',
                                         strict=True))
#: The key each shifted symbol is on: with keys held down, a character is typed by its own key.
US_UNSHIFTED: Mapping[str, str] = {shifted: key for key, shifted in US_SHIFTED.items()}

#: What a US layout types with Shift. pyautogui presses Shift around these (its
#: ``isShiftCharacter``; on macOS Shift stays down until the symbol's key-up), so a chord that
#: holds one holds Shift too, whatever the model wrote.
SHIFTED_SYMBOLS: frozenset[str] = frozenset(US_SHIFTED.values())


#: The keypad's keys that type a character whatever Num Lock says (pyautogui's names).
KEYPAD_CHARS: Mapping[str, str] = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/",
                                   "decimal": ".", "separator": ","}
#: What a keypad key does with Num Lock off, or with Shift while it is on: its other meaning,
#: which the policy judges too (holodesk cannot see the Num Lock state; the keypad's dot is
#: Delete in a file manager).
KEYPAD_OTHER: Mapping[str, str] = {
    "decimal": "delete", "num0": "insert", "num1": "end", "num2": "down", "num3": "pagedown",
    "num4": "left", "num6": "right", "num7": "home", "num8": "up", "num9": "pageup"}


def same_key(a: str, b: str) -> bool:
    """Whether two key names name the same key for holding and releasing, whichever side and
    spelling (``ctrl_l`` and ``Control``, the model's names and pyautogui's)."""
    return generic_key(canonical_key(a)) == generic_key(canonical_key(b))


def pressed_keys(keys: Iterable[str]) -> frozenset[str]:
    """The generic keys the machine sees held for a chord: :func:`chord_keys`, plus the Shift
    that pressing a shifted symbol adds. What the policy judges."""
    chord = chord_keys(keys)
    return chord | {"shift"} if chord & SHIFTED_SYMBOLS else chord


# -- pressing: pyautogui ---------------------------------------------------------------------


def to_pyautogui(key: str, platform: str = sys.platform) -> str:
    """pyautogui's name for the canonical ``key`` on ``platform`` (``sys.platform`` values).

    Raises :class:`UnknownKeyError` for a key pyautogui cannot press.
    """
    names = _PYAUTOGUI_MAC if platform == "darwin" else _PYAUTOGUI_NAMES
    name = names.get(key, key)
    if name not in PYAUTOGUI_KEYS:
        raise UnknownKeyError(f"unknown key {key!r}")
    return name


def normalize_key(name: str, platform: str = sys.platform) -> str:
    """One model key name as the pyautogui name for ``platform`` (``sys.platform`` values).

    Single characters are kept (letters lowercased: in a hotkey "T" means the T key, and
    pyautogui would add Shift for an uppercase letter). Raises :class:`UnknownKeyError`.
    """
    key = canonical_key(name)
    try:
        return to_pyautogui(key, platform)
    except UnknownKeyError:
        if len(key) == 1 and not (key.isascii() and key.isprintable()):
            raise UnknownKeyError(
                f"cannot press non-ASCII key {name!r} (type it instead)"
            ) from None
        raise UnknownKeyError(f"unknown key {name!r}") from None


def normalize_hotkey(keys: Sequence[str], platform: str = sys.platform) -> list[str]:
    """A model hotkey as pyautogui names, in press order, without duplicates.

    Raises :class:`UnknownKeyError` (a ``ValueError``) when any key is unknown or the list is
    empty, before anything is pressed.
    """
    normalized: list[str] = []
    for name in split_combo(keys):
        key = normalize_key(name, platform)
        if key not in normalized:
            normalized.append(key)
    if not normalized:
        raise UnknownKeyError("empty hotkey")
    return normalized


def select_all_keys(platform: str = sys.platform) -> list[str]:
    """The select-all shortcut of the platform (Command+A on macOS, Ctrl+A elsewhere)."""
    return ["command", "a"] if platform == "darwin" else ["ctrl", "a"]


def paste_keys(platform: str = sys.platform) -> list[str]:
    """The paste shortcut of the platform (Command+V on macOS, Ctrl+V elsewhere)."""
    return ["command", "v"] if platform == "darwin" else ["ctrl", "v"]


# -- listening: pynput -----------------------------------------------------------------------


def pynput_token(key: str) -> str | None:
    """pynput's hotkey token for a generic canonical key (``<esc>``, ``s``), or None when a
    global hotkey cannot use it ("+" separates pynput's keys, so it cannot be one)."""
    if key in _PYNPUT_NAMES:
        return f"<{_PYNPUT_NAMES[key]}>"
    if len(key) == 1 and key.isprintable() and key != "+":
        return key
    return None


def to_pynput(keys: Iterable[str]) -> str:
    """pynput's hotkey syntax for generic canonical keys in order, e.g. ``<ctrl>+<alt>+s``.

    Raises :class:`UnknownKeyError` for a key pynput cannot listen for.
    """
    tokens: list[str] = []
    for key in keys:
        token = pynput_token(key)
        if token is None:
            raise UnknownKeyError(f"{key!r} cannot be used in a global hotkey")
        tokens.append(token)
    return "+".join(tokens)


# -- grabbing: X11 keysyms -------------------------------------------------------------------

# Canonical name -> X11 keysym name (Xlib.XK) where they differ; a printable ASCII character is
# its own keysym (Latin-1 keysyms equal their code point).
_X11_NAMES = {
    "escape": "Escape", "enter": "Return", "tab": "Tab", "space": "space",
    "backspace": "BackSpace", "delete": "Delete", "insert": "Insert", "home": "Home",
    "end": "End", "pageup": "Prior", "pagedown": "Next", "up": "Up", "down": "Down",
    "left": "Left", "right": "Right", "pause": "Pause", "printscreen": "Print",
    "sysrq": "Sys_Req", "scrolllock": "Scroll_Lock", "capslock": "Caps_Lock",
    "numlock": "Num_Lock", "menu": "Menu",
    **{f"f{n}": f"F{n}" for n in range(1, 25)},
}


def x11_keysym_name(key: str) -> str | None:
    """The X11 keysym name (for ``Xlib.XK.string_to_keysym``) of a generic canonical key that
    is not a modifier, or None when there is none; a printable ASCII character is returned as
    itself (its keysym is its code point)."""
    if key in _X11_NAMES:
        return _X11_NAMES[key]
    if len(key) == 1 and key.isascii() and key.isprintable():
        return key
    return None
