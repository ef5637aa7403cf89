"""A stand-in system tray for X11 tests: a process that owns ``_NET_SYSTEM_TRAY_S<screen>``.

A real selection owner on the test's Xvfb, as a tray manager is (freedesktop System Tray
spec): it creates a window, takes the selection, announces itself with the MANAGER client
message on the root window, prints ``ready`` and holds the selection until its stdin closes
or it is terminated. It docks nothing: the doctor only asks whether a tray exists.

Run it with ``FakeTray(xvfb)`` (a context manager) or
``DISPLAY=... python -m tests.support.fake_tray``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import TracebackType
from typing import TYPE_CHECKING

from tests.support.home import REPO_ROOT

if TYPE_CHECKING:
    from tests.support.xvfb import Xvfb


def main() -> int:
    """Own the tray selection of the default screen until stdin closes."""
    from Xlib import X, Xatom, display
    from Xlib.protocol import event

    conn = display.Display()
    screen_no = conn.get_default_screen()
    root = conn.screen().root
    selection = conn.intern_atom(f"_NET_SYSTEM_TRAY_S{screen_no}")
    window = root.create_window(-1, -1, 1, 1, 0, X.CopyFromParent)
    window.set_selection_owner(selection, X.CurrentTime)
    conn.sync()
    owner = conn.get_selection_owner(selection)
    if getattr(owner, "id", owner) != window.id:
        print("failed: another client owns the tray selection", flush=True)
        return 1
    manager = event.ClientMessage(
        window=root,
        client_type=conn.intern_atom("MANAGER"),
        data=(32, [X.CurrentTime, selection, window.id, 0, 0]),
    )
    root.send_event(manager, event_mask=X.StructureNotifyMask)
    window.change_property(conn.intern_atom("_NET_SYSTEM_TRAY_ORIENTATION"), Xatom.CARDINAL,
                           32, [0])
    conn.flush()
    print("ready", flush=True)
    sys.stdin.read()  # until the test closes our stdin (or kills us)
    conn.close()
    return 0


class FakeTray:
    """The fake tray process on ``xvfb``; the selection is owned once ``start`` returns."""

    def __init__(self, xvfb: Xvfb, timeout: float = 15.0) -> None:
        self.xvfb = xvfb
        self.timeout = timeout
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> FakeTray:
        env = self.xvfb.env()
        env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.fake_tray"], env=env, cwd=REPO_ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            self.stop()
            raise RuntimeError(f"the fake tray did not start: {line!r}")
        return self

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(self.timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> FakeTray:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


if __name__ == "__main__":
    sys.exit(main())
