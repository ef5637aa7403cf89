"""Global hotkeys: parsing and comparing key combinations, and listening for them.

A combination is written the way people write it ("ctrl+alt+shift+escape", "Ctrl+Alt+S") or
the way pynput does ("<ctrl>+<alt>+<shift>+<esc>"); :func:`parse_combo` accepts both and
:class:`Combo` gives back either form. Key names are those of :mod:`control.keys`, the one
vocabulary the safety policy and the executor use too (control/ctl -> ctrl, option -> alt,
win/cmd/meta -> super, esc -> escape, return -> enter, left/right variants of modifiers -> the
generic modifier), so a hotkey action the model proposes can be compared with a reserved
combination whatever spelling either side uses.

Listeners implement :class:`HotkeyListener`: :class:`PynputHotkeys` listens (global, through
pynput; on X11 pynput reads input with the RECORD extension, which Xorg and Xvfb both ship),
so the press also reaches the window in front; on X11,
:func:`control.hotkeys_desktop.system_hotkeys` gives :class:`control.hotkeys_x11.GrabbedHotkeys`,
which reserves each combination with an X grab (one the X server refuses is only listened for,
:class:`GrabFallback`) and listens for every one through pynput too, since a grab does not
fire while another program holds the keyboard. Tests play combinations by hand through a fake
(tests/support/fake_hotkeys.py).

**The default stop hotkey** is Ctrl+Alt+Shift+Escape (:data:`DEFAULT_STOP_HOTKEY`):

* Escape is the key people reach for to make something stop;
* holodesk cannot produce it by accident: ``type`` presses no modifier but Shift (and Ctrl+A /
  Ctrl+V, Cmd+A / Cmd+V for clear-first and pastes), and drops control characters such as ESC;
  a ``hotkey`` action containing the combination is refused by the safety policy
  (``SafetyPolicy(reserved_hotkeys=...)``), so nothing holodesk sends holds Ctrl and Alt
  together with Escape;
* no common desktop binds it: Ctrl+Shift+Escape (Windows task manager, GNOME/KDE system
  monitor), Ctrl+Alt+Escape (KDE's xkill) and Cmd+Option+Escape (macOS Force Quit) are taken,
  and we know of no default binding of the four-key chord in GNOME, KDE Plasma, Xfce,
  Cinnamon, Windows or macOS (checked from their shortcut lists, not on each desktop); X11
  desktops match shortcuts on the exact modifier set, so the extra Shift keeps the first two
  from firing there (Windows may still open the task manager on Ctrl+Shift+Esc; untested);
* four keys are one hand's worth on the left of the keyboard (Ctrl, Alt, Shift, Esc sit
  together), so it stays reachable in a hurry.

Pause/Break was the other candidate; most laptop keyboards no longer have it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from control.keys import (
    MODIFIERS,
    UnknownKeyError,
    canonical_key,
    generic_key,
    pynput_token,
    split_combo,
    to_pynput,
)
from model.problem import HolodeskError

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_STOP_HOTKEY",
    "SPARE_KEYS",
    "SYSTEM_CHORDS",
    "Combo",
    "FallbackKind",
    "GrabFallback",
    "HotkeyError",
    "HotkeyListener",
    "ListenerError",
    "PynputHotkeys",
    "check_bindable",
    "check_listenable",
    "conflicts",
    "parse_combo",
    "start_listener",
    "typing_can_press",
    "validate_stop_hotkey",
]

DEFAULT_STOP_HOTKEY = "ctrl+alt+shift+escape"

Callback = Callable[[], object]


class HotkeyError(HolodeskError, ValueError):
    """A key combination cannot be parsed or cannot serve as a global hotkey."""


class ListenerError(HolodeskError, RuntimeError):
    """A global input listener (pynput) cannot start here; the message says why."""


def start_listener(listener: Any, timeout: float, what: str) -> None:
    """Start a pynput listener and wait until it receives input; :class:`ListenerError` if not.

    pynput's own ``wait()`` blocks forever when the listener thread dies before it is ready
    (no RECORD extension, no Accessibility permission), so the wait is bounded here.
    """
    listener.start()
    waiter = threading.Thread(target=listener.wait, name=f"{what}-ready", daemon=True)
    waiter.start()
    waiter.join(timeout)
    if waiter.is_alive() or not listener.is_alive():
        error = ""
        if listener.is_alive():
            # pynput's stop() also waits for the listener to be ready, maybe forever: it runs
            # on a thread of its own.
            threading.Thread(target=listener.stop, name=f"{what}-stop", daemon=True).start()
        else:
            # Its thread died before it was ready (no RECORD extension): stop() would wait for
            # that readiness forever, and there is nothing left to stop.
            try:
                listener.join(0.5)  # re-raises what killed the listener thread, when it kept it
            except Exception as e:
                error = f": {e}"
        raise ListenerError(f"the {what} listener did not start{error}")


# -- combinations ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Combo:
    """A key combination: a set of canonical key names (order does not matter)."""

    keys: frozenset[str]

    @property
    def modifiers(self) -> frozenset[str]:
        return self.keys & frozenset(MODIFIERS)

    @property
    def main(self) -> frozenset[str]:
        """The keys that are not modifiers."""
        return self.keys - frozenset(MODIFIERS)

    def _ordered(self) -> list[str]:
        return [m for m in MODIFIERS if m in self.keys] + sorted(self.main)

    def __str__(self) -> str:
        """The canonical text form: modifiers first, e.g. ``ctrl+alt+shift+escape``."""
        return "+".join(self._ordered())

    def to_pynput(self) -> str:
        """pynput's form, e.g. ``<ctrl>+<alt>+<shift>+<esc>``."""
        try:
            return to_pynput(self._ordered())
        except UnknownKeyError as e:
            raise HotkeyError(str(e)) from None

    def label(self) -> str:
        """For people: ``Ctrl+Alt+Shift+Esc``."""
        names = {"escape": "Esc", "super": "Super", "pageup": "PgUp", "pagedown": "PgDn",
                 "printscreen": "PrtSc"}
        return "+".join(names.get(k, k.upper() if len(k) == 1 else k.capitalize())
                        for k in self._ordered())


