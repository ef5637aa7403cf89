"""Colours come from the palette: readable text in a dark theme as in a light one.

Two checks. On the source: no style sheet in ui/ names a colour of its own; ui/colours.py is
the one place with colour literals (the tones' shades and fills), plus an allow-list with the
reason for each. On the windows: with a dark (and a light) palette set on the application, the
text of the main labels, coloured ones included, has a contrast of at least 4.5 (WCAG AA)
with what is behind it, computed from each widget's effective palette once polished (a style
sheet's colour lands there).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QGridLayout, QLabel, QWidget
from pytestqt.qtbot import QtBot

from app.doctor import CheckResult, Status
from model.problem import Fix
from tests.support.home import Home, isolate_home
from tests.support.settings_rig import make_dialog
from ui.automations_dialog import AutomationsDialog
from ui.colours import MIN_CONTRAST, WHITE, Tone, contrast, fill_color, is_dark, tone_color
from ui.confirm_panel import ConfirmPanel
from ui.doctor_window import _Row
from ui.hotkey_edit import HotkeyEdit
from ui.task_window import TaskWindow

UI = Path(__file__).resolve().parents[2] / "ui"

#: Files whose colour literals are not style sheets, and why they may keep them.
ALLOWED = {
    "colours.py": "the one place colours are defined, checked for contrast below",
    "tray.py": "the tray icon is painted for the desktop's panel, not a Qt window: a "
               "coloured disc with a symbol, its meaning carried by the symbol too",
    "practice/": "the demo's practice window and the eval's task windows paint fixed colours "
                 "on purpose: the demo model finds their parts by them in the screenshot",
}
_LITERAL = re.compile(
    r"#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?(?:[0-9a-fA-F]{2})?\b|\b(?:rgba?|hsla?)\s*\("
    r"|(?:color|background|border)[-a-z]*\s*:[^;{}]*\b(?:white|black|red|green|blue|yellow|"
    r"gr[ae]y|orange|purple|pink|brown)\b"
)


def literal_colours(path: Path) -> list[str]:
    """The string constants of a Python file (f-string parts too) naming a colour."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    hits = [node for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and _LITERAL.search(node.value)]
    return [f"{path.name}:{node.lineno}: {node.value!r}"
            for node in sorted(hits, key=lambda n: n.lineno)]


def _allowed(name: str) -> bool:
    """Whether ``name`` (a path under ui/) is a file or in a folder that may name colours."""
    return any(name == key or (key.endswith("/") and name.startswith(key)) for key in ALLOWED)


def test_no_style_sheet_in_ui_names_a_colour() -> None:
    found = [hit for path in sorted(UI.rglob("*.py"))
             if not _allowed(path.relative_to(UI).as_posix())
             for hit in literal_colours(path)]
    assert not found, "use ui/colours.py (a Tone, or a palette role):\n" + "\n".join(found)


