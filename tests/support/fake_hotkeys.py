"""A stand-in for the global hotkey listener: tests press combinations by hand.

It implements :class:`control.hotkeys.HotkeyListener` with the real parsing
(:func:`control.hotkeys.parse_combo`), so a combination fires under any spelling the real
listener accepts.
"""

from __future__ import annotations

from control.hotkeys import Callback, Combo, parse_combo


class FakeHotkeys:
    """A listener for tests: :meth:`fire` plays a combination as if the person pressed it."""

    def __init__(self) -> None:
        self._callbacks: dict[Combo, Callback] = {}
        self.running = False

    def register(self, combo: str, callback: Callback) -> None:
        self._callbacks[parse_combo(combo)] = callback

    def unregister(self, combo: str) -> None:
        self._callbacks.pop(parse_combo(combo), None)

    def start(self) -> None:
        self.running = True

    def stop(self) -> None:
        self.running = False

    @property
    def combos(self) -> list[str]:
        return [str(c) for c in self._callbacks]

    def fire(self, combo: str) -> bool:
        """Press ``combo``: every registered combination it contains fires, as in pynput.

        Returns whether anything fired. Nothing fires while the listener is not running.
        """
        if not self.running:
            return False
        pressed = parse_combo(combo).keys
        hits = [cb for c, cb in list(self._callbacks.items()) if c.keys <= pressed]
        for cb in hits:
            cb()
        return bool(hits)
