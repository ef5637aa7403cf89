"""The safety policy: which actions need the person's go-ahead, and which never run.

Deterministic rules over the parsed action, never the model's own opinion of the risk. The
rules are deliberately conservative: a false alarm costs the person one keypress, a miss can
send, pay for or delete something.

Risky (confirmed in the default ``risky`` mode):

* every action that acts in a terminal (typing, keys, clicks, scrolls, drags): a window is a
  terminal by what its processes hold (:mod:`control.procfs`), and whatever runs in front
  there may take any key or click as a command;
* hotkeys that close, quit or delete: alt+f4, ctrl+w, ctrl+f4, ctrl+q, cmd+w, cmd+q, delete,
  shift+delete, cmd+backspace / cmd+delete (move to Trash), ctrl+d (deletes in many apps and
  ends a terminal's shell), ctrl+shift+delete (clear browsing data), and the task-killing
  chords ctrl+shift+esc, ctrl+alt+esc, cmd+option+esc; ctrl+enter and cmd+enter (send in
  most mail and chat apps). Extra modifiers still match (ctrl+shift+w is ctrl+w plus shift);
* Enter after typing: ``type`` with ``press_enter``, text with a line break (typing one
  presses Enter), or an ``enter`` hotkey right after a ``type``: it may submit a form;
* an Alt+letter right after typing (a button's access key, "&Send"), and Enter, Space, text
  holding a space or an Alt+letter in a window titled like a destructive question; Enter,
  Space or an Alt+letter in any dialog (its question is in its body, unread: GTK's "Replace?"
  has no title);
* Backspace right after a select-all, and ``type`` with ``clear_first`` (Ctrl+A, Backspace):
  in a mail client or a list it deletes every selected item, as Delete does; text typed, a
  cut, a paste, Ctrl+Backspace or Enter right after a select-all (it replaces the whole
  content, which an editor that saves by itself keeps without a save key);
* a letter, Enter, Space or text while a menu is shown on the screen (the finder sees a menu
  window mapped), or, where it cannot tell, in a menu the keys and clicks since opened;
* typed text that may be a credential (:func:`secret_reasons`): typing right after pointing at
  a password-like field (password, passcode, PIN, CVV, one-time code..., also Passwort, mot de
  passe, contraseña, пароль, 密码 and other languages) or an API key or token field; typing
  after a Tab from a user name (the next field of a login form); a token mixing three
  character classes (like ``Tr0ub4dor&3``; not dates, order numbers or names like
  ``iPhone15``); a credential with a known shape (``sk-``, ``ghp_``, ``github_pat_``,
  ``xoxb-``, ``AKIA``, a JSON Web Token...); or a Luhn-valid 13-19 digit card number. The
  verdict is then marked ``secret`` so the text is hidden from logs and prompts;
* typed text that looks like a destructive or system command (sudo, rm, chmod, mkfs, dd,
  curl | sh, PowerShell, format c:, package installs, ...);
* clicks, double-clicks and drags on an element whose name contains a word such as Send,
  Submit, Pay, Buy, Order, Delete, Remove, Install, Allow (whole words, case-insensitive,
  camelCase and snake_case split first: "Sender name" and "PayPal" do not match);
* any point outside the chosen monitor.

Forbidden in every mode (never executed): ctrl+alt+delete, ctrl+alt+end (its remote-desktop
twin), ctrl+alt+backspace (kills the X session), ctrl+alt+f1..f12 (switch to a text
console), any chord with SysRq or alt+print screen plus a key (Magic SysRq: reboot, kill
all), the power, sleep and eject keys, screen locks (super+l, ctrl+alt+l, ctrl+cmd+q) and
logging out (cmd+shift+q): each either leaves the desktop the agent sees, or locks it behind
a password the agent must not type. Also forbidden: any chord containing a *reserved* hotkey
(``SafetyPolicy(reserved_hotkeys=...)``, by default holodesk's own stop hotkey,
:data:`control.hotkeys.DEFAULT_STOP_HOTKEY`): the agent must never press the person's stop.

Every rule judges what the machine receives (:mod:`control.held`): a key left down by a
``key_down`` counts as pressed with everything after it until its ``key_up`` (Ctrl held, then
``s`` typed, is Ctrl+S; Shift held types capitals), a chord repeated N times is N presses, and
a ``hold_and_tap`` is one chord per tapped key; the history is read the same way. Besides:
a click, a drag or a scroll with a key held down (a modified click), a ``key_down`` of a key
that is no modifier (it repeats while held), and a repeated chord whose later presses submit
or press a button (they answer what the first opened, unseen) are risky. A ``drag_to`` is a
drag from where the pointer is. A ``key_up`` and an ``update_plan`` are never asked nor
refused: the one only releases (refused, the key would stay down), the other does nothing.

Key names are normalized before matching by :mod:`control.keys`, the vocabulary the executor
presses with: case, control/ctl -> ctrl, option -> alt, win/cmd/command/meta/super -> super,
return -> enter, del -> delete, esc -> escape, every spelling of Print Screen and SysRq,
left/right variants of modifiers, "ctrl+s" written as one key, and the order of keys does not
matter.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from control.held import held_keys, is_modifier, lower, lower_all
from control.hotkeys import DEFAULT_STOP_HOTKEY, Combo, parse_combo
from control.input import split_text, typed_text
from control.keys import (
    KEYPAD_CHARS,
    MODIFIERS,
    US_SHIFTED,
    canonical_key,
    chord_keys,
    generic_key,
    pressed_keys,
    split_combo,
)
from control.target import NO_FINDER, Target, TargetKind
from model.run_secrets import MASK, MIN_REDACT_LEN, RunSecrets
from model.schema import (
    Action,
    Answer,
    AskUser,
    Click,
    DoubleClick,
    Drag,
    DragTo,
    HoldAndTap,
    Hotkey,
    KeyDown,
    KeyUp,
    Move,
    Scroll,
    Type,
    UpdatePlan,
    Wait,
)

__all__ = [
    "Aim",
    "ConfirmMode",
    "SafetyPolicy",
    "Verdict",
    "fold",
    "is_card_number",
    "looks_like_password",
    "mask_credentials",
    "normalize_keys",
    "risky_element_word",
    "secret_reasons",
    "secret_token_label",
    "shell_command_label",
    "submit_what",
    "typed_by",
]


class ConfirmMode(StrEnum):
    """When to ask the person before executing an action."""

    ALWAYS = "always"  # every action that does something
    RISKY = "risky"  # only what the rules flag (the default)
    NEVER = "never"  # nothing; forbidden actions are still refused


#: Why a ``drag_to`` from a pointer outside the run's monitor is refused: the model's tool
#: result, so it says what to do instead.
DRAG_START_OUTSIDE = (
    "starts the drag where the pointer is now, outside the chosen monitor (in a window this "
    "run was never shown); holodesk never drags from there: move the pointer onto the screen "
    "first with move_to, then drag"
)


@dataclass(frozen=True)
class Verdict:
    """The policy's decision on one action.

    ``reasons`` are plain words for the person, e.g. 'clicks "Delete" (it may delete
    something)'. In ``never`` mode they are still filled in (for the log) while ``confirm``
    stays False. ``secret`` means the typed text looks like a credential: show and log it
    masked.
    """

    confirm: bool
    forbidden: bool
    reasons: tuple[str, ...]
    secret: bool = False


@dataclass(frozen=True)
class Aim:
    """Where an action lands: the application that receives it (the focused window for keys
    and typing, the window under the point for the mouse) and, for a drag, the window under
    its end. The default is the platform without a target finder: every submit is risky."""

    target: Target = NO_FINDER
    drop: Target | None = None


# -- folding text before matching ------------------------------------------------------------

# Letters of other scripts that look like Latin ones: a button named "D\u0435lete" (Cyrillic
# e) reads as Delete to a person and must to the rules. NFKC already folds fullwidth forms and
# ligatures; this covers the common Cyrillic and Greek look-alikes.
_CONFUSABLES = str.maketrans({
    "\u0430": "a", "\u0432": "b", "\u0435": "e", "\u0451": "e", "\u043a": "k", "\u043c": "m",
    "\u043d": "h", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0442": "t", "\u0443": "y",
    "\u0445": "x", "\u0455": "s", "\u0456": "i", "\u0457": "i", "\u0458": "j", "\u04bb": "h",
    "\u0501": "d", "\u051b": "q", "\u051d": "w", "\u0261": "g",
    "\u0410": "A", "\u0412": "B", "\u0415": "E", "\u041a": "K", "\u041c": "M", "\u041d": "H",
    "\u041e": "O", "\u0420": "P", "\u0421": "C", "\u0422": "T", "\u0423": "Y", "\u0425": "X",
    "\u0405": "S", "\u0406": "I", "\u0408": "J",
    "\u03b1": "a", "\u03bf": "o", "\u03c1": "p", "\u03c5": "u", "\u03bd": "v", "\u03b9": "i",
    "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0396": "Z", "\u0397": "H", "\u0399": "I",
    "\u039a": "K", "\u039c": "M", "\u039d": "N", "\u039f": "O", "\u03a1": "P", "\u03a4": "T",
    "\u03a5": "Y", "\u03a7": "X",
    "\u0131": "i", "\u0269": "i", "\u1d00": "A", "\u0280": "R", "\u0585": "o", "\u0251": "a",
    "\u13a0": "D", "\u13a1": "R", "\u13a2": "T", "\u13a9": "Y", "\u13aa": "A", "\u13ac": "E",
    "\u13b3": "W", "\u13bb": "H", "\u13bd": "Y", "\u13c0": "G", "\u13c2": "h", "\u13c3": "Z",
    "\u13cf": "b", "\u13d2": "R", "\u13da": "S", "\u13de": "L", "\u13df": "C", "\u13e2": "P",
    "\u13e6": "K", "\u13f4": "B", "\u0578": "n", "\u057d": "u", "\u0561": "w",
})


def fold(text: str) -> str:
    """``text`` as the rules compare it: NFKC (fullwidth, ligatures), look-alike letters of
    other scripts as Latin, invisible format characters (zero-width spaces, direction
    overrides) dropped. Case is kept: the identifier splitting needs it."""
    return _visible_only(text).translate(_CONFUSABLES)


# -- key names -------------------------------------------------------------------------------

#: The set of canonical key names of a chord as the machine sees it held; "ctrl+s" given as one
#: key is split, and a shifted symbol ("!") brings the Shift it is typed with. The one
#: vocabulary of control.keys, so the keys judged are the keys pressed and listened for.
normalize_keys = pressed_keys


#: Chords a terminal takes as Enter: line feed and carriage return.
_LINE_SUBMITS = (frozenset({"ctrl", "j"}), frozenset({"ctrl", "m"}))
#: Chords that paste: a terminal runs a pasted line break, and the clipboard can change
#: between the check and the paste, so what is pasted cannot be judged.
_PASTES = (frozenset({"ctrl", "v"}), frozenset({"ctrl", "shift", "v"}),
           frozenset({"shift", "insert"}), frozenset({"super", "v"}), frozenset({"paste"}))
#: Chords a shell's line editor takes without running anything: moving, editing and recalling
#: the line, interrupting, copying. Where the target may be a terminal but is not known (no
#: window found, no finder) any other chord after typing may run the line (readline binds
#: ctrl+o to operate-and-get-next, xterm sends a line feed for ctrl+shift+j), so it is
#: confirmed. In a known terminal every action asks, these too: a program in front may bind
#: any key (nano's ctrl+k cuts a line, a multiplexer's prefix takes the next key).
_TERMINAL_QUIET = frozenset(frozenset(k.split("+")) for k in (
    "up", "down", "left", "right", "home", "end", "pageup", "pagedown", "tab", "backspace",
    "escape", "shift+up", "shift+down", "shift+left", "shift+right", "shift+pageup",
    "shift+pagedown", "shift+tab", "ctrl+left", "ctrl+right", "alt+left", "alt+right",
    "ctrl+c", "ctrl+shift+c", "ctrl+l", "ctrl+a", "ctrl+e", "ctrl+b", "ctrl+f", "ctrl+u",
    "ctrl+k", "ctrl+r", "ctrl+s", "ctrl+g", "ctrl+p", "ctrl+n", "ctrl+backspace", "alt+b",
    "alt+f", "ctrl+shift+f", "ctrl+shift+t", "ctrl+shift+n",
))

#: Keys that change a shell's line without holodesk typing it: history and completion.
_LINE_EDITS = {
    frozenset({"up"}): "Up (shell history)", frozenset({"down"}): "Down (shell history)",
    frozenset({"ctrl", "r"}): "ctrl+r (history search)", frozenset({"ctrl", "p"}): "ctrl+p "
    "(shell history)", frozenset({"ctrl", "n"}): "ctrl+n (shell history)",
    frozenset({"tab"}): "Tab (completion)", frozenset({"alt", "."}): "alt+. (last argument)",
    frozenset({"pageup"}): "PageUp (shell history)", frozenset({"ctrl", "y"}): "ctrl+y (yank)",
    **{frozenset(k.split("+")): f"{k} (moves or deletes in the line)" for k in (
        "left", "right", "home", "end", "backspace", "delete", "ctrl+a", "ctrl+e", "ctrl+b",
        "ctrl+f", "ctrl+u", "ctrl+k", "ctrl+w", "ctrl+h", "ctrl+d", "alt+b", "alt+f", "alt+d",
        "ctrl+left", "ctrl+right", "ctrl+backspace", "escape")},
}

def _opens_menu(chord: frozenset[str]) -> int:
    """How many menu levels a press opens from the keyboard (0: it opens none), after which a
    letter, Enter or Space picks an item the policy never sees named (Move to Trash, Delete
    Message, Quit): the Menu key (with anything) and Shift+F10 open the context menu (one
    level); F10 and an Alt chord of a key that types (a mnemonic: Alt+E opens the Edit menu,
    Alt+Space the window menu) focus the menu bar and open one of its menus (two: Escape
    closes the menu and leaves the bar active); Alt pressed alone focuses the menu bar (one)."""
    mods = chord & set(MODIFIERS)
    rest = chord - mods
    if "menu" in rest or (rest == {"f10"} and mods == {"shift"}):
        return 1
    if rest == {"f10"} and not mods:
        return 2
    if "alt" in mods and mods <= {"alt", "shift"}:
        if not rest:
            return 1
        if len(rest) == 1 and _types_a_character(next(iter(rest))):
            return 2
    return 0


def _types_a_character(key: str) -> bool:
    """Whether a generic canonical key name types a character (a printable key, Space, a
    keypad digit or sign): the keys a menu's items are picked by."""
    return (key == "space" or len(key) == 1 or key in KEYPAD_CHARS
            or re.fullmatch(r"num\d", key) is not None)


