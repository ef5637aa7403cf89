"""A window manager (openbox) on a test's Xvfb, for tests that need real focus and frames.

Plain Xvfb has no window manager: nothing sets ``_NET_ACTIVE_WINDOW``, nothing reparents a
window into a frame, ``xdotool windowactivate`` has nobody to ask. Tests of what a real desktop
does (the target finder, a real terminal) start one with::

    with window_manager(xvfb) as wm:
        ...

It returns once the manager has announced itself (``_NET_SUPPORTING_WM_CHECK`` on the root,
which EWMH managers set once they manage the screen), waiting on the property change itself.
openbox runs with a HOME and config folder of its own next to the server's cookie, so no
person's openbox settings or autostart apply. The one starter of the tests: the module-scoped
``openbox`` fixture (fixtures.py) uses it, and so does the terminal canary (terminal.py).
"""

from __future__ import annotations

import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.gui import poll
from tests.support.xvfb import Xvfb


class WindowManagerError(RuntimeError):
    """The window manager did not start; the message carries its output."""


def openbox_available() -> bool:
    return shutil.which("openbox") is not None


@dataclass
class WindowManager:
    proc: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"


def _wait_for_wm_check(xvfb: Xvfb, proc: subprocess.Popen[bytes], log_path: Path,
                       timeout: float) -> None:
    from Xlib import X
    from Xlib import display as xdisplay

    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)
    try:
        root = d.screen().root
        root.change_attributes(event_mask=X.PropertyChangeMask)
        atom = d.intern_atom("_NET_SUPPORTING_WM_CHECK")
        deadline = time.monotonic() + timeout
        # Selected before the first look, so a change between the look and the wait is an event.
        while root.get_full_property(atom, X.AnyPropertyType) is None:
            if proc.poll() is not None:
                output = log_path.read_text(errors="replace")
                raise WindowManagerError(f"openbox exited with {proc.returncode}: {output}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WindowManagerError("openbox did not set _NET_SUPPORTING_WM_CHECK in "
                                         f"{timeout}s: {log_path.read_text(errors='replace')}")
            while d.pending_events():
                d.next_event()
            # Wake on any event (or every half second to notice an exit); then look again.
            select.select([d.fileno()], [], [], min(remaining, 0.5))
    finally:
        d.close()


@contextmanager
def window_manager(xvfb: Xvfb, *, timeout: float = 20.0) -> Iterator[WindowManager]:
    """openbox on ``xvfb``, managing the screen, stopped on exit."""
    if not openbox_available():
        raise WindowManagerError("openbox is not installed (apt-get install openbox)")
    workdir = xvfb.authority.parent / "openbox"
    workdir.mkdir(exist_ok=True)
    log_path = workdir / "openbox.log"
    env = xvfb.env()
    env.update(HOME=str(workdir), XDG_CONFIG_HOME=str(workdir / "config"))
    with log_path.open("wb") as log:
        proc = subprocess.Popen(["openbox", "--sm-disable"], env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True)
    try:
        _wait_for_wm_check(xvfb, proc, log_path, timeout)
        yield WindowManager(proc, log_path)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def keep_above(xvfb: Xvfb, wm_class: str, timeout: float = 30.0) -> None:
    """Ask the window manager to keep the windows of ``wm_class`` above all others (EWMH):
    a window of another application covering the one a run acts in."""
    from Xlib import X, protocol
    from Xlib import display as xdisplay

    ids = subprocess.run(["xdotool", "search", "--class", wm_class], env=xvfb.env(),
                         capture_output=True, text=True).stdout.split()
    assert ids, f"no window of class {wm_class}"
    with xvfb.activated():
        d = xdisplay.Display(xvfb.display)
    try:
        root = d.screen().root
        state = d.intern_atom("_NET_WM_STATE")
        above = d.intern_atom("_NET_WM_STATE_ABOVE")
        for ident in ids:
            window = d.create_resource_object("window", int(ident))
            event = protocol.event.ClientMessage(window=window, client_type=state,
                                                 data=(32, [1, above, 0, 1, 0]))
            root.send_event(event, event_mask=X.SubstructureRedirectMask
                            | X.SubstructureNotifyMask)
        d.sync()

        def kept_above() -> bool:
            held = [d.create_resource_object("window", int(i)).get_full_property(
                state, X.AnyPropertyType) for i in ids]
            return any(p is not None and above in p.value for p in held)

        poll(kept_above, timeout, "the window manager to keep it above")
    finally:
        d.close()
