"""The confirmation panel's place (ui/panel_place.py): never over the points it asks about,
another monitor first, else the far side; over many points and screen layouts."""

from __future__ import annotations

import itertools
import random

import pytest

from model.coords import Rect
from ui.panel_place import Placement, keep_out_boxes, place_bar, place_panel

KEEP_OUT = 22 * 1.7 + 8 + 16  # the marker with its halo (ui/overlay.py) and a margin
PANEL = (506, 620)  # the panel's frame in the report (x 915–1421)

ONE_1080 = [Rect(0, 0, 1920, 1080)]
ONE_768 = [Rect(0, 0, 1366, 768)]
ONE_768_PANEL = [Rect(0, 27, 1366, 741)]  # a top bar takes the first 27 pixels
TWO_SIDE_BY_SIDE = [Rect(0, 0, 1920, 1080), Rect(1920, 0, 1366, 768)]
TWO_STACKED = [Rect(0, 0, 1366, 768), Rect(0, 768, 1920, 1080)]
TWO_LEFT_OF_PRIMARY = [Rect(0, 0, 2560, 1440), Rect(-1280, 200, 1280, 1024)]
LAYOUTS = [ONE_1080, ONE_768, ONE_768_PANEL, TWO_SIDE_BY_SIDE, TWO_STACKED, TWO_LEFT_OF_PRIMARY]


def _overlaps(a: Rect, b: Rect) -> bool:
    return a.left < b.right and b.left < a.right and a.top < b.bottom and b.top < a.bottom


def _on_a_screen(rect: Rect, screens: list[Rect]) -> bool:
    return any(s.left <= rect.left and rect.right <= s.right and s.top <= rect.top
               and rect.bottom <= s.bottom for s in screens)


def _check(placed: Placement, points: list[tuple[float, float]], screens: list[Rect],
           size: tuple[int, int] = PANEL) -> None:
    assert not placed.covers
    rect = placed.rect
    assert _on_a_screen(rect, screens), f"{rect} is off the screens {screens}"
    for box in keep_out_boxes(points, KEEP_OUT):
        assert not _overlaps(rect, box), f"{rect} covers the target box {box}"
    for x, y in points:  # the point itself, and the marker's full reach around it
        assert not rect.contains(x, y)
        assert (x + KEEP_OUT <= rect.left or x - KEEP_OUT >= rect.right
                or y + KEEP_OUT <= rect.top or y - KEEP_OUT >= rect.bottom)


def _grid(screens: list[Rect], step: int) -> list[tuple[float, float]]:
    spots = []
    for s in screens:
        for x in range(s.left, s.right, step):
            for y in range(s.top, s.bottom, step):
                spots.append((float(x), float(y)))
        spots.append((float(s.right - 1), float(s.bottom - 1)))
    return spots


def test_the_reported_case_goes_to_the_far_side() -> None:
    # A click at 960,540 on 1920x1080: the panel opened spanning x 915–1421, over the point.
    placed = place_panel(PANEL, [(960, 540)], ONE_1080, keep_out=KEEP_OUT)
    _check(placed, [(960, 540)], ONE_1080)
    assert placed.rect.right < 960 or placed.rect.left > 960
    assert placed.rect.width == PANEL[0]


@pytest.mark.parametrize("screens", LAYOUTS, ids=["1080", "768", "768-with-bar",
                                                  "side-by-side", "stacked", "left-of-primary"])
def test_no_single_point_anywhere_is_ever_covered(screens: list[Rect]) -> None:
    for point in _grid(screens, 37):
        placed = place_panel(PANEL, [point], screens, keep_out=KEEP_OUT)
        _check(placed, [point], screens)
        assert placed.rect.width == PANEL[0] and placed.rect.height == PANEL[1], \
            f"the panel was made smaller for {point} on {screens}"


@pytest.mark.parametrize("screens", [TWO_SIDE_BY_SIDE, TWO_STACKED, TWO_LEFT_OF_PRIMARY])
def test_another_monitor_is_preferred(screens: list[Rect]) -> None:
    for point in _grid(screens, 97):
        placed = place_panel(PANEL, [point], screens, keep_out=KEEP_OUT)
        target_screen = next(s for s in screens if s.contains(*point))
        other = next(s for s in screens if s is not target_screen)
        assert _overlaps(placed.rect, other) and not _overlaps(placed.rect, target_screen), \
            f"{point}: {placed.rect} is not on the other monitor {other}"


def test_the_far_side_on_one_monitor() -> None:
    left = place_panel(PANEL, [(1700, 500)], ONE_1080, keep_out=KEEP_OUT).rect
    assert left.right < 1000  # the target is on the right: the panel on the left
    right = place_panel(PANEL, [(200, 500)], ONE_1080, keep_out=KEEP_OUT).rect
    assert right.left > 1000


def test_drags_keep_both_ends_clear() -> None:
    rng = random.Random(12)
    for screens in LAYOUTS:
        for _ in range(150):
            ends = []
            for _end in range(2):
                s = rng.choice(screens)
                ends.append((float(rng.randrange(s.left, s.right)),
                             float(rng.randrange(s.top, s.bottom))))
            placed = place_panel(PANEL, ends, screens, keep_out=KEEP_OUT)
            _check(placed, ends, screens, PANEL)


