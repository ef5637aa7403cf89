"""The confirmation panel, offscreen: the answers by key and by button, the guard against an
early Enter, the crop around the target with the marker on it, and editing an action."""
# pytest-qt's key and mouse helpers carry no annotations.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit
from pytestqt.qtbot import QtBot

from app.events import Answer, ConfirmReply, ConfirmRequest
from model.coords import FrameGeometry, Point, Rect
from model.schema import Action, Click, DoubleClick, Drag, Hotkey, Move, Scroll, Type
from ui.confirm_panel import ConfirmPanel, HotkeyEditor, ScrollEditor, TypeEditor
from ui.marker import MARKER_RGB

BACKGROUND = (30, 30, 30)
TARGET = (0, 200, 0)
# The monitor is 2560x1440, sent (and saved) at 2048x1152: screen points scale by 0.8.
GEOMETRY = FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440), 1.0)


def near(image: QImage, x: float, y: float, rgb: tuple[int, int, int],
         tolerance: int = 50) -> bool:
    c = QColor(image.pixel(round(x), round(y)))
    return max(abs(c.red() - rgb[0]), abs(c.green() - rgb[1]),
               abs(c.blue() - rgb[2])) <= tolerance


def marker_at(image: QImage, x: float, y: float) -> bool:
    """The crosshair crosses within a pixel of (x, y): each arm passes through that spot."""
    def any_near(px: float, py: float) -> bool:
        return any(near(image, px + ex, py + ey, MARKER_RGB, 30)
                   for ex in (-1, 0, 1) for ey in (-1, 0, 1))

    arms = [(0, 0), (0, -8), (0, 8), (-8, 0), (8, 0)]
    return all(any_near(x + dx, y + dy) for dx, dy in arms)


@pytest.fixture
def shot(tmp_path: Path) -> str:
    """A dark screen with a green 40x40 square centred on screen point (1000, 700)."""
    image = Image.new("RGB", (2048, 1152), BACKGROUND)
    cx, cy = 800, 560  # (1000, 700) * 0.8
    ImageDraw.Draw(image).rectangle((cx - 20, cy - 20, cx + 19, cy + 19), fill=TARGET)
    path = tmp_path / "step.jpg"
    image.save(path, quality=95)
    return str(path)


def request(shot: str, action: Action | None = None,
            points: tuple[Point, ...] = (Point(1000, 700),),
            description: str = 'click "Delete" at (1000, 700)',
            element: str = "Delete button") -> ConfirmRequest:
    return ConfirmRequest(
        description=description,
        element=element,
        points=points,
        reasons=('clicks "Delete" (it may delete something)',),
        action=action or Click(element="Delete button", x=390, y=486),
        screenshot_path=shot,
        geometry=GEOMETRY,
    )


@pytest.fixture
def panel(qtbot: QtBot) -> ConfirmPanel:
    p = ConfirmPanel(arm_ms=0)
    qtbot.addWidget(p)
    p.show()
    return p


def answer_of(qtbot: QtBot, panel: ConfirmPanel, act: object) -> Answer:
    with qtbot.waitSignal(panel.answered, timeout=2000) as blocker:
        assert callable(act)
        act()
    reply = blocker.args[0]
    assert isinstance(reply, ConfirmReply)
    assert panel.request is None  # cleared after answering
    assert not panel.approve_button.isEnabled()
    return reply.answer


def test_enter_approves_and_esc_stops(panel: ConfirmPanel, qtbot: QtBot, shot: str) -> None:
    panel.show_request(request(shot))
    assert answer_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Return)) \
        is Answer.APPROVE
    panel.show_request(request(shot))
    assert answer_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Enter,
                                                          Qt.KeyboardModifier.KeypadModifier)) \
        is Answer.APPROVE
    panel.show_request(request(shot))
    assert answer_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Escape)) \
        is Answer.STOP


