"""The desktop app's global hotkeys on one listener: the emergency stop and the automations'.

The stop hotkey always wins: an automation whose hotkey would fire with it is left out (and
the person told). A press arrives on the listener's own thread; the stop only pulls latches
there, an automation's press is handed to the GUI thread as ``automation_pressed(name)``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, Signal

from app.automations import Automation, stop_conflicts
from control.hotkeys import HotkeyListener, conflicts
from ui.hotkey_edit import is_recording

__all__ = ["HotkeyRegistry"]

log = logging.getLogger(__name__)


class HotkeyRegistry(QObject):
    """The stop hotkey and the automations' hotkeys on the listener :meth:`set_listener` gives.

    ``stop(combo)`` is called on the listener's thread when the stop hotkey is pressed (keep it
    to pulling latches); ``tell(text)`` tells the person something went wrong, on the GUI
    thread. ``automation_pressed(name)`` is emitted on the listener's thread: connect it
    queued. ``stop_hotkey_changed(combo)`` follows a successful :meth:`apply_stop_hotkey`.
    """

    automation_pressed = Signal(str)
    stop_hotkey_changed = Signal(str)

    def __init__(self, stop: Callable[[str], None], tell: Callable[[str], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._stop = stop
        self._tell = tell
        self._listener: HotkeyListener | None = None
        self._stop_combo = ""
        self._automations: list[Automation] = []
        self._registered: list[str] = []  # automation hotkeys on the listener now
        self._told_conflicts: list[str] = []

    @property
    def stop_combo(self) -> str:
        """The stop hotkey on the listener; "" before :meth:`set_listener`."""
        return self._stop_combo

    @property
    def registered(self) -> list[str]:
        """The automation hotkeys listened for now."""
        return list(self._registered)

    def stop_callback(self, combo: str) -> Callable[[], None]:
        """What the stop hotkey ``combo`` calls (on the listener's thread)."""
        def stop() -> None:
            self._stop(combo)

        return stop

    def set_listener(self, listener: HotkeyListener, stop_combo: str) -> None:
        """Register the automations' hotkeys on ``listener`` (started, with ``stop_combo``, the
        emergency stop, on it), and again whenever the automations change."""
        self._listener = listener
        self._stop_combo = stop_combo
        self._register()

    def set_automations(self, automations: Sequence[Automation]) -> None:
        """Listen for the hotkeys of ``automations`` (instead of the earlier ones)."""
        self._automations = list(automations)
        self._register()

    def apply_stop_hotkey(self, combo: str) -> bool:
        """Make ``combo`` the emergency stop hotkey now (after a change in Settings).

        The new one is listened for before the old one is dropped, so there is never a moment
        without a stop hotkey; automations whose hotkeys now clash with it are left out and
        the person is told. False (the old hotkey kept) when the new one cannot be used.
        """
        from control.hotkeys import parse_combo

        listener, old = self._listener, self._stop_combo
        if listener is None or not old or parse_combo(combo) == parse_combo(old):
            return listener is not None
        self._unregister_all()  # registered again below, against the new stop
        try:
            listener.register(combo, self.stop_callback(combo))
        except Exception as e:
            with contextlib.suppress(Exception):  # a half-registered combo must not linger
                listener.unregister(combo)
            self._tell(f"The stop hotkey {combo} cannot be used ({e}); {old} still stops a run.")
            self._register()
            return False
        listener.unregister(old)
        self._stop_combo = combo
        log.info("the stop hotkey is now %s", combo)
        self.stop_hotkey_changed.emit(combo)
        self._register()
        return True

    def clear(self) -> None:
        """Stop listening for the automations' hotkeys (quit); the stop hotkey stays."""
        self._unregister_all()

    def _unregister_all(self) -> None:
        listener = self._listener
        if listener is not None:
            for combo in self._registered:
                listener.unregister(combo)
        self._registered = []

    def _register(self) -> None:
        listener = self._listener
        if listener is None:
            return
        self._unregister_all()
        stop = self._stop_combo
        problems = stop_conflicts(self._automations, stop) if stop else []
        if problems != self._told_conflicts:
            self._told_conflicts = problems
            for problem in problems:
                # The stop hotkey always wins: the automation's hotkey is left out.
                self._tell(f"{problem[:1].upper()}{problem[1:]}. Until then it runs only from "
                           "the tray menu.")
        for automation in self._automations:
            hotkey = automation.hotkey
            if not hotkey or (stop and conflicts(hotkey, stop)):
                continue
            try:
                listener.register(hotkey, self._pressed(automation.name))
            except Exception as e:  # one bad hotkey must not cost the others
                self._tell(f"The hotkey {hotkey} of “{automation.name}” cannot be used: {e}")
                continue
            self._registered.append(hotkey)
        log.info("automation hotkeys: %s", ", ".join(self._registered) or "none")

    def _pressed(self, name: str) -> Callable[[], None]:
        def fire() -> None:  # on the listener's thread: only hand the press over
            if is_recording():
                # The person is pressing keys into a hotkey field (perhaps this very hotkey,
                # to keep it): they are recording, not asking for a run.
                log.info("hotkey of %r ignored: a hotkey field is recording", name)
                return
            self.automation_pressed.emit(name)

        return fire
