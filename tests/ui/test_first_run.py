"""The task window's first-run guide, its Wayland notice, text that wraps instead of being cut
off at the smallest window size, a run titled with its automation's name, a run's result in
view with its reason, and what to try next after a done demo (offscreen)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QLabel, QWidget
from pytestqt.qtbot import QtBot

from app.demo.run import WHAT_HAPPENED
from app.events import Outcome, RunFinished, RunStarted
from app.result import RunResult
from ui.colours import Tone, text_style
from ui.task_window import NEW_TASK_TITLE, TaskWindow

ENDPOINT = "http://127.0.0.1:8000/v1"
# As long as the real ones get: a fix with a settings place, a server's words, a log's path.
LONG = ("The model server is not ready: No model server answers at http://127.0.0.1:8000/v1. "
        "Start the model server and check the server address: host, port, and the /v1 path. "
        "A server that was just started answers only once the model is loaded (minutes). "
        "Use the tray menu's Start model server, or change Settings > Model server > Endpoint "
        "URL. "
        "END-OF-MESSAGE")


def make(qtbot: QtBot, session: Callable[[], str] = lambda: "x11") -> TaskWindow:
    window = TaskWindow(session=session)
    qtbot.addWidget(window)
    window.show()
    return window


def started(task: str = "tidy the desktop") -> RunStarted:
    return RunStarted("r1", task, ENDPOINT, "holotron", "1", False)


# -- the guide --------------------------------------------------------------------------------


def test_the_guide_shows_while_no_server_answers_and_offers_three_ways(qtbot: QtBot) -> None:
    window = make(qtbot)
    assert window.guide.isHidden()  # before the first probe: nothing known yet
    window.show_guide(True, ENDPOINT)
    assert window.guide.isVisible()
    assert f"No model server answers at {ENDPOINT}" in window.guide.where_label.text()
    buttons = [window.guide.setup_button, window.guide.connect_button, window.guide.demo_button]
    assert [b.text() for b in buttons] == [
        "Set up a model server on this machine", "Connect to a server elsewhere…",
        "Try the &demo"]
    for button, signal in zip(buttons, (window.setup_requested, window.connect_requested,
                                        window.demo_requested), strict=True):
        with qtbot.waitSignal(signal, timeout=1000):
            button.click()

    # Out of a run's way (the demo's run among them), back once it ends.
    window.on_event(started())
    assert window.guide.isHidden()
    window.on_event(RunFinished("r1", Outcome.ANSWERED, "done", 2, result=RunResult.DONE))
    assert window.guide.isVisible()
    window.show_guide(False)  # a server answers
    assert window.guide.isHidden()


def test_the_guide_says_how_the_set_up_goes(qtbot: QtBot) -> None:
    window = make(qtbot)
    window.show_guide(True, ENDPOINT)
    guide = window.guide
    guide.set_setup("starting", "checking vLLM and the GPU")
    assert not guide.setup_button.isEnabled()
    assert guide.progress() == "checking vLLM and the GPU"
    guide.set_setup("starting")  # a state change alone keeps the last line
    assert guide.progress() == "checking vLLM and the GPU"
    guide.set_setup("failed", "Model server: no usable GPU. Use a machine with one.")
    assert guide.setup_button.isEnabled() and "again" in guide.setup_button.text()
    assert guide.progress() == "Model server: no usable GPU. Use a machine with one."
    guide.set_setup("stopped")
    assert guide.progress() == "" and guide.setup_button.isEnabled()


def test_gui_words_name_no_command_line(qtbot: QtBot) -> None:
    window = make(qtbot, lambda: "xwayland")
    window.show_guide(True, ENDPOINT)
    for label in window.findChildren(QLabel):
        text = label.text() + label.toolTip()
        assert "`" not in text and "README" not in text and " --" not in text, text
    for button in (window.guide.setup_button, window.guide.connect_button,
                   window.guide.demo_button):
        assert "`" not in button.toolTip() and "--" not in button.toolTip()


# -- the Wayland notice -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["xwayland", "wayland"])
def test_a_wayland_session_is_said_before_a_run(qtbot: QtBot, kind: str) -> None:
    window = make(qtbot, lambda: kind)
    notice = window.session_label
    assert notice.isVisible()
    text = notice.text()
    assert text.startswith("This is a Wayland session")
    assert "X11 session" in text and "log out" in text.lower()  # how to get one where all works
    if kind == "xwayland":
        assert "XWayland" in text  # what works here


@pytest.mark.parametrize("kind", ["x11", "none"])
def test_no_notice_outside_wayland(qtbot: QtBot, kind: str) -> None:
    assert make(qtbot, lambda: kind).session_label.isHidden()


def test_a_session_reader_that_fails_costs_only_the_notice(qtbot: QtBot) -> None:
    def broken() -> str:
        raise OSError("no environment")

    assert make(qtbot, broken).session_label.isHidden()


# -- text wraps instead of being cut off -------------------------------------------------------


def fully_shown(window: TaskWindow, label: QLabel) -> bool:
    """Whether ``label`` shows all its text: wrapped, as tall as its width needs, and no
    wider than the window's visible content."""
    viewport = window.scroll_area.viewport().width()
    return (label.wordWrap() and label.isVisible()
            and label.height() >= label.heightForWidth(label.width())
            and label.geometry().right() <= viewport)


