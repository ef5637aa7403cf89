"""The colours of holodesk's windows, from the palette in effect, so dark themes stay readable.

Style sheets name a :class:`Tone` (what the colour means: an error, a success, a warning, a
muted note, work in progress), never a colour. :func:`tone_color` picks that tone's shade for
the palette in effect (its light-theme or dark-theme shade, by the window background's
lightness) and, should the theme's background be unusual, moves it lighter or darker until its
text contrast on that background is at least :data:`MIN_CONTRAST` (WCAG AA for normal text).

This module is the one place in ui/ with colour literals (tests/ui/test_colours.py checks the
others): the tones' two shades, the strong fills that carry white text (a filled badge, the
Stop button) and the dark backdrop a screenshot is shown on, which read the same in every
theme.
"""

from __future__ import annotations

from enum import Enum

from PySide6.QtGui import QColor, QGuiApplication, QPalette

__all__ = [
    "MIN_CONTRAST",
    "SCREEN_STYLE",
    "WHITE",
    "Tone",
    "contrast",
    "danger_button_style",
    "fill_color",
    "is_dark",
    "marked_style",
    "text_style",
    "tone_color",
]

#: WCAG AA: normal text needs a contrast ratio of 4.5 with its background.
MIN_CONTRAST = 4.5


class Tone(Enum):
    """What a coloured text means."""

    ERROR = "error"
    OK = "ok"
    WARNING = "warning"
    MUTED = "muted"
    INFO = "info"


# (light theme, dark theme) shades: dark enough on white, light enough on a dark grey.
_SHADES: dict[Tone, tuple[str, str]] = {
    Tone.ERROR: ("#b42318", "#ff8a80"),
    Tone.OK: ("#17692e", "#6fdc8c"),
    Tone.WARNING: ("#7d5300", "#f2c94c"),
    Tone.MUTED: ("#57606a", "#a8b1bb"),
    Tone.INFO: ("#0550ae", "#82b8ff"),
}
# Strong fills for white text (contrast >= 4.5 with white), the same in every theme.
_FILLS: dict[Tone, str] = {
    Tone.ERROR: "#cf222e",  # the Stop buttons' red (the GUI tests find them by it)
    Tone.OK: "#1e7e34",
    Tone.WARNING: "#8a5a00",
    Tone.MUTED: "#5f6368",
    Tone.INFO: "#1565c0",
}
#: The text on a fill.
WHITE = "#ffffff"
#: Where a screenshot (or its placeholder) is shown: a dark backdrop, as in an image viewer,
#: whatever the theme (its text contrast is 8.6).
SCREEN_STYLE = "background: #202020; color: #b0b0b0;"


def _palette(palette: QPalette | None) -> QPalette:
    return palette if palette is not None else QGuiApplication.palette()


def is_dark(palette: QPalette | None = None) -> bool:
    """Whether the palette's windows are dark (light text on a dark background)."""
    pal = _palette(palette)
    return pal.color(QPalette.ColorRole.Window).lightnessF() < 0.5


def _luminance(color: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return (0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF())
            + 0.0722 * channel(color.blueF()))


def contrast(a: QColor, b: QColor) -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def tone_color(tone: Tone, palette: QPalette | None = None) -> QColor:
    """The colour of ``tone``'s text on the palette's window background, readable on it."""
    pal = _palette(palette)
    background = pal.color(QPalette.ColorRole.Window)
    dark = is_dark(pal)
    shade = QColor(_SHADES[tone][1 if dark else 0])
    # An unusual background (a mid grey): step away from it until readable, the other way
    # when that way runs out.
    tries = [_away(shade, background, lighter=dark), _away(shade, background, lighter=not dark)]
    return max(tries, key=lambda c: min(contrast(c, background), MIN_CONTRAST))


def _away(color: QColor, background: QColor, *, lighter: bool) -> QColor:
    for _ in range(30):
        if contrast(color, background) >= MIN_CONTRAST:
            break
        color = color.lighter(115) if lighter else color.darker(115)
    return color


def text_style(tone: Tone, palette: QPalette | None = None) -> str:
    """A style sheet colouring a widget's text in ``tone``."""
    return f"color: {tone_color(tone, palette).name()};"


def fill_color(tone: Tone) -> QColor:
    """A strong fill of ``tone`` that white text reads well on (any theme)."""
    return QColor(_FILLS[tone])


def danger_button_style() -> str:
    """A button that ends something (Stop): white bold text on the error fill while enabled."""
    return (f"QPushButton:enabled {{ color: {WHITE}; background: {_FILLS[Tone.ERROR]}; "
            "font-weight: bold; }")


def marked_style(palette: QPalette | None = None) -> str:
    """Text marked for attention (what a step will type, as a highlighter would): dark text
    on pale yellow in a light theme, pale text on dark amber in a dark one."""
    background, text = ("#4a3b00", "#fff3c4") if is_dark(palette) else ("#fff8c5", "#1f2328")
    return f"background: {background}; color: {text};"
