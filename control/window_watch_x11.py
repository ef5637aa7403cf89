"""Whether the top-level windows of an X display may have changed since the last look.

The window list is asked for at every frame (holodesk's own windows and the never-touch
applications are painted out of every screenshot), and listing it costs tens of round trips
per window; the windows change far more rarely than that. On its own connection, this watch
selects ``SubstructureNotify`` on the root: the server then reports every top-level window
created, destroyed, mapped, unmapped, reparented (a window manager framing a client), moved,
resized or restacked. A round trip on that connection brings every event the server made
before it, so "no event since the last look" means the list is still the one seen then.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

log = logging.getLogger(__name__)


class StructureWatch:
    """Watches the root window's children; see the module docstring. Thread-safe."""

    def __init__(self, display_name: str | None = None) -> None:
        self.display_name = display_name
        self._display: Any = None
        self._lock = threading.Lock()
        self._generation = 0

    def generation(self) -> int | None:
        """A number that changes whenever a top-level window may have changed since the last
        call (a window came, went, moved, restacked, was (un)mapped or framed), and when the
        watch (re)starts; None when it cannot tell (its connection failed: it is opened again
        on the next call)."""
        with self._lock:
            try:
                if self._display is None:
                    # Nothing was watched before: a new number, so what was seen before it
                    # is looked at again.
                    self._display = self._open()
                    self._generation += 1
                    return self._generation
                display = self._display
                display.sync()  # a round trip: the events made before it are read with it
                seen = 0
                while display.pending_events():
                    display.next_event()
                    seen += 1
                if seen:
                    self._generation += 1
                return self._generation
            except Exception:  # a dead display, an X error: unknown means look again
                log.debug("the window watch failed; the windows are looked at again",
                          exc_info=True)
                self._drop()
                return None

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _open(self) -> Any:
        from Xlib import X
        from Xlib import display as xdisplay

        display = xdisplay.Display(self.display_name)
        try:
            display.screen().root.change_attributes(event_mask=X.SubstructureNotifyMask)
            display.sync()
        except Exception:
            display.close()
            raise
        return display

    def _drop(self) -> None:
        display, self._display = self._display, None
        close_quietly(display, "the window watch")


def close_quietly(display: Any, owner: str) -> None:
    """Close ``owner``'s X connection, if any; a dead one has nothing more to free."""
    if display is None:
        return
    try:
        display.close()
    except Exception:
        log.debug("closing the X connection of %s failed", owner, exc_info=True)
