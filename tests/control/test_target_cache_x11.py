"""The target finder's caches (the window list, the client inside a frame) against a window
manager's steps that the root's SubstructureNotify watch does not see (found by a review).

Plain Xvfb, no window manager: the test plays the manager itself with python-xlib (creates a
frame on the root, the client inside it, WM_STATE on the client), so it controls exactly which
steps happen and when. Everything here is on the test's own Xvfb.
"""

from __future__ import annotations

import os
import pty
from collections.abc import Iterator
from typing import Any

import pytest

from control.target import TargetKind
from control.target_x11 import OwnProcess, X11TargetFinder
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

KEEPASS = ("keepassxc", "KeePassXC")
XTERM = ("xterm", "XTerm")


@pytest.fixture
def x(xvfb: Xvfb) -> Iterator[Any]:
    """An X connection standing in for the window manager (it redirects the root's children,
    as a manager does) and the applications."""
    from Xlib import X
    from Xlib import display as xdisplay

    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)
        try:
            d.screen().root.change_attributes(event_mask=X.SubstructureRedirectMask)
            d.sync()
            yield d
        finally:
            d.close()


@pytest.fixture
def a_terminal() -> Iterator[None]:
    """This process holds a pty master, as a terminal emulator does: its windows (the ones the
    test makes) are terminals by what their process holds."""
    master, slave = pty.openpty()
    try:
        yield
    finally:
        os.close(slave)
        os.close(master)


def _finder(xvfb: Xvfb) -> X11TargetFinder:
    return X11TargetFinder(xvfb.display, OwnProcess())


def _window(d: Any, parent: Any, x: int, y: int, w: int, h: int) -> Any:
    from Xlib import X

    return parent.create_window(x, y, w, h, 0, X.CopyFromParent, X.InputOutput,
                                X.CopyFromParent, background_pixel=0)


def _name(d: Any, window: Any, wm_class: tuple[str, str]) -> None:
    window.set_wm_class(*wm_class)


def _mark(d: Any, window: Any) -> None:
    """The manager's WM_STATE (NormalState) on a client it manages."""
    atom = d.get_atom("WM_STATE")
    window.change_property(atom, atom, 32, [1, 0])


def _framed_unmarked(d: Any, wm_class: tuple[str, str]) -> tuple[Any, Any]:
    """A frame mapped with a named client inside that the manager has not marked yet."""
    frame = _window(d, d.screen().root, 20, 20, 300, 200)
    client = _window(d, frame, 0, 20, 300, 180)
    _name(d, client, wm_class)
    client.map()
    frame.map()
    d.sync()
    return frame, client


def _managed(d: Any, x: int, y: int, wm_class: tuple[str, str]) -> tuple[Any, Any]:
    """A frame on the root with a named, marked client inside, both mapped."""
    root = d.screen().root
    frame = _window(d, root, x, y, 300, 200)
    client = _window(d, frame, 0, 20, 300, 180)
    _name(d, client, wm_class)
    _mark(d, client)
    client.map()
    frame.map()
    d.sync()
    return frame, client


def test_a_client_closed_before_its_manager_unframes_it_does_not_unpaint_everything(
        xvfb: Xvfb, x: Any) -> None:
    """A password manager's window is listed for painting out while another application's
    client window closes and its (slow, busy or hung) manager has not yet taken its frame
    down: the cached "client inside this frame" is a dead window, the list fails twice with
    BadWindow, and windows() returns () -- no window is painted out at all. Before the cache,
    the retry walked the frame afresh and listed both windows."""
    secret_frame, _ = _managed(x, 20, 20, KEEPASS)
    other_frame, other_client = _managed(x, 400, 20, XTERM)
    finder = _finder(xvfb)
    tooltip = None
    try:
        assert any(t.matches(["keepassxc"]) for t in finder.windows())
        # Any top-level change (a tooltip, a menu), then the action's target is looked up:
        # the client inside the terminal's frame is remembered for this generation, while
        # the window list is from the one before.
        tooltip = _window(x, x.screen().root, 900, 600, 40, 20)
        tooltip.map()
        x.sync()
        assert finder.at(500, 100).window == other_client.id
        # The application closes its window; the manager has not reacted yet (no event on
        # the root: the client was inside the frame).
        other_client.destroy()
        x.sync()
        for _ in range(3):  # and it stays so, at every frame, until a top-level changes
            listed = finder.windows()
            assert any(t.matches(["keepassxc"]) for t in listed), (
                f"the password manager is no longer painted out: windows() = {listed!r}")
    finally:
        finder.close()
        secret_frame.destroy()
        other_frame.destroy()
        if tooltip is not None:
            tooltip.destroy()
        x.sync()


