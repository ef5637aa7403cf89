"""Closing the tray's stand-in window never strands the app, and a second launch brings it back
(Xvfb: no tray, as on stock GNOME).

Reported: closing the stand-in window left holodesk running with no way to Settings, the
Action log, Check set-up or Quit, and launching holodesk again showed only the task window.
Here the window is closed as a window manager closes it (``WM_DELETE_WINDOW``), the question
is answered with Enter (its default: hide), and ``holodesk`` is launched again.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.e2e import configure, holodesk_argv, holodesk_env
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.fixtures import xvfb_fixture
from tests.support.gui import HolodeskGui, XWindow, poll, windows
from tests.support.home import REPO_ROOT, Home
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1280, 800)

TIMEOUT = 60.0
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}


def _close_like_a_window_manager(xvfb: Xvfb, window: XWindow) -> None:
    """Send the ICCCM close request (what a title bar's close button does)."""
    from Xlib import X
    from Xlib import display as xdisplay
    from Xlib.protocol import event

    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)
    try:
        target = d.create_resource_object("window", int(window.wid))
        protocols = d.intern_atom("WM_PROTOCOLS")
        delete = d.intern_atom("WM_DELETE_WINDOW")
        message = event.ClientMessage(window=target, client_type=protocols,
                                      data=(32, [delete, X.CurrentTime, 0, 0, 0]))
        target.send_event(message, event_mask=X.NoEventMask)
        d.sync()
    finally:
        d.close()


def _shown(gui: HolodeskGui, wid: str) -> bool:
    return any(w.wid == wid for w in windows(gui.xvfb, ".*", gui.pid))


def test_closing_the_stand_in_asks_hides_and_a_second_launch_brings_it_back(
    xvfb: Xvfb, home: Home, tmp_path: Path
) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        configure(home, endpoint=server.base_url)
        with HolodeskGui(home, xvfb, tmp_path / "gui", timeout=TIMEOUT) as gui:
            tray = gui.move(gui.tray, 0, 700)
            _close_like_a_window_manager(xvfb, tray)
            # The question (its title is the app's name, like the stand-in's).
            question = poll(lambda: next((w for w in windows(xvfb, "^holodesk$", gui.pid)
                                          if w.wid != tray.wid), None),
                            TIMEOUT, "the question about closing", gui.died)
            gui.focus(question)
            gui.xdotool("key", "Return")  # the default: hide this window
            poll(lambda: not _shown(gui, tray.wid) or None, TIMEOUT,
                 "the stand-in window to hide", gui.died)
            assert not _shown(gui, question.wid)
            assert gui.died() is None  # still running

            second = subprocess.run(holodesk_argv(), env={**holodesk_env(home, xvfb),
                                                          "QT_QPA_PLATFORM": "xcb"},
                                    cwd=REPO_ROOT, capture_output=True, text=True,
                                    timeout=TIMEOUT)
            assert second.returncode == 0, second.stderr
            assert "already running" in second.stderr
            poll(lambda: _shown(gui, tray.wid) or None, TIMEOUT,
                 "the second launch to bring the stand-in back", gui.died)
            assert gui.died() is None