def test_long_text_wraps_whole_at_the_smallest_window_size(qtbot: QtBot) -> None:
    window = make(qtbot, lambda: "xwayland")
    # The smallest window fits a 1366x768 screen with a panel and a title bar.
    minimum = window.minimumSize()
    assert minimum.width() <= 1366 and minimum.height() <= 768 - 80

    window.show_guide(True, ENDPOINT)  # (the window grows for it where the screen has room)
    window.resize(minimum)
    qtbot.waitUntil(lambda: window.size() == minimum, timeout=2000)
    window.guide.set_setup("failed", LONG)
    window.set_model_status(LONG, "error")
    window.set_can_start(False, LONG)
    window.show_error(LONG)
    window.on_event(started())  # a run's error and its result
    window.show_error(LONG)
    window.on_event(RunFinished("r1", Outcome.ERROR, LONG, 1, result=RunResult.FAILED))
    window.show_error(LONG)
    labels = [window.error_label, window.result_label, window.model_status,
              window.session_label]

    def all_whole() -> bool:
        return all(fully_shown(window, label) for label in labels)

    qtbot.waitUntil(all_whole, timeout=3000)
    for label in labels:
        assert label.text().rstrip().endswith(("END-OF-MESSAGE", ")", "."))
    assert window.error_label.text() == LONG  # the whole message, not elided
    assert LONG in window.result_label.text() and LONG in window.model_status.text()
    bar = window.scroll_area.horizontalScrollBar()
    assert not bar.isVisible() and bar.maximum() == 0  # no sideways scrolling

    # The guide's labels too (shown again once the run is over)...
    guide_labels = [window.guide.what_label, window.guide.progress_label]
    qtbot.waitUntil(lambda: all(fully_shown(window, label) for label in guide_labels),
                    timeout=3000)
    assert window.guide.progress() == LONG
    assert window.why_label.isHidden()  # the guide says why in its own words
    # ...and why Start is greyed out, without the guide (a server answers, but not well).
    window.show_guide(False)
    qtbot.waitUntil(lambda: fully_shown(window, window.why_label), timeout=3000)
    assert window.size() == minimum


def test_a_text_that_grows_later_is_not_cut_off(qtbot: QtBot) -> None:
    """The reported case: a result cut off until the window was resized."""
    window = make(qtbot)
    window.resize(window.minimumSize())
    window.show_error("short")
    qtbot.waitUntil(lambda: fully_shown(window, window.error_label), timeout=2000)
    window.show_error(LONG * 3)
    qtbot.waitUntil(lambda: fully_shown(window, window.error_label), timeout=2000)


# -- errors clear when what they describe is over -----------------------------------------------


def test_clear_error_takes_only_the_error_it_names(qtbot: QtBot) -> None:
    window = make(qtbot)
    window.show_error("The model server is not ready: nothing answers.")
    window.clear_error("The model server is not ready: something else.")
    assert window.error_label.isVisible()
    window.clear_error("The model server is not ready: nothing answers.")
    assert window.error_label.isHidden()
    window.show_error("A newer problem.")
    window.clear_error("The model server is not ready: nothing answers.")
    assert window.error_label.isVisible()


# -- an automation's run is titled with its name -------------------------------------------------


