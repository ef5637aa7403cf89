"""The practice window, offscreen: what it draws is what the demo model reads.

The whole practice task runs here without a display: the window is grabbed as an image, the
demo model plans from it, and the planned click or typing is delivered to the widget under
the planned point. The window's state file says when the task is done.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from app.demo import model as demo_model
from app.demo.look import NAME, Status
from app.demo.practice import PracticeState
from ui.practice.window import PracticeWindow


def shot(window: QWidget) -> Image.Image:
    image = window.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    width, height = image.width(), image.height()
    data = bytes(image.constBits())[: image.bytesPerLine() * height]
    return Image.frombuffer("RGB", (width, height), data, "raw", "RGB", image.bytesPerLine(), 1)


def deliver(window: PracticeWindow, action: dict[str, Any], image: Image.Image) -> None:
    """Carry out the demo model's action on the widget, as the executor would on screen."""
    if action["action"] == "type":
        focus = QApplication.focusWidget()
        assert focus is not None
        QTest.keyClicks(focus, action["text"])
        return
    assert action["action"] == "click", action
    point = QPoint(round(action["x"] / 1000 * image.width),
                   round(action["y"] / 1000 * image.height))
    target = window.childAt(point) or window
    local = target.mapFrom(window, point)
    QTest.mouseClick(target, Qt.MouseButton.LeftButton, pos=local)


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> PracticeWindow:
    shown = PracticeWindow(tmp_path / "state.json")
    qtbot.addWidget(shown)
    shown.show()
    shown.activateWindow()
    qtbot.waitExposed(shown)
    qtbot.waitUntil(lambda: shown.ready)
    return shown


def test_the_demo_model_finishes_the_practice_task(window: PracticeWindow, qtbot: QtBot,
                                                   tmp_path: Path) -> None:
    done: list[dict[str, Any]] = []
    for _ in range(12):
        image = shot(window)
        step = demo_model.plan(image)
        action = step["action"]
        done.append(action)
        if action["action"] == "answer":
            break
        deliver(window, action, image)
        qtbot.wait(10)  # let Qt handle the click's consequences (a timer-free event turn)
    kinds = [(a["action"], a.get("element", a.get("text"))) for a in done]
    assert ("type", NAME) in kinds
    assert kinds[-1][0] == "answer" and "done" in done[-1]["text"], kinds
    assert [k for k in kinds if k[0] == "click"][-1] == ("click", "Delete draft button")
    state = PracticeState.read(tmp_path / "state.json")
    assert state is not None and state.done and state.missing() == []
    assert state.events == ("saved", "deleted")
    assert window.done_label.text() == "Demo done"


def test_save_before_the_form_is_filled_is_refused(window: PracticeWindow) -> None:
    window.save.click()
    window.delete.click()
    assert window.statuses()["saved"] is Status.TODO
    assert window.events == ["save refused", "delete refused"]


def test_the_state_file_says_where_the_window_is(window: PracticeWindow,
                                                 tmp_path: Path) -> None:
    data = json.loads((tmp_path / "state.json").read_text())
    assert data["ready"] is True
    assert data["window"][2:] == [window.width(), window.height()]
    assert data["steps"] == {"name": "todo", "colour": "todo", "saved": "todo",
                             "deleted": "todo"} or data["steps"]["name"] == "active"


@pytest.mark.parametrize(("preset", "statuses"), [
    ("filled", {"name": "done", "colour": "done", "saved": "todo", "deleted": "todo"}),
    ("wrong-colour", {"name": "done", "colour": "todo", "saved": "todo", "deleted": "todo"}),
])
def test_a_preset_starts_part_way_and_the_screen_shows_it(
        qtbot: QtBot, tmp_path: Path, preset: str, statuses: dict[str, str]) -> None:
    """`holodesk eval`'s tasks that start part way: the state file and the drawn checklist
    agree, and the demo model's first step is the first unfinished item's."""
    state_path = tmp_path / "state.json"
    shown = PracticeWindow(state_path, preset)
    qtbot.addWidget(shown)
    shown.show()
    qtbot.waitExposed(shown)
    qtbot.waitUntil(lambda: shown.ready)
    state = PracticeState.read(state_path)
    assert state is not None and state.steps == statuses
    first = demo_model.plan(shot(shown))["action"]
    wanted = "Save button" if preset == "filled" else "Blue in the colour list"
    assert (first["action"], first["element"]) == ("click", wanted)


def test_an_unknown_preset_is_refused(qtbot: QtBot) -> None:
    with pytest.raises(ValueError, match="no practice preset"):
        PracticeWindow(None, "nope")
