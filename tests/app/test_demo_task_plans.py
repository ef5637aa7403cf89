"""The demo model's planners for `holodesk eval`'s Tk task windows, on drawn screenshots (no
display; tests/support/task_screens.py): each plans from the marks it sees, step by step, in
norm1000 of the image, refuses with no action when its window is not wholly there, says each
step in H's contract as well, and plans only steps the eval's own policy lets through."""

from __future__ import annotations

from typing import Any

import pytest
from PIL import Image

from app.demo import look
from app.demo import model as demo_model
from app.demo.look import TOLERANCE, Status
from app.demo.task_look import (
    CITY,
    CONTACTS_BORDER,
    CONTACTS_WM_CLASS,
    DELIVERY_BORDER,
    DELIVERY_WM_CLASS,
    EDITOR_WM_CLASS,
    EXPORT_WM_CLASS,
    FILES_WM_CLASS,
    MARKS,
    NEW_STATUS,
    ORDER_FORM_WM_CLASS,
    ORDER_SOURCE_WM_CLASS,
    POSTCODE,
    SEARCH_FOR,
    WM_CLASSES,
)
from app.eval import task_settings
from app.eval_windows import (
    ContactsSubject,
    DeliverySubject,
    EditorSubject,
    ExportSubject,
    FilesSubject,
    OrderSubject,
    TaskWindowSubject,
)
from app.settings import Settings
from control.policy import Aim, SafetyPolicy
from control.target import Target
from model.contracts import Vocabulary
from model.coords import Rect
from model.schema import ACTION_ADAPTER, Step
from tests.support import task_screens as screens
from tests.support.fake_policies import image_message, jpeg_bytes

T, A, D = Status.TODO, Status.ACTIVE, Status.DONE


def act(image: Image.Image) -> dict[str, Any]:
    step = demo_model.plan(image)
    Step.model_validate(step)  # always a step the real client accepts
    assert str(step["thought"]).startswith("Demo: ")
    action: dict[str, Any] = step["action"]
    return action


def assert_at(action: dict[str, Any], kind: str, point: tuple[int, int], slack: int = 4) -> None:
    assert action["action"] == kind, action
    assert abs(action["x"] - point[0]) <= slack and abs(action["y"] - point[1]) <= slack, (
        action, point)


def assert_refused(action: dict[str, Any], words: str) -> None:
    assert action["action"] == "answer", action
    assert words in str(action["text"]), action["text"]
    assert str(action["text"]).endswith("I did nothing.")


def test_no_task_mark_passes_for_another_or_for_a_grey() -> None:
    """Each mark is outside the tolerance of every other (look.py's too), and far from every
    grey: a title bar, a shadow or a Tk widget never counts as one."""
    old = {"practice border": look.BORDER, "name": look.NAME_FIELD, "blue": look.BLUE_SWATCH,
           "save": look.SAVE_BUTTON, "delete": look.DELETE_BUTTON, "rows": look.ROWS_BORDER,
           "wanted row": look.WANTED_ROW_MARK, "list": look.LIST_FRAME, **look.OTHER_SWATCHES,
           **{str(k): v for k, v in look.STATUS_COLORS.items()}}
    for name, color in MARKS.items():
        assert max(color) - min(color) > 2 * TOLERANCE, (name, color)  # no grey is near
        for other, theirs in [*old.items(), *MARKS.items()]:
            if other != name:
                gap = max(abs(p - q) for p, q in zip(color, theirs, strict=True))
                assert gap > TOLERANCE, (name, other, gap)


# -- edit-and-save ------------------------------------------------------------------------------

def test_the_editor_is_edited_then_saved() -> None:
    first = act(screens.editor("draft", saved=True).image)
    assert_at(first, "double_click", screens.editor("draft", saved=True).centre(screens.VALUE))
    assert act(screens.editor("draft", saved=True, selected=True).image) == {
        "action": "type", "text": NEW_STATUS}
    assert act(screens.editor("final", saved=False).image) == {
        "action": "hotkey", "keys": ["ctrl", "s"]}
    done = act(screens.editor("final", saved=True).image)
    assert done["action"] == "answer" and "saved" in done["text"]