def test_the_buttons(panel: ConfirmPanel, qtbot: QtBot, shot: str) -> None:
    for button, expected in ((panel.skip_button, Answer.SKIP),
                             (panel.approve_rest_button, Answer.APPROVE_REST),
                             (panel.approve_button, Answer.APPROVE),
                             (panel.stop_button, Answer.STOP)):
        panel.show_request(request(shot))
        assert answer_of(qtbot, panel,
                         lambda b=button: qtbot.mouseClick(b, Qt.MouseButton.LeftButton)) \
            is expected


def test_nothing_is_answered_twice_or_without_a_request(
        panel: ConfirmPanel, qtbot: QtBot, shot: str) -> None:
    with qtbot.assertNotEmitted(panel.answered):
        qtbot.keyClick(panel, Qt.Key.Key_Return)
        qtbot.keyClick(panel, Qt.Key.Key_Escape)
    panel.show_request(request(shot))
    panel.clear()  # answered elsewhere: a stop
    with qtbot.assertNotEmitted(panel.answered):
        qtbot.keyClick(panel, Qt.Key.Key_Return)
    assert panel.title_label.text() == "Nothing to confirm"


def test_an_early_enter_does_not_approve(qtbot: QtBot, shot: str) -> None:
    panel = ConfirmPanel(arm_ms=300)
    qtbot.addWidget(panel)
    panel.show()
    panel.show_request(request(shot))
    with qtbot.assertNotEmitted(panel.answered):
        qtbot.keyClick(panel, Qt.Key.Key_Return)  # already on its way when the panel appeared
    assert not panel.approve_button.isEnabled() and panel.skip_button.isEnabled()
    qtbot.waitUntil(panel.approve_button.isEnabled, timeout=5000)
    assert answer_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Return)) \
        is Answer.APPROVE
    # Stop never waits.
    panel.show_request(request(shot))
    assert answer_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Escape)) \
        is Answer.STOP


@pytest.mark.parametrize("kept", [True, False], ids=["file", "no-file-kept"])
def test_the_crop_shows_the_target_with_the_marker_on_it(
        panel: ConfirmPanel, qtbot: QtBot, shot: str, kept: bool) -> None:
    asked = request(shot)
    if not kept:
        # log_screenshots off: no file, the crop comes from the bytes in memory.
        asked = dataclasses.replace(asked, screenshot_path="",
                                    screenshot=Path(shot).read_bytes())
    panel.show_request(asked)
    qtbot.waitUntil(lambda: panel.image() is not None, timeout=5000)
    image = panel.image()
    assert image is not None
    # 400x250 pixels around the target, shown 1.5x; the target (image pixel (800, 560)) is in
    # the middle: the crop starts at (600, 436), so the marker is at (200.5, 124.5) * 1.5.
    assert (image.width(), image.height()) == (600, 375)
    cx, cy = 300.75, 186.75
    assert marker_at(image, cx, cy)
    assert not marker_at(image, cx + 3, cy) and not marker_at(image, cx, cy + 3)
    for dx, dy in ((5, 5), (-5, 5), (5, -5), (-5, -5), (25, 25)):  # between the arms
        assert near(image, cx + dx, cy + dy, TARGET)
    assert near(image, 40, 40, BACKGROUND)
    assert "Delete button" in panel.details_label.text()
    assert "(1000, 700)" in panel.details_label.text()
    assert "may delete" in panel.reasons_label.text()
    assert "Delete" in panel.title_label.text()


def test_a_target_in_the_corner_keeps_the_crop_on_the_screen(
        panel: ConfirmPanel, qtbot: QtBot, shot: str) -> None:
    panel.show_request(request(shot, points=(Point(10, 10),)))
    qtbot.waitUntil(lambda: panel.image() is not None, timeout=5000)
    image = panel.image()
    assert image is not None and (image.width(), image.height()) == (600, 375)
    assert marker_at(image, 12.75, 12.75)  # (10 * 0.8 + 0.5) * 1.5