def parse_combo(text: str) -> Combo:
    """Parse ``ctrl+alt+shift+escape``, ``Ctrl+Alt+S`` or ``<ctrl>+<alt>+s`` into a Combo.

    Raises :class:`HotkeyError` for an empty combination, one of modifiers only, or a key
    that no global hotkey can use.
    """
    parts = [p for p in split_combo([text]) if p.strip()]
    if not parts:
        raise HotkeyError("empty key combination")
    combo = Combo(frozenset(generic_key(canonical_key(p)) for p in parts))
    if not combo.main:
        raise HotkeyError(f"{text!r} has only modifiers; add a key such as escape")
    for key in combo.main:
        if pynput_token(key) is None:
            raise HotkeyError(f"{text!r}: unknown key {key!r}")
    return combo


def conflicts(a: str | Combo, b: str | Combo) -> bool:
    """Whether pressing one combination also fires the other.

    A hotkey fires once all its keys are down, whatever else is held, so ``ctrl+alt+s``
    conflicts with ``ctrl+alt+shift+s`` (one's keys contain the other's), not with
    ``ctrl+shift+s``.
    """
    ka = (a if isinstance(a, Combo) else parse_combo(a)).keys
    kb = (b if isinstance(b, Combo) else parse_combo(b)).keys
    return ka <= kb or kb <= ka


# What the executor presses by itself while typing (control/input.py): Shift for capitals,
# Enter and Tab for line breaks and tabs, select-all before clear_first, and paste.
_TYPING_CHORDS = (
    frozenset({"ctrl", "a"}), frozenset({"super", "a"}),
    frozenset({"ctrl", "v"}), frozenset({"super", "v"}),
    frozenset({"backspace"}), frozenset({"enter"}), frozenset({"tab"}),
)


def typing_can_press(combo: Combo) -> bool:
    """Whether a ``type`` action can hold all of ``combo``'s keys down at once.

    Typing presses printable keys with at most Shift, Enter, Tab, Backspace, and the
    select-all and paste chords: a combination with Ctrl+Alt, or any non-printable key other
    than those three, is out of its reach.
    """
    if combo.modifiers <= {"shift"} and all(
        len(k) == 1 or k in ("enter", "tab", "backspace", "space") for k in combo.main
    ):
        return True
    return any(combo.keys <= chord | {"shift"} for chord in _TYPING_CHORDS)