def _presses_mnemonic(chord: frozenset[str]) -> bool:
    """Whether a chord may press a button by its access key ("&Delete", "_Send"): Alt with a
    key that types a character, with or without Shift, without Ctrl or Super."""
    return ("alt" in chord and not chord & {"ctrl", "super"}
            and any(_types_a_character(k) for k in chord - set(MODIFIERS)))


#: Text typed right after a select-all replaces the whole content as ``clear_first`` does; an
#: editor that saves by itself (a JetBrains IDE on leaving it, Obsidian, a web document) keeps
#: that without any save key (tests/control/test_redteam13_type_over_select_all.py).
_OVER_ALL = ("types right after selecting everything, which replaces the whole content (an "
             "editor that saves by itself keeps that without a save)")


def _selects_all_last(history: Sequence[Action]) -> bool:
    """Whether the last press of ``history`` that acts selected everything (Ctrl+A): a wait,
    a move, a scroll or a modifier pressed alone changes no selection."""
    for done in reversed(history):
        if isinstance(done, Wait | Move | Scroll | AskUser | Answer | UpdatePlan):
            continue
        if isinstance(done, Hotkey):
            chord = normalize_keys(done.keys)
            if chord <= set(MODIFIERS):
                continue
            return chord in _SELECT_WHOLE
        return False
    return False


def _switches_window(chord: frozenset[str]) -> bool:
    """Whether a chord moves the focus to another window (the desktop's Alt+Tab, Alt+`,
    Alt+Escape): a menu closes when its window loses the focus."""
    return "alt" in chord and bool(chord & {"tab", "`", "escape"})


def _moves_focus(chord: frozenset[str]) -> bool:
    """Whether a chord moves the focus to another control of the window: Tab, with Shift
    (the previous control) or Ctrl (out of a text area) as surely; not with Alt or Super (the
    desktop switches windows)."""
    return "tab" in chord and not chord & {"alt", "super"}


def submit_what(action: Action) -> str | None:
    """How ``action`` can submit a line, in words ("presses Enter"), or None if it cannot.

    Enter in any spelling or with any modifier (KP_Enter, shift+enter, ctrl+enter), the line
    feed and carriage return chords, typed text holding a line break, ``press_enter``, and
    every paste (a pasted line break submits; a middle click pastes on X11).
    """
    return _line_submit(action) or _paste(action)


def _line_submit(action: Action) -> str | None:
    if isinstance(action, Hotkey):
        chord = normalize_keys(action.keys)
        if "enter" in chord or any(s <= chord for s in _LINE_SUBMITS):
            return f"presses {'+'.join(action.keys)}"
    elif isinstance(action, Type):
        if action.press_enter:
            return "presses Enter after typing"
        if "\n" in typed_text(action.text):
            return "types a line break (the Enter key)"
    return None


def _paste(action: Action) -> str | None:
    if isinstance(action, Hotkey):
        chord = normalize_keys(action.keys)
        if any(p <= chord for p in _PASTES):
            shown = "+".join(action.keys)
            return f"pastes with {shown} (the clipboard can change before the paste)"
    elif isinstance(action, Click) and action.button == "middle":
        return "middle-clicks, which pastes the selection"
    return None


def _since_submit(history: Sequence[Action]) -> list[Action]:
    """The actions after the last one that could submit a line (all of them if none could)."""
    out: list[Action] = []
    for done in reversed(history):
        if _line_submit(done) is not None:
            break
        out.append(done)
    out.reverse()
    return out


def _typed_since_submit(history: Sequence[Action]) -> str:
    """What was typed since the last submit: ``type`` texts, and the characters single keys
    typed (a key pressed alone types its character, as ``type`` would)."""
    return "".join(typed_text(a.text) if isinstance(a, Type) else key_text(a)
                   for a in _since_submit(history) if isinstance(a, Type | Hotkey))




def key_text(action: Action) -> str:
    """The characters a ``hotkey`` types: a chord of printable keys and Space, with or without
    Shift, types each of them in order (X sends a character for every key going down: ``w+i+
    r+e`` types "wire"; ``period`` types "." and a keypad ``num2`` "2"); keys that type
    nothing in it (a lock, a function or arrow key, Enter) are skipped, the rest still typed.
    "" for a chord with another modifier held (a shortcut, not typing). A repeated chord types
    its characters that many times; a ``hold_and_tap`` or a ``key_down`` types what its chords
    type (with Shift held, capitals). Keys held down by earlier steps are the caller's to add
    (:func:`typed_by`)."""
    if isinstance(action, HoldAndTap | KeyDown) or (
            isinstance(action, Hotkey) and action.repeat > 1):
        return "".join(key_text(press) for press in lower(action))
    if not isinstance(action, Hotkey):
        return ""
    chord = normalize_keys(action.keys)
    if chord & (set(MODIFIERS) - {"shift"}):
        return ""
    shift = "shift" in chord
    out: list[str] = []
    for key in split_combo(list(action.keys)):
        name = canonical_key(key)
        if generic_key(name) == "shift":
            continue
        if name == "space":
            out.append(" ")
            continue
        char = key.strip() if len(key.strip()) == 1 else name
        keypad = re.fullmatch(r"num(\d)", name)
        if keypad:
            char = keypad.group(1)
        elif name in KEYPAD_CHARS:
            char = KEYPAD_CHARS[name]
        if len(char) == 1 and char.isprintable():
            if shift:
                char = char.upper() if char.isalpha() else US_SHIFTED.get(char, char)
            out.append(char)
    return "".join(out)