def test_a_drag_shows_both_ends(panel: ConfirmPanel, qtbot: QtBot, shot: str) -> None:
    drag = Drag(element="file", x=1, y=1, to_x=2, to_y=2)
    panel.show_request(request(shot, drag, points=(Point(1000, 700), Point(1250, 800)),
                              description='drag "file" from (1000, 700) to (1250, 800)'))
    qtbot.waitUntil(lambda: panel.image() is not None, timeout=5000)
    image = panel.image()
    assert image is not None
    # Both ends (image px (800, 560) and (1000, 640)) fit a 400x250 crop from (700, 476).
    assert (image.width(), image.height()) == (600, 375)
    assert marker_at(image, 100.5 * 1.5, 84.5 * 1.5)
    assert marker_at(image, 300.5 * 1.5, 164.5 * 1.5)
    assert "from (1000, 700) to (1250, 800)" in panel.details_label.text()


def test_typing_and_hotkeys_show_the_whole_screen_and_the_payload(
        panel: ConfirmPanel, qtbot: QtBot, shot: str) -> None:
    panel.show_request(request(shot, Type(text="hunter2"), points=(), element="",
                               description="type [hidden text, 7 characters]"))
    qtbot.waitUntil(lambda: panel.image() is not None, timeout=5000)
    image = panel.image()
    assert image is not None and (image.width(), image.height()) == (400, 225)
    assert panel.payload_label.isVisible()
    assert "hidden text" in panel.payload_label.text()
    assert "hunter2" not in panel.payload_label.text() + panel.title_label.text()
    assert not panel.details_label.isVisible()
    panel.show_request(request(shot, Hotkey(keys=["ctrl", "s"]), points=(),
                               description="press ctrl+s"))
    assert panel.payload_label.text() == "ctrl+s"


def test_an_unreadable_screenshot_still_asks(panel: ConfirmPanel, qtbot: QtBot,
                                             tmp_path: Path) -> None:
    panel.show_request(request(str(tmp_path / "gone.jpg")))
    qtbot.waitUntil(lambda: "could not be read" in panel.image_label.text(), timeout=5000)
    assert answer_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Return)) \
        is Answer.APPROVE


# -- editing -----------------------------------------------------------------------------------

ALT = Qt.KeyboardModifier.AltModifier


def typing_request(shot: str, action: Type | None = None, description: str = 'type "helo wrold"',
                   ) -> ConfirmRequest:
    return request(shot, action or Type(text="helo wrold"), points=(), element="",
                   description=description)


def reply_of(qtbot: QtBot, panel: ConfirmPanel, act: object) -> ConfirmReply:
    with qtbot.waitSignal(panel.answered, timeout=2000) as blocker:
        assert callable(act)
        act()
    reply = blocker.args[0]
    assert isinstance(reply, ConfirmReply)
    assert panel.request is None and panel.editor is None
    return reply


def open_editor(qtbot: QtBot, panel: ConfirmPanel) -> None:
    assert panel.edit_button.isVisible()
    qtbot.keyClick(panel, Qt.Key.Key_E, ALT)
    assert panel.editor is not None and panel.edit_frame.isVisible()


def test_an_edited_text_is_approved_as_an_edit(panel: ConfirmPanel, qtbot: QtBot,
                                                shot: str) -> None:
    panel.show_request(typing_request(shot))
    open_editor(qtbot, panel)
    editor = panel.editor
    assert isinstance(editor, TypeEditor) and isinstance(editor.text_field, QPlainTextEdit)
    assert editor.text_field.hasFocus()
    assert editor.text() == "helo wrold"
    # While editing, Enter approves the edit, the rest of the run cannot be approved, and Esc
    # no longer reads as Stop.
    assert panel.approve_button.text() == "Approve edit (Enter)"
    assert not panel.approve_rest_button.isEnabled() and not panel.edit_button.isVisible()
    assert "Esc" in panel.cancel_edit_button.text() and "Esc" not in panel.stop_button.text()
    assert "Esc cancels the edit" in panel.edit_hint_label.text()
    editor.text_field.clear()
    qtbot.keyClicks(editor.text_field, "hello world")
    editor.press_enter_box.click()
    reply = reply_of(qtbot, panel,
                     lambda: qtbot.keyClick(editor.text_field, Qt.Key.Key_Return))
    assert reply.answer is Answer.EDIT
    assert reply.edited == Type(text="hello world", press_enter=True)
    assert panel.approve_button.text() == "Approve (Enter)"


