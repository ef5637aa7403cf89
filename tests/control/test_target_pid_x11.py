"""A window's ``_NET_WM_PID`` on a real X server that cannot name its clients' pids.

This Xvfb runs without the X-Resource extension, so the finder has only the application's own
claim, trusted when ``WM_CLIENT_MACHINE`` names this machine (or is missing on a local display).
It also listens on TCP (cookie-protected), so the same server can be reached as a remote display
(``localhost:N``, as ``ssh -X`` names one). The windows are made by this test's own connection,
with no window manager: a top-level is then its own application window.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from control.target_x11 import OwnProcess, X11TargetFinder, process_name
from tests.support.xvfb import Xvfb, xvfb_available

pytestmark = pytest.mark.x11

HERE = socket.gethostname()
ELSEWHERE = "build-server.example.org"


@pytest.fixture(scope="module")
def xvfb() -> Iterator[Xvfb]:
    if not xvfb_available():
        pytest.skip("Xvfb is not installed (apt-get install xvfb)")
    with Xvfb(640, 480, without=("X-Resource",), tcp=True) as server:
        yield server


@pytest.fixture
def x(xvfb: Xvfb) -> Iterator[Any]:
    """This test's own X connection, standing in for the applications."""
    from Xlib import display as xdisplay

    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)
        try:
            assert not d.has_extension("X-Resource"), "the server can name pids after all"
            yield d
        finally:
            d.close()


def _window(d: Any, pid: int, machine: str | None) -> Any:
    """A mapped top-level window that says it belongs to ``pid`` on ``machine``."""
    from Xlib import X, Xatom

    root = d.screen().root
    window = root.create_window(100, 100, 300, 200, 0, X.CopyFromParent, X.InputOutput,
                                X.CopyFromParent, background_pixel=0)
    window.set_wm_class("xterm", "XTerm")
    window.change_property(d.get_atom("_NET_WM_PID"), Xatom.CARDINAL, 32, [pid])
    if machine is not None:
        window.change_property(d.get_atom("WM_CLIENT_MACHINE"), Xatom.STRING, 8,
                               machine.encode())
    window.map()
    d.sync()
    return window


@pytest.mark.parametrize(("remote", "machine", "trusted"), [
    (False, HERE, True),
    (False, None, True),
    (False, ELSEWHERE, False),
    (True, HERE, True),
    (True, None, False),
    (True, ELSEWHERE, False),
], ids=["local-here", "local-unnamed", "local-elsewhere", "remote-here", "remote-unnamed",
        "remote-elsewhere"])
def test_a_claimed_pid_is_trusted_only_from_this_machine(
        xvfb: Xvfb, x: Any, remote: bool, machine: str | None, trusted: bool) -> None:
    me = os.getpid()
    window = _window(x, me, machine)
    name = f"localhost{xvfb.display}" if remote else xvfb.display
    finder = X11TargetFinder(name, OwnProcess())
    try:
        with xvfb.activated():
            target = finder.at(250, 200)
    finally:
        finder.close()
        window.destroy()
        x.sync()
    assert target.window == window.id, target.note  # the window was found either way
    if trusted:
        assert target.pid == me and target.process == process_name(me)
    else:
        assert target.pid is None and target.process == ""
