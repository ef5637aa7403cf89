"""The demo model's planners for the eval's task windows (app/demo/plans), on drawn screens
(tests/support/task_screens.py, no display): each step comes from the pixels and the task's
words, in norm1000 of the image sent, and a window it cannot see wholly gets no action."""

from __future__ import annotations

from typing import Any

import pytest
from PIL import Image

from app.demo import look, task_look
from app.demo import model as demo_model
from app.demo.dots import GLYPHS, DotFontError, layout, read_lines
from app.demo.look import TOLERANCE
from app.demo.plans.settings import wanted_ticks
from app.demo.task_look import (
    COPIES_WANTED,
    INVOICES,
    OPTIONS_START,
    OPTIONS_WANTED,
    POPUP_INSTANCES,
    THEME_WANTED,
    WANTED_INVOICE,
    ZOOM_WANTED,
)
from app.eval import TASKS, task_settings
from app.eval_windows import (
    MenuSubject,
    card_done,
    copies_set,
    numbers,
    options_applied,
    theme_applied,
    total_read,
    zoom_set,
)
from app.settings import Settings
from model.contracts import Vocabulary
from model.coords import Rect
from model.schema import Step
from tests.support import task_screens as screens
from tests.support.fake_policies import image_message

GOALS = {task.name: task.goal for task in TASKS}


def act(image: Image.Image, task: str) -> dict[str, Any]:
    """The planned action for ``image`` (sent as JPEG, as the client does) under ``task``'s
    goal, asked the way the client asks: the task first, then the screenshot."""
    messages = [{"role": "system", "content": "x"},
                {"role": "user", "content": [{"type": "text", "text": f"Task: {GOALS[task]}"}]},
                image_message(image)]
    step = demo_model.answer(messages)
    Step.model_validate(step)  # always a step the real client accepts
    assert str(step["thought"]).startswith("Demo: ")
    action: dict[str, Any] = step["action"]
    return action


def assert_at(action: dict[str, Any], kind: str, point: tuple[float, float],
              slack: int = 3) -> None:
    assert action["action"] == kind, action
    want = screens.norm(point)
    assert abs(action["x"] - want[0]) <= slack and abs(action["y"] - want[1]) <= slack, \
        (action, want)


def assert_refused(action: dict[str, Any], words: str) -> None:
    assert action["action"] == "answer" and "x" not in action, action
    assert words in action["text"] and "I did nothing" in action["text"], action["text"]


# -- the marks -----------------------------------------------------------------------------------

def _marks() -> dict[str, tuple[int, int, int]]:
    """Every colour of the practice window's look and the task windows' look."""
    found: dict[str, tuple[int, int, int]] = {}
    for module in (look, task_look):
        for name, value in vars(module).items():
            if isinstance(value, tuple) and len(value) == 3 and all(
                    isinstance(v, int) for v in value) and name.isupper():
                found[f"{module.__name__}.{name}"] = value
            elif isinstance(value, dict) and name.isupper():
                found.update({f"{module.__name__}.{name}[{k}]": v for k, v in value.items()
                              if isinstance(v, tuple) and len(v) == 3})
    found.update({f"TAGS[{i}]": tag for i, tag in enumerate(task_look.TAGS)})
    return found


def test_every_mark_is_apart_from_every_other_and_from_tks_greys() -> None:
    """A colour used twice on purpose (a tag that names a level and an option) is one mark."""
    marks = {color: name for name, color in _marks().items()}
    assert len(marks) >= 30
    around = {"white": (255, 255, 255), "black": (0, 0, 0), "tk grey": (217, 217, 217),
              "tk active": (236, 236, 236), "tk selection": (195, 195, 195),
              "box grey": (144, 144, 144), "window": (239, 239, 239),
              "openbox title bar": (100, 150, 240)}
    colors = list(marks)
    for i, a in enumerate(colors):
        for b in [*colors[i + 1:], *around.values()]:
            gap = max(abs(p - q) for p, q in zip(a, b, strict=True))
            assert gap > TOLERANCE, (marks[a], marks.get(b, b), gap)


# -- the dot font --------------------------------------------------------------------------------

def test_the_dot_font_reads_back_what_it_drew() -> None:
    import numpy as np

    text = " ".join(["".join(sorted(GLYPHS)), "INV-0042", "1275.90", "150%"])
    dots, width = layout(text, 4)
    ink = np.zeros((60, width + 20), dtype=bool)
    for dot in dots:
        ink[10 + dot.y:10 + dot.y + dot.size, 10 + dot.x:10 + dot.x + dot.size] = True
    [(_, words)] = read_lines(ink)
    assert words == text.split(" ")


def test_the_dot_font_says_which_characters_it_has() -> None:
    with pytest.raises(DotFontError, match="has no 'x'"):
        layout("0x10", 4)


# -- pick from a menu ----------------------------------------------------------------------------