def test_the_approve_button_approves_an_edit_too(panel: ConfirmPanel, qtbot: QtBot,
                                                  shot: str) -> None:
    panel.show_request(typing_request(shot))
    open_editor(qtbot, panel)
    editor = panel.editor
    assert isinstance(editor, TypeEditor)
    qtbot.keyClicks(editor.text_field, "line one")
    # Shift+Enter is a line break in the text, never an answer.
    with qtbot.assertNotEmitted(panel.answered):
        qtbot.keyClick(editor.text_field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(editor.text_field, "two")
    editor.clear_first_box.click()
    reply = reply_of(qtbot, panel,
                     lambda: qtbot.mouseClick(panel.approve_button, Qt.MouseButton.LeftButton))
    assert reply.answer is Answer.EDIT
    assert reply.edited == Type(text="helo wroldline one\ntwo", clear_first=True)


def test_untouched_text_is_kept_exactly(panel: ConfirmPanel, qtbot: QtBot, shot: str) -> None:
    # The text editor stores line breaks its own way and no-break spaces are easily lost.
    original = Type(text="a\u00a0b\r\nc")
    panel.show_request(typing_request(shot, original, 'type "a\u00a0b\\r\\nc"'))
    open_editor(qtbot, panel)
    editor = panel.editor
    assert isinstance(editor, TypeEditor) and isinstance(editor.text_field, QPlainTextEdit)
    editor.press_enter_box.click()
    reply = reply_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Return))
    assert reply.edited == Type(text="a\u00a0b\r\nc", press_enter=True)


def test_an_edit_that_changes_nothing_is_an_approval(panel: ConfirmPanel, qtbot: QtBot,
                                                     shot: str) -> None:
    panel.show_request(typing_request(shot))
    open_editor(qtbot, panel)
    editor = panel.editor
    assert isinstance(editor, TypeEditor)
    reply = reply_of(qtbot, panel,
                     lambda: qtbot.keyClick(editor.text_field, Qt.Key.Key_Return))
    assert reply.answer is Answer.APPROVE and reply.edited is None


def test_an_invalid_edit_cannot_be_approved(panel: ConfirmPanel, qtbot: QtBot,
                                            shot: str) -> None:
    panel.show_request(request(shot, Hotkey(keys=["ctrl", "s"]), points=(), element="",
                               description="press ctrl+s"))
    open_editor(qtbot, panel)
    editor = panel.editor
    assert isinstance(editor, HotkeyEditor)
    assert editor.keys_field.text() == "ctrl+s" and panel.edit_error is None
    for bad, why in (("ctrl+frobnicate", "unknown key 'frobnicate'"),
                     ("", "Enter the keys"),
                     ("ctrl+alt+shift+a+b+c", "at most 5")):
        editor.keys_field.setText(bad)
        assert panel.edit_error is not None and why in panel.edit_error
        assert panel.edit_error_label.isVisible()
        assert why in panel.edit_error_label.text()
        assert not panel.approve_button.isEnabled()
        with qtbot.assertNotEmitted(panel.answered):
            qtbot.keyClick(editor.keys_field, Qt.Key.Key_Return)
            qtbot.keyClick(panel, Qt.Key.Key_Return)
            panel.approve_button.click()
        assert panel.editor is editor and panel.request is not None
    editor.keys_field.setText("ctrl + shift + s")
    assert panel.edit_error is None and not panel.edit_error_label.isVisible()
    assert panel.approve_button.isEnabled()
    reply = reply_of(qtbot, panel, lambda: qtbot.keyClick(editor.keys_field, Qt.Key.Key_Return))
    assert reply.answer is Answer.EDIT
    assert reply.edited == Hotkey(keys=["ctrl", "shift", "s"])