def test_the_corners_and_edges_of_a_small_screen() -> None:
    s = ONE_768[0]
    corners = list(itertools.product((0.0, 1.0, 683.0, 1364.0, 1365.0),
                                     (0.0, 1.0, 384.0, 766.0, 767.0)))
    for point in corners:
        _check(place_panel(PANEL, [point], ONE_768, keep_out=KEEP_OUT), [point], [s])


def test_a_panel_too_big_for_the_free_side_is_made_smaller_not_laid_over_the_point() -> None:
    big = (1200, 700)
    placed = place_panel(big, [(683, 384)], ONE_768, keep_out=KEEP_OUT, minimum=(300, 200))
    _check(placed, [(683, 384)], ONE_768, big)
    assert placed.rect.width >= 300 and placed.rect.height >= 200
    assert placed.rect.width < big[0] or placed.rect.height < big[1]


def test_with_nowhere_free_it_says_so() -> None:
    placed = place_panel((1366, 768), [(683, 384)], ONE_768, keep_out=KEEP_OUT,
                         minimum=(1366, 768))
    assert placed.covers


def test_without_points_the_middle_of_the_first_screen() -> None:
    placed = place_panel((400, 300), [], TWO_SIDE_BY_SIDE, keep_out=KEEP_OUT)
    assert placed == Placement(Rect(760, 390, 400, 300))


def test_no_screen_is_an_error() -> None:
    with pytest.raises(ValueError, match="no screen"):
        place_panel(PANEL, [(1, 1)], [], keep_out=KEEP_OUT)


# -- the run bar (place_bar): off the window a run works in and its points -------------------

BAR = (440, 56)


def _centred(width: int, height: int, screen: Rect) -> Rect:
    return Rect(screen.left + (screen.width - width) // 2,
                screen.top + (screen.height - height) // 2, width, height)


@pytest.mark.parametrize("screens", [ONE_768, ONE_768_PANEL, ONE_1080], ids=str)
def test_the_bar_goes_beside_a_window_in_the_middle(screens: list[Rect]) -> None:
    """The demo's practice window (centred) on one screen: the bar covers none of it."""
    window = _centred(792, 552, screens[0])
    placed = place_bar(BAR, [], screens, keep_out=KEEP_OUT, avoid=[window])
    assert not placed.covers
    assert (placed.rect.width, placed.rect.height) == BAR
    assert not _overlaps(placed.rect, window), placed
    assert _on_a_screen(placed.rect, screens)


def test_the_bar_goes_to_the_edge_farthest_from_the_window() -> None:
    window = Rect(900, 100, 1000, 900)  # on the right of a 1920x1080 screen
    placed = place_bar(BAR, [], ONE_1080, keep_out=KEEP_OUT, avoid=[window])
    assert placed.rect.right <= window.left
    assert placed.rect.left < 100  # at the far (left) edge, not next to the window


@pytest.mark.parametrize("screens", [TWO_SIDE_BY_SIDE, TWO_STACKED, TWO_LEFT_OF_PRIMARY],
                         ids=str)
def test_another_monitor_at_its_top_edge(screens: list[Rect]) -> None:
    """The work fills the first monitor: the bar goes to the top middle of the other one."""
    work = screens[0]
    placed = place_bar(BAR, [(work.left + 50, work.top + 50)], screens, keep_out=KEEP_OUT,
                       avoid=[work])
    other = screens[1]
    assert not placed.covers
    assert _on_a_screen(placed.rect, [other])
    assert placed.rect.top - other.top < 20  # the edge, where the person's work is least
    middle = placed.rect.left + placed.rect.width / 2
    assert abs(middle - (other.left + other.width / 2)) <= 1


def test_a_window_filling_the_screen_keeps_the_points_clear() -> None:
    """A maximised window: covered it must be, but never where the run acts."""
    screen = ONE_1080[0]
    for point in [(1700, 40), (960, 30), (100, 1000), (960, 540)]:
        placed = place_bar(BAR, [point], ONE_1080, keep_out=KEEP_OUT, avoid=[screen])
        assert placed.covers
        for box in keep_out_boxes([point], KEEP_OUT):
            assert not _overlaps(placed.rect, box), (point, placed)


def test_a_window_filling_the_screen_with_no_point_yet_the_top_middle() -> None:
    placed = place_bar(BAR, [], ONE_768, keep_out=KEEP_OUT, avoid=[ONE_768[0]])
    assert placed.covers
    assert abs(placed.rect.left + BAR[0] / 2 - 683) <= 1 and placed.rect.top < 20


def test_the_panel_keeps_clear_of_rectangles_too() -> None:
    """place_panel's ``avoid``: the confirmation never goes over the window kept clear."""
    window = Rect(300, 100, 1300, 800)
    placed = place_panel(PANEL, [(900, 500)], ONE_1080, keep_out=KEEP_OUT, avoid=[window])
    assert not _overlaps(placed.rect, window)