def test_the_menu_is_opened_then_the_cascade_then_the_level() -> None:
    assert_at(act(screens.menu(), "menu-zoom"), "click", screens.centre(screens.VIEW_BOX))
    assert_at(act(screens.menu(view_open=True), "menu-zoom"), "click",
              screens.centre(screens.ZOOM_BOX))
    opened = act(screens.menu(zoom_open=True), "menu-zoom")
    assert_at(opened, "click", screens.centre(screens.ICONS[ZOOM_WANTED]))
    assert opened["element"] == f"{ZOOM_WANTED} in the Zoom menu"
    done = act(screens.menu(ZOOM_WANTED), "menu-zoom")
    assert done["action"] == "answer" and ZOOM_WANTED in done["text"]


def test_the_level_is_the_goals_not_a_remembered_one() -> None:
    step = demo_model.plan(screens.jpeg(screens.menu(zoom_open=True)), "Task: Zoom > 200%")
    assert_at(step["action"], "click", screens.centre(screens.ICONS["200%"]))
    refused = demo_model.plan(screens.menu(), "Task: make it bigger")
    assert_refused(refused["action"], "no zoom level")


def test_a_covered_menu_window_gets_no_action() -> None:
    image = screens.menu()
    image.paste((90, 90, 90), (500, 100, 900, 600))
    assert_refused(act(image, "menu-zoom"), "cannot see the whole")


def test_the_menus_pop_ups_are_in_the_runs_confinement() -> None:
    subject = MenuSubject.__new__(MenuSubject)  # only its class is read
    config = task_settings(Settings(), Rect(100, 50, 600, 400), subject, max_steps=7)
    assert config.only_in == ("holodesk-menu", *POPUP_INSTANCES)


# -- drag an item --------------------------------------------------------------------------------

def test_the_pointer_goes_onto_the_card_then_the_card_is_dragged() -> None:
    card = screens.centre(screens.CARD_AT["todo"])
    assert_at(act(screens.board(), "drag-card"), "move", card)
    drag = act(screens.board(hover=True), "drag-card")
    assert_at(drag, "drag", card)
    want = screens.norm(screens.centre(screens.DONE_BOX))
    assert abs(drag["to_x"] - want[0]) <= 3 and abs(drag["to_y"] - want[1]) <= 3
    done = act(screens.board("done", hover=True), "drag-card")
    assert done["action"] == "answer" and "Done box" in done["text"]


def test_in_hs_contract_the_drag_is_from_the_pointer_to_the_box() -> None:
    planned = demo_model.plan(screens.board(hover=True), GOALS["drag-card"])
    said = demo_model.in_contract(planned, Vocabulary.HOLO_NANO)
    call = said["tool_call"]
    assert call["tool_name"] == "drag_to_desktop"  # holo-nano's name for a drag_to
    assert (call["x"], call["y"]) == (planned["action"]["to_x"], planned["action"]["to_y"])


def test_a_board_without_its_card_or_box_gets_no_action() -> None:
    assert_refused(act(screens.board(without=["card"]), "drag-card"), "cannot see the card")
    assert_refused(act(screens.board(without=["done"]), "drag-card"), "cannot see the Done")


# -- find and read a value ---------------------------------------------------------------------

def test_the_asked_invoices_total_is_read_and_answered() -> None:
    action = act(screens.invoices(), "read-invoice")
    assert action["action"] == "answer"
    assert "1275.90" in action["text"]
    assert total_read({}, action["text"]).passed


def test_another_invoice_is_read_when_asked() -> None:
    step = demo_model.plan(screens.jpeg(screens.invoices()), "Task: total of INV-0420?")
    assert "1257.09" in step["action"]["text"]


def test_an_invoice_not_in_the_table_is_not_guessed() -> None:
    rows = [row for row in INVOICES if row[0] != WANTED_INVOICE]
    assert_refused(act(screens.invoices(rows), "read-invoice"),
                   f"cannot find invoice {WANTED_INVOICE}")


def test_the_answer_check_wants_the_total_and_no_other() -> None:
    assert total_read({}, "It is 1,275.90 EUR").passed
    assert total_read({}, "1275.9").passed
    assert not total_read({}, "1257.09").passed
    assert not total_read({}, "1275.90 or 1257.09").passed  # a list of guesses is not an answer
    assert not total_read({}, None).passed
    assert numbers("INV-0042: 1275.90") == [1275.90]


# -- tick the right checkboxes --------------------------------------------------------------------

def test_the_goals_ticks_are_read_from_its_words() -> None:
    assert wanted_ticks(GOALS["settings-ticks"]) == OPTIONS_WANTED
    assert wanted_ticks("untick Sounds, then press Apply") == {"Sounds": False}