def test_typing_nothing_at_all_is_not_an_action(panel: ConfirmPanel, qtbot: QtBot,
                                                shot: str) -> None:
    panel.show_request(typing_request(shot))
    open_editor(qtbot, panel)
    editor = panel.editor
    assert isinstance(editor, TypeEditor)
    editor.text_field.clear()
    assert panel.edit_error is not None and "Nothing to do" in panel.edit_error
    assert not panel.approve_button.isEnabled()
    # Clearing the field is something to do, even with nothing typed after it.
    editor.clear_first_box.click()
    assert panel.edit_error is None
    reply = reply_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Enter,
                                                          Qt.KeyboardModifier.KeypadModifier))
    assert reply.edited == Type(text="", clear_first=True)


def test_esc_while_editing_cancels_the_edit_only(panel: ConfirmPanel, qtbot: QtBot,
                                                 shot: str) -> None:
    panel.show_request(typing_request(shot))
    open_editor(qtbot, panel)
    editor = panel.editor
    assert isinstance(editor, TypeEditor)
    qtbot.keyClicks(editor.text_field, "something else")
    with qtbot.assertNotEmitted(panel.answered):
        qtbot.keyClick(editor.text_field, Qt.Key.Key_Escape)
    assert panel.editor is None and not panel.edit_frame.isVisible()
    assert panel.request is not None and panel.hasFocus()
    assert panel.edit_button.isVisible() and panel.approve_rest_button.isEnabled()
    assert panel.stop_button.text() == "Stop (Esc)"
    # The proposal stands as it was: Enter approves it unchanged.
    reply = reply_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Return))
    assert reply.answer is Answer.APPROVE and reply.edited is None
    # Esc with the focus on the panel (not in a field) cancels the edit as well ...
    panel.show_request(typing_request(shot))
    open_editor(qtbot, panel)
    with qtbot.assertNotEmitted(panel.answered):
        qtbot.keyClick(panel, Qt.Key.Key_Escape)
    assert panel.editor is None and panel.request is not None
    # ... and the next Esc, with no editor open, stops the run as before.
    assert answer_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Escape)) \
        is Answer.STOP


def test_stop_and_skip_still_work_while_editing(panel: ConfirmPanel, qtbot: QtBot,
                                                shot: str) -> None:
    for button, expected in ((panel.stop_button, Answer.STOP), (panel.skip_button, Answer.SKIP),
                             (panel.cancel_edit_button, None)):
        panel.show_request(typing_request(shot))
        open_editor(qtbot, panel)
        editor = panel.editor
        assert isinstance(editor, TypeEditor)
        qtbot.keyClicks(editor.text_field, "!")
        if expected is None:  # Cancel edit: back to the proposal, nothing answered
            with qtbot.assertNotEmitted(panel.answered):
                qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
            assert panel.editor is None and panel.request is not None
            continue
        reply = reply_of(qtbot, panel,
                         lambda b=button: qtbot.mouseClick(b, Qt.MouseButton.LeftButton))
        assert reply.answer is expected and reply.edited is None


def test_scroll_direction_and_amount_are_editable(panel: ConfirmPanel, qtbot: QtBot,
                                                  shot: str) -> None:
    scroll = Scroll(element="list", x=390, y=486, direction="down", amount=5)
    panel.show_request(request(shot, scroll, description='scroll down 5 over "list"'))
    open_editor(qtbot, panel)
    editor = panel.editor
    assert isinstance(editor, ScrollEditor) and editor.direction_box.hasFocus()
    assert (editor.amount_box.minimum(), editor.amount_box.maximum()) == (1, 50)
    editor.direction_box.setCurrentText("up")
    editor.amount_box.setValue(2)
    reply = reply_of(qtbot, panel, lambda: qtbot.keyClick(editor.amount_box, Qt.Key.Key_Return))
    assert reply.answer is Answer.EDIT
    # The point and the element stay the model's.
    assert reply.edited == Scroll(element="list", x=390, y=486, direction="up", amount=2)


