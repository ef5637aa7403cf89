"""Executing the model's actions: input primitives, the pyautogui backend, the executor.

The :class:`Executor` turns one :mod:`model.schema` action (with its points already mapped to
pyautogui's logical screen space) into a sequence of *primitives* of an :class:`InputBackend`
(move, button down/up, key down/up, one typed character, one clipboard paste, scroll). The stop
latch is checked before every primitive, and every wait goes through the latch, so a long
``type`` stops within a character. The run's time limit is held the same way: given the time
left, a ``type``, a drag or a ``wait`` ends at the deadline with :class:`TimeLimitReached`.
Keys and buttons held down are tracked and released in a ``finally`` whatever happens (stop,
time limit, error, fail-safe). A ``key_down`` is the one exception: its key stays down after
the action, until a ``key_up`` of it, :meth:`Executor.release_all` (the agent calls it as every
run ends, however it ends) or any action that fails or is stopped (which releases it at once).
What the held keys change is part of every action in between: their keys are not pressed or
released again by a chord that holds them, and a ``type`` presses each character's own key
as a chord with them (Shift held types capitals, as the policy judges it).

Backends: :class:`PyAutoGuiBackend` (the real one; pyautogui is imported lazily because it binds
to a display at import) and :class:`DryRunBackend` (records primitives instead of acting).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from control.clipboard import Clipboard, ClipboardError, SystemClipboard, X11PasteServer
from control.keys import (
    US_UNSHIFTED,
    UnknownKeyError,
    normalize_hotkey,
    normalize_key,
    paste_keys,
    same_key,
    select_all_keys,
)
from control.stop import StopLatch, StoppedError
from model.coords import Point
from model.problem import HolodeskError
from model.schema import (
    Action,
    Answer,
    AskUser,
    Click,
    DoubleClick,
    Drag,
    DragTo,
    HoldAndTap,
    Hotkey,
    KeyDown,
    KeyUp,
    Move,
    Scroll,
    Type,
    UpdatePlan,
    Wait,
)

log = logging.getLogger(__name__)

MouseButton = Literal["left", "right", "middle"]


class InputError(HolodeskError, RuntimeError):
    """The input backend cannot do what was asked (no clipboard, unknown key, ...)."""


class TimeLimitReached(Exception):
    """The run's time limit ran out in the middle of an action; nothing is left held."""

    def __init__(self, overrun_s: float = 0.0) -> None:
        super().__init__("the run's time limit was reached during the action")
        self.overrun_s = overrun_s


class InputBackend(Protocol):
    """The primitives an executor composes actions from. Coordinates are logical points."""

    def move_to(self, x: int, y: int) -> None:
        """Move the pointer."""
        ...

    def mouse_down(self, button: MouseButton = "left") -> None:
        """Press a mouse button where the pointer is."""
        ...

    def mouse_up(self, button: MouseButton = "left") -> None:
        """Release a mouse button where the pointer is (never refused: releasing is safe)."""
        ...

    def scroll(self, x: int, y: int, vertical: int = 0, horizontal: int = 0) -> None:
        """Scroll at (x, y) by wheel clicks: vertical > 0 is up, horizontal > 0 is right."""
        ...

    def key_down(self, key: str) -> None:
        """Press a key (a pyautogui key name, see :mod:`control.keys`)."""
        ...

    def key_up(self, key: str) -> None:
        """Release a key (never refused: releasing is safe)."""
        ...

    def write_char(self, ch: str) -> None:
        """Type one printable ASCII character (with Shift as the layout needs)."""
        ...

    def paste(self, text: str) -> None:
        """Insert ``text`` at the focus through the clipboard, then restore the clipboard."""
        ...

    def position(self) -> tuple[int, int]:
        """Where the pointer is."""
        ...


# -- the pyautogui backend -------------------------------------------------------------------

_FAILSAFE_LOCK = threading.Lock()