def test_an_automation_run_is_titled_with_its_name(qtbot: QtBot) -> None:
    window = make(qtbot)
    window.on_event(started("rename the photos"))
    window.on_event(RunFinished("r1", Outcome.ANSWERED, "renamed", 3, "12 photos",
                                result=RunResult.DONE))
    assert "rename the photos" in window.windowTitle()

    # The automation fails before it starts: shown under its name, not the last task's.
    window.expect_run("Morning report", "open the mail and sum up")
    window.show_error("The model server is not ready: nothing answers.")
    assert window.windowTitle() == "holodesk — automation: Morning report"
    assert "Morning report" in window.step_label.text()
    assert window.result_label.isHidden()  # the previous task's result is gone

    # It runs and fails: named in the title and the outcome.
    window.expect_run("Morning report", "open the mail and sum up")
    window.on_event(started("open the mail and sum up"))
    assert window.windowTitle() == "holodesk — automation: Morning report"
    assert window.step_label.text().startswith("Automation “Morning report”")
    window.on_event(RunFinished("r2", Outcome.ERROR, "the model server broke off", 1,
                                result=RunResult.FAILED))
    assert window.status_label.text().startswith("Automation “Morning report”: Failed")
    assert window.windowTitle() == "holodesk — automation: Morning report"

    # A task typed in the window afterwards is titled with itself again.
    window.task_edit.setPlainText("empty the trash")
    window.start_button.click()
    assert window.windowTitle() == NEW_TASK_TITLE
    window.on_event(started("empty the trash"))
    assert window.windowTitle() == "holodesk — empty the trash"
    assert window.step_label.text() == "Task: empty the trash"

    # A task sent from elsewhere (holodesk trigger) after an automation: not under its name.
    window.expect_run("Morning report", "open the mail and sum up")
    window.expect_run("", "print the report")
    assert window.windowTitle() == NEW_TASK_TITLE


# -- how a run ended, and what to try next after a done demo -----------------------------------


def in_view(window: TaskWindow, widget: QWidget) -> bool:
    """Whether ``widget`` is whole inside the window's scrolled view: read without scrolling."""
    viewport = window.scroll_area.viewport()
    top_left = widget.mapTo(viewport, QPoint(0, 0))
    return widget.isVisible() and viewport.rect().contains(QRect(top_left, widget.size()))


@pytest.mark.parametrize(("result", "header", "tone"), [
    (RunResult.NOT_DONE, "Not done", Tone.ERROR),
    (RunResult.FAILED, "Failed", Tone.ERROR),
    (RunResult.STOPPED, "Stopped", Tone.WARNING),
    (RunResult.DONE, "Done", Tone.OK),
])
def test_the_result_heads_the_run_with_its_reason_in_view(
        qtbot: QtBot, result: RunResult, header: str, tone: Tone) -> None:
    """At the smallest window size with the first-run guide above the run (no model server:
    the demo's case), the result and why are in view once the run ends, in the result's
    colour; nothing under a red header is green."""
    window = make(qtbot)
    window.show_guide(True, ENDPOINT)
    window.resize(window.minimumSize())
    qtbot.waitUntil(lambda: window.size() == window.minimumSize(), timeout=2000)
    window.on_event(started())
    window.on_event(RunFinished("r1", Outcome.ANSWERED, "the practice task is not done", 1,
                                answer="I did nothing.", result=result))
    assert window.status_label.text() == f"{header} after 1 step(s)"
    assert window.status_label.styleSheet() == text_style(tone)
    assert window.result_label.text() == ("the practice task is not done\n"
                                          "The model's answer: I did nothing.")
    assert window.result_label.styleSheet() == ""  # only the header carries the colour
    qtbot.waitUntil(lambda: in_view(window, window.status_label)
                    and in_view(window, window.result_label), timeout=3000)
    assert window.guide.isVisible()  # still there, above, for after the run


def test_a_done_demo_says_what_to_try_next_with_a_button_for_each(qtbot: QtBot) -> None:
    window = make(qtbot)
    window.show_guide(True, ENDPOINT)
    window.resize(window.minimumSize())
    window.on_event(started())
    window.on_event(RunFinished("r1", Outcome.ANSWERED, "the checklist is all done", 5,
                                result=RunResult.DONE))
    assert window.next_steps.isHidden()  # only when the demo says so (DemoControl)
    window.show_next_steps()
    note = window.next_steps
    assert note.what_label.text() == WHAT_HAPPENED
    qtbot.waitUntil(lambda: in_view(window, note.title_label), timeout=3000)
    buttons = {note.setup_button: window.setup_requested,
               note.connect_button: window.connect_requested,
               note.log_button: window.log_requested}
    assert [b.text() for b in (note.setup_button, note.connect_button, note.task_button,
                               note.log_button)] == [
        "Set up a model server on this machine", "Connect to a server elsewhere…",
        "Write a first task", "Open the action log"]
    for button, signal in buttons.items():
        with qtbot.waitSignal(signal, timeout=1000):
            button.click()
    note.task_button.click()  # the task box, ready to type in
    assert note.isHidden()
    assert window.focusWidget() is window.task_edit
    window.show_next_steps()
    window.on_event(started("open the Downloads folder"))  # the next run: the note goes
    assert note.isHidden()