def test_actions_without_editable_fields_show_no_edit(panel: ConfirmPanel, qtbot: QtBot,
                                                      shot: str) -> None:
    for action in (Click(element="Delete button", x=390, y=486),
                   DoubleClick(element="file", x=1, y=1),
                   Move(element="menu", x=1, y=1),
                   Drag(element="file", x=1, y=1, to_x=2, to_y=2)):
        panel.show_request(request(shot, action))
        assert not panel.edit_button.isVisible()
        qtbot.keyClick(panel, Qt.Key.Key_E, ALT)
        panel.start_edit()
        assert panel.editor is None and not panel.edit_frame.isVisible()
        assert answer_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Return)) \
            is Answer.APPROVE
    assert not panel.edit_button.isVisible()  # nothing to confirm, nothing to edit


def test_edit_and_the_enter_in_the_editor_are_held_back(qtbot: QtBot, shot: str) -> None:
    panel = ConfirmPanel(arm_ms=300)
    qtbot.addWidget(panel)
    panel.show()
    panel.show_request(typing_request(shot))
    assert panel.edit_button.isVisible() and not panel.edit_button.isEnabled()
    qtbot.keyClick(panel, Qt.Key.Key_E, ALT)  # an Alt+E meant for another app's Edit menu
    assert panel.editor is None
    qtbot.waitUntil(panel.edit_button.isEnabled, timeout=5000)
    qtbot.keyClick(panel, Qt.Key.Key_E, ALT)
    editor = panel.editor
    assert isinstance(editor, TypeEditor)
    # Opening the editor changed what Enter means: the hold-back starts again.
    assert not panel.approve_button.isEnabled()
    with qtbot.assertNotEmitted(panel.answered):
        qtbot.keyClick(editor.text_field, Qt.Key.Key_Return)
    assert editor.text() == "helo wrold"  # nor did the early Enter become a line break
    qtbot.waitUntil(panel.approve_button.isEnabled, timeout=5000)
    qtbot.keyClicks(editor.text_field, "!")
    reply = reply_of(qtbot, panel, lambda: qtbot.keyClick(editor.text_field, Qt.Key.Key_Return))
    assert reply.edited == Type(text="helo wrold!")
    # Cancelling changes what Enter means again.
    panel.show_request(typing_request(shot))
    qtbot.waitUntil(panel.edit_button.isEnabled, timeout=5000)
    panel.start_edit()
    qtbot.waitUntil(panel.approve_button.isEnabled, timeout=5000)
    panel.cancel_edit()
    assert not panel.approve_button.isEnabled()
    with qtbot.assertNotEmitted(panel.answered):
        qtbot.keyClick(panel, Qt.Key.Key_Return)
    qtbot.waitUntil(panel.approve_button.isEnabled, timeout=5000)
    assert answer_of(qtbot, panel, lambda: qtbot.keyClick(panel, Qt.Key.Key_Return)) \
        is Answer.APPROVE


def test_hidden_text_is_edited_in_a_password_field(panel: ConfirmPanel, qtbot: QtBot,
                                                   shot: str) -> None:
    panel.show_request(typing_request(shot, Type(text="Hunter2!x"),
                                      "type [hidden text, 9 characters]"))
    open_editor(qtbot, panel)
    editor = panel.editor
    assert isinstance(editor, TypeEditor) and isinstance(editor.text_field, QLineEdit)
    assert editor.text_field.echoMode() is QLineEdit.EchoMode.Password
    assert editor.show_box is not None
    editor.show_box.click()
    assert editor.text_field.echoMode() is QLineEdit.EchoMode.Normal
    editor.text_field.setText("Hunter3!x")
    reply = reply_of(qtbot, panel, lambda: qtbot.keyClick(editor.text_field, Qt.Key.Key_Return))
    assert reply.edited == Type(text="Hunter3!x")