class PyAutoGuiBackend:
    """Real input through pyautogui.

    ``pyautogui.PAUSE`` is set to 0 (the executor waits explicitly where it matters) and
    ``pyautogui.FAILSAFE`` stays on: a pointer pushed into a screen corner by the person makes
    the next primitive set ``latch`` (source ``"failsafe-corner"``) and raise
    :class:`StoppedError`. So that only the person can trigger it, the backend never moves the
    pointer exactly onto a corner pixel itself (it lands one pixel inside). Releases (key up,
    button up) bypass the fail-safe: they must work precisely when everything else stops.

    On X11, ASCII characters are typed from the server's own keymap (keycode and Shift level of
    the character's keysym): pyautogui presses Shift by a US-layout rule and its first-found
    keycode, which turns "<" into ">" on a pc105 keymap such as Xvfb's.

    ``paste`` saves the clipboard's text, offers the new text, presses Ctrl+V (Command+V on
    macOS) and restores the saved text once the application has fetched the new one. On X11
    that moment is known (:class:`~control.clipboard.X11PasteServer` serves the request
    itself; ``paste_timeout_s`` bounds the wait). Elsewhere the fetch cannot be observed, so the
    backend waits ``paste_delay_s`` before restoring: restoring earlier would paste the
    person's own clipboard content.
    """

    def __init__(self, latch: StopLatch, *, paste_delay_s: float = 0.5,
                 paste_timeout_s: float = 3.0, clipboard: Clipboard | None = None,
                 platform: str = sys.platform) -> None:
        from control.pyautogui_loader import load_pyautogui

        pyautogui = load_pyautogui()

        self._pg = pyautogui
        pyautogui.PAUSE = 0
        pyautogui.FAILSAFE = True
        self.latch = latch
        self.paste_delay_s = paste_delay_s
        self.paste_timeout_s = paste_timeout_s
        self.platform = platform
        self._clipboard = clipboard
        self._paste_server: X11PasteServer | None = None
        self._x11_paste = platform.startswith("linux") and bool(os.environ.get("DISPLAY"))
        self._x11 = _X11Typist.create(pyautogui) if platform.startswith("linux") else None

    # fail-safe handling

    def _failsafe(self) -> StoppedError:
        self.latch.stop("failsafe-corner", "the pointer was pushed into a screen corner")
        info = self.latch.info
        assert info is not None
        return StoppedError(info)

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except self._pg.FailSafeException:
            raise self._failsafe() from None

    @contextmanager
    def _failsafe_suspended(self) -> Iterator[None]:
        with _FAILSAFE_LOCK:
            saved = self._pg.FAILSAFE
            self._pg.FAILSAFE = False
            try:
                yield
            finally:
                self._pg.FAILSAFE = saved

    def _off_corner(self, x: int, y: int) -> tuple[int, int]:
        if (x, y) not in self._pg.FAILSAFE_POINTS:
            return x, y
        width, height = self._pg.size()
        nx = 1 if x <= 0 else (width - 2 if x >= width - 1 else x)
        ny = 1 if y <= 0 else (height - 2 if y >= height - 1 else y)
        log.info("target (%d, %d) is a fail-safe corner: using (%d, %d)", x, y, nx, ny)
        return nx, ny

    # primitives

    def move_to(self, x: int, y: int) -> None:
        x, y = self._off_corner(int(x), int(y))
        with self._guard():
            self._pg.moveTo(x, y)

    def mouse_down(self, button: MouseButton = "left") -> None:
        with self._guard():
            self._pg.mouseDown(button=button)

    def mouse_up(self, button: MouseButton = "left") -> None:
        with self._failsafe_suspended():
            self._pg.mouseUp(button=button)

    def scroll(self, x: int, y: int, vertical: int = 0, horizontal: int = 0) -> None:
        x, y = self._off_corner(int(x), int(y))
        with self._guard():
            if vertical:
                self._pg.scroll(int(vertical), x=x, y=y)
            if horizontal:
                self._pg.hscroll(int(horizontal), x=x, y=y)

    def key_down(self, key: str) -> None:
        if not self._pg.isValidKey(key):
            raise UnknownKeyError(f"key {key!r} cannot be pressed on this platform")
        with self._guard():
            self._pg.keyDown(key)

    def key_up(self, key: str) -> None:
        with self._failsafe_suspended():
            self._pg.keyUp(key)

    def write_char(self, ch: str) -> None:
        if len(ch) != 1 or not (" " <= ch <= "~"):
            raise ValueError(f"write_char takes one printable ASCII character, not {ch!r}")
        if self._x11 is not None and self._x11.can_type(ch):
            with self._guard():
                self._pg.failSafeCheck()
            self._x11.type(ch)
            return
        with self._guard():
            self._pg.press(ch)

    def paste(self, text: str) -> None:
        clipboard = self._get_clipboard()
        keys = paste_keys(self.platform)
        with self._guard():
            self._pg.failSafeCheck()
        previous = clipboard.get()
        server = None
        try:
            server = self._get_paste_server()
            if server is not None and len(text.encode("utf-8")) <= server.MAX_BYTES:
                fetched = server.offer(text, lambda: self._press_together(keys),
                                       timeout_s=self.paste_timeout_s,
                                       cancelled=lambda: self.latch.is_set)
                if not fetched:
                    log.warning("no application took the pasted text within %.1f s",
                                self.paste_timeout_s)
            else:
                clipboard.set(text)
                self._press_together(keys)
                # A plain sleep, not the latch: the clipboard is restored even when stopping.
                time.sleep(self.paste_delay_s)
        finally:
            clipboard.set(previous)
            if server is not None and not server.wait_released():
                log.warning("the clipboard was not handed back in time")

    def _press_together(self, keys: Sequence[str]) -> None:
        """Press a shortcut's keys down in order and up in reverse, as one unit."""
        pressed: list[str] = []
        try:
            # The fail-safe was checked by the caller: the keys go down together or not at all.
            with self._failsafe_suspended():
                for key in keys:
                    self._pg.keyDown(key)
                    pressed.append(key)
        finally:
            with self._failsafe_suspended():
                for key in reversed(pressed):
                    self._pg.keyUp(key)

    def close(self) -> None:
        """Release the X11 connection used for pasting (if one was opened)."""
        if self._paste_server is not None:
            self._paste_server.close()
            self._paste_server = None

    def position(self) -> tuple[int, int]:
        pos = self._pg.position()
        return int(pos.x), int(pos.y)

    # helpers

    def _get_clipboard(self) -> Clipboard:
        if self._clipboard is None:
            try:
                self._clipboard = SystemClipboard()
            except ClipboardError as exc:
                raise InputError(str(exc)) from exc
        return self._clipboard

    def _get_paste_server(self) -> X11PasteServer | None:
        if self._paste_server is None and self._x11_paste:
            try:
                self._paste_server = X11PasteServer()
            except Exception:  # no handshake then: the delay still works
                log.warning("X11 clipboard handshake unavailable; pasting with a delay",
                            exc_info=True)
                self._x11_paste = False
        return self._paste_server



