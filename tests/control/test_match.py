"""Template matching (control/match.py) on drawn screens: found where the crop moved to, found
at another display scale, not found once the target changed, refused when it is there twice."""

from __future__ import annotations

import numpy as np
from PIL import Image

from control.match import MIN_SCORE, Match, NoMatch, find, ncc, shifted_difference
from tests.support.drawn_screens import screen


def _screen(buttons: list[tuple[int, int]], scale: float = 1.0, **kw: object) -> Image.Image:
    return screen(buttons, scale, **kw)  # type: ignore[arg-type]


def _crop_around(image: Image.Image, x: int, y: int, half: int = 64) -> Image.Image:
    return image.crop((x - half, y - half, x + half, y + half))


def test_found_where_the_target_moved() -> None:
    recorded = _screen([(100, 100)])
    crop = _crop_around(recorded, 180, 140)  # the button's centre
    now = _screen([(420, 260)])
    found = find(now, crop)
    assert isinstance(found, Match), found
    # The crop's top-left moves with the button: (180 - 64 + 320, 140 - 64 + 160).
    assert (abs(found.left - 436), abs(found.top - 236)) <= (1, 1), found
    assert found.score >= MIN_SCORE


def test_found_at_a_display_scale_of_125_percent() -> None:
    recorded = _screen([(100, 100)])
    crop = _crop_around(recorded, 180, 140, half=48)
    now = _screen([(300, 150)], scale=1.25)
    found = find(now, crop, scale=1.25)
    assert isinstance(found, Match), found
    assert found.scale == 1.25
    # The centre of the crop is the button's centre, 1.25 times further from its corner.
    cx = found.left + 48 * found.scale
    cy = found.top + 48 * found.scale
    assert abs(cx - (300 + 80 * 1.25)) <= 2 and abs(cy - (150 + 40 * 1.25)) <= 2, found


def test_found_at_125_percent_even_when_the_scale_was_not_announced() -> None:
    recorded = _screen([(100, 100)])
    crop = _crop_around(recorded, 180, 140, half=48)
    found = find(_screen([(300, 150)], scale=1.25), crop)
    assert isinstance(found, Match) and found.scale == 1.25, found


def test_not_found_when_the_target_changed() -> None:
    recorded = _screen([(100, 100)])
    crop = _crop_around(recorded, 180, 140)
    relabelled = find(_screen([(100, 100)], label="quit"), crop)
    assert isinstance(relabelled, NoMatch), relabelled
    one_letter = find(_screen([(100, 100)], label="sbve"), crop)
    assert isinstance(one_letter, NoMatch), one_letter
    gone = find(_screen([]), crop)
    assert isinstance(gone, NoMatch), gone


def test_not_found_when_only_the_colour_changed() -> None:
    """NCC alone ignores colour: a red button turned green has the same shapes, and a green
    as light as the red (30, 122, 30 against 230, 20, 20) has the same grey levels too."""
    recorded = _screen([(100, 100)])
    crop = _crop_around(recorded, 180, 140)
    green = find(_screen([(100, 100)], colour=(30, 200, 30)), crop)
    assert isinstance(green, NoMatch), green
    same_grey = find(_screen([(100, 100)], colour=(30, 122, 30)), crop)
    assert isinstance(same_grey, NoMatch), same_grey
    assert "colour" in same_grey.reason


def test_two_identical_buttons_are_refused() -> None:
    recorded = _screen([(100, 100)])
    crop = _crop_around(recorded, 180, 140)
    twice = find(_screen([(100, 100), (500, 120)]), crop)
    assert isinstance(twice, NoMatch), twice
    assert "more than one place" in twice.reason


def test_a_flat_crop_is_refused() -> None:
    recorded = _screen([])
    flat = recorded.crop((300, 200, 400, 300))  # background only
    result = find(_screen([]), flat)
    assert isinstance(result, NoMatch) and "flat" in result.reason


def test_ncc_is_one_where_the_template_was_cut() -> None:
    rng = np.random.default_rng(1)
    image = rng.uniform(0, 255, (60, 80))
    scores = ncc(image, image[20:35, 30:50])
    y, x = np.unravel_index(int(np.argmax(scores)), scores.shape)
    assert (int(y), int(x)) == (20, 30)
    assert scores[20, 30] > 0.999


def test_shifted_difference_sees_a_moved_window_as_the_same_screen() -> None:
    def desktop(x: int, y: int) -> Image.Image:
        image = Image.new("L", (320, 240), 20)
        image.paste(200, (x, y, x + 100, y + 80))
        image.paste(90, (x + 10, y + 10, x + 40, y + 30))
        return image

    before = np.asarray(desktop(10, 20).reduce(16))
    moved = desktop(133, 77)  # by (123, 57): not a whole number of thumbnail pixels
    assert shifted_difference(before, moved, 123, 57, 16) < 1.0
    assert shifted_difference(before, moved, 0, 0, 16) > 10.0
    assert shifted_difference(before, desktop(10, 20), 0, 0, 16) == 0.0
