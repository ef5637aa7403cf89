"""Global hotkeys that the X server reserves for holodesk (XGrabKey), so the press does not
also reach the window in front.

:class:`PynputHotkeys` only listens (the X RECORD extension sees every key, it takes none): an
automation hotkey also typed its key into the focused window. :class:`GrabbedHotkeys` asks the
X server for each combination with ``XGrabKey`` on the root window; the server then delivers
that key press to holodesk alone. A grab the server refuses (``BadAccess``: another program,
often the desktop's own shortcuts, holds that combination), or a combination a grab cannot
express (two keys besides the modifiers, a key this keyboard lacks), is only listened for: it
still works, but the press also reaches the focused window, and :class:`GrabFallback` says so
to the person.

A passive grab does not fire while another client holds an active keyboard grab (an open menu,
a drag, a VM viewer, a screen locker): the server gives every key to that client. The stop
hotkey must work then too, so every combination is also listened for through pynput's RECORD
listener, which sees every key whoever gets it; :class:`PressPairing` lets each press fire once
although the grab and the listener both report it. Should the grab's thread end on an error,
the listener still hears every combination, and each is reported as a :class:`GrabFallback`.
Without the listener (it cannot start, as without the RECORD extension, or its thread ended),
each reserved combination is reported too (:attr:`FallbackKind.RESERVED`: it won't fire while
another program holds the keyboard); with neither, each is reported as no longer working
(:attr:`FallbackKind.STOPPED`).

A grab matches the modifiers exactly, so each combination is grabbed once per state of the
lock keys (Caps Lock, Num Lock, Scroll Lock), which would otherwise stop it from firing while
one of them is on.

Every X request happens on the listener's own thread (python-xlib's connection is not
thread-safe): :meth:`GrabbedHotkeys.register` and :meth:`~GrabbedHotkeys.unregister` hand
their grab or ungrab to that thread and wait for the answer, so a refused grab is known when
``register`` returns. Xlib is imported there, lazily (it needs a display).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import queue
import select
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from control.hotkeys import (
    Callback,
    Combo,
    FallbackKind,
    GrabFallback,
    HotkeyListener,
    ListenerError,
    PynputHotkeys,
    parse_combo,
)
from control.keys import x11_keysym_name

__all__ = ["CannotGrab", "GrabPlan", "GrabbedHotkeys", "KeyboardMasks", "PressPairing", "PressPath",
           "grab_plan"]

log = logging.getLogger(__name__)

# Core X modifier bits (X.h), so the grab plan can be computed without a display.
SHIFT_MASK, LOCK_MASK, CONTROL_MASK = 1 << 0, 1 << 1, 1 << 2
MOD_MASKS = (1 << 3, 1 << 4, 1 << 5, 1 << 6, 1 << 7)  # Mod1 .. Mod5
_ALL_MODIFIERS = 0xFF


@dataclass(frozen=True)
class KeyboardMasks:
    """Which X modifier bit each modifier sits on for this keyboard (from the server's
    modifier mapping); 0 when the keyboard has no such key."""

    alt: int = MOD_MASKS[0]
    super: int = MOD_MASKS[3]
    num_lock: int = MOD_MASKS[1]
    scroll_lock: int = 0

    def of(self, modifier: str) -> int:
        return {"ctrl": CONTROL_MASK, "shift": SHIFT_MASK, "alt": self.alt,
                "super": self.super}[modifier]

    @property
    def locks(self) -> int:
        """The bits of the lock keys, which a press may carry and a hotkey ignores."""
        return LOCK_MASK | self.num_lock | self.scroll_lock


class CannotGrab(Exception):
    """This combination cannot be expressed as one X grab; the message says why."""


@dataclass(frozen=True)
class GrabPlan:
    """What to grab for one combination: its key (an X keysym name), the modifier bits it
    needs, and the modifier states to grab (each with every on/off state of the lock keys)."""

    keysym_name: str
    state: int
    exact: tuple[int, ...]  # the combination as written
    extra: tuple[int, ...]  # ... with more of Ctrl, Alt, Shift, Super held


def grab_plan(combo: Combo, masks: KeyboardMasks) -> GrabPlan:
    """How to reserve ``combo``; :class:`CannotGrab` when X grabs cannot express it.

    A hotkey fires whatever else is held (as the listener's did, and as
    :func:`control.hotkeys.conflicts` assumes): holodesk's own typing may hold Shift when the
    person presses the stop hotkey, so the states with more modifiers are grabbed too.
    """
    if len(combo.main) != 1:
        raise CannotGrab("a reserved hotkey takes one key besides Ctrl, Alt, Shift and Super")
    (key,) = combo.main
    name = x11_keysym_name(key)
    if name is None:
        raise CannotGrab(f"the key {key} has no X11 name")
    state = 0
    for modifier in combo.modifiers:
        bit = masks.of(modifier)
        if not bit:
            raise CannotGrab(f"this keyboard has no {modifier.capitalize()} modifier")
        state |= bit
    locks = _subsets([b for b in (LOCK_MASK, masks.num_lock, masks.scroll_lock) if b])
    others = _subsets([masks.of(m) for m in ("ctrl", "alt", "shift", "super")
                       if masks.of(m) and not masks.of(m) & state])
    exact = sorted({state | lock for lock in locks})
    extra = sorted({state | more | lock for more in others if more for lock in locks})
    return GrabPlan(name, state, tuple(exact), tuple(extra))


def _subsets(bits: list[int]) -> list[int]:
    """Every OR of some of ``bits`` (0 included)."""
    return sorted({sum(chosen) for n in range(len(bits) + 1)
                   for chosen in itertools.combinations(bits, n)})


class PressPath(Enum):
    """Which way a press reached holodesk."""

    GRAB = "grab"  # the X server delivered the grabbed key
    RECORD = "listener"  # pynput's RECORD listener saw it


#: How far apart the two reports of one press may arrive (two threads of a busy machine).
SAME_PRESS_WITHIN = 2.0
#: How often the grab thread checks that the listener's thread still runs, in seconds.
LISTENER_CHECK = 1.0


@dataclass
class PressPairing:
    """Each press fires once although the grab and the listener both report it.

    A report is the second of its press when the other path has a report of the same
    combination, not yet paired, from the last ``within`` seconds; it is paired with it and
    does not fire. A path that misses a press (the grab, under another client's keyboard
    grab) leaves the other's report unpaired: it fired, and it expires (or pairs with the
    missing path's next report, whose own pair then fires), so every press fires once
    whatever order the two reports arrive in.
    """

    within: float = SAME_PRESS_WITHIN
    clock: Callable[[], float] = time.monotonic
    _unpaired: dict[tuple[Any, PressPath], deque[float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def first(self, combo: Any, path: PressPath) -> bool:
        """True when this report of ``combo`` is a new press (fire it), False for the
        second report of a press that already fired."""
        now = self.clock()
        other = PressPath.RECORD if path is PressPath.GRAB else PressPath.GRAB
        with self._lock:
            for key in ((combo, path), (combo, other)):
                waiting = self._unpaired.get(key)
                while waiting and now - waiting[0] > self.within:
                    waiting.popleft()
            waiting = self._unpaired.get((combo, other))
            if waiting:
                waiting.popleft()
                return False
            self._unpaired.setdefault((combo, path), deque()).append(now)
            return True

    def forget(self, combo: Any = None) -> None:
        """Drop the unpaired reports of ``combo`` (of all, when None)."""
        with self._lock:
            for key in [k for k in self._unpaired if combo is None or k[0] == combo]:
                del self._unpaired[key]


class GrabbedHotkeys:
    """A :class:`~control.hotkeys.HotkeyListener` that reserves its combinations on X11.

    ``display`` defaults to ``$DISPLAY``. Every combination is also listened for through
    pynput (made by ``listener_factory``; tests may pass another :class:`HotkeyListener`), so
    it fires while another program holds the keyboard; :class:`PressPairing` keeps each press
    to one call. ``on_fallback`` is called with a :class:`GrabFallback` whenever a combination
    works less than fully: only listened for, on the caller's thread of :meth:`register` or
    :meth:`start` when the server refuses it, on the grab thread when that thread ends on an
    error (every reserved combination then); only reserved, when the listener did not start
    or its thread ended; not at all, when the grab thread ends with no listener.
    :attr:`fallbacks` lists them.
    """

    def __init__(
        self,
        *,
        display: str | None = None,
        on_fallback: Callable[[GrabFallback], None] | None = None,
        ready_timeout: float = 5.0,
        listener_factory: Callable[[], HotkeyListener] | None = None,
        pairing: PressPairing | None = None,
    ) -> None:
        self.display_name = display
        self.ready_timeout = ready_timeout
        self._on_fallback = on_fallback
        self._listener_factory = listener_factory or (
            lambda: PynputHotkeys(ready_timeout=ready_timeout))
        self._pairing = pairing or PressPairing()
        self._lock = threading.Lock()
        self._callbacks: dict[Combo, Callback] = {}
        # Combination -> the (keycode, modifier state) grabs it holds; a grab two combinations
        # share (one's extra state is the other's exact one) is released with the last.
        self._grabs: dict[Combo, set[tuple[int, int]]] = {}
        self._needed: dict[Combo, tuple[frozenset[int], int]] = {}  # keycodes, modifier bits
        self._fallbacks: dict[Combo, GrabFallback] = {}
        self._told: set[tuple[Combo, FallbackKind]] = set()  # what the person was told of
        self._listener: HotkeyListener | None = None  # pynput's, while started
        self._listening = False  # ... and it did start, and still runs
        self._deaf = ""  # why it does not, when it does not
        self._broken: str | None = None  # why the grab thread ended, when it did on an error
        self._thread: threading.Thread | None = None
        self._requests: queue.Queue[tuple[Callable[[], object], _Reply]] = queue.Queue()
        self._wake_r = self._wake_w = -1
        self._masks = KeyboardMasks()
        self._x: Any = None  # (X, XK, Xlib.error, the connection), on the listener's thread

    # -- the HotkeyListener protocol ---------------------------------------------------------

    def register(self, combo: str, callback: Callback) -> None:
        parsed = parse_combo(combo)
        with self._lock:
            known = parsed in self._callbacks
            self._callbacks[parsed] = callback
        if self._listener is not None:
            self._listener.register(str(parsed), self._fire_for(parsed, PressPath.RECORD))
        if known or self._thread is None:
            return
        self._reserve(parsed)

    def unregister(self, combo: str) -> None:
        parsed = parse_combo(combo)
        with self._lock:
            self._callbacks.pop(parsed, None)
        self._fallbacks.pop(parsed, None)
        if self._listener is not None:
            self._listener.unregister(str(parsed))
        if parsed in self._grabs and self._thread is not None and self._broken is None:
            self._call(lambda: self._ungrab(parsed))
        self._pairing.forget(parsed)

    def start(self) -> None:
        if self._thread is not None:
            return
        ready: _Reply = _Reply()
        self._wake_r, self._wake_w = os.pipe()
        self._broken = None
        self._thread = threading.Thread(target=self._run, args=(ready,), name="hotkey-grabs",
                                        daemon=True)
        self._thread.start()
        try:
            ready.get(self.ready_timeout)
        except Exception as e:
            self._thread = None
            self._close_pipe()
            raise ListenerError(f"global hotkeys are unavailable: {e}") from e
        with self._lock:
            combos = list(self._callbacks)
        listener = self._listener = self._listener_factory()
        for combo in combos:
            listener.register(str(combo), self._fire_for(combo, PressPath.RECORD))
        try:
            listener.start()
            self._listening = True
        except ListenerError as e:
            # The grabs still work, but not while another program holds the keyboard: each
            # reserved one says so (_reserve).
            self._deaf = str(e)
            log.warning("global hotkeys: the listener did not start (%s); they work only "
                        "while no other program holds the keyboard", e)
        try:
            for combo in combos:
                self._reserve(combo)
        except ListenerError:
            self.stop()
            raise
        log.info("global hotkeys: %s reserved; %s only listened for",
                 ", ".join(str(c) for c in self._grabs) or "none",
                 ", ".join(str(c) for c in self._fallbacks) or "none")

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            with contextlib.suppress(Exception):
                self._call(lambda: None, stop=True)
            thread.join(2.0)
            self._close_pipe()
        listener, self._listener = self._listener, None
        self._listening = False
        self._deaf = ""
        self._fallbacks.clear()
        self._pairing.forget()
        if listener is not None:
            listener.stop()

    # -- what is reserved --------------------------------------------------------------------

    @property
    def reserved(self) -> list[str]:
        """The combinations the X server delivers to holodesk alone."""
        return [str(c) for c in list(self._grabs)]

    @property
    def fallbacks(self) -> list[GrabFallback]:
        """The combinations that work less than fully (only listened for, only reserved, or
        no longer at all), and why."""
        return list(self._fallbacks.values())

    def _reserve(self, combo: Combo) -> None:
        try:
            if self._broken is not None:
                raise CannotGrab(self._broken)
            self._call(lambda: self._grab(combo))
            if not self._listening:
                self._fall_back(combo, self._deaf, FallbackKind.RESERVED)
            return
        except CannotGrab as e:
            reason = str(e)
        if not self._listening:
            raise ListenerError(f"the hotkey {combo.label()} can be neither reserved "
                                f"({reason}) nor listened for")
        log.warning("hotkey %s: not reserved (%s); only listening for it", combo, reason)
        self._fall_back(combo, reason)

    def _fall_back(self, combo: Combo, reason: str,
                   kind: FallbackKind = FallbackKind.LISTENED) -> None:
        fallback = GrabFallback(str(combo), reason, kind)
        self._fallbacks[combo] = fallback
        if self._on_fallback is not None and (combo, kind) not in self._told:
            # Once: the app registers the automations again whenever their file changes.
            self._told.add((combo, kind))
            try:
                self._on_fallback(fallback)
            except Exception:
                log.exception("hotkey %s: telling of the fallback failed", combo)

    def _fire_for(self, combo: Combo, path: PressPath) -> Callback:
        def fire() -> None:
            self._fire(combo, path)

        return fire

    def _fire(self, combo: Combo, path: PressPath) -> None:
        with self._lock:
            callback = self._callbacks.get(combo)
        if callback is None:
            return
        if not self._pairing.first(combo, path):
            log.debug("hotkey %s: the same press again, through the %s", combo, path.value)
            return
        try:
            callback()
        except Exception:  # one failing callback must not end the listener
            log.exception("hotkey %s: callback failed", combo)

    def _thread_failed(self, error: Exception) -> None:
        """The grab thread ended on ``error``: the listener alone hears the combinations now,
        and the person is told of each that was reserved."""
        reason = "holodesk lost its reservation with the X server"
        self._broken = reason
        combos = list(self._grabs)
        if not self._listening:
            log.error("the hotkey grab thread ended and no listener runs: the global hotkeys "
                      "no longer work", exc_info=error)
            for combo in combos:
                self._fall_back(combo, f"{reason}, and cannot listen to the keyboard",
                                FallbackKind.STOPPED)
            return
        log.error("the hotkey grab thread ended; only listening for %s",
                  ", ".join(str(c) for c in combos) or "nothing", exc_info=error)
        for combo in combos:
            self._fall_back(combo, reason)

    def _check_listener(self) -> None:
        """On the grab thread: when the listener's thread has ended, the grabs alone hear
        the combinations now, and the person is told of each."""
        alive = getattr(self._listener, "alive", None)
        if not self._listening or not callable(alive) or alive():
            return
        self._listening = False
        self._deaf = "the keyboard listener stopped"
        log.error("global hotkeys: the listener's thread ended; they work only while no "
                  "other program holds the keyboard")
        for combo in list(self._grabs):
            self._fall_back(combo, self._deaf, FallbackKind.RESERVED)

    # -- the listener's thread ---------------------------------------------------------------

    def _call(self, request: Callable[[], object], *, stop: bool = False) -> object:
        """Run ``request`` on the listener's thread; its result, or what it raised."""
        reply = _Reply(stop=stop)
        self._requests.put((request, reply))
        os.write(self._wake_w, b"x")
        return reply.get(self.ready_timeout)

    def _close_pipe(self) -> None:
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._wake_r = self._wake_w = -1

    def _run(self, ready: _Reply) -> None:
        try:
            from Xlib import XK, X
            from Xlib import display as xdisplay
            from Xlib import error as xerror

            conn = xdisplay.Display(self.display_name)
        except Exception as e:
            ready.fail(e)
            return
        self._x = (X, XK, xerror, conn)
        try:
            self._masks = _read_masks(conn, XK)
        except Exception:
            log.exception("the keyboard's modifier mapping cannot be read; assuming the usual")
        ready.set(None)
        down: set[int] = set()
        released: tuple[int, int] = (-1, -1)  # (keycode, time) of the last release
        try:
            while True:
                readable, _, _ = select.select([conn.fileno(), self._wake_r], [], [],
                                               LISTENER_CHECK)
                self._check_listener()
                if self._wake_r in readable:
                    os.read(self._wake_r, 512)
                    if self._serve_requests():
                        return
                while conn.pending_events():
                    event = conn.next_event()
                    if event.type == X.KeyRelease:
                        down.discard(event.detail)
                        released = (event.detail, event.time)
                    elif event.type == X.KeyPress:
                        # Auto-repeat: the key stays down (or X sends a release and a press
                        # with the same time); the hotkey fires once per press.
                        if event.detail in down or released == (event.detail, event.time):
                            down.add(event.detail)
                            continue
                        down.add(event.detail)
                        for combo in self._matches(event.detail, event.state):
                            self._fire(combo, PressPath.GRAB)
        except Exception as e:
            self._thread_failed(e)
        finally:
            for combo in list(self._grabs):
                with contextlib.suppress(Exception):
                    self._ungrab(combo)
            with contextlib.suppress(Exception):
                conn.close()
            while not self._requests.empty():  # nobody waits forever on a dead thread
                _request, reply = self._requests.get_nowait()
                reply.fail(ListenerError("the hotkey listener has stopped"))

    def _serve_requests(self) -> bool:
        """Run the queued requests; True when one asked the thread to end."""
        while True:
            try:
                request, reply = self._requests.get_nowait()
            except queue.Empty:
                return False
            try:
                reply.set(request())
            except Exception as e:
                reply.fail(e)
            if reply.stop:
                return True

    def _matches(self, keycode: int, state: int) -> list[Combo]:
        """The combinations a press fires: all of their keys held, whatever else is."""
        held = state & _ALL_MODIFIERS & ~self._masks.locks
        return [combo for combo, (keycodes, needed) in list(self._needed.items())
                if keycode in keycodes and held & needed == needed]

    def _grab(self, combo: Combo) -> None:
        X, XK, xerror, conn = self._x
        if combo in self._grabs:
            return
        plan = grab_plan(combo, self._masks)
        name = plan.keysym_name
        keysym = XK.string_to_keysym(name) if len(name) > 1 else ord(name)
        keycodes = sorted({code for code, _index in conn.keysym_to_keycodes(keysym)})
        if not keycodes:
            raise CannotGrab(f"this keyboard has no {name} key")
        root = conn.screen().root
        held = self._held()

        def grab(states: tuple[int, ...]) -> tuple[set[tuple[int, int]], bool]:
            catch = xerror.CatchError(xerror.BadAccess)
            wanted = {(code, st) for code in keycodes for st in states} - held
            for code, st in sorted(wanted):
                root.grab_key(code, st, False, X.GrabModeAsync, X.GrabModeAsync, onerror=catch)
            conn.sync()
            return wanted, catch.get_error() is None

        exact, ok = grab(plan.exact)
        if not ok:
            self._release(exact)
            raise CannotGrab("another program already uses it")
        # Best effort: another program holding the chord with one more modifier leaves that
        # chord to it (grabbed one by one, so the others stay holodesk's).
        extra: set[tuple[int, int]] = set()
        for code in keycodes:
            for st in plan.extra:
                if (code, st) in held:
                    continue
                catch = xerror.CatchError(xerror.BadAccess)
                root.grab_key(code, st, False, X.GrabModeAsync, X.GrabModeAsync, onerror=catch)
                conn.sync()
                if catch.get_error() is None:
                    extra.add((code, st))
        self._grabs[combo] = exact | extra | {g for g in held
                                              if g[0] in keycodes
                                              and g[1] in plan.exact + plan.extra}
        self._needed[combo] = (frozenset(keycodes), plan.state)

    def _held(self) -> set[tuple[int, int]]:
        return {g for grabs in self._grabs.values() for g in grabs}

    def _ungrab(self, combo: Combo) -> None:
        self._needed.pop(combo, None)
        grabs = self._grabs.pop(combo, set())
        self._release(grabs - self._held())

    def _release(self, grabs: set[tuple[int, int]]) -> None:
        _X, _XK, _xerror, conn = self._x
        root = conn.screen().root
        for code, state in sorted(grabs):
            # Ungrabbing a combination another client holds does nothing to theirs.
            root.ungrab_key(code, state)
        conn.sync()