class _X11Typist:
    """Types printable ASCII from the X server's keymap: the keycode bound to the character's
    keysym at level 0 (no Shift) or 1 (Shift)."""

    def __init__(self, display: Any, fake_input: Callable[..., None], press: int, release: int,
                 shift: int, table: dict[str, tuple[int, bool]]) -> None:
        self._display = display
        self._fake_input = fake_input
        self._press = press
        self._release = release
        self._shift = shift
        self._table = table

    @classmethod
    def create(cls, pg: Any) -> _X11Typist | None:
        try:
            from Xlib import XK, X
            from Xlib.ext.xtest import fake_input

            display = pg.platformModule._display
            shift = display.keysym_to_keycode(XK.string_to_keysym("Shift_L"))
            table: dict[str, tuple[int, bool]] = {}
            for code in range(0x20, 0x7F):
                # Printable ASCII keysyms are their code points (X11 Latin-1 keysyms).
                for keycode, index in display.keysym_to_keycodes(code):
                    if index in (0, 1):
                        table[chr(code)] = (keycode, index == 1)
                        break
        except Exception:  # any surprise: fall back to pyautogui's own typing
            log.warning("X11 keymap lookup failed; typing through pyautogui", exc_info=True)
            return None
        return cls(display, fake_input, X.KeyPress, X.KeyRelease, shift, table)

    def can_type(self, ch: str) -> bool:
        return ch in self._table

    def type(self, ch: str) -> None:
        keycode, needs_shift = self._table[ch]
        fake, display = self._fake_input, self._display
        if needs_shift:
            fake(display, self._press, self._shift)
        fake(display, self._press, keycode)
        fake(display, self._release, keycode)
        if needs_shift:
            fake(display, self._release, self._shift)
        display.sync()