def validate_stop_hotkey(text: str) -> str:
    """Check a stop-hotkey setting; returns its canonical text or raises :class:`HotkeyError`.

    The rule of every hotkey a person binds (:func:`check_bindable`): a stop key that
    holodesk's own typing can press would stop runs by itself, one the person presses in daily
    work would stop runs by accident (and, since the listener does not grab keys, still do its
    usual job), and a system chord acts on the desktop as well. A lone F-key or Pause stays
    allowed: typing never produces them.
    """
    combo = check_bindable(
        text, shift_example="escape", example=DEFAULT_STOP_HOTKEY,
        typing=f"can be pressed by holodesk's own typing; use Ctrl+Alt with a key, or a key "
               f"such as escape or pause (default: {DEFAULT_STOP_HOTKEY})",
    )
    return str(combo)


#: Keys no text field or common shortcut needs: a hotkey may use them with one modifier or none.
SPARE_KEYS = frozenset({f"f{n}" for n in range(1, 21)} | {"pause", "scrolllock"})
#: Chords the system or the window manager acts on by itself, and what they do there.
SYSTEM_CHORDS: dict[frozenset[str], str] = {
    frozenset({"ctrl", "alt", "delete"}): "logs out or opens the system's security screen",
    frozenset({"ctrl", "alt", "backspace"}): "can end the X session (zap)",
    frozenset({"alt", "f4"}): "closes the window in front",
    frozenset({"ctrl", "f4"}): "closes the tab or document in front",
    **{frozenset({"ctrl", "alt", f"f{n}"}): "switches to a text console on Linux"
       for n in range(1, 13)},
}


def check_bindable(text: str, *, shift_example: str, typing: str, example: str) -> Combo:
    """``text`` parsed, if a person may bind it as a global hotkey (stop or automation).

    On top of :func:`check_listenable`: off X11, and on X11 where another program holds the
    combination, the hotkey is only listened for, so the press also reaches the window in
    front. A shortcut people use all day (Ctrl+C, Alt+Tab, Super+L, an
    arrow key) would both do its usual job and fire the hotkey, and a system chord
    (:data:`SYSTEM_CHORDS`: Ctrl+Alt+Del, Ctrl+Alt+F2, Alt+F4) would fire it on a desktop
    being left. So a hotkey needs two of Ctrl, Alt and Super with a key, or an F-key or Pause
    (:data:`SPARE_KEYS`, alone or with modifiers). ``example`` is the chord the messages
    suggest instead.
    """
    combo = check_listenable(text, shift_example=shift_example, typing=typing)
    system = SYSTEM_CHORDS.get(combo.keys)
    if system:
        raise HotkeyError(f"{text!r} {system}; choose another, e.g. {example}")
    if len(combo.modifiers - {"shift"}) < 2 and not combo.main <= SPARE_KEYS:
        raise HotkeyError(
            f"{text!r} is a key or shortcut people press all day, and the press still reaches "
            f"the window in front; use two of Ctrl, Alt and Super with a key (e.g. "
            f"{example}), or an F-key or Pause (e.g. f9, ctrl+f9)"
        )
    return combo


def check_listenable(text: str, *, shift_example: str, typing: str) -> Combo:
    """``text`` parsed, if a global listener can hear it and typing never presses it.

    Raises :class:`HotkeyError`: for keys pynput cannot listen for; for Shift with a symbol
    key (Shift turns "1" into "!" before the listener sees it, so the chord never matches,
    ``shift_example`` names a key that works); and for a chord ordinary typing (holodesk's or
    the person's) presses, with ``typing`` as the rest of the message.
    """
    combo = parse_combo(text)
    combo.to_pynput()
    if "shift" in combo.modifiers and any(len(k) == 1 and not k.isalpha() for k in combo.main):
        raise HotkeyError(f"{text!r}: with shift, use a letter or a named key such as "
                          f"{shift_example}")
    if typing_can_press(combo):
        raise HotkeyError(f"{text!r} {typing}")
    return combo


# -- listeners -------------------------------------------------------------------------------


class HotkeyListener(Protocol):
    """Global hotkeys: callbacks run on the listener's own thread, so keep them short."""

    def register(self, combo: str, callback: Callback) -> None:
        """Call ``callback`` whenever ``combo`` is pressed (replaces an earlier callback)."""
        ...

    def unregister(self, combo: str) -> None:
        """Forget ``combo`` (no error when it was not registered)."""
        ...

    def start(self) -> None:
        """Start listening; raises :class:`ListenerError` when the platform refuses."""
        ...

    def stop(self) -> None:
        """Stop listening (safe to call twice, or without start)."""
        ...