def test_the_editors_point_follows_the_window() -> None:
    moved = screens.editor("draft", saved=True, offset=(-120, 90))
    assert_at(act(moved.image), "double_click", moved.centre(screens.VALUE))


def test_an_editor_it_cannot_read_gets_no_action() -> None:
    assert_refused(act(screens.editor("drafty", saved=False).image), "cannot find the value")
    # Half covered, it is no window the model may act in, whatever of it still shows.
    covered = screens.editor("draft", saved=True, covers=[(600, 100, 900, 500)])
    assert_refused(act(covered.image), "I cannot see the whole")


# -- copy-order-number --------------------------------------------------------------------------

def test_the_order_number_is_copied_across_then_submitted() -> None:
    s = screens.order()
    assert_at(act(s.image), "double_click", s.centre(screens.NUMBER))
    assert act(screens.order(selected=True).image) == {"action": "hotkey", "keys": ["ctrl", "c"]}
    assert_at(act(screens.order(selected=True, copied=True).image), "click",
              s.centre(screens.FIELD))
    assert act(screens.order(copied=True, field=A).image) == {
        "action": "hotkey", "keys": ["ctrl", "v"]}
    assert_at(act(screens.order(copied=True, field=D).image), "click", s.centre(screens.SUBMIT))
    assert act(screens.order(copied=True, field=D, sent=True).image)["action"] == "answer"


def test_one_of_the_two_windows_covered_gets_no_action() -> None:
    """The form half covered: the model does not act, not even in the order window."""
    image = screens.order(covers=[(700, 100, 1000, 400)]).image
    assert_refused(act(image), "cannot see both")


# -- export-as-csv, open-by-double-click, search-with-shortcut ----------------------------------

def test_csv_is_chosen_then_confirmed() -> None:
    s = screens.export()
    assert_at(act(s.image), "click", s.centre(screens.CSV))
    assert_at(act(screens.export("CSV").image), "click", s.centre(screens.OK))
    assert act(screens.export("CSV", exported=True).image)["action"] == "answer"


def test_the_wanted_document_is_double_clicked() -> None:
    s = screens.files()
    assert_at(act(s.image), "double_click", s.centre(screens.WANTED_ROW))
    assert act(screens.files(opened=True).image)["action"] == "answer"
    assert_refused(act(screens.files(wanted_in_view=False).image), "cannot see invoice")


def test_the_search_is_opened_with_its_shortcut() -> None:
    s = screens.contacts()
    assert_at(act(s.image), "click", s.centre(screens.CONTACT_LIST))
    assert act(screens.contacts(focused=True).image) == {"action": "hotkey",
                                                         "keys": ["ctrl", "f"]}
    assert act(screens.contacts(search=True).image) == {
        "action": "type", "text": SEARCH_FOR, "press_enter": True}
    assert act(screens.contacts(search=True, opened=True).image)["action"] == "answer"


def test_the_fields_are_filled_with_tab_between_them() -> None:
    s = screens.delivery()
    assert_at(act(s.image), "click", s.centre(screens.CITY_BOX))
    assert act(screens.delivery(A).image) == {"action": "type", "text": CITY}
    assert act(screens.delivery(D).image) == {"action": "hotkey", "keys": ["tab"]}
    assert act(screens.delivery(D, A).image) == {"action": "type", "text": POSTCODE}
    assert_at(act(screens.delivery(D, D).image), "click", s.centre(screens.SAVE))
    assert act(screens.delivery(D, D, saved=True).image)["action"] == "answer"


def test_a_border_colour_alone_picks_no_planner() -> None:
    """Another application showing a task window's border colour (a green button) is not that
    window: no task planner answers, and the model does nothing."""
    s = screens.Screen()
    for color in (DELIVERY_BORDER, CONTACTS_BORDER):
        s.fill((100, 100, 400, 200), color)
        assert_refused(act(s.image), "I cannot see the whole holodesk practice window")