# -- the dry-run backend ---------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One primitive a :class:`DryRunBackend` received."""

    name: str
    args: tuple[Any, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}({', '.join(repr(a) for a in self.args)})"


@dataclass
class DryRunBackend:
    """Records primitives instead of acting; ``calls`` is the inspectable list.

    ``hook`` is called with each call after it is recorded (tests use it to pull the stop at a
    precise point).
    """

    calls: list[Call] = field(default_factory=list)
    pointer: tuple[int, int] = (0, 0)
    clipboard: str = ""
    hook: Callable[[Call], None] | None = None

    def _record(self, name: str, *args: Any) -> None:
        call = Call(name, args)
        self.calls.append(call)
        if self.hook is not None:
            self.hook(call)

    def move_to(self, x: int, y: int) -> None:
        self.pointer = (x, y)
        self._record("move_to", x, y)

    def mouse_down(self, button: MouseButton = "left") -> None:
        self._record("mouse_down", button)

    def mouse_up(self, button: MouseButton = "left") -> None:
        self._record("mouse_up", button)

    def scroll(self, x: int, y: int, vertical: int = 0, horizontal: int = 0) -> None:
        self.pointer = (x, y)
        self._record("scroll", x, y, vertical, horizontal)

    def key_down(self, key: str) -> None:
        self._record("key_down", key)

    def key_up(self, key: str) -> None:
        self._record("key_up", key)

    def write_char(self, ch: str) -> None:
        self._record("write_char", ch)

    def paste(self, text: str) -> None:
        self._record("paste", text)

    def position(self) -> tuple[int, int]:
        return self.pointer

    def names(self) -> list[str]:
        """The primitive names in order (handy in assertions)."""
        return [c.name for c in self.calls]

    def typed(self) -> str:
        """The text produced by write_char, paste and Enter/Tab presses, in order."""
        out = []
        for call in self.calls:
            if call.name in ("write_char", "paste"):
                out.append(str(call.args[0]))
            elif call.name == "key_down" and call.args[0] in ("enter", "tab"):
                out.append("\n" if call.args[0] == "enter" else "\t")
        return "".join(out)


# -- the executor ----------------------------------------------------------------------------


@dataclass(frozen=True)
class InputTiming:
    """The short waits real applications need between primitives (all go through the latch)."""

    after_move_s: float = 0.03  # let the app process the pointer's arrival (hover) first
    char_interval_s: float = 0.006  # ~150 chars/s: fast, yet no app drops or reorders keys
    key_interval_s: float = 0.01  # between the keys of a hotkey
    drag_hold_s: float = 0.08  # after the press: toolkits arm a drag on press, then watch motion
    drag_steps: int = 12
    drag_step_s: float = 0.015
    scroll_step_s: float = 0.01
    #: Before a drag's release: the drop target answers the last motion first (XDND's status
    #: reply to each position); not shortened with ``after_move_s``.
    before_drop_s: float = 0.03

    @classmethod
    def for_platform(cls, platform: str = sys.platform) -> InputTiming:
        """The timing for ``platform``. On Linux (X11, or XWayland) the server handles the
        pointer's motion before the press that follows it, and toolkits handle both in that
        order: the press lands where the pointer went and its hover state is up to date, with
        no pause at all (tests/control/test_input_x11.py clicks with none). A short one stays
        for toolkits that draw a hover on the next frame; 30 ms elsewhere (untested there)."""
        if platform.startswith("linux"):
            return cls(after_move_s=0.01)
        return cls()


_NEEDS_POINTS = {"click": 1, "double_click": 1, "move": 1, "scroll": 1, "drag": 2,
                 "drag_to": 1}


def _char_keys(ch: str) -> list[str]:
    """The keys that type ``ch`` (printable ASCII) on a US layout: its key, with Shift if it
    needs it."""
    if ch == " ":
        return ["space"]
    if ch.isascii() and ch.isupper():
        return ["shift", ch.lower()]
    if ch in US_UNSHIFTED:
        return ["shift", US_UNSHIFTED[ch]]
    return [ch]


