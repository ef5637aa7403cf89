"""The confirmation panel, offscreen: the answers by key and by button, the guard against an
early Enter, and the crop around the target with the marker on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from app.events import Answer, ConfirmReply, ConfirmRequest
from model.coords import FrameGeometry, Point, Rect
from model.schema import Action, Click, Drag, Hotkey, Type
from ui.confirm_panel import ConfirmPanel
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


def test_the_crop_shows_the_target_with_the_marker_on_it(
        panel: ConfirmPanel, qtbot: QtBot, shot: str) -> None:
    panel.show_request(request(shot))
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