def typed_by(action: Action, history: Sequence[Action] = ()) -> str:
    """The characters ``action`` types after ``history`` (the keys it left held down count:
    ``type "abc"`` with Shift held types "ABC", a chord's keys with Ctrl held type nothing)."""
    return "".join(typed_text(a.text) if isinstance(a, Type) else key_text(a)
                   for a in lower(action, held_keys(history)))


#: Keys the window manager or the desktop takes with Alt for itself, whichever window has the
#: focus (switch, window menu, run dialog); Alt+F4 acts on the focused window, the one judged.
_ALT_GLOBAL = frozenset({"tab", "space", "escape", "`", "f1", "f2", "f3", "f5", "f6", "f7", "f8",
                         "f9", "f10", "f11", "f12"})


def _leaves_confinement(presses: Sequence[Action]) -> list[str]:
    """Why the presses of one action may act outside the window they were judged for, in a
    run confined by ``only_in``: the rule reads the window focused before the action, so
    every press after the first may reach another window (a closed window gives the focus to
    the next one, a switch moves it), and the desktop acts on Super, Ctrl+Alt and Alt chords
    itself, whichever window has the focus."""
    keys = [p for p in presses if isinstance(p, Hotkey)]
    out: list[str] = []
    if len(keys) > 1:
        out.append(f"presses {len(keys)} keys or chords in one step: this run may act only in "
                   "some applications, and after the first the focus may be elsewhere")
    for press in keys:
        chord = normalize_keys(press.keys)
        mods = {generic_key(k) for k in chord} & set(MODIFIERS)
        rest = {k for k in chord if generic_key(k) not in MODIFIERS}
        if "super" in mods or {"ctrl", "alt"} <= mods or (
                mods == {"alt"} and rest & _ALT_GLOBAL):
            out.append(f"presses {'+'.join(press.keys)}, which the desktop may act on outside "
                       "the focused window: this run may act only in some applications")
    return out


def _field_context(history: Sequence[Action]) -> tuple[str | None, str | None]:
    """The element last clicked (the field typed into) and what was typed since, Tab presses as
    "\t", for the secret rules; the field is forgotten once a Tab moved on from it."""
    typed: list[str] = []
    field: str | None = None
    for done in reversed(history):
        if isinstance(done, Click | DoubleClick):
            field = done.element
            break
        if isinstance(done, Type):
            typed.append(typed_text(done.text))
        elif isinstance(done, Hotkey) and normalize_keys(done.keys) == {"tab"}:
            typed.append("\t")
        elif key_text(done):
            typed.append(key_text(done))
        elif _line_submit(done) is not None:
            break
    before = "".join(reversed(typed))
    if "\t" in before:
        field = None
    return field, before or None


def _entered_since_submit(history: Sequence[Action]) -> bool:
    """Whether text was typed (with ``type`` or key by key) or pasted since the last line
    submit: Enter may send it."""
    return any(isinstance(a, Type | Drag | DragTo) or _paste(a) or key_text(a)
               for a in _since_submit(history))


def _keystream_since_submit(history: Sequence[Action]) -> str:
    """What the keyboard typed since the last submit, Tab keys as "\t": the focus moves with
    a Tab, and what is typed after it goes to the next control."""
    return "".join(typed_text(a.text) if isinstance(a, Type)
                   else "\t" if isinstance(a, Hotkey) and _moves_focus(normalize_keys(a.keys))
                   else key_text(a)
                   for a in _since_submit(history))


def _line_edits(history: Sequence[Action]) -> list[str]:
    """What changed the line since the last submit other than holodesk's typing."""
    found: list[str] = []
    for done in _since_submit(history):
        if _paste(done):
            found.append("a paste")
        elif isinstance(done, Hotkey):
            chord = normalize_keys(done.keys)
            found += [what for keys, what in _LINE_EDITS.items() if keys == chord]
        elif isinstance(done, Type) and "\t" in typed_text(done.text):
            found.append("Tab (completion)")
        elif isinstance(done, Type) and done.clear_first:
            found.append("'clear first' (ctrl+a, Backspace: in a shell it clears nothing)")
        elif isinstance(done, Click | DoubleClick | Drag | DragTo):
            found.append("a click (it may move the cursor or select and paste text)")
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class _ChordRule:
    keys: frozenset[str]
    what: str


def _rule(spec: str, what: str) -> _ChordRule:
    return _ChordRule(chord_keys([spec]), what)


_FORBIDDEN_CHORDS: tuple[_ChordRule, ...] = (
    _rule("ctrl+alt+delete", "opens the system security screen"),
    _rule("ctrl+alt+end", "opens the system security screen of a remote desktop"),
    _rule("ctrl+alt+backspace", "kills the graphical session"),
    *(
        _rule(f"ctrl+alt+f{n}", "switches to a text console, away from the desktop")
        for n in range(1, 13)
    ),
    _rule("super+l", "locks the screen, which only a password can undo"),
    _rule("ctrl+alt+l", "locks the screen, which only a password can undo"),
    _rule("ctrl+super+q", "locks the screen, which only a password can undo"),
    _rule("super+shift+q", "logs the person out"),
    _rule("sysrq", "is a Magic SysRq combination (can reboot or kill everything)"),
    _rule("power", "presses the power key"),
    _rule("sleep", "presses the sleep key"),
    _rule("eject", "presses the eject key (shutdown and restart chords on a Mac)"),
)

_RISKY_CHORDS: tuple[_ChordRule, ...] = (
    _rule("alt+f4", "closes the window"),
    _rule("ctrl+w", "closes the tab or window"),
    _rule("super+w", "closes the tab or window"),
    _rule("ctrl+f4", "closes the tab or document"),
    _rule("ctrl+q", "quits the application"),
    _rule("super+q", "quits the application"),
    _rule("delete", "deletes the selection"),
    _rule("shift+delete", "deletes the selection permanently"),
    _rule("super+backspace", "moves the selection to the Trash"),
    _rule("super+delete", "moves the selection to the Trash"),
    _rule("ctrl+d", "deletes the selection in many apps, or ends a terminal's shell"),
    _rule("ctrl+shift+delete", "opens the dialog that clears browsing data"),
    _rule("ctrl+shift+escape", "opens the task manager, which can kill programs"),
    _rule("ctrl+alt+escape", "may kill the window clicked next"),
    _rule("super+alt+escape", "opens Force Quit"),
    _rule("ctrl+enter", "sends or submits in many mail and chat apps"),
    _rule("super+enter", "sends or submits in many mail and chat apps"),
    _rule("super+d", "answers Don't Save in a Mac save sheet"),
    _rule("alt+n", "answers No or Don't Save in many dialogs"),
    _rule("alt+y", "answers Yes in many dialogs"),
)


def _matching(chord: frozenset[str], rules: Iterable[_ChordRule]) -> list[_ChordRule]:
    hits = [r for r in rules if r.keys <= chord]
    # shift+delete also contains delete: report only the most specific rule.
    return [r for r in hits if not any(r.keys < other.keys for other in hits)]


def _forbidden_chord(chord: frozenset[str]) -> list[str]:
    whats = [r.what for r in _matching(chord, _FORBIDDEN_CHORDS)]
    # alt+PrintScreen+<key> is SysRq on Linux keyboards; alt+PrintScreen alone is a screenshot.
    if {"alt", "printscreen"} <= chord and chord - set(MODIFIERS) - {"printscreen"}:
        whats.append("is a Magic SysRq combination (can reboot or kill everything)")
    return list(dict.fromkeys(whats))


# -- typed text ----------------------------------------------------------------------------

