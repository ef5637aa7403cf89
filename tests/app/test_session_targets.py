"""The session's wiring of the target rules: the policy gets the settings' application lists,
and the windows of never-touch applications are painted out of every frame."""

from __future__ import annotations

from app.session import _with_never_touch
from app.settings import NEVER_TOUCH, Settings
from model.coords import Rect
from tests.support.fake_targets import FIREFOX, FakeTargetFinder, window


def test_password_managers_are_never_touched_by_default() -> None:
    assert Settings().never_touch == NEVER_TOUCH
    assert "keepassxc" in NEVER_TOUCH and "bitwarden" in NEVER_TOUCH
    assert Settings().only_in == ()


def test_application_lists_read_as_a_person_writes_them() -> None:
    s = Settings(only_in="firefox, libreoffice-calc,firefox,", never_touch=[])
    assert s.only_in == ("firefox", "libreoffice-calc")
    assert s.never_touch == ()


def test_never_touch_windows_are_painted_out_with_the_own_windows() -> None:
    finder = FakeTargetFinder()
    finder.placed_at(FIREFOX, Rect(0, 0, 800, 600))
    finder.placed_at(window("KeePassXC"), Rect(100, 100, 400, 300))
    own = Rect(900, 0, 100, 100)
    rects = _with_never_touch(lambda: [own], finder, Settings())
    assert rects is not None
    assert rects() == [own, Rect(100, 100, 400, 300)]
    assert _with_never_touch(None, finder, Settings(never_touch=[])) is None