def test_each_wrong_box_is_clicked_then_apply_then_it_is_done() -> None:
    rows = screens.option_rows()
    ticked = dict(OPTIONS_START)
    for option in OPTIONS_WANTED:
        action = act(screens.settings(ticked), "settings-ticks")
        assert_at(action, "click", screens.centre(rows[option][1]))
        assert action["element"] == f"the {option} checkbox"
        ticked[option] = not ticked[option]
    assert_at(act(screens.settings(ticked), "settings-ticks"), "click",
              screens.centre(screens.APPLY_BOX))
    done = act(screens.settings(ticked, applied=True), "settings-ticks")
    assert done["action"] == "answer"


def test_the_check_reads_what_was_applied() -> None:
    assert options_applied({"applied": OPTIONS_WANTED}, None).passed
    shown_only = options_applied({"applied": None, "shown": OPTIONS_WANTED}, None)
    assert not shown_only.passed and "nothing applied" in shown_only.detail


# -- set a number --------------------------------------------------------------------------------

@pytest.mark.parametrize(("number", "box"), [(2, screens.PLUS_BOX), (6, screens.PLUS_BOX),
                                            (9, screens.MINUS_BOX), (12, screens.MINUS_BOX)])
def test_the_number_is_read_and_stepped_towards_the_goals(number: int,
                                                          box: screens.Box) -> None:
    assert_at(act(screens.copies(number), "set-copies"), "click", screens.centre(box), slack=5)


def test_the_number_reached_is_set_with_ok_then_answered() -> None:
    assert_at(act(screens.copies(COPIES_WANTED), "set-copies"), "click",
              screens.centre(screens.OK_BOX))
    done = act(screens.copies(COPIES_WANTED, set_=True), "set-copies")
    assert done["action"] == "answer" and str(COPIES_WANTED) in done["text"]


def test_window_state_checks() -> None:
    assert zoom_set({"zoom": ZOOM_WANTED}, None).passed
    assert not zoom_set({"zoom": "100%"}, None).passed
    assert card_done({"box": "done"}, None).passed
    assert not card_done({"box": "todo"}, None).passed
    assert copies_set({"set": COPIES_WANTED, "copies": COPIES_WANTED}, None).passed
    assert not copies_set({"set": None, "copies": COPIES_WANTED}, None).passed


def test_the_window_managers_title_bar_is_not_read_as_a_level() -> None:
    """Above the menu bar is the title bar (openbox's is blue): not a zoom level's colour."""
    image = screens.menu(ZOOM_WANTED)
    image.paste((100, 150, 240), (200, 95, 800, 119))
    done = act(image, "menu-zoom")
    assert done["action"] == "answer" and ZOOM_WANTED in done["text"]


# -- switch to a tab and change a value ---------------------------------------------------------

def test_the_tab_is_opened_then_the_theme_chosen_then_applied() -> None:
    assert_at(act(screens.prefs(), "tab-theme"), "click",
              screens.centre(screens.DISPLAY_TAB_BOX))
    choose = act(screens.prefs("Display"), "tab-theme")
    assert_at(choose, "click", screens.centre(screens.THEME_ROWS[THEME_WANTED][1]))
    assert_at(act(screens.prefs("Display", THEME_WANTED), "tab-theme"), "click",
              screens.centre(screens.PREFS_APPLY_BOX))
    done = act(screens.prefs("Display", THEME_WANTED, applied=True), "tab-theme")
    assert done["action"] == "answer" and THEME_WANTED in done["text"]
    assert theme_applied({"applied": THEME_WANTED}, None).passed
    assert not theme_applied({"applied": None, "theme": THEME_WANTED}, None).passed


def test_every_task_window_covered_or_gone_gets_no_action() -> None:
    drawn = {"menu-zoom": screens.menu(), "drag-card": screens.board(),
             "read-invoice": screens.invoices(), "set-copies": screens.copies(2),
             "settings-ticks": screens.settings(dict(OPTIONS_START)),
             "tab-theme": screens.prefs()}
    for task, image in drawn.items():
        image.paste((90, 90, 90), (450, 60, 950, 650))
        assert_refused(act(image, task), "cannot see the whole")


def test_each_task_window_has_its_module_and_its_command() -> None:
    """`holodesk --task-window NAME` shows ui/practice/tasks/NAME.py's window; a frozen
    holodesk is started with the option itself (it has no Python to run a module with)."""
    import importlib
    import sys
    from pathlib import Path

    from app.demo.task_windows import TASK_WINDOW_OPTION, task_window_command
    from ui.practice.tasks.base import TaskApp

    for kind in task_look.BORDERS:
        module = importlib.import_module(f"ui.practice.tasks.{kind.value}")
        apps = [v for v in vars(module).values() if isinstance(v, type)
                and issubclass(v, TaskApp) and v is not TaskApp and v.kind is kind]
        assert len(apps) == 1, kind
        frozen = task_window_command(kind, Path("/s.json"), frozen=True)
        assert frozen == [sys.executable, TASK_WINDOW_OPTION, kind.value, "--state", "/s.json"]
