"""app/visible.py: model text shown visibly and literally, one function for every front end."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from app.visible import visible, visible_line, visible_lines


def test_each_invisible_character_gets_its_symbol() -> None:
    assert visible("a\x00b\tc\nd") == "a␀b→|c⏎\nd"
    assert visible("a\r\nb", one_line=True) == "a⏎b"
    assert visible("\x1b[2J\x1b]0;title\x07") == "␛[2J␛]0;title␇"
    assert visible("zero\u200bwidth \u202eevil\u2066 nb\u00a0sp\x7f\x85") == (
        "zero⟨U+200B⟩width ⟨U+202E⟩evil⟨U+2066⟩ nb⟨U+00A0⟩sp␡⟨U+0085⟩"
    )
    assert visible("line\u2028sep\ufe0f\U000e0041") == "line⟨U+2028⟩sep⟨U+FE0F⟩⟨U+E0041⟩"


def test_ordinary_text_is_unchanged_and_html_is_not_escaped() -> None:
    text = 'Grüße, 東京 <!-- x --> <b>bold</b> & "quotes" 😀'
    assert visible(text) == text


def test_the_symbols_themselves_are_spelled_out() -> None:
    # A ␀ on display is always a NUL in the text, never a ␀ the model wrote.
    assert visible("␀⏎⟨") == "⟨U+2400⟩⟨U+23CE⟩⟨U+27E8⟩"


def test_visible_line_cuts_after_making_visible() -> None:
    assert visible_line(None) == ""
    assert visible_line("a\nb", 10) == "a⏎b"
    assert visible_line("x" * 20, 10) == "x" * 7 + "..."


@given(st.text())
def test_no_control_or_invisible_character_survives(text: str) -> None:
    for one_line in (True, False):
        shown = visible(text, one_line=one_line)
        for ch in shown:
            if ch == "\n" and not one_line:
                continue
            assert ch == " " or unicodedata.category(ch) not in (
                "Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"
            ), repr(ch)


def test_visible_lines_keeps_the_lines_and_shows_everything_else() -> None:
    """A file's text (a report, a log): its lines as they are, without a ⏎ at each end, and
    every other control or invisible character still a symbol."""
    text = "one\r\ntwo\tthree \x1b[31mred\u200b\n\nlast\n"
    assert visible_lines(text) == "one\ntwo→|three ␛[31mred⟨U+200B⟩\n\nlast\n"
    assert visible_lines(text).splitlines() == visible(text).replace("⏎", "").splitlines()
