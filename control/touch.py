"""Hand back on touch: notice the person's own mouse and keyboard during a run.

Global listeners (pynput, imported lazily) see every input event, holodesk's own included, so
each event is attributed:

* **ours** when pynput flags it as injected (reliable on Windows and macOS; on X11 XTEST
  events are not flagged, hence the rules below);
* a pointer event (move, click, scroll) is **ours** when it lands within ``tolerance_px`` of
  a point holodesk put the pointer on in the last ``expect_window_s`` seconds
  (:meth:`TouchDetector.expect`); pyautogui moves in one jump, so our pointer events land
  exactly there, while a hand on the mouse produces a trail of other positions;
* a key press is **ours** inside an own-input window (:meth:`TouchDetector.own_input`, plus
  ``grace_s`` after it for events the listener receives late);
* everything else is the **person's**: ``on_touch(kind)`` is called with ``"mouse"`` or
  ``"keyboard"``, once, until :meth:`TouchDetector.rearm`. Key releases never count (the Enter
  that started ``holodesk run`` is released after the run began).

The simplest wiring wraps the input backend, so every primitive is marked as it happens::

    detector = TouchDetector(lambda kind: gate.pause(f"you used the {kind}"))
    backend = detector.wrap(PyAutoGuiBackend(latch))
    detector.start()

Limits: on X11 a key the person types *while* holodesk types is taken for ours (both come in
the same window; XInput2 device ids could tell them apart, xdotool-driven tests could not).
Disable the detector (``enabled = False``) while a confirmation is open: the person is meant
to use the mouse then.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from control.hotkeys import ListenerError, start_listener
from control.input import InputBackend, MouseButton

log = logging.getLogger(__name__)

__all__ = ["TouchAwareBackend", "TouchDetector"]

MOUSE = "mouse"
KEYBOARD = "keyboard"


class TouchDetector:
    """Decides which input events are the person's and reports the first one.

    The ``mouse_*`` and ``key_pressed`` methods are the decision entry points: the pynput
    listeners started by :meth:`start` call them, tests may call them directly. Each returns
    whether the event counts as the person's (reported or not). Thread-safe.
    """

    def __init__(
        self,
        on_touch: Callable[[str], object],
        *,
        tolerance_px: int = 2,
        grace_s: float = 0.3,
        expect_window_s: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        ready_timeout: float = 5.0,
    ) -> None:
        self.on_touch = on_touch
        self.tolerance_px = tolerance_px
        self.grace_s = grace_s
        self.expect_window_s = expect_window_s
        self.clock = clock
        self.ready_timeout = ready_timeout
        self.enabled = True
        self._lock = threading.Lock()
        self._own_depth = 0
        self._own_until = float("-inf")
        self._expected: deque[tuple[float, int, int]] = deque(maxlen=256)
        self._armed = True
        self._listeners: list[Any] = []

    # -- what holodesk does ------------------------------------------------------------------

    @contextmanager
    def own_input(self, points: Iterable[tuple[int, int]] = ()) -> Iterator[None]:
        """Mark the input sent inside the block (and ``points`` the pointer goes to) as ours."""
        for x, y in points:
            self.expect(x, y)
        with self._lock:
            self._own_depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._own_depth -= 1
                self._own_until = self.clock() + self.grace_s

    def expect(self, x: int, y: int) -> None:
        """Holodesk is about to put the pointer at (x, y)."""
        with self._lock:
            self._expected.append((self.clock(), x, y))

    def rearm(self) -> None:
        """Report the next touch again (call it when the run resumes)."""
        with self._lock:
            self._armed = True

    @property
    def armed(self) -> bool:
        return self._armed

    # -- decisions ---------------------------------------------------------------------------

    def _in_own_window(self, now: float) -> bool:
        return self._own_depth > 0 or now <= self._own_until

    def _near_expected(self, now: float, x: float, y: float) -> bool:
        tol = self.tolerance_px
        return any(
            now - t <= self.expect_window_s and abs(ex - x) <= tol and abs(ey - y) <= tol
            for t, ex, ey in self._expected
        )

    def _report(self, kind: str) -> bool:
        with self._lock:
            fire = self._armed and self.enabled
            if fire:
                self._armed = False
        if fire:
            try:
                self.on_touch(kind)
            except Exception:  # an exception would end the listener thread
                log.exception("touch callback failed")
            else:
                # After the callback: once this is in the log, the run has been told.
                log.info("hand back on touch: the person used the %s", kind)
        return True

    def _pointer(self, x: float, y: float, injected: bool) -> bool:
        if injected or not self.enabled:
            return False
        now = self.clock()
        with self._lock:
            ours = self._near_expected(now, x, y)
        return False if ours else self._report(MOUSE)

    def mouse_moved(self, x: float, y: float, injected: bool = False) -> bool:
        """A pointer motion to (x, y)."""
        return self._pointer(x, y, injected)

    def mouse_clicked(self, x: float, y: float, pressed: bool = True,
                      injected: bool = False) -> bool:
        """A button press (``pressed``) or release at (x, y); releases never count."""
        return pressed and self._pointer(x, y, injected)

    def mouse_scrolled(self, x: float, y: float, injected: bool = False) -> bool:
        """A wheel click at (x, y)."""
        return self._pointer(x, y, injected)

    def key_pressed(self, injected: bool = False) -> bool:
        """A key press (which key does not matter)."""
        if injected or not self.enabled:
            return False
        now = self.clock()
        with self._lock:
            ours = self._in_own_window(now)
        return False if ours else self._report(KEYBOARD)

    # -- listening ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the global mouse and keyboard listeners; :class:`ListenerError` if they fail."""
        if self._listeners:
            return
        try:
            from pynput import keyboard, mouse
        except Exception as e:  # pynput raises ImportError with the reason when no display
            raise ListenerError(f"input listeners are unavailable: {e}") from e

        def on_move(x: int, y: int, injected: bool = False) -> None:
            self.mouse_moved(x, y, injected)

        def on_click(x: int, y: int, _button: Any, pressed: bool, injected: bool = False) -> None:
            self.mouse_clicked(x, y, pressed, injected)

        def on_scroll(x: int, y: int, _dx: int, _dy: int, injected: bool = False) -> None:
            self.mouse_scrolled(x, y, injected)

        def on_press(_key: Any, injected: bool = False) -> None:
            self.key_pressed(injected)

        listeners = [
            mouse.Listener(on_move=on_move, on_click=on_click, on_scroll=on_scroll),
            keyboard.Listener(on_press=on_press),
        ]
        try:
            for listener in listeners:
                start_listener(listener, self.ready_timeout, "touch")
                self._listeners.append(listener)
        except ListenerError:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop listening (safe to call twice)."""
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener.stop()
            # Not joined, as in control/hotkeys.py PynputHotkeys.stop: stop() ends the
            # deliveries, and the daemon thread never holds the process.

    def wrap(self, backend: InputBackend) -> TouchAwareBackend:
        """``backend`` with every primitive marked as holodesk's own input."""
        return TouchAwareBackend(backend, self)