def test_text_the_description_does_not_show_counts_as_hidden(
        panel: ConfirmPanel, qtbot: QtBot, shot: str) -> None:
    # Failing closed: a description in an unexpected form never reveals the text.
    panel.show_request(typing_request(shot, Type(text="s3cret"), "type something"))
    open_editor(qtbot, panel)
    editor = panel.editor
    assert isinstance(editor, TypeEditor) and isinstance(editor.text_field, QLineEdit)
    assert editor.text_field.echoMode() is QLineEdit.EchoMode.Password
    # A long text is cut in the description; its beginning still shows, so it is not hidden.
    long = Type(text="x" * 100)
    panel.show_request(typing_request(shot, long, 'type "' + "x" * 77 + '..."'))
    open_editor(qtbot, panel)
    assert isinstance(panel.editor, TypeEditor)
    assert isinstance(panel.editor.text_field, QPlainTextEdit)


def test_a_new_request_closes_the_editor(panel: ConfirmPanel, qtbot: QtBot,
                                         shot: str) -> None:
    panel.show_request(typing_request(shot))
    open_editor(qtbot, panel)
    panel.show_request(request(shot))
    assert panel.editor is None and not panel.edit_frame.isVisible()
    assert panel.approve_button.text() == "Approve (Enter)"
    panel.show_request(typing_request(shot))
    open_editor(qtbot, panel)
    panel.clear()  # answered elsewhere (a stop)
    assert panel.editor is None and not panel.edit_button.isVisible()
    with qtbot.assertNotEmitted(panel.answered):
        qtbot.keyClick(panel, Qt.Key.Key_Return)


def test_the_requests_secret_flag_hides_the_text_even_if_the_description_shows_it(
        panel: ConfirmPanel, qtbot: QtBot, shot: str) -> None:
    secret = dataclasses.replace(typing_request(shot, Type(text="hunter2"), 'type "hunter2"'),
                                 secret=True)
    panel.show_request(secret)
    open_editor(qtbot, panel)
    editor = panel.editor
    assert isinstance(editor, TypeEditor) and isinstance(editor.text_field, QLineEdit)
    assert editor.text_field.echoMode() is QLineEdit.EchoMode.Password


def test_keys_show_the_application_they_go_to_and_its_window(
        panel: ConfirmPanel, qtbot: QtBot, shot: str) -> None:
    # A submit in a terminal: no point, so the crop is the terminal's window (screen rectangle
    # 950,650 100x100 = image 760,520 80x80, the green square in its middle), not the screen.
    req = dataclasses.replace(
        request(shot, Hotkey(keys=["ctrl", "j"]), points=(), element="",
                description="press ctrl+j"),
        target="XTerm \u2014 bash", target_rect=Rect(950, 650, 100, 100))
    panel.show_request(req)
    qtbot.waitUntil(lambda: panel.image() is not None, timeout=5000)
    image = panel.image()
    assert image is not None and (image.width(), image.height()) == (80, 80)
    assert near(image, 40, 40, TARGET) and near(image, 5, 5, BACKGROUND)
    assert "In: XTerm \u2014 bash" in panel.details_label.text()


def test_the_panel_stays_above_holodesks_other_windows(qtbot: QtBot) -> None:
    # Placed clear of the target, it often sits beside the task window; a click there must not
    # bury the question (e2e/test_target_rules_x11.py approves after activating the task window).
    panel = ConfirmPanel()
    qtbot.addWidget(panel)
    assert panel.windowFlags() & Qt.WindowType.WindowStaysOnTopHint