def test_a_jpeg_is_read_as_the_client_sends_it() -> None:
    data = jpeg_bytes(screens.order(selected=True, copied=True).image, quality=85)
    step = demo_model.answer([image_message(data)])
    assert step["action"]["element"] == "Order number field of the returns form"


# -- both contracts, and the eval's own policy --------------------------------------------------

#: Every kind of step the task planners take, with the window class it is aimed at.
STEPS: list[tuple[Image.Image, str]] = [
    (screens.editor("draft", saved=True).image, EDITOR_WM_CLASS),
    (screens.editor("draft", saved=True, selected=True).image, EDITOR_WM_CLASS),
    (screens.editor("final", saved=False).image, EDITOR_WM_CLASS),
    (screens.order().image, ORDER_SOURCE_WM_CLASS),
    (screens.order(selected=True).image, ORDER_SOURCE_WM_CLASS),
    (screens.order(copied=True).image, ORDER_FORM_WM_CLASS),
    (screens.order(copied=True, field=A).image, ORDER_FORM_WM_CLASS),
    (screens.order(copied=True, field=D).image, ORDER_FORM_WM_CLASS),
    (screens.export().image, EXPORT_WM_CLASS),
    (screens.export("CSV").image, EXPORT_WM_CLASS),
    (screens.files().image, FILES_WM_CLASS),
    (screens.contacts().image, CONTACTS_WM_CLASS),
    (screens.contacts(focused=True).image, CONTACTS_WM_CLASS),
    (screens.contacts(search=True).image, CONTACTS_WM_CLASS),
    (screens.delivery().image, DELIVERY_WM_CLASS),
    (screens.delivery(A).image, DELIVERY_WM_CLASS),
    (screens.delivery(D).image, DELIVERY_WM_CLASS),
    (screens.delivery(D, A).image, DELIVERY_WM_CLASS),
    (screens.delivery(D, D).image, DELIVERY_WM_CLASS),
]


SUBJECTS: tuple[type[TaskWindowSubject], ...] = (
    EditorSubject, OrderSubject, ExportSubject, FilesSubject, ContactsSubject, DeliverySubject)


@pytest.mark.parametrize("vocabulary", [Vocabulary.HOLO_NANO, Vocabulary.HUB])
def test_every_step_is_said_in_hs_contract_too(vocabulary: Vocabulary) -> None:
    for image, _ in STEPS:
        planned = demo_model.plan(image)
        said = demo_model.in_contract(planned, vocabulary)
        assert said["tool_call"]["tool_name"], said
        if planned["action"]["action"] == "double_click":
            assert "double" in said["tool_call"]["tool_name"]


def test_the_eval_lets_every_planned_step_through() -> None:
    """Judged as the eval judges them (confirm never, only_in the task's own classes, the
    real policy): nothing a task needs is refused (a refused step would fail the task)."""
    for image, wm_class in STEPS:
        kind = next(k for k in SUBJECTS if wm_class in (WM_CLASSES[k.kind], *k.wm_classes))
        subject = kind.__new__(kind)  # only its classes are read
        config = task_settings(Settings(), Rect(100, 80, 800, 400), subject, max_steps=20)
        assert wm_class in config.only_in
        policy = SafetyPolicy(config.confirm, reserved_hotkeys=(config.stop_hotkey,),
                              never_touch=config.never_touch, only_in=config.only_in)
        # The window as the X11 finder reports a Tk window (class and instance).
        target = Target(window=0x1C00007, wm_instance=wm_class, wm_class=wm_class.title(),
                        process="python3", rect=Rect(100, 80, 800, 400))
        action = ACTION_ADAPTER.validate_python(demo_model.plan(image)["action"])
        verdict = policy.assess(action, aim=Aim(target=target))
        assert not verdict.forbidden and not verdict.confirm, (action, verdict.reasons)
