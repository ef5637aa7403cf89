"""Whether a menu is shown on the screen, as the X11 finder tells the rules (``Target.menu``),
without a display (tests/support/fake_xdisplay.py).

An open popup menu is a mapped override-redirect window: GTK, Qt, Tk and Mozilla type it
DROPDOWN_MENU, POPUP_MENU, MENU or COMBO (_NET_WM_WINDOW_TYPE), and Tk's menus are of class
"Menu". While one is mapped it holds the keyboard grab, so the next letter, Enter or Space
picks in it whichever window is focused: the policy asks (red team 10). A tooltip, an
unmapped menu or a managed window typed as a menu (a torn-off one takes the focus like any
window) is no menu shown.
"""

from __future__ import annotations

import pytest

from control.target import Target
from control.target_x11 import OwnProcess, X11TargetFinder
from tests.support.fake_xdisplay import FakeDisplay, FakeWindow

CLIENT = FakeWindow(0x600001, {"WM_CLASS": b"thunderbird\0thunderbird\0"})


def _focused_with(*tops: FakeWindow) -> Target:
    finder = X11TargetFinder(":5", OwnProcess())
    return finder._describe(FakeDisplay(tops=[CLIENT, *tops]), CLIENT, CLIENT)


def _popup(*, kind: str | None = None, klass: bytes = b"", mapped: bool = True,
           override: bool = True) -> FakeWindow:
    props: dict[str, object] = {}
    if kind is not None:
        props["_NET_WM_WINDOW_TYPE"] = [f"_NET_WM_WINDOW_TYPE_{kind}"]
    if klass:
        props["WM_CLASS"] = klass
    return FakeWindow(0x700001, props, override_redirect=override, mapped=mapped)


@pytest.mark.parametrize("kind", ["DROPDOWN_MENU", "POPUP_MENU", "MENU", "COMBO"])
def test_a_mapped_override_redirect_menu_window_is_a_menu_shown(kind: str) -> None:
    assert _focused_with(_popup(kind=kind)).menu is True


def test_a_tk_menu_is_known_by_its_class() -> None:
    assert _focused_with(_popup(klass=b"#menu\0Menu\0")).menu is True


@pytest.mark.parametrize("popup", [
    _popup(kind="TOOLTIP"),
    _popup(kind="POPUP_MENU", mapped=False),
    _popup(kind="POPUP_MENU", override=False),
    _popup(),
], ids=["tooltip", "unmapped menu", "managed window typed menu", "untyped popup"])
def test_other_windows_are_no_menu_shown(popup: FakeWindow) -> None:
    assert _focused_with(popup).menu is False


def test_no_window_at_all_is_no_menu_shown() -> None:
    assert _focused_with().menu is False


def test_the_window_list_for_painting_does_not_look() -> None:
    finder = X11TargetFinder(":5", OwnProcess())
    listed = finder._describe(FakeDisplay(tops=[CLIENT, _popup(kind="MENU")]), CLIENT, CLIENT,
                              deep=False)
    assert listed.menu is None


def test_where_no_finder_tells_nothing_is_known() -> None:
    assert Target().menu is None
