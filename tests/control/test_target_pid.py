"""Which process a window belongs to, without a display (tests/support/fake_xdisplay.py).

The X server's answer (X-Resource) first; only where it cannot say, the application's own
``_NET_WM_PID``, and that only when ``WM_CLIENT_MACHINE`` names this machine, or is missing on
a local display: a pid from another machine (``ssh -X``) would name an unrelated process here,
and the rules would judge the window by that process. tests/control/test_target_pid_x11.py
checks the same on a real Xvfb without X-Resource.
"""

from __future__ import annotations

import os
import socket

import pytest

from control.target import Target
from control.target_x11 import OwnProcess, X11TargetFinder, process_name
from tests.support.fake_xdisplay import FakeDisplay, FakeWindow

HERE = socket.gethostname()
ELSEWHERE = "build-server.example.org"
LOCAL, REMOTE = ":5", "localhost:10.0"  # a Unix socket; ssh -X's forwarded display


def _described(display_name: str, window: FakeWindow, server: FakeDisplay) -> Target:
    """The window as the finder of ``display_name`` describes it, asking ``server``."""
    finder = X11TargetFinder(display_name, OwnProcess())
    return finder._describe(server, window, window)


def _claiming(pid: int, machine: str | None) -> FakeWindow:
    props: dict[str, object] = {"WM_CLASS": b"xterm\0XTerm\0", "_NET_WM_PID": [pid]}
    if machine is not None:
        props["WM_CLIENT_MACHINE"] = machine.encode()
    return FakeWindow(0x600001, props)


@pytest.mark.parametrize(("display", "machine", "trusted"), [
    (LOCAL, HERE, True),
    (LOCAL, None, True),  # many toolkits set no WM_CLIENT_MACHINE; the display is this machine
    (LOCAL, ELSEWHERE, False),  # a client of another machine drawing on this display
    (REMOTE, HERE, True),
    (REMOTE, None, False),  # over ssh -X, a pid without a machine is most likely the other's
    (REMOTE, ELSEWHERE, False),
])
def test_a_claimed_pid_is_trusted_only_from_this_machine(
        display: str, machine: str | None, trusted: bool) -> None:
    me = os.getpid()  # a real process here, so a trusted pid is named as well
    target = _described(display, _claiming(me, machine), FakeDisplay())  # no X-Resource
    if trusted:
        assert target.pid == me and target.process == process_name(me)
    else:
        assert target.pid is None and target.process == ""


def test_the_x_servers_pid_wins_over_the_claim_on_a_local_display() -> None:
    window = _claiming(os.getpid(), ELSEWHERE)
    server = FakeDisplay(client_pids={window.id: os.getppid()})
    assert _described(LOCAL, window, server).pid == os.getppid()
    # Over a remote display the server's pids are the other machine's: not asked, and the
    # claim of another machine is not taken either.
    assert _described(REMOTE, window, server).pid is None