def test_the_rule_catches_a_literal(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('a = "color: #cf222e;"\nb = f"x {a} background: white"\n'
                      'c = "QPushButton { border: 1px solid rgb(1, 2, 3) }"\n'
                      'd = "font-weight: bold;"\ne = "see issue #12"\n', encoding="utf-8")
    assert [hit.split(":")[1] for hit in literal_colours(sample)] == ["1", "2", "3"]


# -- the windows in a dark and a light theme -------------------------------------------------


def _theme(dark: bool) -> QPalette:
    palette = QPalette()
    if dark:
        roles = {"Window": "#2d2d2d", "WindowText": "#e6e6e6", "Base": "#1e1e1e",
                 "AlternateBase": "#262626", "Text": "#e6e6e6", "Button": "#3a3a3a",
                 "ButtonText": "#e6e6e6", "ToolTipBase": "#3a3a3a", "ToolTipText": "#e6e6e6",
                 "PlaceholderText": "#9a9a9a", "BrightText": "#ffffff"}
    else:
        roles = {"Window": "#efefef", "WindowText": "#000000", "Base": "#ffffff",
                 "AlternateBase": "#f7f7f7", "Text": "#000000", "Button": "#efefef",
                 "ButtonText": "#000000", "ToolTipBase": "#ffffdc", "ToolTipText": "#000000",
                 "PlaceholderText": "#6d6d6d", "BrightText": "#ffffff"}
    for name, colour in roles.items():
        palette.setColor(getattr(QPalette.ColorRole, name), QColor(colour))
    return palette


@pytest.fixture(params=[True, False], ids=["dark", "light"])
def theme(request: pytest.FixtureRequest, qapp: QApplication) -> Iterator[QPalette]:
    before = qapp.palette()
    palette = _theme(bool(request.param))
    qapp.setPalette(palette)
    yield palette
    qapp.setPalette(before)


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


def _readable(labels: list[QLabel], window: QWidget) -> list[str]:
    """Each label with text whose colour does not stand out from what is behind it."""
    window.ensurePolished()
    behind = window.palette().color(QPalette.ColorRole.Window)
    bad = []
    for label in labels:
        if not label.text():
            continue
        label.ensurePolished()
        text = label.palette().color(label.foregroundRole())
        own = "background" in label.styleSheet()
        back = label.palette().color(label.backgroundRole()) if own else behind
        ratio = contrast(text, back)
        if ratio < MIN_CONTRAST:
            bad.append(f"{label.objectName() or label.text()[:30]!r}: {text.name()} on "
                       f"{back.name()} ({ratio:.1f})")
    return bad


def test_the_tones_are_readable_in_the_theme(theme: QPalette) -> None:
    behind = theme.color(QPalette.ColorRole.Window)
    for tone in Tone:
        assert contrast(tone_color(tone, theme), behind) >= MIN_CONTRAST, tone
        assert contrast(fill_color(tone), QColor(WHITE)) >= MIN_CONTRAST, tone


def test_an_unusual_background_still_gets_readable_tones() -> None:
    for colour in ("#7a7a7a", "#5a5a5a", "#a0a0a0", "#303060"):
        palette = QPalette()
        palette.setColor(QPalette.ColorRole.Window, QColor(colour))
        for tone in Tone:
            assert contrast(tone_color(tone, palette), QColor(colour)) >= MIN_CONTRAST


def test_the_task_window(qtbot: QtBot, theme: QPalette) -> None:
    window = TaskWindow()
    qtbot.addWidget(window)
    assert is_dark() is is_dark(theme)
    window.set_model_status("not answering", "offline")
    window.show_error("The model server does not answer.", Fix("Start it in Settings."))
    labels = window.findChildren(QLabel)
    assert window.error_label in labels and window.model_dot in labels
    assert not _readable(labels, window)
    for state in ("online", "checking", "error", "something new"):
        window.set_model_status("x", state)
        assert not _readable([window.model_dot, window.model_status], window), state


def test_the_confirmation_panel(qtbot: QtBot, theme: QPalette) -> None:
    panel = ConfirmPanel(arm_ms=0)
    qtbot.addWidget(panel)
    panel.payload_label.setText("type this")
    panel.reasons_label.setText("it deletes something")
    panel.edit_error_label.setText("x must be a number")
    assert not _readable(panel.findChildren(QLabel), panel)


def test_the_settings_and_automations_windows(qtbot: QtBot, theme: QPalette) -> None:
    settings = make_dialog(qtbot)
    settings.error_label.setText("max_steps: must be at least 1")
    assert not _readable(settings.findChildren(QLabel), settings)

    automations = AutomationsDialog(path=Path("/nonexistent/automations.toml"))
    qtbot.addWidget(automations)
    automations._show_error("the task is empty")
    assert not _readable([automations.message], automations)
    automations._show_info("Saved.")
    assert not _readable([automations.message], automations)

    field = HotkeyEdit(lambda _text: None)
    qtbot.addWidget(field)
    field.refuse("Ctrl+C is a key people press all day")
    assert not _readable([field.reason_label], field)


def test_the_doctor_badges(qtbot: QtBot, theme: QPalette) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    grid = QGridLayout(window)
    waiting, checking, failed, warned = (_Row(grid, i, n) for i, n in enumerate("abcd"))
    checking.checking()
    failed.show(CheckResult("c", Status.FAIL, "no display", "start X"))
    warned.show(CheckResult("d", Status.WARN, "no keyring", "install one"))
    assert not _readable([waiting.badge, checking.badge, waiting.title], window)
    # A filled badge: white on its fill.
    for filled in (failed, warned):
        filled.badge.ensurePolished()
        text = filled.badge.palette().color(filled.badge.foregroundRole())
        assert contrast(text, QColor(filled.color)) >= MIN_CONTRAST, filled.status
