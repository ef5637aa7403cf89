"""The doctor's screen-capture check on a private Xvfb, whose empty desktop is black: an
all-black frame fails only when the capture does not show what is drawn.

The check decides by a square it shows on the monitor for a moment (app/doctor.py
``_probe_shows``): out in the grab, the capture works (an empty black desktop passes with a
note; black windows open there are a warning); still black, it fails. A blind capture is
simulated as the other doctor tests simulate a screen, with the stand-in capturer
(tests/support/fake_capturer.py) serving black frames whatever the X server draws, while the
square is really shown on the Xvfb.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.doctor import CAPTURE, Doctor, DoctorConfig, Status
from app.settings import Settings
from control.capture import Capturer
from model.coords import Rect
from tests.support.fake_capturer import FakeCapturer
from tests.support.gui import poll
from tests.support.home import isolate_home
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

PROBE_CLASS = "holodesk-doctor"


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def doctor(xvfb: Xvfb, **settings: str) -> Doctor:
    return Doctor(DoctorConfig(settings=Settings().with_overrides(settings),
                               environ=xvfb.env(), platform="linux"))


def _windows(xvfb: Xvfb) -> list[tuple[Any, str, bool]]:
    """Every window of the tree: (window, its class, whether it is viewable)."""
    from Xlib import X
    from Xlib import display as xdisplay

    conn = xdisplay.Display(xvfb.display)
    try:
        found = []
        todo = list(conn.screen().root.query_tree().children)
        while todo:
            window = todo.pop()
            todo += window.query_tree().children
            wm_class = window.get_wm_class() or ("", "")
            viewable = window.get_attributes().map_state == X.IsViewable
            found.append((window.id, wm_class[1], viewable))
        return found
    finally:
        conn.close()


def probes(xvfb: Xvfb) -> list[int]:
    """The capture check's squares still on the display (shown or not)."""
    return [wid for wid, klass, _ in _windows(xvfb) if klass == PROBE_CLASS]


@contextmanager
def black_window(xvfb: Xvfb, rect: Rect) -> Iterator[None]:
    """A mapped window that draws nothing but black, as a locked or blanked screen would."""
    from Xlib import X
    from Xlib import display as xdisplay

    conn = xdisplay.Display(xvfb.display)
    screen = conn.screen()
    window = screen.root.create_window(rect.left, rect.top, rect.width, rect.height, 0,
                                       screen.root_depth, X.InputOutput, X.CopyFromParent,
                                       background_pixel=screen.black_pixel)
    window.set_wm_class("blackout", "Blackout")
    window.map()
    conn.sync()
    try:
        poll(lambda: any(k == "Blackout" and shown for _, k, shown in _windows(xvfb)), 20,
             "the black window to map")
        yield
    finally:
        window.destroy()
        conn.close()


def test_an_empty_black_desktop_is_not_a_capture_failure(xvfb: Xvfb) -> None:
    with xvfb.activated():
        assert not [w for w in _windows(xvfb) if w[2]]  # nothing is open: a black desktop
        result = doctor(xvfb).check_capture()
        left = probes(xvfb)
    assert result.status is Status.PASS, result
    assert "the screen shows only a black background" in result.detail
    assert result.fix is not None and "nothing is open on this monitor" in result.fix.text
    assert left == []  # the square is gone


def test_the_square_is_shown_on_the_monitor_the_check_captures(xvfb: Xvfb) -> None:
    """A region of the screen: the square goes in its middle, where the grab can see it."""
    with xvfb.activated():
        result = doctor(xvfb, monitor="400x300+820+480").check_capture()
        left = probes(xvfb)
    assert result.status is Status.PASS, result
    assert "400x300 at +820+480" in result.detail
    assert left == []


def test_black_windows_on_a_working_capture_are_a_warning(xvfb: Xvfb) -> None:
    with xvfb.activated(), black_window(xvfb, Rect(100, 100, 600, 400)):
        result = doctor(xvfb).check_capture()
        left = probes(xvfb)
    assert result.status is Status.WARN, result
    assert "the 1 window open on it" in result.detail and "Blackout" in result.detail
    assert result.fix is not None and "unlock" in result.fix.text
    assert left == []


def test_a_capture_that_stays_black_still_fails(xvfb: Xvfb) -> None:
    shown: list[bool] = []

    def blind() -> np.ndarray[Any, np.dtype[np.uint8]]:
        # What the screen really shows at each grab: the square is there, the capture black.
        shown.append(any(k == PROBE_CLASS and up for _, k, up in _windows(xvfb)))
        return np.zeros((800, 1280, 3), np.uint8)

    class BlindDoctor(Doctor):
        def _capturer(self) -> Capturer:
            return FakeCapturer(blind, monitor=Rect(0, 0, 1280, 800))

    with xvfb.activated():
        result = BlindDoctor(doctor(xvfb).config).check_capture()
        left = probes(xvfb)
    assert result.status is Status.FAIL, result
    assert result.name == CAPTURE
    assert "the frame is all black" in result.detail
    assert "came out black too" in result.detail
    assert result.fix is not None and "locked, blanked or asleep" in result.fix.text
    assert True in shown  # the square was on the screen while the capture saw black
    assert left == []