class TouchAwareBackend:
    """An :class:`~control.input.InputBackend` that tells a :class:`TouchDetector` what it does.

    Every primitive runs inside ``detector.own_input()``; moves and scrolls announce their
    point first. Anything else (``close``...) is passed through to the wrapped backend.
    """

    def __init__(self, inner: InputBackend, detector: TouchDetector) -> None:
        self.inner = inner
        self.detector = detector

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def close(self) -> None:
        """Close the wrapped backend, when it holds anything (its X11 paste connection).

        A member of its own, not left to ``__getattr__``: the session closes a backend only
        when it is an :class:`app.parts.Closeable`, and from Python 3.12 on a
        runtime-checkable protocol looks its members up statically, never through
        ``__getattr__``."""
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def move_to(self, x: int, y: int) -> None:
        with self.detector.own_input([(x, y)]):
            self.inner.move_to(x, y)

    def mouse_down(self, button: MouseButton = "left") -> None:
        with self.detector.own_input():
            self.inner.mouse_down(button)

    def mouse_up(self, button: MouseButton = "left") -> None:
        with self.detector.own_input():
            self.inner.mouse_up(button)

    def scroll(self, x: int, y: int, vertical: int = 0, horizontal: int = 0) -> None:
        with self.detector.own_input([(x, y)]):
            self.inner.scroll(x, y, vertical, horizontal)

    def key_down(self, key: str) -> None:
        with self.detector.own_input():
            self.inner.key_down(key)

    def key_up(self, key: str) -> None:
        with self.detector.own_input():
            self.inner.key_up(key)

    def write_char(self, ch: str) -> None:
        with self.detector.own_input():
            self.inner.write_char(ch)

    def paste(self, text: str) -> None:
        with self.detector.own_input():
            self.inner.paste(text)

    def position(self) -> tuple[int, int]:
        return self.inner.position()