class Executor:
    """Executes schema actions on a backend, stoppable before every primitive."""

    def __init__(self, backend: InputBackend, latch: StopLatch, *,
                 timing: InputTiming | None = None, platform: str = sys.platform) -> None:
        self.backend = backend
        self.latch = latch
        self.timing = timing or InputTiming.for_platform(platform)
        self.platform = platform
        self._held_keys: list[str] = []
        self._held_buttons: list[MouseButton] = []
        #: Keys a ``key_down`` left down, in pyautogui's names, in the order they went down.
        self._sticky_keys: list[str] = []
        self._time_left: Callable[[], float] | None = None

    @property
    def held_keys(self) -> tuple[str, ...]:
        return tuple(self._held_keys)

    @property
    def held_buttons(self) -> tuple[MouseButton, ...]:
        return tuple(self._held_buttons)

    @property
    def sticky_keys(self) -> tuple[str, ...]:
        """The keys ``key_down`` actions left down (pyautogui names), until released."""
        return tuple(self._sticky_keys)

    def pointer(self) -> Point:
        """Where the pointer is now: where a ``drag_to`` starts."""
        x, y = self.backend.position()
        return Point(x, y)

    def execute(self, action: Action, points: Sequence[Point] = (),
                time_left: Callable[[], float] | None = None) -> None:
        """Perform ``action``; ``points`` are its screen points (drag: start, end).

        ``time_left`` returns the seconds left before the run's deadline (on the caller's own
        clock); it is asked before every primitive and bounds every wait, like the latch.

        A ``drag_to`` given two points drags from the first to the second (the start the
        person was shown); given one, from where the pointer is now to it.

        Raises :class:`StoppedError` when the latch is (or gets) set,
        :class:`TimeLimitReached` when the deadline comes first, ``ValueError`` for an action
        that cannot be performed (missing points, unknown key) before any input. Whatever
        happens, nothing stays held down afterwards but the keys of ``key_down`` actions that
        completed; an action that raises releases those too.
        """
        needed = _NEEDS_POINTS.get(action.action, 0)
        if len(points) < needed:
            raise ValueError(f"{action.action} needs {needed} point(s), got {len(points)}")
        self._time_left = time_left
        done = False
        try:
            self._check()
            self._dispatch(action, points)
            done = True
        finally:
            self._time_left = None
            self._release_pressed()
            if not done:
                self._release_sticky()

    def release_all(self) -> None:
        """Release every key and button this executor holds, those of ``key_down`` actions
        too (never raises). Called as every run ends, however it ends."""
        self._release_pressed()
        self._release_sticky()

    def _release_sticky(self) -> None:
        while self._sticky_keys:
            key = self._sticky_keys.pop()
            try:
                self.backend.key_up(key)
            except Exception:
                log.exception("could not release key %s", key)

    def _release_pressed(self) -> None:
        """Release what the action under way pressed (never raises)."""
        while self._held_buttons:
            button = self._held_buttons.pop()
            try:
                self.backend.mouse_up(button)
            except Exception:
                log.exception("could not release mouse button %s", button)
        while self._held_keys:
            key = self._held_keys.pop()
            try:
                self.backend.key_up(key)
            except Exception:
                log.exception("could not release key %s", key)

    # primitives, each behind the latch and the deadline

    def _check(self) -> None:
        self.latch.check()
        if self._time_left is not None:
            left = self._time_left()
            if left <= 0:
                raise TimeLimitReached(-left)

    def _sleep(self, seconds: float) -> None:
        self._check()
        if seconds <= 0:
            return
        left = self._time_left() if self._time_left is not None else seconds
        # A wait longer than the time left sleeps only until the deadline, then ends there.
        self.latch.sleep(min(seconds, left))
        if left < seconds:
            raise TimeLimitReached()

    def _move(self, point: Point) -> None:
        self._check()
        self.backend.move_to(point.x, point.y)

    def _down(self, button: MouseButton) -> None:
        self._check()
        try:
            self.backend.mouse_down(button)
        except StoppedError:
            raise  # refused before pressing (fail-safe)
        except BaseException:
            self._held_buttons.append(button)  # it may have gone down half-way: release it
            raise
        self._held_buttons.append(button)

    def _up(self, button: MouseButton) -> None:
        self._check()
        self.backend.mouse_up(button)
        with suppress(ValueError):
            self._held_buttons.remove(button)

    def _key_down(self, key: str) -> None:
        self._check()
        try:
            self.backend.key_down(key)
        except (StoppedError, UnknownKeyError):
            raise  # refused before pressing
        except BaseException:
            self._held_keys.append(key)  # it may have gone down half-way: release it
            raise
        self._held_keys.append(key)

    def _key_up(self, key: str) -> None:
        self._check()
        self.backend.key_up(key)
        with suppress(ValueError):
            self._held_keys.remove(key)

    def _release(self, key: str) -> None:
        """Release ``key`` whether or not the run is stopping (releasing is always safe); kept
        for :meth:`release_all` if the release fails."""
        try:
            self.backend.key_up(key)
        except Exception:
            log.exception("could not release key %s", key)
            return
        with suppress(ValueError):
            self._held_keys.remove(key)

    def _is_sticky(self, key: str) -> bool:
        return any(same_key(key, held) for held in self._sticky_keys)

    def _press(self, key: str) -> None:
        self._hotkey([key])

    def _hotkey(self, keys: Sequence[str]) -> None:
        # A key a key_down holds is down already: pressing it again would release it after.
        keys = [k for k in keys if not self._is_sticky(k)]
        for i, key in enumerate(keys):
            if i:
                self._sleep(self.timing.key_interval_s)
            self._key_down(key)
        for key in reversed(keys):
            self._key_up(key)

    # actions

    def _dispatch(self, action: Action, points: Sequence[Point]) -> None:
        t = self.timing
        if isinstance(action, Click | DoubleClick):
            button: MouseButton = action.button if isinstance(action, Click) else "left"
            clicks = action.clicks if isinstance(action, Click) else 2
            self._move(points[0])
            self._sleep(t.after_move_s)
            for _ in range(clicks):
                self._down(button)
                self._up(button)
        elif isinstance(action, Move):
            self._move(points[0])
        elif isinstance(action, Drag):
            self._drag(points[0], points[1])
        elif isinstance(action, DragTo):
            start, end = (points[0], points[1]) if len(points) > 1 else (self.pointer(),
                                                                        points[0])
            self._drag(start, end)
        elif isinstance(action, Scroll):
            self._scroll(action, points[0])
        elif isinstance(action, Type):
            self._type(action)
        elif isinstance(action, Hotkey):
            keys = normalize_hotkey(action.keys, self.platform)
            for i in range(action.repeat):
                if i:
                    self._sleep(t.key_interval_s)  # the latch and the deadline between presses
                self._hotkey(keys)
        elif isinstance(action, HoldAndTap):
            self._hold_and_tap(action)
        elif isinstance(action, KeyDown):
            self._key_down_held(normalize_key(action.key, self.platform))
        elif isinstance(action, KeyUp):
            for key in [k for k in self._sticky_keys if same_key(k, action.key)]:
                self._sticky_keys.remove(key)
                self._held_keys.append(key)  # released by _release_pressed if this fails
                self._release(key)
        elif isinstance(action, Wait):
            self._sleep(action.seconds)
        elif isinstance(action, AskUser | Answer | UpdatePlan):
            return
        else:  # pragma: no cover - the schema's union is closed
            raise ValueError(f"unknown action {action!r}")

    def _hold_and_tap(self, action: HoldAndTap) -> None:
        """Hold ``hold`` down, tap each of ``tap`` in turn, release ``hold`` in a ``finally``
        (a stop between taps leaves nothing down). Every key is checked before any is
        pressed."""
        hold = normalize_hotkey(action.hold, self.platform)
        taps = [normalize_hotkey([tap], self.platform) for tap in action.tap]
        pressed: list[str] = []
        try:
            for i, key in enumerate(k for k in hold if not self._is_sticky(k)):
                if i:
                    self._sleep(self.timing.key_interval_s)
                self._key_down(key)
                pressed.append(key)
            for tap in taps:
                self._sleep(self.timing.key_interval_s)
                self._hotkey([k for k in tap if k not in pressed])
        finally:
            for key in reversed(pressed):
                self._release(key)

    def _key_down_held(self, key: str) -> None:
        """Press ``key`` and keep it down after the action (until a ``key_up`` of it or the end
        of the run); a key held already stays as it is."""
        if self._is_sticky(key):
            return
        self._key_down(key)
        self._held_keys.remove(key)
        self._sticky_keys.append(key)

    def _drag(self, start: Point, end: Point) -> None:
        t = self.timing
        self._move(start)
        self._sleep(t.after_move_s)
        self._down("left")
        self._sleep(t.drag_hold_s)
        steps = max(1, t.drag_steps)
        for i in range(1, steps + 1):
            x = round(start.x + (end.x - start.x) * i / steps)
            y = round(start.y + (end.y - start.y) * i / steps)
            self._move(Point(x, y))
            self._sleep(t.drag_step_s)
        self._sleep(t.before_drop_s)
        self._up("left")

    def _scroll(self, action: Scroll, point: Point) -> None:
        self._move(point)
        self._sleep(self.timing.after_move_s)
        vertical = {"up": 1, "down": -1}.get(action.direction, 0)
        horizontal = {"right": 1, "left": -1}.get(action.direction, 0)
        for i in range(action.amount):
            if i:
                self._sleep(self.timing.scroll_step_s)
            self._check()
            self.backend.scroll(point.x, point.y, vertical, horizontal)

    def _type(self, action: Type) -> None:
        if self._sticky_keys:
            self._type_held(action)
            return
        if action.clear_first:
            self._hotkey(select_all_keys(self.platform))
            self._sleep(self.timing.key_interval_s)
            self._press("backspace")
        first = True
        for kind, chunk in split_text(action.text):
            if not first:
                self._sleep(self.timing.char_interval_s)
            first = False
            if kind == "paste":
                self._check()
                self.backend.paste(chunk)
            elif kind == "key":
                self._press(chunk)
            else:
                self._check()
                self.backend.write_char(chunk)
        if action.press_enter:
            self._sleep(self.timing.char_interval_s)
            self._press("enter")


    def _type_held(self, action: Type) -> None:
        """Type with keys held down by ``key_down``: each character by its own key, a chord
        with the keys held (typing it as usual would press and release Shift around a capital,
        releasing a Shift held). Text that is pasted cannot be: refused before any input."""
        parts = split_text(action.text)
        if any(kind == "paste" for kind, _ in parts):
            raise InputError("text outside printable ASCII is pasted, which cannot be done "
                             f"while {'+'.join(self._sticky_keys)} is held down (release it "
                             "first)")
        if action.clear_first:
            self._hotkey(select_all_keys(self.platform))
            self._sleep(self.timing.key_interval_s)
            self._press("backspace")
        for i, (kind, chunk) in enumerate(parts):
            if i:
                self._sleep(self.timing.char_interval_s)
            self._hotkey([chunk] if kind == "key" else _char_keys(chunk))
        if action.press_enter:
            self._sleep(self.timing.char_interval_s)
            self._press("enter")