def _read_masks(conn: Any, XK: Any) -> KeyboardMasks:
    """The modifier bits of Alt, Super, Num Lock and Scroll Lock on this keyboard."""
    mapping = conn.get_modifier_mapping()  # Shift, Lock, Control, Mod1..Mod5: keycode lists

    def bit_of(*names: str) -> int:
        codes = {code for name in names
                 for code, _ in conn.keysym_to_keycodes(XK.string_to_keysym(name))}
        for index in range(3, 8):
            if codes & {c for c in mapping[index] if c}:
                return 1 << index
        return 0

    return KeyboardMasks(
        alt=bit_of("Alt_L", "Alt_R", "Meta_L", "Meta_R"),
        super=bit_of("Super_L", "Super_R"),
        num_lock=bit_of("Num_Lock"),
        scroll_lock=bit_of("Scroll_Lock"),
    )


class _Reply:
    """One answer from the listener's thread, waited for with a bound."""

    def __init__(self, *, stop: bool = False) -> None:
        self.stop = stop
        self._done = threading.Event()
        self._value: object = None
        self._error: BaseException | None = None

    def set(self, value: object) -> None:
        self._value = value
        self._done.set()

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._done.set()

    def get(self, timeout: float) -> object:
        if not self._done.wait(timeout):
            raise ListenerError("the hotkey listener did not answer")
        if self._error is not None:
            raise self._error
        return self._value
