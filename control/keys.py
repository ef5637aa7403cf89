"""Key names: from what the model writes ("Control", "cmd", "PageDown") to pyautogui's names.

pyautogui silently does nothing for a name it does not know (and for names another platform
knows, e.g. "command" on X11), so every name is normalized and checked here, before anything
is pressed: an unknown key fails the whole hotkey instead of pressing half of it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

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

# Spellings models use, after lowercasing and dropping spaces, "_" and "-".
_ALIASES: dict[str, str] = {
    "control": "ctrl", "ctl": "ctrl", "strg": "ctrl",
    "lctrl": "ctrlleft", "leftctrl": "ctrlleft", "controlleft": "ctrlleft",
    "leftcontrol": "ctrlleft", "rctrl": "ctrlright", "rightctrl": "ctrlright",
    "controlright": "ctrlright", "rightcontrol": "ctrlright",
    "lshift": "shiftleft", "leftshift": "shiftleft", "rshift": "shiftright",
    "rightshift": "shiftright",
    "lalt": "altleft", "leftalt": "altleft", "ralt": "altright", "rightalt": "altright",
    "altgr": "altright",
    "return": "enter", "ret": "enter", "cr": "enter", "newline": "enter",
    "escape": "esc",
    "del": "delete", "forwarddelete": "delete",
    "bksp": "backspace", "backspc": "backspace", "bs": "backspace",
    "ins": "insert",
    "pgup": "pageup", "prior": "pageup", "pgdown": "pagedown", "pgdn": "pagedown",
    "next": "pagedown",
    "arrowup": "up", "uparrow": "up", "arrowdown": "down", "downarrow": "down",
    "arrowleft": "left", "leftarrow": "left", "arrowright": "right", "rightarrow": "right",
    "spacebar": "space",
    "caps": "capslock",
    "printscr": "printscreen", "print": "printscreen", "prtsc": "printscreen",
    "prtscr": "printscreen", "prntscrn": "printscreen", "snapshot": "printscreen",
    "menu": "apps", "contextmenu": "apps",
    "plus": "+", "minus": "-", "equal": "=", "equals": "=", "comma": ",", "period": ".",
    "dot": ".", "slash": "/", "backslash": "\\", "semicolon": ";", "quote": "'",
    "apostrophe": "'", "backquote": "`", "grave": "`", "tilde": "~",
    "bracketleft": "[", "bracketright": "]",
}
# The "system" modifier: Command on macOS, the Windows/Super key elsewhere.
_SUPER = {"cmd", "command", "win", "windows", "super", "meta", "os", "logo", "mod4"}
_SUPER_LEFT = {"lcmd", "leftcmd", "cmdleft", "lwin", "leftwin", "winleft", "superleft",
               "leftsuper", "metaleft", "leftmeta", "commandleft", "leftcommand"}
_SUPER_RIGHT = {"rcmd", "rightcmd", "cmdright", "rwin", "rightwin", "winright", "superright",
                "rightsuper", "metaright", "rightmeta", "commandright", "rightcommand"}
_OPTION = {"option", "opt"}
MODIFIERS: frozenset[str] = frozenset(
    {"ctrl", "ctrlleft", "ctrlright", "shift", "shiftleft", "shiftright", "alt", "altleft",
     "altright", "win", "winleft", "winright", "command", "option", "optionleft", "optionright",
     "fn"}
)


class UnknownKeyError(HolodeskError, ValueError):
    """A key name we cannot map to a key pyautogui can press on this platform."""


def _platform_key(key: str, platform: str) -> str:
    mac = platform == "darwin"
    if key in _SUPER:
        return "command" if mac else "win"
    if key in _SUPER_LEFT:
        return "command" if mac else "winleft"
    if key in _SUPER_RIGHT:
        return "command" if mac else "winright"
    if key in _OPTION:
        return "option" if mac else "alt"
    if not mac and key in {"optionleft", "optionright"}:
        return "altleft" if key == "optionleft" else "altright"
    return key


def normalize_key(name: str, platform: str = sys.platform) -> str:
    """One model key name as the pyautogui name for ``platform`` (``sys.platform`` values).

    Single characters are kept (letters lowercased: in a hotkey "T" means the T key, and
    pyautogui would add Shift for an uppercase letter). Raises :class:`UnknownKeyError`.
    """
    if len(name) == 1:
        if name.isascii() and name.isprintable():
            return name.lower() if name.isalpha() else (name if name != " " else "space")
        raise UnknownKeyError(f"cannot press non-ASCII key {name!r} (type it instead)")
    key = name.strip().lower()
    if len(key) == 1:
        return normalize_key(key, platform)
    key = key.replace(" ", "").replace("_", "").replace("-", "")
    key = _ALIASES.get(key, key)
    key = _platform_key(key, platform)
    if key not in PYAUTOGUI_KEYS:
        raise UnknownKeyError(f"unknown key {name!r}")
    return key


def split_combo(keys: Sequence[str]) -> list[str]:
    """Split entries like "ctrl+shift+t" into their keys; a lone "+" stays the plus key."""
    out: list[str] = []
    for entry in keys:
        if "+" in entry and entry.strip() != "+":
            parts = entry.split("+")
            # "ctrl++" means ctrl and the plus key: empty parts mark where a "+" was a key.
            expanded: list[str] = []
            pending_plus = False
            for part in parts:
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
