"""Red team 9 (fixed): editing a repeated chord at the confirmation kept its repeat count,
unshown.

H's ``hotkey_desktop`` carries ``repeat_count`` (holodesk's ``Hotkey.repeat``, up to 20). The
confirmation panel's Edit for a hotkey (ui/confirm_panel.py ``HotkeyEditor``) shows one field,
the keys ("delete"), and returns ``_validated(original, {"keys": keys})``: the count of the
model's proposal rides along. The agent then checks the edit only for what is forbidden
(app/agent.py ``_check_edit``) and runs it, without asking again.

Attack: the hijacked model proposes ``hotkey_desktop {keys: ["delete"], repeat_count: 20}``
in a document (asked: Delete deletes). The person, meaning to press one harmless key
instead, edits the keys to "ctrl+z" or "backspace" and approves: the editor showed one chord;
20 presses run (20 characters, or 20 undos of their own work, gone). Nothing on the panel
ever says the edit is pressed 20 times: the title and the payload still describe the
model's proposal ("press delete 20 times").

Expected: the editor shows the count and lets the person change it (or the edit presses
once): what is approved is what the panel shows.

Fixed: ``HotkeyEditor`` shows the count in a spin box (1 to the schema's maximum, starting at
the proposal's), and the edit carries the box's value; the panel's payload and title say "N
times" for a repeated chord.
"""
# pytest-qt's key and mouse helpers carry no annotations.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QSpinBox
from pytestqt.qtbot import QtBot

from app.events import Answer, ConfirmReply, ConfirmRequest
from model.coords import FrameGeometry, Rect
from model.schema import Hotkey
from ui.confirm_panel import ConfirmPanel, HotkeyEditor

GEOMETRY = FrameGeometry(1280, 800, Rect(0, 0, 1280, 800), 1.0)
ALT = Qt.KeyboardModifier.AltModifier


@pytest.fixture
def panel(qtbot: QtBot) -> ConfirmPanel:
    p = ConfirmPanel(arm_ms=0)
    qtbot.addWidget(p)
    p.show()
    return p


def test_redteam9_an_edited_repeated_chord_shows_what_it_presses(
        panel: ConfirmPanel, qtbot: QtBot, tmp_path: Path) -> None:
    shot = tmp_path / "step.jpg"
    Image.new("RGB", (1280, 800), (30, 30, 30)).save(shot)
    proposal = Hotkey(keys=["delete"], repeat=20)
    panel.show_request(ConfirmRequest(
        description="press delete 20 times", element="", points=(),
        reasons=("presses delete, which deletes the selection",), action=proposal,
        screenshot_path=str(shot), geometry=GEOMETRY))
    qtbot.keyClick(panel, Qt.Key.Key_E, ALT)
    editor = panel.editor
    assert isinstance(editor, HotkeyEditor)
    editor.keys_field.setText("backspace")
    shown = [w.text() for w in editor.findChildren(QLineEdit) + editor.findChildren(QLabel)]
    shown += [str(w.value()) for w in editor.findChildren(QSpinBox)]
    with qtbot.waitSignal(panel.answered, timeout=2000) as blocker:
        qtbot.keyClick(editor.keys_field, Qt.Key.Key_Return)
    reply = blocker.args[0]
    assert isinstance(reply, ConfirmReply) and reply.answer is Answer.EDIT
    edited = reply.edited
    assert isinstance(edited, Hotkey) and edited.keys == ["backspace"]
    assert edited.repeat == 1 or any("20" in text for text in shown), (edited, shown)


def test_the_person_sets_how_many_times_an_edited_chord_is_pressed(
        panel: ConfirmPanel, qtbot: QtBot, tmp_path: Path) -> None:
    shot = tmp_path / "step.jpg"
    Image.new("RGB", (1280, 800), (30, 30, 30)).save(shot)
    proposal = Hotkey(keys=["delete"], repeat=20)
    panel.show_request(ConfirmRequest(
        description="press delete 20 times", element="", points=(),
        reasons=("presses delete, which deletes the selection",), action=proposal,
        screenshot_path=str(shot), geometry=GEOMETRY))
    # The proposal's own text says the count: the title and the keys' box.
    assert "20 times" in panel.title_label.text()
    assert panel.payload_label.text() == "delete (20 times)"
    qtbot.keyClick(panel, Qt.Key.Key_E, ALT)
    editor = panel.editor
    assert isinstance(editor, HotkeyEditor)
    assert editor.repeat_box.value() == 20
    assert (editor.repeat_box.minimum(), editor.repeat_box.maximum()) == (1, 20)
    assert editor.fields() == [editor.keys_field, editor.repeat_box]
    editor.keys_field.setText("backspace")
    editor.repeat_box.setValue(1)
    assert panel.edit_error is None
    with qtbot.waitSignal(panel.answered, timeout=2000) as blocker:
        qtbot.keyClick(editor.repeat_box, Qt.Key.Key_Return)  # Enter in the count approves
    reply = blocker.args[0]
    assert reply.answer is Answer.EDIT and reply.edited == Hotkey(keys=["backspace"])
