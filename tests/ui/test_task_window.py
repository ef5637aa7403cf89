"""The task window, offscreen: starting, streaming the thought, the step, the screenshot with
the last action marked at the right pixel, pause / stop, and the end of a run."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from app.events import (
    FrameCaptured,
    ModelText,
    Outcome,
    RunFinished,
    RunStarted,
    StepFailed,
    StepProposed,
)
from app.result import RunResult
from control.policy import Verdict
from model.coords import FrameGeometry, Point, Rect
from model.schema import Click, Drag, Step
from ui.marker import MARKER_RGB
from ui.task_window import TaskWindow, extract_thought

BACKGROUND = (20, 40, 90)


def screenshot(tmp_path: Path, width: int, height: int, name: str = "shot.jpg") -> str:
    path = tmp_path / name
    Image.new("RGB", (width, height), BACKGROUND).save(path, quality=95)
    return str(path)


def colour_near(image: QImage, x: float, y: float, rgb: tuple[int, int, int],
                radius: int = 1, tolerance: int = 40) -> bool:
    """Whether a pixel within ``radius`` of (x, y) has colour ``rgb``."""
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            c = QColor(image.pixel(int(x) + dx, int(y) + dy))
            if max(abs(c.red() - rgb[0]), abs(c.green() - rgb[1]),
                   abs(c.blue() - rgb[2])) <= tolerance:
                return True
    return False


def marker_at(image: QImage, x: int, y: int) -> bool:
    """Whether the marker's crosshair crosses at pixel (x, y): both arms pass through it."""
    arms = [(0, -6), (0, 6), (-6, 0), (6, 0), (0, 0)]
    return all(colour_near(image, x + dx, y + dy, MARKER_RGB, radius=0, tolerance=60)
               for dx, dy in arms)


def started(run_id: str = "r1", task: str = "save the file") -> RunStarted:
    return RunStarted(run_id, task, "http://127.0.0.1:8000/v1", "holotron", "1", False)


def proposed(points: tuple[Point, ...], step_no: int = 1) -> StepProposed:
    step = Step(thought="The Save button is at the top left.",
                action=Click(element="Save button", x=500, y=500))
    return StepProposed("r1", step_no, step, points, 'click "Save button"',
                        Verdict(False, False, ()), "{}")


@pytest.fixture
def window(qtbot: QtBot) -> TaskWindow:
    w = TaskWindow(confirm="always", monitor="2")
    qtbot.addWidget(w)
    w.show()
    return w


# -- the thought as it streams ---------------------------------------------------------------


@pytest.mark.parametrize(("text", "thought"), [
    ('{"note": "", "thought": "The Save', "The Save"),
    ('{"thought": "A \\"quoted\\" word', 'A "quoted" word'),
    ('{"thought": "line one\\nline', "line one\nline"),
    ('{"thought": "cut in an escape \\', "cut in an escape "),
    ('{"thought": "cut in unicode \\u00e', "cut in unicode "),
    ('{"thought": "caf\\u00e9 done", "action": {"action": "wait"}}', "café done"),
    ('{"note": "x", "thou', ""),
    ("```json\n{", ""),
    ("I will click the Save button.", "I will click the Save button."),
    ('{"thought":"raw\nnewline', "raw\nnewline"),
    # A server's reasoning parser streams thinking first (the client writes it as <think>).
    ("<think>The dialog is still open", "The dialog is still open"),
    ('<think>Open.</think>\n{"note": "", "thought": "Click OK', "Click OK"),
    ("<think>Open.</think>\n", ""),
])
def test_extract_thought_from_partial_json(text: str, thought: str) -> None:
    assert extract_thought(text) == thought


def test_the_thought_grows_as_the_answer_streams(window: TaskWindow) -> None:
    window.on_event(started())
    answer = '{"note": "", "thought": "The Save button is at the top left.", "action": {}}'
    shown = []
    for end in range(10, len(answer), 7):
        window.on_event(ModelText("r1", 1, answer[:end]))
        shown.append(window.thought())
    assert shown[-1] == "The Save button is at the top left."
    grew = [t for t in shown if t]
    assert all(b.startswith(a) for a, b in itertools.pairwise(grew))
    window.on_event(ModelText("r1", 1, "plain words, no JSON"))
    assert window.thought() == "plain words, no JSON"