# Labels of fields whose content is a password or a one-time code, in English and the major
# languages of the desktop (whole words where words have boundaries; scripts without spaces
# between words match anywhere). Words that also mean something harmless ("parola", "clave":
# "word", "key" as in "keyword") are left out.
_PASSWORD_WORDS = (
    r"password|passwd|passcode|passphrase|pass word|pin|pin code|pwd|secret|cvv2?|cvc|"
    r"security code|one[ -]time (?:code|password)|otp|2fa|mfa|verification code|"
    r"auth(?:entication)? code|recovery code|backup code|seed phrase|recovery phrase|"
    # German, French, Spanish, Portuguese, Dutch, Polish, Swedish, Danish, Norwegian, Finnish,
    # Czech, Hungarian, Turkish, Estonian, Italian, Indonesian, Vietnamese, Slovenian, Croatian:
    r"passwort|kennwort|sicherheitscode|mot de passe|mot-de-passe|code de s[ée]curit[ée]|"
    r"contrase[ñn]a|clave de acceso|c[óo]digo de seguridad|senha|palavra[ -]passe|"
    r"c[óo]digo de seguran[çc]a|wachtwoord|has[łl]o|l[öo]senord|adgangskode|passord|"
    r"salasana|heslo|jelsz[óo]|[şs]ifre|parool|parola d'ordine|kata sandi|kata laluan|"
    r"m[ậa]t kh[ẩa]u|geslo|lozinka|"
    # Cyrillic, Greek, Hebrew, Arabic, Hindi:
    r"пароль|парола|лозинка|κωδικός|κωδικός πρόσβασης|סיסמה|كلمة المرور|كلمة السر|पासवर्ड"
)
# Chinese, Japanese, Korean, Thai: no spaces between words, so no word boundaries either.
_PASSWORD_UNSPACED = r"密码|密碼|口令|パスワード|暗証番号|비밀번호|암호|รหัสผ่าน"
_SECRET_FIELD = re.compile(
    rf"\b(?:{_PASSWORD_WORDS})\b|{_PASSWORD_UNSPACED}",
    re.IGNORECASE,
)
# Fields for machine credentials: API keys, access tokens, client secrets, private keys.
_KEY_FIELD = re.compile(
    r"\b(?:api[ -]?key|api[ -]?token|access[ -]?key|secret[ -]?key|private[ -]?key|"
    r"access[ -]?token|auth(?:entication)?[ -]?token|bearer(?:[ -]?token)?|token|"
    r"personal access token|client[ -]?secret|app(?:lication)? password|"
    r"licen[cs]e key|product key|signing key|webhook secret)\b",
    re.IGNORECASE,
)
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|www\.)", re.IGNORECASE)
# A bare domain ("example2.com/a-b") counts only in lower case: "P4ss.word" stays suspect.
_DOMAIN = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?:[/:?#]\S*)?$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.IGNORECASE)
_PATH = re.compile(r"^(?:[a-z]:[\\/]|\\\\|~[\\/]|\.{0,2}/)", re.IGNORECASE)
# Punctuation ordinary words and names carry ("Jean-Pierre", "O'Brien", "e.g."): no class.
_WORD_PUNCT = frozenset("-'.,")


# What a login form's first field takes: an e-mail address, or a user name with a dot, an
# underscore or a domain (john.doe, j_doe, CORP\jdoe). A bare word before a Tab ("Alice") is
# more often a spreadsheet cell than a login: it does not count.
_LOGIN = re.compile(r"^(?:[^@\s]+@[^@\s]+|[A-Za-z][\w-]*(?:[._\\][A-Za-z][\w-]*)+)$")
# Machine credentials with a recognisable shape, anywhere in the text (an "export KEY=..."
# line carries one too).
_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        ("an OpenAI-style secret key", r"\bsk-(?:proj-|ant-|live-)?[A-Za-z0-9_-]{16,}"),
        ("a Stripe secret key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
        ("a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"),
        ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
        ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("an AWS access key", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
        ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
        ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
        ("an npm token", r"\bnpm_[A-Za-z0-9]{36}"),
        ("a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
        ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    )
)
# Ordinary tokens that mix three character classes: a product or version name starting in
# lower case (iPhone15, macOS14: passwords start with the capital a password rule demands), a
# date or time (2026-03-14T10:00), an order or reference number (Order#12345, INV-2024-0042).
_ORDINARY_MIXED = (
    re.compile(r"^[a-z][A-Z][a-z]+\d{1,4}$|^[a-z]+[A-Z]{2,}\d{1,3}$"),
    re.compile(
        r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}"
        r"(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$"
    ),
    re.compile(
        r"^(?:order|invoice|inv|ref|reference|po|no|nr|num|id|ticket|case|booking|tracking|"
        r"sku|item|issue|bug|pr|bestellung|rechnung|commande|facture|pedido|factura)"
        r"\.?\s?[#:/-]?\s?[A-Z]{0,3}\d+(?:[-/]\d+)*$",
        re.IGNORECASE,
    ),
)


def looks_like_password(text: str) -> bool:
    """Whether ``text`` is one 8-64 character token mixing at least three character classes.

    The classes are lower case, upper case, digits and symbols other than word punctuation
    (- ' . ,). URLs, e-mail addresses, paths, dates, order numbers and lower-case product names
    (iPhone15) are excluded. A passphrase of plain words is not caught: the password-field and
    Tab rules are the net for those.
    """
    t = text.strip()
    if not 8 <= len(t) <= 64 or any(c.isspace() for c in t):
        return False
    if _URL.match(t) or _DOMAIN.match(t) or _EMAIL.match(t) or _PATH.match(t):
        return False
    if any(pattern.match(t) for pattern in _ORDINARY_MIXED):
        return False
    classes = (
        any(c.islower() for c in t),
        any(c.isupper() for c in t),
        any(c.isdigit() for c in t),
        any(not c.isalnum() and c not in _WORD_PUNCT for c in t),
    )
    return sum(classes) >= 3


# 13-19 digits, optionally grouped by single spaces or dashes, not inside a longer number.
_CARD = re.compile(r"(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)")
# Grouped by dots only in the card's own groups (4-4-4-4, 4-6-5, 4-4-4-4-3): a dot between
# any digits would take decimals and version numbers for cards.
_DOTTED_CARD = re.compile(r"(?<![\d.])\d{4}\.\d{4,6}\.\d{4,5}(?:\.\d{1,4})?(?![\d.]?\d)")


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def is_card_number(text: str) -> bool:
    """Whether ``text`` contains a Luhn-valid 13-19 digit number (grouped by spaces, dashes
    or dots, or not at all)."""
    for match in (*_CARD.finditer(text), *_DOTTED_CARD.finditer(text)):
        digits = re.sub(r"[ .-]", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn_ok(digits):
            return True
    return False


def secret_token_label(text: str) -> str | None:
    """What kind of machine credential ``text`` contains (an API key, a token), or None."""
    for label, pattern in _TOKENS:
        if pattern.search(text):
            return label
    return None


def mask_credentials(text: str, mask: str = "***") -> str:
    """``text`` with every machine credential of a known shape (the :func:`secret_token_label`
    kinds) replaced by ``mask``: for text leaving the machine, such as a problem report."""
    for _label, pattern in _TOKENS:
        text = pattern.sub(mask, text)
    return text


def _after_login_tab(text: str, typed_before: str | None) -> bool:
    """Whether (part of) ``text`` goes into the field a Tab moved to from a user name."""
    if typed_before is not None and typed_before.endswith("\t"):
        last = typed_before[:-1].rsplit("\t", 1)[-1].strip()
        if _LOGIN.match(last) and text.strip():
            return True
    parts = text.split("\t")
    return any(
        _LOGIN.match(before.strip()) and after.strip()
        for before, after in itertools.pairwise(parts)
    )


def secret_reasons(
    text: str, *, field: str | None = None, typed_before: str | None = None
) -> list[str]:
    """Why typing ``text`` types a secret (the reasons for the person), or an empty list.

    ``field`` is the name of the element pointed at before typing (the last click), and
    ``typed_before`` the text typed since then, Tab presses as ``"\t"``: with the run's
    history a caller passes what it knows; each is optional. ``text`` is what will really be
    typed (:func:`control.input.typed_text`).
    """
    reasons: list[str] = []
    if field is not None:
        name = _split_identifier(field)
        if _KEY_FIELD.search(name):
            reasons.append(f"types into what looks like an API key or token field "
                           f"({_quoted(field)})")
        elif _SECRET_FIELD.search(name):
            reasons.append(f"types into what looks like a password field ({_quoted(field)})")
    if _after_login_tab(text, typed_before):
        reasons.append("types after a Tab from a user name, so probably into the password field")
    if looks_like_password(text):
        reasons.append("types text that looks like a password")
    token = secret_token_label(text)
    if token is not None:
        reasons.append(f"types what looks like {token}")
    if is_card_number(text):
        reasons.append("types what looks like a payment card number")
    return reasons


# A command word at the start of the text or after a shell separator (; & | ( ` $( or sudo):
# words like "kill" or "reboot" in plain prose should not count.
_CMD = r"(?:^|[;&|(`]\s*|\$\(\s*|\bsudo\s+)"
_SHELL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern, re.IGNORECASE | re.MULTILINE))
    for label, pattern in (
        ("sudo", r"\bsudo\b"),
        ("doas", r"\bdoas\b"),
        ("rm", _CMD + r"rm\s+\S"),
        ("a pipe into a shell", r"\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi|c|tc)?sh\b"),
        ("a pipe into an interpreter", r"\|\s*(?:sudo\s+)?(?:python3?|perl|ruby|node|iex)\b"),
        ("sh -c", r"\b(?:ba|z)?sh\s+-c\b"),
        ("chmod", r"\bchmod\b"),
        ("chown", r"\bchown\b"),
        ("chattr", r"\bchattr\b"),
        ("mkfs", r"\bmkfs\b"),
        ("dd", r"\bdd\b[^\n]*\b(?:if|of)="),
        ("a redirect into a device", r">\s*/dev/(?!null\b)"),
        ("a fork bomb", r":\s*\(\s*\)\s*\{"),
        ("PowerShell", r"\b(?:powershell|pwsh)\b"),
        ("cmd /c", r"\bcmd(?:\.exe)?\s+/[ck]\b"),
        ("Remove-Item", r"\bremove-item\b"),
        ("Invoke-Expression", r"\binvoke-expression\b|" + _CMD + r"iex\b"),
        ("Set-ExecutionPolicy", r"\bset-executionpolicy\b"),
        ("format", r"\bformat(?:\.com)?\s+[a-z]:"),
        ("del /s", r"\b(?:del|erase|rd|rmdir)\s+/[sqf]\b"),
        ("reg", r"\breg(?:\.exe)?\s+(?:add|delete|import)\b"),
        ("shutdown", _CMD + r"(?:shutdown|reboot|poweroff|halt)\b"),
        # "kill" is an English word: only with a signal or a process id.
        ("kill", _CMD + r"(?:kill\s+(?:-\w+\s+)*%?\d|killall\s+\S|pkill\s+\S|taskkill\b)"),
        ("systemctl", r"\bsystemctl\b"),
        ("launchctl", r"\blaunchctl\b"),
        ("crontab", r"\bcrontab\b"),
        ("diskutil", r"\bdiskutil\s+(?:erase|partition|zero|secureerase)"),
        (
            "a package install",
            r"\b(?:apt|apt-get|dnf|yum|zypper|pacman|brew|snap|flatpak|pip3?|npm|winget|choco)"
            r"\s+(?:install|remove|uninstall|purge|-S|-R)\b",
        ),
        (
            "git history rewrite",
            r"\bgit\s+(?:push\b[^\n]*(?:--force|\s-f\b)|reset\s+--hard|clean\s+-\w*f)",
        ),
        (
            "a destructive SQL statement",
            r"\b(?:drop\s+(?:table|database|schema)|truncate\s+table)\b",
        ),
        ("base64 -d", r"\bbase64\s+(?:-d|--decode)\b"),
    )
)


