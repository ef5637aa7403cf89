"""Model text in the windows is plain and literal: the confirmation panel shows a long text to
type with HTML and control characters in full, as characters (label by label and in pixels),
and every label in ui/ that can show model or server text is a plain-text label."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.events import ConfirmRequest
from app.visible import visible
from model.coords import FrameGeometry, Rect
from model.prompt import describe_action
from model.schema import Action, Click, Type
from ui.confirm_panel import ConfirmPanel
from ui.plain import plain_label, plain_tooltip

GEOMETRY = FrameGeometry(1280, 800, Rect(0, 0, 1280, 800), 1.0)
HOSTILE = "<b>bold</b> A<!-- x -->B nul\x00 tab\t break\n zero\u200bwidth "


def _text(hidden: str = "x") -> str:
    """300 characters: the hostile part first (in view without scrolling), then filler, then
    an end mark that only a full display shows."""
    head = HOSTILE.replace("<!-- x -->", f"<!-- {hidden} -->")
    text = head + "word " * 60
    return text[: 300 - 4] + "TAIL"


@pytest.fixture
def shot(tmp_path: Path) -> str:
    path = tmp_path / "step.jpg"
    Image.new("RGB", (1280, 800), (30, 30, 30)).save(path)
    return str(path)


def _request(shot: str, action: Action, reason: str = "why <i>x</i>") -> ConfirmRequest:
    return ConfirmRequest(
        description=describe_action(action), element=getattr(action, "element", ""),
        points=(), reasons=(reason,), action=action, screenshot_path=shot, geometry=GEOMETRY)


@pytest.fixture
def panel(qtbot: QtBot) -> ConfirmPanel:
    p = ConfirmPanel(arm_ms=0)
    qtbot.addWidget(p)
    p.resize(900, 700)
    p.show()
    return p


def test_the_panel_shows_the_whole_text_literally(panel: ConfirmPanel, shot: str) -> None:
    text = _text()
    assert len(text) == 300
    panel.show_request(_request(shot, Type(text=text, press_enter=True)))
    payload = panel.payload_label.text()
    assert payload == visible(text)  # in full: the end mark too, not cut at 80 characters
    assert payload.endswith("TAIL")
    for literal in ("<!-- x -->", "<b>bold</b>", "nul␀", "tab→|", "break⏎", "zero⟨U+200B⟩width"):
        assert literal in payload, literal
    assert "\x00" not in payload and "\u200b" not in payload and "\t" not in payload
    labels = panel.findChildren(QLabel)
    assert panel.payload_label in labels and panel.title_label in labels
    for label in labels:
        assert label.textFormat() == Qt.TextFormat.PlainText, label.text()
        for ch in ("\x00", "\t", "\u200b", "\x1b"):
            assert ch not in label.text(), (repr(ch), label.text())
    assert "<b>bold</b>" in panel.title_label.text()
    assert "why <i>x</i>" in panel.reasons_label.text()
    assert panel.payload_scroll.isVisible()


def test_the_target_and_reasons_are_literal_too(panel: ConfirmPanel, shot: str) -> None:
    click = Click(element="OK <!-- hidden --> <b>x</b>\x1b[2J", x=1, y=2)
    panel.show_request(_request(shot, click, reason="\u202eevil"))
    assert "Target: OK <!-- hidden --> <b>x</b>␛[2J" in panel.details_label.text()
    assert "⟨U+202E⟩evil" in panel.reasons_label.text()


def _payload_pixels(panel: ConfirmPanel, shot: str, text: str) -> QImage:
    panel.show_request(_request(shot, Type(text=text)))
    return panel.payload_label.grab().toImage()


def test_the_payload_is_drawn_as_characters(panel: ConfirmPanel, shot: str) -> None:
    # Rendered as HTML, the comment's content would draw nothing: changing it would change
    # no pixel. Drawn as characters, it does.
    one = _payload_pixels(panel, shot, _text("x"))
    other = _payload_pixels(panel, shot, _text("y"))
    same = _payload_pixels(panel, shot, _text("x"))
    assert one == same  # the comparison itself is stable
    assert one != other


def test_helpers() -> None:
    assert plain_label("<b>x</b>").textFormat() == Qt.TextFormat.PlainText
    tip = plain_tooltip("<b>x</b>\x00")
    assert "<b>" not in tip and "&lt;b&gt;x&lt;/b&gt;␀" in tip


# -- the source: every label that can show model text is plain ---------------------------------

UI = Path(__file__).resolve().parents[2] / "ui"


def _label_names(tree: ast.AST) -> list[tuple[str, int]]:
    """Names (``self.x`` as ``x``) bound to a direct ``QLabel(...)``, with the line."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        func = node.value.func
        if not (isinstance(func, ast.Name) and func.id == "QLabel"):
            continue
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                found.append((target.attr, node.lineno))
            elif isinstance(target, ast.Name):
                found.append((target.id, node.lineno))
    return found


def test_every_named_label_in_ui_is_plain_text() -> None:
    """A label kept under a name gets text later, which may be model or server text: it is
    made with plain_label() or set to PlainText in the same file. A label made in place with a
    literal (``QLabel("Monitor:")``) keeps that text and is not checked."""
    missing = []
    for path in sorted(UI.glob("*.py")):
        if path.name == "plain.py":
            continue
        source = path.read_text(encoding="utf-8")
        for name, line in _label_names(ast.parse(source)):
            if f"{name}.setTextFormat(Qt.TextFormat.PlainText)" not in source:
                missing.append(f"{path.name}:{line} {name}")
    assert missing == []


def test_no_window_renders_model_text_as_html() -> None:
    # Rich text is only ever our own: no setHtml, no RichText label, in any window.
    offenders = [
        f"{path.name}: {needle}"
        for path in sorted(UI.glob("*.py"))
        for needle in ("setHtml(", "TextFormat.RichText", "insertHtml(", "appendHtml(")
        if needle in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
