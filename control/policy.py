"""The safety policy: which actions need the person's go-ahead, and which never run.

Deterministic rules over the parsed action, never the model's own opinion of the risk. The
rules are deliberately conservative: a false alarm costs the person one keypress, a miss can
send, pay for or delete something.

Risky (confirmed in the default ``risky`` mode):

* hotkeys that close, quit or delete: alt+f4, ctrl+w, ctrl+f4, ctrl+q, cmd+w, cmd+q, delete,
  shift+delete, cmd+backspace / cmd+delete (move to Trash), ctrl+d (deletes in many apps and
  ends a terminal's shell), ctrl+shift+delete (clear browsing data), and the task-killing
  chords ctrl+shift+esc, ctrl+alt+esc, cmd+option+esc; ctrl+enter and cmd+enter (send in
  most mail and chat apps). Extra modifiers still match (ctrl+shift+w is ctrl+w plus shift);
* Enter after typing: ``type`` with ``press_enter``, text with a line break (typing one
  presses Enter), or an ``enter`` hotkey right after a ``type``: it may submit a form;
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

Key names are normalized before matching by :mod:`control.keys`, the vocabulary the executor
presses with: case, control/ctl -> ctrl, option -> alt, win/cmd/command/meta/super -> super,
return -> enter, del -> delete, esc -> escape, every spelling of Print Screen and SysRq,
left/right variants of modifiers, "ctrl+s" written as one key, and the order of keys does not
matter.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from control.hotkeys import DEFAULT_STOP_HOTKEY, Combo, parse_combo
from control.input import typed_text
from control.keys import MODIFIERS, chord_keys, pressed_keys
from model.schema import (
    Action,
    Answer,
    AskUser,
    Click,
    DoubleClick,
    Drag,
    Hotkey,
    Move,
    Scroll,
    Type,
    Wait,
)

__all__ = [
    "ConfirmMode",
    "SafetyPolicy",
    "Verdict",
    "is_card_number",
    "looks_like_password",
    "normalize_keys",
    "risky_element_word",
    "secret_reasons",
    "secret_token_label",
    "shell_command_label",
]


class ConfirmMode(StrEnum):
    """When to ask the person before executing an action."""

    ALWAYS = "always"  # every action that does something
    RISKY = "risky"  # only what the rules flag (the default)
    NEVER = "never"  # nothing; forbidden actions are still refused


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


# -- key names -------------------------------------------------------------------------------

#: The set of canonical key names of a chord as the machine sees it held; "ctrl+s" given as one
#: key is split, and a shifted symbol ("!") brings the Shift it is typed with. The one
#: vocabulary of control.keys, so the keys judged are the keys pressed and listened for.
normalize_keys = pressed_keys


#: Chords a terminal takes as Enter: line feed and carriage return.
_LINE_SUBMITS = (frozenset({"ctrl", "j"}), frozenset({"ctrl", "m"}))


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

_RISKY_WORDS: tuple[tuple[str, str], ...] = (
    ("send|submit|confirm|post|publish", "may send or submit something"),
    ("pay|buy|purchase|order|checkout|check out|transfer|donate", "may spend money"),
    ("delete|remove|uninstall|format|erase|wipe|discard|trash|reset", "may delete something"),
    ("install|allow|grant|authorize|authorise", "may install software or grant a permission"),
)
_RISKY_ELEMENT = tuple(
    (re.compile(rf"\b(?:{words})\b", re.IGNORECASE), what) for words, what in _RISKY_WORDS
)


def _split_identifier(name: str) -> str:
    # "deleteButton" and "btn_delete" name a Delete button as surely as "Delete button". Only
    # words starting in lower case are split: "PayPal" and "YouTube" are names, not two words.
    def split(match: re.Match[str]) -> str:
        return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", match.group())

    return re.sub(r"\b[a-z][A-Za-z0-9]*", split, name.replace("_", " "))


def risky_element_word(element: str) -> tuple[str, str] | None:
    """The first risky word in an element name and what it suggests, or None.

    Whole words only, case-insensitive: "Send" and "send-button" match, "Sender name",
    "Resend code" and "PayPal" do not.
    """
    name = _split_identifier(element)
    for pattern, what in _RISKY_ELEMENT:
        match = pattern.search(name)
        if match:
            return match.group(), what
    return None


# -- the policy ------------------------------------------------------------------------------

_INERT = (Wait, AskUser, Answer)


def _quoted(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def _click_verb(action: Click | DoubleClick | Drag) -> str:
    if isinstance(action, DoubleClick):
        return "double-clicks"
    if isinstance(action, Drag):
        return "drags"
    verb = {1: "clicks", 2: "double-clicks", 3: "triple-clicks"}.get(action.clicks, "clicks")
    return verb if action.button == "left" else f"{action.button}-{verb}"


class SafetyPolicy:
    """Decides, by fixed rules, whether an action needs confirmation or must never run.

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
    ) -> None:
        self.mode = mode
        self.reserved_hotkeys: tuple[Combo, ...] = tuple(
            parse_combo(c) for c in reserved_hotkeys
        )

    def assess(self, action: Action, *, previous: Action | None, outside_monitor: bool) -> Verdict:
        """Judge ``action``; ``previous`` is the action before it in this run (None at first).

        ``outside_monitor`` says the model's point had to be clamped to the chosen monitor.
        """
        if isinstance(action, _INERT):
            # They execute nothing on the machine: the loop handles them itself.
            return Verdict(confirm=False, forbidden=False, reasons=())
        if isinstance(action, Hotkey):
            chord = normalize_keys(action.keys)
            forbidden = _forbidden_chord(chord)
            forbidden += [
                f"holds {c.label()}, the person's own hotkey (holodesk's emergency stop)"
                for c in self.reserved_hotkeys
                if c.keys <= chord
            ]
            if forbidden:
                chord_text = "+".join(action.keys)
                refused = tuple(f"{chord_text} {w}; holodesk never presses it" for w in forbidden)
                return Verdict(confirm=False, forbidden=True, reasons=refused)
        reasons, secret = self._risks(action, previous)
        if outside_monitor:
            reasons.append("aims outside the chosen monitor (the point was moved to its edge)")
        if self.mode is ConfirmMode.ALWAYS:
            why = tuple(reasons) or ("every action is confirmed (confirmation mode: always)",)
            return Verdict(confirm=True, forbidden=False, reasons=why, secret=secret)
        confirm = self.mode is ConfirmMode.RISKY and bool(reasons)
        return Verdict(confirm=confirm, forbidden=False, reasons=tuple(reasons), secret=secret)

    def _risks(self, action: Action, previous: Action | None) -> tuple[list[str], bool]:
        reasons: list[str] = []
        secret = False
        if isinstance(action, Hotkey):
            chord = normalize_keys(action.keys)
            shown = "+".join(action.keys)
            for rule in _matching(chord, _RISKY_CHORDS):
                reasons.append(f"presses {shown}, which {rule.what}")
            if isinstance(previous, Type) and ("enter" in chord or chord in _LINE_SUBMITS):
                reasons.append(
                    "presses Enter right after typing, which may submit a form"
                    if chord == {"enter"} else
                    f"presses {shown} right after typing, which may submit a form or a command line"
                )
        elif isinstance(action, Type):
            # Judge what will really be typed: a control character the executor drops must not
            # hide a command from the rules ("r\x00m -rf" is typed as "rm -rf").
            action = action.model_copy(update={"text": typed_text(action.text)})
            if action.press_enter:
                reasons.append("presses Enter after typing, which may submit a form")
            elif "\n" in action.text or "\r" in action.text:
                reasons.append("types a line break, which presses Enter and may submit a form")
            typed_secret = secret_reasons(
                action.text,
                field=previous.element if isinstance(previous, Click | DoubleClick) else None,
                typed_before=typed_text(previous.text) if isinstance(previous, Type) else None,
            )
            reasons += typed_secret
            secret = bool(typed_secret)
            label = shell_command_label(action.text)
            if label is not None:
                reasons.append(f"types what looks like a destructive or system command ({label})")
        elif isinstance(action, Click | DoubleClick | Drag):
            found = risky_element_word(action.element)
            if found is not None:
                _, what = found
                reasons.append(f"{_click_verb(action)} {_quoted(action.element)} (it {what})")
        elif isinstance(action, Move | Scroll):
            pass  # neither activates anything
        return reasons, secret
