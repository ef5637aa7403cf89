"""The clipboard, for typing text the keyboard cannot: save it, paste through it, restore it.

Pasting is asynchronous everywhere: Ctrl+V only asks the application to fetch the clipboard,
later. Restoring the person's clipboard before that fetch would paste *their* content (maybe a
password) into the field. On X11 there is a handshake: :class:`X11PasteServer` owns the
CLIPBOARD selection itself, answers the application's request, and so knows the moment the
text was taken; only then is the previous content put back. Elsewhere a fixed delay is all
there is (see :class:`control.input.PyAutoGuiBackend`).
"""

from __future__ import annotations

import logging
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any, Protocol

from model.problem import HolodeskError

log = logging.getLogger(__name__)


class ClipboardError(HolodeskError, RuntimeError):
    """The clipboard cannot be read or written (no helper program, no display)."""


class Clipboard(Protocol):
    """Text clipboard access."""

    def get(self) -> str: ...

    def set(self, text: str) -> None: ...


class SystemClipboard:
    """The system's text clipboard.

    On Linux the helper programs are run here rather than through pyperclip: xclip and xsel
    fork a process that owns the selection until someone else takes it, and pyperclip lets that
    process inherit our stdout and stderr. A caller reading holodesk's output to the end (a
    pipe, ``subprocess.run(capture_output=True)``) would then wait for as long as the clipboard
    content lives. Here the helpers get /dev/null. Elsewhere pyperclip is used (pbcopy/pbpaste
    on macOS, the win32 API on Windows).

    Only text survives a save/restore: an image on the clipboard comes back as empty text.
    """

    def __init__(self, timeout_s: float = 5.0) -> None:
        self.timeout_s = timeout_s
        self._commands = linux_commands() if sys.platform.startswith("linux") else None

    def get(self) -> str:
        if self._commands is None:
            return str(_pyperclip().paste())
        read, _ = self._commands
        try:
            done = subprocess.run(read, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=self.timeout_s, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ClipboardError(f"reading the clipboard failed: {exc}") from exc
        # A non-zero exit is an empty clipboard (or one holding no text).
        return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else ""

    def set(self, text: str) -> None:
        if self._commands is None:
            _pyperclip().copy(text)
            return
        _, write = self._commands
        try:
            subprocess.run(write, input=text.encode("utf-8"), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=self.timeout_s, check=True,
                           start_new_session=True)
        except (OSError, subprocess.SubprocessError) as exc:
            raise ClipboardError(f"setting the clipboard failed: {exc}") from exc


def _pyperclip() -> Any:
    import pyperclip

    return pyperclip


def linux_commands() -> tuple[list[str], list[str]]:
    """(read, write) commands for the CLIPBOARD selection, in pyperclip's order of preference."""
    if os.environ.get("WAYLAND_DISPLAY") and shutil.which("wl-copy") and shutil.which("wl-paste"):
        return ["wl-paste", "--no-newline"], ["wl-copy"]
    if shutil.which("xclip"):
        return ["xclip", "-selection", "clipboard", "-o"], ["xclip", "-selection", "clipboard"]
    if shutil.which("xsel"):
        return ["xsel", "--clipboard", "--output"], ["xsel", "--clipboard", "--input"]
    raise ClipboardError("typing non-ASCII text needs a clipboard tool: install xclip or xsel")


class X11PasteServer:
    """Offers one text on the X11 CLIPBOARD selection and reports when an application took it.

    A private connection and a 1x1 unmapped window own the selection for the duration of one
    :meth:`offer`. Text targets (UTF8_STRING, text/plain;charset=utf-8, TEXT, and STRING when
    the text is Latin-1) get the text; TARGETS lists them; anything else is refused. Texts
    beyond one X request (hundreds of KB, which would need the INCR protocol) are refused up
    front: the caller falls back to its delay.
    """

    MAX_BYTES = 64 * 1024
    # After the first fetch, keep answering briefly: some toolkits ask twice (two targets).
    LINGER_S = 0.05

    def __init__(self, display: str | None = None) -> None:
        from Xlib import X, Xatom
        from Xlib import display as xdisplay

        self._X = X
        self._d = xdisplay.Display(display)
        self._win = self._d.screen().root.create_window(0, 0, 1, 1, 0, X.CopyFromParent)
        atom = self._d.intern_atom
        self._clipboard = atom("CLIPBOARD")
        self._targets = atom("TARGETS")
        self._utf8 = atom("UTF8_STRING")
        self._text = atom("TEXT")
        self._plain = atom("text/plain;charset=utf-8")
        self._string = Xatom.STRING
        self._atom_type = Xatom.ATOM

    def close(self) -> None:
        try:
            self._win.destroy()
            self._d.close()
        except Exception:  # the server may be gone already
            log.debug("closing the X11 paste server failed", exc_info=True)

    def offer(self, text: str, trigger: Callable[[], None], *, timeout_s: float = 3.0,
              cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Own the clipboard with ``text``, call ``trigger`` (press the paste shortcut), serve
        requests until an application fetched the text (True) or ``timeout_s`` passed or
        ``cancelled()`` (False). The selection is left to the caller to hand back."""
        data = text.encode("utf-8")
        if len(data) > self.MAX_BYTES:
            raise ClipboardError(f"{len(data)} bytes is too much for one X11 selection reply")
        X = self._X
        self._drain()  # a SelectionClear left from the last offer is stale now
        self._win.set_selection_owner(self._clipboard, X.CurrentTime)
        self._d.sync()
        if self._d.get_selection_owner(self._clipboard) != self._win:
            raise ClipboardError("could not take the X11 clipboard")
        trigger()
        deadline = time.monotonic() + timeout_s
        fetched_at: float | None = None
        while True:
            now = time.monotonic()
            if fetched_at is not None and now - fetched_at >= self.LINGER_S:
                return True
            if now >= deadline or cancelled():
                return fetched_at is not None
            while self._d.pending_events():
                event = self._d.next_event()
                if event.type == X.SelectionRequest and self._answer(event, text, data):
                    fetched_at = fetched_at or time.monotonic()
                elif event.type == X.SelectionClear:
                    return fetched_at is not None  # someone else took the clipboard
            select.select([self._d.fileno()], [], [], 0.01)

    def wait_released(self, timeout_s: float = 2.0) -> bool:
        """Wait until another client owns the clipboard (the restore took effect).

        xclip and xsel fork and take the selection in the background: without this wait, a
        restore could land after the next :meth:`offer` and paste the person's content.
        """
        deadline = time.monotonic() + timeout_s
        while self._d.get_selection_owner(self._clipboard) == self._win:
            self._drain()
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def _drain(self) -> None:
        """Handle queued events outside an offer: refuse requests, forget clears."""
        while self._d.pending_events():
            event = self._d.next_event()
            if event.type == self._X.SelectionRequest:
                self._answer(event, None, b"")

    def _answer(self, request: Any, text: str | None, data: bytes) -> bool:
        """Reply to one SelectionRequest (``text`` None: refuse); True when it delivered."""
        from Xlib.protocol import event as xevent

        target = request.target
        prop = request.property or target  # obsolete clients pass None: use the target
        delivered = False
        if text is None or request.selection != self._clipboard:
            prop = self._X.NONE
        elif target == self._targets:
            offered = [self._targets, self._utf8, self._plain, self._text]
            if text.isascii() or all(ord(c) < 256 for c in text):
                offered.append(self._string)
            request.requestor.change_property(prop, self._atom_type, 32, offered)
        elif target in (self._utf8, self._plain, self._text):
            kind = self._utf8 if target == self._text else target
            request.requestor.change_property(prop, kind, 8, data)
            delivered = True
        elif target == self._string and all(ord(c) < 256 for c in text):
            request.requestor.change_property(prop, self._string, 8, text.encode("latin-1"))
            delivered = True
        else:
            prop = self._X.NONE
        notify = xevent.SelectionNotify(time=request.time, requestor=request.requestor,
                                        selection=request.selection, target=target,
                                        property=prop)
        request.requestor.send_event(notify, event_mask=0)
        self._d.flush()
        return delivered
