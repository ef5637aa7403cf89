"""A window list that cannot be had paints everything out, never nothing: a failed lookup must
not send the never-touch applications to the model (found by a review: the X11 finder
answered a failed list with no windows)."""

from __future__ import annotations

from typing import Any

import pytest

from app.session import _with_never_touch
from app.settings import Settings
from control.capture import EVERYTHING
from control.target import Target, WindowListError
from control.target_x11 import X11TargetFinder
from model.coords import Rect

KEEPASS = Rect(100, 100, 400, 300)


def _finder(walks: list[Any]) -> X11TargetFinder:
    """An X11 finder whose walks of the windows give ``walks`` in turn (an exception raised)."""
    finder = X11TargetFinder(":987")
    finder._watch.generation = lambda: None  # type: ignore[method-assign]
    finder._connection = lambda: object()  # type: ignore[method-assign]

    def walk(_d: object) -> list[Target]:
        answer = walks.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return list(answer)

    finder._windows = walk  # type: ignore[method-assign]
    return finder


def test_a_failed_list_is_an_error_not_an_empty_desktop() -> None:
    keepass = Target(window=1, wm_instance="keepassxc", wm_class="KeePassXC", rect=KEEPASS)
    finder = _finder([[keepass], RuntimeError("a window closed under the walk")])
    assert list(finder.windows()) == [keepass]
    with pytest.raises(WindowListError, match="closed under the walk"):
        finder.windows()


def test_a_failed_list_paints_the_whole_frame_out() -> None:
    keepass = Target(window=1, wm_instance="keepassxc", wm_class="KeePassXC", rect=KEEPASS)
    finder = _finder([[keepass], RuntimeError("a window closed under the walk"), [keepass]])
    rects = _with_never_touch(lambda: [Rect(0, 0, 10, 10)], finder, Settings())
    assert rects is not None
    assert rects() == [Rect(0, 0, 10, 10), KEEPASS]
    assert rects() == [Rect(0, 0, 10, 10), EVERYTHING]  # this frame shows nothing
    assert rects() == [Rect(0, 0, 10, 10), KEEPASS]  # and the next one is asked again