def test_a_client_marked_after_its_frame_was_mapped_is_named_at_the_next_look(
        xvfb: Xvfb, x: Any) -> None:
    """A manager maps the frame, then marks the client (WM_STATE): a list made in between
    finds no client inside and remembers the frame as the application's window; marking the
    client is a property change, which the root's SubstructureNotify watch does not see, so
    every later list names the frame (the manager's window, no WM_CLASS) and the password
    manager is never painted out until some other top-level window changes. Before the cache,
    the next list named it."""
    frame, client = _framed_unmarked(x, KEEPASS)
    finder = _finder(xvfb)
    try:
        assert not any(t.matches(["keepassxc"]) for t in finder.windows())
        _mark(x, client)  # the manager finishes managing it
        x.sync()
        listed = finder.windows()
        assert any(t.matches(["keepassxc"]) for t in listed), (
            f"the password manager is not painted out: windows() = {listed!r}")
    finally:
        finder.close()
        frame.destroy()
        x.sync()


def test_a_terminal_marked_after_its_frame_was_mapped_is_judged_a_terminal(
        xvfb: Xvfb, x: Any, a_terminal: None) -> None:
    """The same for the target of an action: the window at a point inside the terminal is
    still the frame after the manager marked the terminal's client, so the action is judged
    for the manager's window, not for the terminal (with a real manager: another process,
    holding no pty)."""
    frame, client = _framed_unmarked(x, XTERM)
    finder = _finder(xvfb)
    try:
        assert finder.at(100, 100).window == frame.id
        _mark(x, client)
        x.sync()
        target = finder.at(100, 100)
        assert target.window == client.id and target.kind is TargetKind.TERMINAL, (
            f"the terminal is judged as {target.kind}: {target!r}")
    finally:
        finder.close()
        frame.destroy()
        x.sync()


def test_a_window_named_after_it_was_mapped_is_painted_out_at_the_next_look(
        xvfb: Xvfb, x: Any) -> None:
    """An application that sets WM_CLASS only after mapping (ICCCM says before; not every
    toolkit does): the list cached while it had no name keeps it unnamed, since a property
    change is nothing the root watch sees. Before the cache, the next list named it."""
    root = x.screen().root
    window = _window(x, root, 20, 20, 300, 200)
    _mark(x, window)
    window.map()
    x.sync()
    finder = _finder(xvfb)
    try:
        assert not any(t.matches(["keepassxc"]) for t in finder.windows())
        _name(x, window, KEEPASS)
        x.sync()
        listed = finder.windows()
        assert any(t.matches(["keepassxc"]) for t in listed), (
            f"the password manager is not painted out: windows() = {listed!r}")
    finally:
        finder.close()
        window.destroy()
        x.sync()


def test_without_a_window_manager_a_top_level_is_its_own_application_window(
        xvfb: Xvfb, monkeypatch: pytest.MonkeyPatch, a_terminal: None) -> None:
    """No manager marks any window: the top-level is the application's window, and stays so
    for as long as the watch sees no change (found once, not walked at every look)."""
    from Xlib import display as xdisplay

    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)  # an application; nothing redirects the root
        window = _window(d, d.screen().root, 20, 20, 300, 200)
        _name(d, window, XTERM)
        window.map()
        d.sync()
        finder = _finder(xvfb)
        walks: list[int] = []
        find = finder._find_client_below

        def counted(dd: object, top: object) -> tuple[Any, bool]:
            walks.append(1)
            return find(dd, top)

        monkeypatch.setattr(finder, "_find_client_below", counted)
        try:
            first = finder.at(100, 100)
            assert first.window == window.id and first.kind is TargetKind.TERMINAL
            assert finder.at(100, 100) == first and len(walks) == 1
            assert [t.window for t in finder.windows()] == [window.id]
            assert len(walks) == 1
        finally:
            finder.close()
            window.destroy()
            d.close()