class PynputHotkeys:
    """Global hotkeys through one pynput keyboard listener (imported lazily: needs a display).

    Combinations can be registered before or after :meth:`start`. On X11 pynput needs the
    RECORD extension (present in Xorg and Xvfb); on Wayland without XWayland focus it sees
    nothing, on macOS it needs the Accessibility permission: :meth:`start` raises
    :class:`ListenerError` when the listener dies or does not get ready in ``ready_timeout``.
    """

    def __init__(self, *, ready_timeout: float = 5.0) -> None:
        self.ready_timeout = ready_timeout
        self._lock = threading.Lock()
        self._hotkeys: dict[Combo, Any] = {}  # Combo -> pynput HotKey
        self._callbacks: dict[Combo, Callback] = {}
        self._listener: Any = None

    def register(self, combo: str, callback: Callback) -> None:
        parsed = parse_combo(combo)
        with self._lock:
            self._callbacks[parsed] = callback
            if self._listener is not None:
                self._hotkeys[parsed] = self._make(parsed)

    def unregister(self, combo: str) -> None:
        parsed = parse_combo(combo)
        with self._lock:
            self._callbacks.pop(parsed, None)
            self._hotkeys.pop(parsed, None)

    def _make(self, combo: Combo) -> Any:
        from pynput import keyboard

        def fire() -> None:
            callback = self._callbacks.get(combo)
            if callback is None:
                return
            try:
                callback()
            except Exception:  # an exception would end pynput's listener thread
                log.exception("hotkey %s: callback failed", combo)

        return keyboard.HotKey(keyboard.HotKey.parse(combo.to_pynput()), fire)

    def start(self) -> None:
        if self._listener is not None:
            return
        try:
            from pynput import keyboard
        except Exception as e:  # pynput raises ImportError with the reason when no display
            raise ListenerError(f"global hotkeys are unavailable: {e}") from e

        def press(key: Any) -> None:
            self._dispatch(key, pressed=True)

        def release(key: Any) -> None:
            self._dispatch(key, pressed=False)

        listener = keyboard.Listener(on_press=press, on_release=release)
        with self._lock:
            self._listener = listener
            self._hotkeys = {c: self._make(c) for c in self._callbacks}
        try:
            start_listener(listener, self.ready_timeout, "hotkey")
        except ListenerError:
            with self._lock:
                self._listener = None
            raise
        log.info("listening for global hotkeys: %s", ", ".join(str(c) for c in self._callbacks))

    def alive(self) -> bool:
        """Whether the listener's thread still runs (after :meth:`start`)."""
        listener = self._listener
        return listener is not None and bool(listener.is_alive())

    def _dispatch(self, key: Any, *, pressed: bool) -> None:
        listener = self._listener
        if key is None or listener is None:
            return
        canonical = listener.canonical(key)
        with self._lock:
            hotkeys = list(self._hotkeys.values())
        for hotkey in hotkeys:
            if pressed:
                hotkey.press(canonical)
            else:
                hotkey.release(canonical)

    def stop(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            self._hotkeys = {}
        if listener is not None:
            listener.stop()
            # Not joined: pynput's join() waits out its whole timeout on an error queue that
            # stays empty (a full second at every exit), and on X11 the thread may sit in its
            # RECORD read until the next input event. stop() already ends the deliveries; the
            # thread is a daemon and never holds the process.


class FallbackKind(Enum):
    """How a hotkey works less than fully (see control/hotkeys_x11.py)."""

    LISTENED = "listened"  # not reserved: it fires, but the press also reaches the window
    RESERVED = "reserved"  # not listened for: it does not fire under another program's grab
    STOPPED = "stopped"  # neither: it no longer fires at all


@dataclass(frozen=True)
class GrabFallback:
    """A combination that works less than fully, and why: one the X server would not reserve
    for holodesk is listened for instead; one nothing listens for fires only through its
    grab; one with neither left does not fire (see control/hotkeys_x11.py)."""

    combo: str
    reason: str
    kind: FallbackKind = FallbackKind.LISTENED

    @property
    def message(self) -> str:
        """What the person is told (plain words, for the app and the terminal alike)."""
        label = parse_combo(self.combo).label()
        if self.kind is FallbackKind.RESERVED:
            return (f"The hotkey {label} won't fire while another program holds the keyboard "
                    f"(an open menu, a screen locker, a virtual machine's window): holodesk "
                    f"cannot listen to the keyboard ({self.reason}).")
        if self.kind is FallbackKind.STOPPED:
            return f"The hotkey {label} stopped working ({self.reason}): restart holodesk."
        return (f"The hotkey {label} could not be reserved for "
                f"holodesk ({self.reason}); it will still work, but the key press also reaches "
                "the window in front.")