def shell_command_label(text: str) -> str | None:
    """A short name of the first destructive or system command found in ``text``, or None."""
    for label, pattern in _SHELL_PATTERNS:
        if pattern.search(text):
            return label
    return None


# -- element names ---------------------------------------------------------------------------

# Whole words (regex alternatives), case-insensitive, matched after fold(). English first, then
# German, French, Spanish, Portuguese, Italian, Dutch and Russian.
_RISKY_WORDS: tuple[tuple[str, str], ...] = (
    (
        "send|submit|confirm|post|publish|reply all|run|run cell|run all|execute|"
        "senden|absenden|abschicken|bestätigen|envoyer|soumettre|valider|confirmer|enviar|"
        "confirmar|publicar|inviare|invia|conferma|pubblica|verzenden|versturen|bevestigen|"
        "отправить|подтвердить|опубликовать",
        "may send or submit something",
    ),
    (
        "pay|buy|purchase|order|checkout|check out|transfer|donate|subscribe|"
        "bezahlen|kaufen|bestellen|kaufen|überweisen|payer|acheter|commander|pagar|comprar|"
        "pedir|pagare|acquista|acquistare|ordina|betalen|kopen|bestellen|оплатить|купить|"
        "заказать|перевести",
        "may spend money",
    ),
    (
        "delete|remove|uninstall|format|erase|wipe|discard|trash|reset|empty trash|"
        "clear (?:all|history|data)|"
        "löschen|entfernen|deinstallieren|verwerfen|leeren|formatieren|supprimer|effacer|"
        "retirer|désinstaller|eliminar|borrar|quitar|desinstalar|descartar|excluir|apagar|"
        "remover|elimina|eliminare|cancella|rimuovi|disinstalla|verwijderen|wissen|"
        "удалить|очистить|стереть|форматировать",
        "may delete something",
    ),
    (
        "install|allow|grant|authorize|authorise|trust|"
        "installieren|erlauben|zulassen|autoriser|permitir|instalar|consenti|"
        "installa|autorizza|toestaan|installeren|установить|разрешить",
        "may install software or grant a permission",
    ),
    (
        "ok|okay|yes|continue|proceed|accept|agree|"
        "ja|weiter|fortfahren|akzeptieren|oui|continuer|accepter|sí|si|sim|continuar|aceptar|"
        "aceitar|avanti|accetta|doorgaan|да|продолжить|принять",
        "may answer a confirmation",
    ),
    (
        "overwrite|replace|don't save|dont save|do not save|close without saving|"
        "without saving|don't keep|revert|"
        "überschreiben|ersetzen|nicht speichern|écraser|remplacer|ne pas enregistrer|"
        "sobrescribir|reemplazar|no guardar|substituir|não salvar|sovrascrivi|sostituisci|"
        "non salvare|overschrijven|vervangen|niet opslaan|заменить|перезаписать|не сохранять",
        "may destroy unsaved or existing work",
    ),
    (
        "log out|logout|log off|sign out|shut down|shutdown|power off|restart|reboot|"
        "force quit|end task|end process|kill|terminate|hibernate|suspend|"
        "abmelden|herunterfahren|neu starten|ausschalten|se déconnecter|éteindre|"
        "redémarrer|cerrar sesión|apagar|reiniciar|encerrar sessão|desligar|esci|spegni|"
        "riavvia|afmelden|afsluiten|herstarten|выйти|выключить|перезагрузить|завершить",
        "may end the session, a program or the computer",
    ),
)
_RISKY_ELEMENT = tuple(
    (re.compile(rf"(?<!\w)(?:{words})(?!\w)", re.IGNORECASE), what)
    for words, what in _RISKY_WORDS
)
# Chinese and Japanese have no spaces between words: their button words match anywhere.
_RISKY_CJK: tuple[tuple[str, str], ...] = (
    ("发送|提交|確認|确认|送信|投稿|確定|确定", "may send or submit something"),
    ("购买|支付|付款|購入|支払|決済|注文", "may spend money"),
    ("删除|移除|卸载|清空|削除|消去|アンインストール", "may delete something"),
    ("安装|允许|授权|インストール|許可", "may install software or grant a permission"),
    ("是的|はい|好的|続行|继续", "may answer a confirmation"),
    ("覆盖|替换|不保存|上書き|置換|保存しない", "may destroy unsaved or existing work"),
    ("注销|关机|重启|ログアウト|シャットダウン|再起動", "may end the session, a program or the "
     "computer"),
)
_RISKY_CJK_ELEMENT = tuple((re.compile(words), what) for words, what in _RISKY_CJK)


def _split_identifier(name: str) -> str:
    # "deleteButton" and "btn_delete" name a Delete button as surely as "Delete button". Only
    # words starting in lower case are split: "PayPal" and "YouTube" are names, not two words.
    def split(match: re.Match[str]) -> str:
        return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", match.group())

    return re.sub(r"\b[a-z][A-Za-z0-9]*", split, name.replace("_", " "))


def risky_element_word(element: str) -> tuple[str, str] | None:
    """The first risky word in an element name and what it suggests, or None.

    Whole words only, case-insensitive, after :func:`fold` ("D\u0435lete" with a Cyrillic e is
    Delete): "Send" and "send-button" match, "Sender name", "Resend code" and "PayPal" do not.
    Confirmation buttons (OK, Yes, Continue, Overwrite, Don't Save, Log out, Shut down...) count
    too, in English and a few major languages.
    """
    # Folded for look-alikes ("D\u0435lete"), and as written for words in other scripts (the
    # folding would turn "\u0423\u0434\u0430\u043b\u0438\u0442\u044c" into a mix of both).
    for folded in (fold(element), _visible_only(element)):
        name = _split_identifier(folded).replace("\u2019", "'")
        for pattern, what in (*_RISKY_ELEMENT, *_RISKY_CJK_ELEMENT):
            match = pattern.search(name)
            if match:
                return match.group(), what
    return None


def _visible_only(text: str) -> str:
    # Format characters and combining marks left after NFKC (a grapheme joiner, a variation
    # selector) are invisible: "Del\u034fete" reads as Delete.
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if unicodedata.category(c) not in ("Cf", "Mn"))


# -- the policy ------------------------------------------------------------------------------

#: Actions that press nothing: a wait, a question, an answer, the model's plan, and a key's
#: release (releasing is always the safe way: refused or skipped, the key would stay down).
_INERT = (Wait, AskUser, Answer, UpdatePlan, KeyUp)


