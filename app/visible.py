"""Model and server text made visible and literal, for every front end.

What the model proposes is shown before it runs; a character the person cannot see (a NUL, a
zero-width space, a bidirectional override, a terminal escape) would make the text on display
differ from the text typed, or let the text drive the person's terminal. :func:`visible` gives
each such character a visible symbol:

- a line break is ``⏎`` (in the multi-line form followed by the break itself, so long text
  still reads as lines), a tab ``→|``, NUL ``␀``, ESC ``␛`` and the other C0 controls their
  Control Pictures symbol (U+2400 onwards), DEL ``␡``;
- every other control, format (zero-width, bidi, tags), separator, unusual space or filler
  character is ``⟨U+200B⟩``;
- the symbols above, when the text itself holds them, are written ``⟨U+23CE⟩`` as well, so a
  ``␀`` on display is always a NUL in the text.

The result holds no character below U+0020 (apart from the line breaks of the multi-line
form), no DEL or C1 control, and nothing that renders as nothing. It is meant to be shown as
plain text; it is not HTML-escaped.
"""

from __future__ import annotations

import unicodedata

LINE_BREAK = "⏎"
TAB = "→|"
# The Control Pictures block: U+2400 + code for the C0 controls, U+2421 for DEL.
_PICTURES_START = 0x2400
_DEL_PICTURE = "\u2421"
# Drawn as nothing, or as a blank, though their categories say they are letters or symbols.
_BLANK_LOOKING = frozenset(
    "\u115f\u1160\u3164\uffa0\u2800\u034f\u180e\u17b4\u17b5"
)
# Symbols this module writes: found in the text itself they are spelled out, so the display
# stays unambiguous.
_OWN_SYMBOLS = frozenset(LINE_BREAK + "\u27e8\u27e9") | frozenset(
    chr(c) for c in range(_PICTURES_START, _PICTURES_START + 0x27)
)


def _code(ch: str) -> str:
    return f"\u27e8U+{ord(ch):04X}\u27e9"


def _hidden(ch: str) -> bool:
    """Whether ``ch`` would not show as itself: controls, format characters, separators,
    spaces other than the plain one, variation selectors, private-use and unassigned code."""
    if ch == " ":
        return False
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"):
        return True
    if ch in _BLANK_LOOKING:
        return True
    # Variation selectors (emoji and CJK) change the glyph before them and draw nothing.
    return "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef"


def visible(text: str, *, one_line: bool = False) -> str:
    """``text`` with every invisible or control character shown as a visible symbol.

    ``one_line`` keeps the result on one line (``⏎`` without the break), for a terminal line
    or a table cell; otherwise each ``⏎`` is followed by a real line break. ``\\r\\n`` counts
    as one line break.
    """
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\r" and i + 1 < n and text[i + 1] == "\n":
            i += 1
            ch = "\n"
        if ch == "\n":
            out.append(LINE_BREAK if one_line else LINE_BREAK + "\n")
        elif ch == "\t":
            out.append(TAB)
        elif ch < " ":
            out.append(chr(_PICTURES_START + ord(ch)))
        elif ch == "\x7f":
            out.append(_DEL_PICTURE)
        elif ch in _OWN_SYMBOLS or _hidden(ch):
            out.append(_code(ch))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def visible_lines(text: str) -> str:
    """``text`` whose lines are shown as they are (no ``⏎`` marks: a file, a log, a report,
    where every line ends so), every other control or invisible character as its symbol."""
    return "\n".join(visible(line) for line in text.replace("\r\n", "\n").split("\n"))


def visible_line(text: str | None, limit: int | None = None) -> str:
    """``text`` visible on one line, cut to ``limit`` characters (ending in ``...``)."""
    if not text:
        return ""
    shown = visible(text, one_line=True)
    if limit is None or len(shown) <= limit:
        return shown
    return shown[: limit - 3] + "..."


def without_controls(text: str) -> str:
    """``text`` with only its control characters (line breaks kept) and bidirectional
    controls shown as symbols: a last guard for a line already made of visible text, which
    :func:`visible` would spell out a second time."""
    return "".join(
        visible(ch)
        if ch != "\n" and (unicodedata.category(ch) == "Cc" or ch in _BIDI_CONTROLS)
        else ch
        for ch in text
    )


# They reorder what follows on display, so text could read differently than it is.
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f") | frozenset(
    chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
)