def normalized(action: Action) -> Action:
    """``action`` as it will really run: a ``type``'s text as :func:`typed_text` makes it.

    The agent normalises once, before the policy judges, and executes the same action, so the
    text judged and shown is the text typed (typing it again changes nothing: idempotent).
    """
    if isinstance(action, Type):
        text = typed_text(action.text)
        if text != action.text:
            return action.model_copy(update={"text": text})
    return action


def typed_text(text: str) -> str:
    """The text ``text`` really becomes when typed (:func:`split_text`: control characters
    dropped, line breaks as Enter): what the policy must judge, not what the model wrote."""
    keys = {"enter": "\n", "tab": "\t"}
    return "".join(keys[s] if kind == "key" else s for kind, s in split_text(text))


def split_text(text: str) -> list[tuple[Literal["char", "key", "paste"], str]]:
    """How a ``type`` text is entered: printable ASCII one character at a time, newline and
    tab as the Enter and Tab keys, every run of other characters as one clipboard paste.

    Other control characters are dropped (a model has no business typing them).
    """
    out: list[tuple[Literal["char", "key", "paste"], str]] = []
    run: list[str] = []
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    for ch in text:
        if " " <= ch <= "~" or ch in "\n\t":
            if run:
                out.append(("paste", "".join(run)))
                run = []
            if ch == "\n":
                out.append(("key", "enter"))
            elif ch == "\t":
                out.append(("key", "tab"))
            else:
                out.append(("char", ch))
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
            log.warning("dropping control character %r from typed text", ch)
        else:
            run.append(ch)
    if run:
        out.append(("paste", "".join(run)))
    return out