def _quoted(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def _click_verb(action: Click | DoubleClick | Drag | DragTo) -> str:
    if isinstance(action, DoubleClick):
        return "double-clicks"
    if isinstance(action, Drag | DragTo):
        return "drags"
    verb = {1: "clicks", 2: "double-clicks", 3: "triple-clicks"}.get(action.clicks, "clicks")
    return verb if action.button == "left" else f"{action.button}-{verb}"


#: Actions that do something to the application under the point or with the focus (a move and
#: a wait do nothing to it).
_ACTING = (Click, DoubleClick, Drag, DragTo, Scroll, Type, Hotkey, HoldAndTap, KeyDown)

# A window title that names a destructive question: Enter or Space there (with any
# modifiers, or a Space typed alone) presses its default button ("Delete 3 files?", "Empty
# Trash"); see _presses_space.

_TRASH = re.compile(r"\b(?:trash|rubbish|recycle bin|wastebasket|bin|papierkorb|corbeille|"
                    r"papelera|lixeira|cestino|prullenbak|корзина)\b|回收站|ゴミ箱",
                    re.IGNORECASE)


#: A typed text at least this long that is part of a secret parameter's value is judged a
#: secret: typed in pieces, the value would otherwise reach a page unasked.
MIN_SECRET_PIECE = 4


class SafetyPolicy:
    """Decides, by fixed rules, whether an action needs confirmation or must never run.

    The rules depend on the application that receives the action (:class:`Aim`, from
    :mod:`control.target`): in a terminal every way of submitting a line is confirmed, whatever
    the text, because the shell runs it; elsewhere the content rules judge buttons, chords,
    typed text and Enter after typing. holodesk's own windows, and the applications in
    ``never_touch``, are never acted on; with ``only_in``, nothing outside those applications is.

    ``reserved_hotkeys`` are combinations the agent must never press (holodesk's own global
    hotkeys; the stop hotkey by default): a ``hotkey`` action holding all of one's keys is
    forbidden, whatever else it holds. ``type`` cannot press them as long as each has a
    modifier other than Shift or a key typing never sends (see
    :func:`control.hotkeys.validate_stop_hotkey`).
    """

    def __init__(
        self,
        mode: ConfirmMode = ConfirmMode.RISKY,
        reserved_hotkeys: Iterable[str] = (DEFAULT_STOP_HOTKEY,),
        *,
        never_touch: Iterable[str] = (),
        only_in: Iterable[str] = (),
        secrets: RunSecrets | None = None,
    ) -> None:
        self.mode = mode
        #: The run's secrets (model/run_secrets.py), read here, never changed: typing one of
        #: its secret parameters' values is typing a secret, whatever it looks like, and the
        #: verdict's reasons (an element's name, a window's title) show every secret masked.
        self.secrets = secrets if secrets is not None else RunSecrets()
        self.reserved_hotkeys: tuple[Combo, ...] = tuple(
            parse_combo(c) for c in reserved_hotkeys
        )
        self.never_touch = tuple(never_touch)
        self.only_in = tuple(only_in)

    def _types_known_secret(self, text: str, before: str) -> bool:
        """Whether typing ``text`` types (part of) a secret parameter's value: the whole of it,
        the piece that completes it after ``before`` (typed since the last submit: a secret split
        over several steps, or pressed key by key, is judged whole, like a command), or a run of
        at least :data:`MIN_SECRET_PIECE` characters of it ending with ``text`` (a hijacked
        model knows the value and could otherwise type all but its end in pieces)."""
        if not text:
            return False
        joined = before + text
        size = max(MIN_SECRET_PIECE, len(text))
        for known in self.secrets.parameters():
            if known in text:
                return True
            at = joined.rfind(known)
            if at >= 0 and at + len(known) > len(before):
                return True
            if len(joined) >= size and joined[-size:] in known:
                return True
        return False

    def assess(
        self,
        action: Action,
        *,
        history: Sequence[Action] = (),
        outside_monitor: bool = False,
        start_outside_monitor: bool = False,
        aim: Aim = Aim(),
        asked_at: int = 0,
    ) -> Verdict:
        """:meth:`_assess`, its reasons with the run's secrets masked: they quote element
        names and window titles, which may show one, and the person reads them."""
        verdict = self._assess(action, history=history, outside_monitor=outside_monitor,
                               start_outside_monitor=start_outside_monitor, aim=aim,
                               asked_at=asked_at)
        if not self.secrets or not verdict.reasons:
            return verdict
        return dataclasses.replace(
            verdict, reasons=tuple(self._masked(r) for r in verdict.reasons))

    def _masked(self, reason: str) -> str:
        """``reason`` with the run's secrets masked, also as :func:`_quoted` shows a name (its
        double quotes made single): a form only this module writes."""
        reason = self.secrets.mask(reason)
        for form in self.secrets.forms():
            shown = form.replace('"', "'")
            if shown != form and len(shown) >= MIN_REDACT_LEN and shown in reason:
                reason = reason.replace(shown, MASK)
        return reason

    def _assess(
        self,
        action: Action,
        *,
        history: Sequence[Action] = (),
        outside_monitor: bool = False,
        start_outside_monitor: bool = False,
        aim: Aim = Aim(),
        asked_at: int = 0,
    ) -> Verdict:
        """Judge ``action`` sent to ``aim``; ``history`` is what this run did so far, in order.

        ``outside_monitor`` says the model's point had to be clamped to the chosen monitor.
        ``start_outside_monitor`` says a ``drag_to``'s start (where the pointer is now) lies
        outside the chosen monitor (or region): refused, since the button would go down in a
        window the run was never shown (the person's pointer on their other monitor).
        ``asked_at`` is how many of ``history``'s actions came before the person last answered
        a question: the rules that look back (a key that changes what typing does next, a menu
        opened from the keyboard) read everything since, never just the action before, so a
        wait, a move or a scroll in between changes nothing.
        """
        if isinstance(action, _INERT):
            # They execute nothing on the machine: the loop handles them itself (a key_up
            # releases; the executor does it whatever the policy would say).
            return Verdict(confirm=False, forbidden=False, reasons=())
        # Every rule judges what the machine receives: the keys still held down by earlier
        # key_down steps are pressed with everything this action does, a repeated chord is
        # that many presses, a hold-and-tap one chord per tap (control/held.py). The history
        # is read the same way.
        held = held_keys(history)
        past, ends = lower_all(history)
        asked = ends[max(0, min(asked_at, len(history)))]
        presses = lower(action, held)
        forbidden: list[str] = []
        hidden = secret = False
        reasons: list[str] = []
        for i, press in enumerate(presses):
            refused, hides = self._forbidden(press, aim)
            forbidden += refused
            hidden = hidden or hides
            if forbidden:
                continue
            found, typed_secret = self._judge(press, [*past, *presses[:i]], aim, asked,
                                              seen_at=len(past))
            reasons += found
            secret = secret or typed_secret
        if self.only_in:
            forbidden += _leaves_confinement(presses)
        if start_outside_monitor and isinstance(action, DragTo):
            forbidden.append(DRAG_START_OUTSIDE)
        if forbidden:
            return Verdict(confirm=False, forbidden=True,
                           reasons=tuple(dict.fromkeys(forbidden)), secret=hidden)
        reasons += _held_risks(action, held, presses)
        if outside_monitor:
            reasons.append("aims outside the chosen monitor (the point was moved to its edge)")
        reasons = list(dict.fromkeys(reasons))
        if self.mode is ConfirmMode.ALWAYS:
            why = tuple(reasons) or ("every action is confirmed (confirmation mode: always)",)
            return Verdict(confirm=True, forbidden=False, reasons=why, secret=secret)
        confirm = self.mode is ConfirmMode.RISKY and bool(reasons)
        return Verdict(confirm=confirm, forbidden=False, reasons=tuple(reasons), secret=secret)

    def _judge(self, action: Action, history: Sequence[Action], aim: Aim,
               asked_at: int, *, seen_at: int) -> tuple[list[str], bool]:
        """Why one press (or pointer action) that is not forbidden needs the person, after
        ``history`` (lowered), and whether what it types is a secret. ``history[seen_at:]``
        are the earlier presses of the same step, done after ``aim`` was found."""
        terminal = aim.target.kind is TargetKind.TERMINAL
        reasons, secret = self._risks(action, history, terminal=terminal)
        if (self.never_touch and aim.target.kind in (TargetKind.UNKNOWN, TargetKind.NO_FINDER)
                and (isinstance(action, Type) or key_text(action))):
            # Where holodesk cannot tell the application, the text may be going to one it never
            # touches (a password manager): asked, and hidden like a password.
            reasons.append(f"types where holodesk cannot tell the application "
                           f"({aim.target.label()}): it may be one holodesk never touches")
            secret = True
        # The content rules already name a submit after typing: the target rule adds the target.
        flagged = _line_submit(action) is not None and (
            isinstance(action, Type) or bool(key_text(action)) or _entered_since_submit(history))
        since = history[max(0, min(asked_at, len(history))):]
        reasons += _target_risks(action, aim, history, since, history[seen_at:],
                                 has_submit_reason=flagged)
        return reasons, secret

    def _forbidden(self, action: Action, aim: Aim) -> tuple[list[str], bool]:
        """Why ``action`` must never run, and whether what it types must be hidden like a
        password (text meant for an application holodesk never touches)."""
        out: list[str] = []
        hidden = False
        if isinstance(action, Hotkey):
            chord = normalize_keys(action.keys)
            whats = _forbidden_chord(chord)
            whats += [
                f"holds {c.label()}, the person's own hotkey (holodesk's emergency stop)"
                for c in self.reserved_hotkeys
                if c.keys <= chord
            ]
            chord_text = "+".join(action.keys)
            out += [f"{chord_text} {w}; holodesk never presses it" for w in whats]
        if not isinstance(action, _ACTING):
            return out, hidden
        targets = [aim.target] + (
            [aim.drop] if isinstance(action, Drag | DragTo) and aim.drop else [])
        for target in targets:
            if target.kind is TargetKind.HOLODESK:
                out.append(f"aims at {target.label()}: holodesk never acts on its own windows "
                           "or the terminal it runs in")
            elif self.never_touch and target.matches(self.never_touch):
                out.append(f"aims at {target.label()}, an application holodesk never touches "
                           "(setting never_touch)")
                # What was meant for a password manager is probably a password.
                hidden = hidden or isinstance(action, Type) or bool(key_text(action))
            elif self.only_in and not target.matches(self.only_in):
                out.append(f"aims at {target.label()}, but this run may act only in "
                           f"{', '.join(self.only_in)}")
        return out, hidden

    def _risks(
        self, action: Action, history: Sequence[Action], *,
        terminal: bool,
    ) -> tuple[list[str], bool]:
        reasons: list[str] = []
        secret = False
        if isinstance(action, Hotkey):
            chord = normalize_keys(action.keys)
            shown = "+".join(action.keys)
            for rule in _matching(chord, _RISKY_CHORDS):
                reasons.append(f"presses {shown}, which {rule.what}")
            text = key_text(action)
            if self._types_known_secret(text, _typed_since_submit(history)):
                reasons.append("types the value of a secret parameter, key by key")
                secret = True
            if text:
                # Keys that type characters are typing: the same rules as for `type`.
                field, typed_before = _field_context(history)
                keyed = secret_reasons(text, field=field, typed_before=typed_before)
                reasons += [f"{r} (key by key)" for r in keyed]
                secret = secret or bool(keyed)
                label = None if terminal else shell_command_label(
                    fold(_typed_since_submit(history) + text))
                if label is not None:
                    reasons.append("types what looks like a destructive or system command "
                                   f"({label}), key by key")
            if chord - {"shift"} == {"backspace"} and _selects_all_last(history):
                reasons.append(f"presses {shown} right after selecting everything, which "
                               "deletes the selection (in a mail client or a list, every "
                               "selected item, as Delete does)")
            elif text and _selects_all_last(history):
                reasons.append(f"{_OVER_ALL} (key by key)")
            elif (not _matching(chord, _RISKY_CHORDS) and _selects_all_last(history)
                  and (chord in _REMOVE_SELECTION or chord - {"shift"} in _REMOVE_SELECTION)):
                # Cut, paste, Enter or Tab over everything: the same overwrite, with no text.
                reasons.append(f"presses {shown} right after selecting everything, which "
                               "removes or replaces the whole content (an editor that saves by "
                               "itself keeps that without a save)")
            if _presses_mnemonic(chord) and _entered_since_submit(history):
                reasons.append(f"presses {shown} right after typing, which may press a form's "
                               "button by its access key (its submit, as Enter does)")
            # A chord that types and presses Enter types, then submits: as ``type`` with Enter.
            if _line_submit(action) and (key_text(action) or _entered_since_submit(history)):
                reasons.append(
                    "presses Enter right after typing, which may submit a form"
                    if chord == {"enter"} else
                    f"presses {shown} right after typing, which may submit a form or a command line"
                )
        elif isinstance(action, Type):
            # Judge what will really be typed: a control character the executor drops must not
            # hide a command from the rules ("r\x00m -rf" is typed as "rm -rf").
            action = action.model_copy(update={"text": typed_text(action.text)})
            if action.clear_first:
                reasons.append("clears first (ctrl+a, then Backspace), which deletes the "
                               "selection (in a mail client or a list, every selected item, as "
                               "Delete does)")
            elif action.text and _selects_all_last(history):
                reasons.append(_OVER_ALL)
            if action.press_enter:
                reasons.append("presses Enter after typing, which may submit a form")
            elif "\n" in action.text:
                reasons.append("types a line break, which presses Enter and may submit a form")
            field, typed_before = _field_context(history)
            typed_secret = secret_reasons(action.text, field=field, typed_before=typed_before)
            if self._types_known_secret(action.text, _typed_since_submit(history)):
                typed_secret = ["types the value of a secret parameter", *typed_secret]
            reasons += typed_secret
            secret = bool(typed_secret)
            # A command split over several type actions is judged whole. In a terminal the
            # submit is what runs it, and every submit there is confirmed with the typed line.
            label = None if terminal else shell_command_label(
                fold(_typed_since_submit(history) + action.text))
            if label is not None:
                reasons.append(f"types what looks like a destructive or system command ({label})")
        elif isinstance(action, Click | DoubleClick | Drag | DragTo):
            found = risky_element_word(action.element)
            if found is not None:
                _, what = found
                reasons.append(f"{_click_verb(action)} {_quoted(action.element)} (it {what})")
        elif isinstance(action, Move | Scroll):
            pass  # neither activates anything
        return reasons, secret


def _held_risks(action: Action, held: Sequence[str],
                presses: Sequence[Action]) -> list[str]:
    """What keys held down, and presses repeated within one step, add to an action."""
    out: list[str] = []
    shown = "+".join(held)
    if held and isinstance(action, Click | DoubleClick | Drag | DragTo):
        out.append(f"{_click_verb(action)} {_quoted(action.element)} with {shown} held down: a "
                   "modified click may open, select, copy or delete other than a plain click")
    elif held and isinstance(action, Scroll):
        out.append(f"scrolls {action.direction} with {shown} held down: a modified scroll may "
                   "zoom, switch tabs or change values")
    if isinstance(action, KeyDown) and not is_modifier(action.key):
        out.append(f"holds {action.key} down until it is released: a key held down repeats, "
                   "typing or acting again and again with nobody looking")
    if isinstance(action, Hotkey | HoldAndTap) and len(presses) > 1:
        answering = [p for p in presses[1:] if isinstance(p, Hotkey) and (
            submit_what(p) or normalize_keys(p.keys) & {"space", "enter"})]
        if answering:
            keys = "+".join(answering[0].keys) if isinstance(answering[0], Hotkey) else ""
            out.append(f"presses {keys} {len(presses)} times in one step: each press after the "
                       "first answers whatever the one before opened (a question, a dialog), "
                       "unseen")
    return out


def _target_risks(action: Action, aim: Aim, history: Sequence[Action],
                  since: Sequence[Action], this_step: Sequence[Action], *,
                  has_submit_reason: bool) -> list[str]:
    """The rules that depend on the receiving application; ``since`` is the part of
    ``history`` after the person last answered a question."""
    target = aim.target
    kind = target.kind
    reasons: list[str] = []
    submit = submit_what(action)
    maybe_terminal = kind in (TargetKind.UNKNOWN, TargetKind.NO_FINDER)
    if kind is TargetKind.TERMINAL and isinstance(action, _ACTING):
        reasons += _in_terminal(action, target, history, since, submit)
    elif maybe_terminal and submit and not has_submit_reason:
        reasons.append(f"{submit} in {target.label()}: it may run or send something")
    elif (maybe_terminal and isinstance(action, Hotkey)
          and normalize_keys(action.keys) not in _TERMINAL_QUIET
          and _line_touched_since_submit(history)):
        reasons.append(f"presses {'+'.join(action.keys)} after typing in {target.label()}: if "
                       "it is a terminal, keys like this may run the typed line")
    if maybe_terminal:
        reasons += _after_escape(action, target, since)
    if (_presses_space(action) and kind is not TargetKind.TERMINAL
            and _entered_since_submit(history)):
        reasons.append("presses Space after typing, which presses the focused button (it may "
                       "submit a form)")
    if (isinstance(action, Hotkey | Type) and kind is not TargetKind.TERMINAL
            and _picks_in_a_menu(action) and _menu_shown(target, since, this_step)):
        reasons.append(f"{_doing(action)} in a menu (shown on the screen, or opened from the "
                       "keyboard or with a click), which picks an item holodesk cannot see "
                       "(it may delete something)")
    if (isinstance(action, Hotkey) and kind is not TargetKind.TERMINAL
            and normalize_keys(action.keys) == {"ctrl", "s"} and _content_replaced(history)):
        reasons.append("saves after the whole content was selected and replaced or removed "
                       "(it may save an emptied document)")
    if kind is not TargetKind.TERMINAL and _tab_then_space(action, history):
        reasons.append("types Tab then Space, which presses the next button (it may submit a "
                       "form): Shift+Tab moves the focus as Tab does, and Enter presses a "
                       "button as Space does")
    if (target.dialog and isinstance(action, Type | Hotkey)
            and normalize_keys(action.keys if isinstance(action, Hotkey) else [])
            not in _DIALOG_QUIET):
        found = risky_element_word(target.title)
        if found is not None:
            reasons.append(f"{_doing(action)} in the dialog {_quoted(target.title)}: a key or a "
                           f"letter there may answer it (it {found[1]})")
    if kind is TargetKind.UNKNOWN and isinstance(action, Click | DoubleClick | Drag | DragTo):
        reasons.append(f"{_click_verb(action)} where holodesk found no window ({target.label()})")
    if (_presses_space(action) or (isinstance(action, Type) and " " in typed_text(action.text))
            or (isinstance(action, Hotkey) and (
                "enter" in normalize_keys(action.keys)
                or _presses_mnemonic(normalize_keys(action.keys))))):
        # A window titled like a destructive question takes no text: its focus is on a button,
        # a space typed anywhere in a text presses it, Alt+letter presses a button by its
        # access key ("&Delete").
        found = risky_element_word(target.title) if target.found else None
        if found is not None:
            reasons.append(f"{_doing(action)} in {_quoted(target.title)}, which answers its "
                           f"default button (it {found[1]})")
        elif target.dialog and (isinstance(action, Hotkey) or _presses_space(action)):
            # A dialog's question is in its body, which holodesk cannot read, and its title
            # may say nothing (GTK's "Replace?" has none): the key presses a button unnamed,
            # where a click on it (Replace, Delete, OK) would have asked
            # (tests/control/test_redteam13_save_as_replace.py).
            reasons.append(f"{_doing(action)} in the dialog {_quoted(target.title)}, which "
                           "answers the button it holds the focus or default on (holodesk "
                           "cannot read which: it may be Replace or Delete)")
    if isinstance(action, Drag | DragTo):
        reasons += _drag_risks(action, aim)
    return reasons


def _in_terminal(action: Action, target: Target, history: Sequence[Action],
                 since: Sequence[Action], submit: str | None) -> list[str]:
    """Every action in a terminal asks: whatever runs in front there (a shell, a REPL, an
    editor, a file manager, a multiplexer) may take any key, click or scroll as a command, and
    which ones do is the program's business, not something a list of names can know."""
    why = f"it {target.terminal.value}" if target.terminal is not None else "it runs commands"
    front = f"; in front: {target.inside}" if target.inside else ""
    if submit is not None:
        out = [f"{submit} in {target.label()}, a terminal ({why}{front}): it runs the line as "
               "a command whatever it says"]
    else:
        out = [f"{_doing(action)} in {target.label()}, a terminal ({why}{front}): there every "
               "key, click and scroll may run something"]
    if isinstance(action, Type) and any(part == "paste" for part, _ in split_text(action.text)):
        out.append("holodesk enters part of this text by pasting (the clipboard can change "
                   "before the paste)")
    if isinstance(action, Type | Hotkey) or submit is not None:
        out += _terminal_line(action, history)
    # Typed without a question in between (the person approved the rest of the run, or it was
    # typed elsewhere first): what this question is the first to show.
    unseen = "".join(typed_text(a.text) if isinstance(a, Type) else key_text(a) for a in since)
    if unseen and unseen != _typed_since_submit(history):
        out.append(f"typed since you were last asked: {_quoted(unseen)}")
    return out


def _doing(action: Action) -> str:
    """What ``action`` does, in a few words (its text quoted)."""
    if isinstance(action, Type):
        return f"types {_quoted(typed_text(action.text))}"
    if isinstance(action, Hotkey):
        return f"presses {'+'.join(action.keys)}"
    if isinstance(action, Scroll):
        return f"scrolls {action.direction}"
    if isinstance(action, Click | DoubleClick | Drag | DragTo):
        return f"{_click_verb(action)} {_quoted(action.element)}"
    return action.action


def _line_touched_since_submit(history: Sequence[Action]) -> bool:
    """Whether the line may hold something since the last submit: typed, pasted or dropped
    text, or a line recalled from the history."""
    return _entered_since_submit(history) or any(
        isinstance(a, Hotkey) and normalize_keys(a.keys) in _RECALLS
        for a in _since_submit(history))


#: Keys that put a line from the shell's history on the line.
_RECALLS = frozenset(frozenset(k.split("+")) for k in (
    "up", "pageup", "ctrl+p", "ctrl+r", "alt+.", "alt+<", "alt+>"))


def _sends_escape(chord: frozenset[str]) -> bool:
    """Whether a chord sends ESC to a terminal: Escape, or Ctrl+[ (the same byte)."""
    return "escape" in chord or chord == {"ctrl", "["}


def _after_escape(action: Action, target: Target, since: Sequence[Action]) -> list[str]:
    """Typing after Escape, anywhere since the person was last asked: readline takes Escape as
    Meta, so Escape then ``#`` (with an argument: Escape, ``1``, Escape, ``#``) uncomments and
    runs the line. A wait, a move or a scroll in between changes nothing for the shell."""
    types = isinstance(action, Type) or bool(key_text(action))
    if not types:
        return []
    escaped = any(isinstance(a, Hotkey) and _sends_escape(normalize_keys(a.keys)) for a in since)
    if not escaped:
        return []
    return [f"types after Escape in {target.label()}: a shell takes what follows Escape as a "
            "command key (Escape then # runs the line)"]


def _menu_open(since: Sequence[Action]) -> bool:
    """Whether a menu may still be open, by what the keys and clicks since did (the fallback
    where the finder cannot tell whether a menu is shown, :func:`_menu_shown`): a context
    menu (the Menu key, Shift+F10, a right-click) or the menu bar (F10, Alt alone, an
    Alt+letter mnemonic), whatever action pressed the key (``since`` is lowered: a held Alt
    and a ``hold_and_tap`` are presses). Levels are counted as a stack of the bar (active,
    no menu shown) and menus (popups). A key that picks an item (or Right) may open a
    submenu, so the menu counts as open one level deeper after it; Down or Up on the active
    bar opens its menu; Escape closes one level (:func:`_opens_menu` says how many a key
    opens). A left click closes nothing holodesk can see closed (it may open a menu: a
    menu-bar title, an application-menu button, a submenu item); a desktop switch (Alt+Tab)
    closes only a bar with no menu shown (an open menu holds the keyboard grab: the window
    manager never sees the switch). Any other key leaves it as it was (a move, a modifier
    alone, a shortcut with Ctrl or Super: a menu may take its items' shortcuts). A pointer
    over a menu highlights its item, so a move keeps it open; Enter, Space or an item's
    letter then picks it."""
    levels: list[str] = []  # "bar" or "menu", the innermost last
    for done in since:
        if isinstance(done, Wait | Move | Scroll | AskUser | Answer | UpdatePlan):
            continue
        if isinstance(done, Click | DoubleClick | Drag | DragTo):
            if isinstance(done, Click) and done.button == "right":
                levels.append("menu")
        elif isinstance(done, Type):
            if levels and typed_text(done.text):
                levels.append("menu")
        elif isinstance(done, Hotkey):
            chord = normalize_keys(done.keys)
            opens = _opens_menu(chord)
            if _switches_window(chord):
                if "menu" not in levels:
                    levels.clear()
            elif opens:
                levels += ["menu"] if opens == 1 and chord & {"menu", "f10"} else (
                    ["bar"] if opens == 1 else ["bar", "menu"])
            elif chord == {"escape"}:
                if levels:
                    levels.pop()
            elif chord in ({"up"}, {"down"}) and levels and levels[-1] == "bar":
                levels.append("menu")  # Down or Up on the active bar opens its menu
            elif chord == {"right"} and levels:
                levels.append("menu")  # it may open the highlighted item's submenu
            elif levels and _picks_in_a_menu(done):
                levels.append("menu")
            # Anything else (a move, a modifier alone, a shortcut) leaves the menu as it was.
        else:
            levels.clear()
    return bool(levels)


def _menu_shown(target: Target, since: Sequence[Action], this_step: Sequence[Action]) -> bool:
    """Whether a menu may take the next key: shown on the screen when the action was judged
    (a mapped menu window, :attr:`Target.menu`), or opened by an earlier press of the same
    step (the screen was seen before it). Where the finder cannot tell (other platforms,
    nothing found), by what the keys and clicks since the person was last asked did
    (:func:`_menu_open`)."""
    if target.menu is None:
        return _menu_open(since)
    return target.menu or _menu_open(this_step)


_MENU_MOVES = frozenset(frozenset({k}) for k in ("up", "down", "left", "right", "home", "end"))


def _picks_in_a_menu(action: Action) -> bool:
    """Whether a press picks an item in an open menu: typing, a letter with or without Alt
    (Qt's menus take an item's letter with Alt still held), Enter, Space; not the keys that
    move in a menu or close it, a modifier pressed alone, a desktop switch, nor a shortcut
    with Ctrl or Super (the menu ignores it)."""
    if isinstance(action, Type):
        return True
    if not isinstance(action, Hotkey):
        return False
    chord = normalize_keys(action.keys)
    if (chord in _MENU_MOVES or chord == {"escape"} or chord <= set(MODIFIERS)
            or _switches_window(chord)):
        return False
    return not chord & {"ctrl", "super"} or bool(chord & {"enter", "space"})


def _presses_space(action: Action) -> bool:
    """Whether a press is the Space key going down on the focused control: Space with any
    modifiers (Qt's buttons press on the key whatever is held, browsers with Shift), or a
    Space typed alone (a ``type`` of spaces only). A space typed within a text is typing."""
    if isinstance(action, Hotkey):
        return "space" in normalize_keys(action.keys)
    if isinstance(action, Type):
        text = typed_text(action.text)
        return bool(text) and not text.strip(" ")
    return False


#: Keys that move between a dialog's controls or close it without answering.
_DIALOG_QUIET = frozenset(frozenset(k.split("+")) for k in (
    "escape", "tab", "shift+tab", "up", "down", "left", "right"))


def _tab_then_space(action: Action, history: Sequence[Action]) -> bool:
    """Whether ``action`` types a Space right after a Tab (in the same text or across steps):
    the Tab moved the focus to the next control, and Space presses it if it is a button."""
    if isinstance(action, Type):
        this = typed_text(action.text) + ("\n" if action.press_enter else "")
    elif isinstance(action, Hotkey) and _moves_focus(normalize_keys(action.keys)):
        this = "\t"
    elif isinstance(action, Hotkey) and normalize_keys(action.keys) & {"space", "enter"}:
        # Space or Enter with any modifiers presses the focused button.
        this = " " if "space" in normalize_keys(action.keys) else "\n"
    else:
        this = key_text(action)
    stream = _keystream_since_submit(history)[-1:] + this
    return "\t " in stream or "\t\n" in stream


#: Chords that select the whole document, or everything from the caret to its start or end.
_SELECT_WHOLE = frozenset(frozenset(k.split("+")) for k in (
    "ctrl+a", "ctrl+shift+end", "ctrl+shift+home", "super+a"))
#: Chords that remove or replace a selection: the delete keys, cut, paste.
_REMOVE_SELECTION = frozenset(frozenset(k.split("+")) for k in (
    "backspace", "delete", "ctrl+x", "shift+delete", "super+x", "ctrl+v", "super+v",
    "shift+insert", "ctrl+backspace", "ctrl+delete", "enter", "tab"))


def _content_replaced(history: Sequence[Action]) -> bool:
    """Whether the whole content (or all of it from the caret to one end) was selected and
    then replaced or removed since the last save: typed over, deleted, cut or pasted over, or
    a ``clear_first`` type."""
    selected = False
    replaced = False
    for done in history:
        if isinstance(done, Hotkey):
            chord = normalize_keys(done.keys)
            if chord == {"ctrl", "s"}:
                selected = replaced = False
            elif chord in _SELECT_WHOLE:
                selected = True
            elif selected and (chord in _REMOVE_SELECTION
                               or chord - {"shift"} in _REMOVE_SELECTION or key_text(done)):
                replaced, selected = True, False
            elif not chord <= {"shift", "ctrl", "alt", "super"} | _MENU_MOVES_KEYS:
                selected = False
        elif isinstance(done, Type):
            if done.clear_first or selected:
                replaced = True
            selected = False
        elif isinstance(done, Click | DoubleClick):
            selected = False
    return replaced


_MENU_MOVES_KEYS = frozenset({"up", "down", "left", "right", "home", "end", "pageup",
                              "pagedown"})


def _terminal_line(action: Action, history: Sequence[Action]) -> list[str]:
    """What the person needs to judge a submit in a terminal: holodesk cannot read the shell's
    line, so it says what it typed since the last submit and what else may have changed it."""
    typed = _typed_since_submit(history)
    if isinstance(action, Type):
        typed += typed_text(action.text)
    out = [f"holodesk typed since the last submit: {_quoted(typed)}" if typed else
           "holodesk typed nothing since the last submit: the line holds whatever is there"]
    edits = _line_edits(history)
    if isinstance(action, Type) and action.clear_first:
        edits.append("'clear first' (ctrl+a, Backspace: in a shell it clears nothing)")
    if edits:
        out.append("the line may differ from what was typed: used since the last submit: "
                   + ", ".join(edits))
    return out


def _drag_risks(action: Drag | DragTo, aim: Aim) -> list[str]:
    out: list[str] = []
    source, drop = aim.target, aim.drop
    if source.kind is TargetKind.FILE_MANAGER:
        out.append(f"drags out of {source.label()}, a file manager: it may move or delete files")
    if drop is not None:
        if _TRASH.search(fold(f"{drop.title} {drop.wm_class} {drop.wm_instance}")):
            out.append(f"drops onto {drop.label()}, which looks like the Trash")
        elif drop.desktop:
            out.append("drops onto the desktop, where the Trash and other folders may be")
        elif drop.kind is TargetKind.UNKNOWN:
            out.append(f"drops where holodesk found no window ({drop.label()})")
        elif drop.kind in (TargetKind.TERMINAL, TargetKind.NO_FINDER):
            out.append(f"drops onto {drop.label()}: a terminal pastes what is dropped")
    return out