# -- start and the run controls --------------------------------------------------------------


def test_start_needs_a_task_and_an_online_model(window: TaskWindow, qtbot: QtBot) -> None:
    assert not window.start_button.isEnabled()  # no task yet
    window.task_edit.setPlainText("   ")
    assert not window.start_button.isEnabled()
    window.task_edit.setPlainText("open the downloads folder")
    assert window.start_button.isEnabled()
    window.set_can_start(False, "The model server is down: start vLLM")
    assert not window.start_button.isEnabled()
    assert window.why_label.isVisible() and "server is down" in window.why_label.text()
    window.set_can_start(True, "")
    assert window.start_button.isEnabled() and not window.why_label.isVisible()

    with qtbot.waitSignal(window.start_requested) as blocker:
        qtbot.mouseClick(window.start_button, Qt.MouseButton.LeftButton)
    assert blocker.args == ["open the downloads folder", "always", "2"]
    assert not window.start_button.isEnabled()  # no second start while the first one starts

    window.on_event(started())
    assert window.running and not window.start_button.isEnabled()
    assert window.pause_button.isEnabled() and window.stop_button.isEnabled()
    window.on_event(RunFinished("r1", Outcome.ANSWERED, "the model answered", 3, "42 files",
                                result=RunResult.DONE))
    assert not window.running and window.start_button.isEnabled()
    assert "Done" in window.status_label.text()
    assert "42 files" in window.result_label.text()
    assert not window.pause_button.isEnabled()


def test_ctrl_enter_starts_and_a_bad_monitor_is_refused(window: TaskWindow, qtbot: QtBot) -> None:
    window.task_edit.setPlainText("do it")
    window.monitor_combo.setCurrentText("left screen")
    with qtbot.assertNotEmitted(window.start_requested):
        qtbot.mouseClick(window.start_button, Qt.MouseButton.LeftButton)
    assert window.error_label.isVisible() and "monitor" in window.error_label.text()
    window.monitor_combo.setCurrentText("800x600-800+0")
    with qtbot.waitSignal(window.start_requested) as blocker:
        window.start_button.click()
    assert blocker.args == ["do it", "always", "800x600-800+0"]
    window.set_running(False)  # the controller could not start it: Start is usable again
    assert window.start_button.isEnabled()


def test_pause_resume_and_stop(window: TaskWindow, qtbot: QtBot) -> None:
    window.on_event(started())
    with qtbot.waitSignal(window.pause_requested):
        window.pause_button.click()
    assert window.paused and window.pause_button.text() == "Resume"
    with qtbot.waitSignal(window.resume_requested):
        window.pause_button.click()
    assert not window.paused and window.pause_button.text() == "Pause"
    window.set_paused(True, "you moved the mouse")
    assert "you moved the mouse" in window.status_label.text()
    with qtbot.waitSignal(window.stop_requested):
        window.stop_button.click()


def test_a_failed_step_shows_the_error_and_the_fix(window: TaskWindow) -> None:
    window.on_event(started())
    window.on_event(StepFailed("r1", 2, "the model server stopped answering",
                               "check that vLLM is running"))
    assert window.error_label.isVisible()
    assert "stopped answering" in window.error_label.text()
    assert "vLLM is running" in window.error_label.text()


def test_model_status_line(window: TaskWindow) -> None:
    window.set_model_status("holotron-12b ready", "online")
    assert "holotron-12b ready" in window.model_status.text()
    assert window.model_status.property("state") == "online"


# -- the screenshot and the marker -----------------------------------------------------------


