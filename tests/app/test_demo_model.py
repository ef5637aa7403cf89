"""The demo model's seeing and planning, on drawn screenshots (no display).

Each screenshot is a plain background with the practice window's marks drawn where a test
puts them (:func:`practice`): the model must find the window, read the checklist and point
at the right part, in norm1000 of the image it was sent, or refuse with no action when the
window is not (wholly) there.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pytest
from PIL import Image

from app.demo import model as demo_model
from app.demo.look import (
    BLUE_SWATCH,
    BORDER,
    DELETE_BUTTON,
    LIST_FRAME,
    NAME,
    NAME_FIELD,
    OTHER_SWATCHES,
    ROWS_BORDER,
    SAVE_BUTTON,
    STATUS_COLORS,
    STEPS,
    TOLERANCE,
    WANTED_ROW_MARK,
    Status,
)
from control.policy import ConfirmMode, SafetyPolicy
from model.schema import ACTION_ADAPTER, Step
from tests.support.demo_screens import (
    DELETE_BOX,
    NAME_BOX,
    SAVE_BOX,
    SIZE,
    SWATCHES,
    Box,
    centre,
    frame,
    practice,
)
from tests.support.fake_policies import image_message, jpeg_bytes, screenshot


def act(image: Image.Image) -> dict[str, object]:
    step = demo_model.plan(image)
    Step.model_validate(step)  # always a step the real client accepts
    assert str(step["thought"]).startswith("Demo: ")
    action: dict[str, object] = step["action"]
    return action


def assert_near(action: dict[str, object], point: tuple[int, int], slack: int = 3) -> None:
    x, y = action["x"], action["y"]
    assert isinstance(x, int) and isinstance(y, int)
    assert abs(x - point[0]) <= slack and abs(y - point[1]) <= slack, (action, point)


def assert_refused(action: dict[str, object], words: str) -> None:
    assert action["action"] == "answer", action
    assert "x" not in action
    assert words in str(action["text"]), action["text"]
    assert str(action["text"]).startswith("Demo: ")


T, A, D = Status.TODO, Status.ACTIVE, Status.DONE


def test_an_empty_form_gets_a_click_on_the_name_field() -> None:
    action = act(practice())
    assert action["action"] == "click"
    assert action["element"] == "Name field"
    assert_near(action, centre(NAME_BOX))


def test_a_focused_name_field_gets_the_name_typed() -> None:
    assert act(practice((A, T, T, T))) == {"action": "type", "text": NAME}


@pytest.mark.parametrize(("statuses", "element", "box"), [
    ((D, T, T, T), "Blue in the colour list", SWATCHES["Blue"]),
    ((D, D, T, T), "Save button", SAVE_BOX),
    ((D, D, D, T), "Delete draft button", DELETE_BOX),
])
def test_the_first_unfinished_item_is_pointed_at(statuses: Sequence[Status], element: str,
                                                 box: Box) -> None:
    action = act(practice(statuses))
    assert action["action"] == "click"
    assert action["element"] == element
    assert_near(action, centre(box))


def test_a_finished_checklist_is_answered() -> None:
    action = act(practice((D, D, D, D)))
    assert action["action"] == "answer"
    assert "done" in str(action["text"])


def test_the_point_follows_the_window_and_the_image_size() -> None:
    """Moved and on a smaller screen: the point is where the part is, in norm1000 of the image
    sent (not a remembered place)."""
    size = (1100, 760)
    image = practice((D, D, T, T), offset=(-200, 60), size=size)
    action = act(image)
    moved = (SAVE_BOX[0] - 200, SAVE_BOX[1] + 60, SAVE_BOX[2] - 200, SAVE_BOX[3] + 60)
    assert_near(action, centre(moved, size))


def test_it_reads_a_jpeg_as_the_client_sends_it() -> None:
    data = jpeg_bytes(practice((D, T, T, T)), quality=85)
    step = demo_model.answer([{"role": "system", "content": "x"}, image_message(data)])
    assert step["action"]["element"] == "Blue in the colour list"
    assert_near(step["action"], centre(SWATCHES["Blue"]))


def test_the_newest_screenshot_is_the_one_read() -> None:
    older = image_message(practice())
    newer = image_message(practice((D, D, T, T)))
    step = demo_model.answer([older, {"role": "assistant", "content": "{}"}, newer])
    assert step["action"]["element"] == "Save button"


def test_no_practice_window_no_action() -> None:
    assert_refused(act(screenshot(SIZE, [], background=(20, 20, 20))), "cannot see")


def test_a_window_covered_in_part_gets_no_action() -> None:
    """Another window over the practice window's right half: its border is not whole, so the
    model does not act, not even on the parts it still sees."""
    image = practice(covers=[(700, 100, 1100, 700)])
    assert_refused(act(image), "cannot see the whole holodesk practice window")


def test_a_window_off_the_screen_gets_no_action() -> None:
    assert_refused(act(practice(offset=(500, 0))), "cannot see the whole")


def test_a_part_it_cannot_see_is_not_guessed() -> None:
    assert_refused(act(practice((D, D, T, T), without=["save"])), "cannot see the Save button")
    assert_refused(act(practice((D, T, T, T), without=["blue"])), "cannot see the Blue")


def test_a_checklist_it_cannot_read_gets_no_action() -> None:
    assert_refused(act(practice((T, T, T))), "cannot read the practice window's checklist")


def test_a_mark_outside_the_window_is_never_pointed_at() -> None:
    """The Save colour on the screen but outside the window (another app's button): not it."""
    image = practice((D, D, T, T), without=["save"])
    outside = screenshot(SIZE, frame((60, 700, 220, 790), SAVE_BUTTON))
    image.paste(outside.crop((0, 680, 300, 800)), (0, 680))
    assert_refused(act(image), "I did nothing")


def test_no_screenshot_no_action() -> None:
    step = demo_model.answer([{"role": "user", "content": "hello"}])
    assert_refused(step["action"], "no screenshot")


def test_a_broken_image_is_an_error() -> None:
    bad = {"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}}]}
    with pytest.raises(ValueError, match="cannot be decoded"):
        demo_model.answer([bad])


def test_exactly_one_step_of_the_task_asks_in_risky_mode() -> None:
    """The whole practice task judged by the real policy: only Delete draft asks."""
    policy = SafetyPolicy(ConfirmMode.RISKY)
    history = []
    asked = []
    for statuses in ((T, T, T, T), (A, T, T, T), (D, T, T, T), (D, D, T, T), (D, D, D, T)):
        action = ACTION_ADAPTER.validate_python(act(practice(statuses)))
        if policy.assess(action, history=history).confirm:
            asked.append(action)
        history.append(action)
    assert [getattr(a, "element", None) for a in asked] == ["Delete draft button"]


def test_the_checklist_order_is_the_tasks() -> None:
    assert STEPS == ("name", "colour", "saved", "deleted")


def test_png_works_too() -> None:
    buffer = io.BytesIO()
    practice((D, D, D, T)).save(buffer, format="PNG")
    image = Image.open(io.BytesIO(buffer.getvalue()))
    assert act(image)["element"] == "Delete draft button"


def test_no_mark_passes_for_another() -> None:
    """Each mark's colour is outside the tolerance of every other mark's, of white, black,
    Qt Fusion's window grey and its selection colour (the colours around the marks)."""
    marks = {"border": BORDER, "name": NAME_FIELD, "blue": BLUE_SWATCH, "save": SAVE_BUTTON,
             "delete": DELETE_BUTTON, "rows": ROWS_BORDER, "wanted row": WANTED_ROW_MARK,
             "list": LIST_FRAME, **OTHER_SWATCHES,
             **{str(k): v for k, v in STATUS_COLORS.items()}}
    around = {"white": (255, 255, 255), "black": (0, 0, 0), "window": (239, 239, 239),
              "selection": (48, 140, 198), "tk grey": (217, 217, 217),
              "tk selection": (195, 195, 195)}
    names = list(marks)
    for i, a in enumerate(names):
        for b, other in [*((n, marks[n]) for n in names[i + 1:]), *around.items()]:
            gap = max(abs(p - q) for p, q in zip(marks[a], other, strict=True))
            assert gap > TOLERANCE, (a, b, gap)


def _rows_shot(*, wanted: bool, done: bool) -> Image.Image:
    """The rows window drawn as the demo model sees it: its frame, the framed list, the row
    mark when in view, the status square."""
    from PIL import ImageDraw

    image = Image.new("RGB", (800, 600), (40, 40, 40))
    draw = ImageDraw.Draw(image)
    draw.rectangle((100, 100, 500, 500), fill=(217, 217, 217), outline=ROWS_BORDER, width=8)
    draw.rectangle((130, 160, 400, 470), fill=(255, 255, 255), outline=LIST_FRAME, width=5)
    if wanted:
        draw.rectangle((140, 300, 390, 320), fill=WANTED_ROW_MARK)
    square = STATUS_COLORS[Status.DONE if done else Status.TODO]
    draw.rectangle((420, 160, 446, 186), fill=square)
    return image


def test_the_rows_window_is_scrolled_until_the_row_shows_then_clicked() -> None:
    first = demo_model.plan(_rows_shot(wanted=False, done=False))["action"]
    assert (first["action"], first["direction"]) == ("scroll", "down")
    assert (first["x"], first["y"]) == (round(265.5 / 800 * 1000), round(315.5 / 600 * 1000))
    then = demo_model.plan(_rows_shot(wanted=True, done=False))["action"]
    assert then["action"] == "click" and then["element"] == "the wanted row"
    assert (then["x"], then["y"]) == (round(265.5 / 800 * 1000), round(310.5 / 600 * 1000))
    last = demo_model.plan(_rows_shot(wanted=True, done=True))["action"]
    assert last["action"] == "answer"


@pytest.mark.parametrize("said", [
    {"note": "", "thought": "t", "action": {"action": "type", "text": NAME}},  # holodesk's
    {"note": None, "thought": "t", "tool_call": {"tool_name": "write_desktop",  # H's
                                                 "content": NAME, "press_enter": False,
                                                 "overwrite": False}},
])
def test_text_it_just_typed_that_does_not_show_yet_is_waited_for_not_typed_twice(
        said: dict[str, object]) -> None:
    """A busy window redraws late: the name typed a moment ago is not in the screenshot yet.
    Typing it again would type it twice; the demo model waits once, then types again if it
    still does not show."""
    import json

    screen = image_message(practice((A, T, T, T)))
    typed = {"role": "assistant", "content": json.dumps(said)}
    waited = {"role": "assistant", "content": json.dumps(
        {"note": "", "thought": "t", "action": {"action": "wait", "seconds": 1}})}
    assert demo_model.answer([screen, typed, screen])["action"]["action"] == "wait"
    assert demo_model.answer([screen, typed, screen, waited, screen])["action"] == {
        "action": "type", "text": NAME}