def test_the_screenshot_shows_the_step_marker_at_the_right_pixel(
        window: TaskWindow, qtbot: QtBot, tmp_path: Path) -> None:
    # A 2560x1440 monitor right of a 1920 px one, sent at 2048x1152, shown at 640x360.
    geometry = FrameGeometry(2048, 1152, Rect(1920, 0, 2560, 1440), 1.0)
    path = screenshot(tmp_path, 2048, 1152)
    window.on_event(started())
    window.on_event(FrameCaptured("r1", 1, geometry, path, 5.0))
    qtbot.waitUntil(lambda: window.screenshot_image() is not None, timeout=5000)
    plain = window.screenshot_image()
    assert plain is not None and (plain.width(), plain.height()) == (640, 360)
    assert colour_near(plain, 400, 90, BACKGROUND, radius=0, tolerance=12)

    # The point is 3/4 across and 1/4 down the monitor: (480, 90) of the shown image.
    window.on_event(proposed((Point(1920 + 1920, 360),)))
    marked = window.screenshot_image()
    assert marked is not None
    assert marker_at(marked, 480, 90)
    assert not any(marker_at(marked, 480 + d, 90 + e) for d in (-3, 3) for e in (-3, 3))
    assert not colour_near(marked, 320, 250, MARKER_RGB, radius=3)
    assert colour_near(marked, 320, 250, BACKGROUND, radius=0, tolerance=12)
    assert "Save button" in window.step_label.text()
    assert window.thought() == "The Save button is at the top left."

    # The next frame keeps the last action's point marked.
    window.on_event(FrameCaptured("r1", 2, geometry, screenshot(tmp_path, 2048, 1152, "2.jpg"),
                                  5.0))
    qtbot.waitUntil(lambda: window.screenshot_image() is not marked, timeout=5000)
    again = window.screenshot_image()
    assert again is not None and marker_at(again, 480, 90)


def test_without_a_screenshot_file_the_bytes_are_shown(
        window: TaskWindow, qtbot: QtBot, tmp_path: Path) -> None:
    # log_screenshots off: the event names no file and carries the image.
    geometry = FrameGeometry(1280, 800, Rect(0, 0, 1280, 800), 1.0)
    data = Path(screenshot(tmp_path, 1280, 800)).read_bytes()
    window.on_event(started())
    window.on_event(FrameCaptured("r1", 1, geometry, "", 1.0, image=data))
    qtbot.waitUntil(lambda: window.screenshot_image() is not None, timeout=5000)
    shown = window.screenshot_image()
    assert shown is not None and (shown.width(), shown.height()) == (640, 400)
    assert colour_near(shown, 400, 90, BACKGROUND, radius=0, tolerance=12)


def test_a_drag_marks_both_ends(window: TaskWindow, qtbot: QtBot, tmp_path: Path) -> None:
    geometry = FrameGeometry(1280, 800, Rect(0, 0, 1280, 800), 1.0)
    window.on_event(started())
    window.on_event(FrameCaptured("r1", 1, geometry, screenshot(tmp_path, 1280, 800), 1.0))
    qtbot.waitUntil(lambda: window.screenshot_image() is not None, timeout=5000)
    step = Step(thought="drag", action=Drag(element="file", x=1, y=1, to_x=2, to_y=2))
    window.on_event(StepProposed("r1", 1, step, (Point(200, 200), Point(1000, 600)), "drag",
                                 Verdict(False, False, ()), "{}"))
    marked = window.screenshot_image()
    assert marked is not None and (marked.width(), marked.height()) == (640, 400)
    assert marker_at(marked, 100, 100)
    assert marker_at(marked, 500, 300)
    assert colour_near(marked, 300, 200, MARKER_RGB)  # on the arrow between them


def test_an_unreadable_screenshot_says_so(window: TaskWindow, qtbot: QtBot,
                                          tmp_path: Path) -> None:
    window.on_event(started())
    geometry = FrameGeometry(1280, 800, Rect(0, 0, 1280, 800), 1.0)
    window.on_event(FrameCaptured("r1", 1, geometry, str(tmp_path / "missing.jpg"), 1.0))
    qtbot.waitUntil(lambda: "could not be read" in window.screenshot_label.text(), timeout=5000)
    assert window.screenshot_image() is None


def test_the_contracts_notice_shows_until_the_model_speaks(window: TaskWindow) -> None:
    window.on_event(dataclasses.replace(started(), notice="holodesk has no profile for m"))
    assert window.thought_view.toPlainText() == "Note: holodesk has no profile for m"
