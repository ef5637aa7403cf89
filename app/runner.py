"""The foreground run: the desktop lock, the session, the stop hotkey and the stop signals.

Every front end that drives the desktop goes through here: `holodesk run` (and a terminal run of
an automation), `holodesk calibrate`, and the desktop app's runs and calibrations. One lock for
all of them, so two of them never drive one mouse; the stop paths are wired the same way in each.

The signal handlers are Python's, so they can be installed from the main thread only: the
terminal runs install them around the run; the desktop app, whose runs happen on a worker
thread, installs them once for its whole life (ui/app.py), to stop the run and quit cleanly.
"""

from __future__ import annotations

import logging
import queue
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from types import FrameType
from typing import TYPE_CHECKING

from app import paths
from app.lock import DesktopBusyError, DesktopLock

if TYPE_CHECKING:
    from app.events import Event, RunFinished
    from app.pause import PauseGate
    from app.run_request import RunRequest
    from app.session import Session
    from app.way import MakeWay
    from control.capture import ExcludeRects
    from control.input import InputBackend
    from control.stop import StopLatch
    from control.touch import TouchDetector

log = logging.getLogger(__name__)

#: The signals that ask a foreground command to stop: Ctrl+C, `kill` or a logout, and the
#: terminal it was started from going away (SIGHUP, skipped where the platform has none).
#: Left to their default, the last two would end the process with a button possibly held.
STOP_SIGNALS: tuple[str, ...] = ("SIGINT", "SIGTERM", "SIGHUP")

#: Makes the input backend of a run, inside the desktop lock (tests and the GUI pass one).
BackendFactory = Callable[["StopLatch"], "InputBackend"]


def desktop_lock() -> DesktopLock:
    """The lock every run and calibration holds while it drives the desktop (``with`` it).

    Entering raises :class:`~app.lock.DesktopBusyError`, whose message names the holder.
    """
    return DesktopLock(paths.lock_path())


def open_run(
    request: RunRequest,
    *,
    latch: StopLatch | None = None,
    pause: PauseGate | None = None,
    backend: BackendFactory | None = None,
    exclude: ExcludeRects | None = None,
    touch: TouchDetector | None = None,
    make_way: MakeWay | None = None,
) -> Session:
    """Take the desktop lock and build the session of ``request`` on this desktop
    (:func:`app.session.build_session` with the real parts); closing the session frees the lock.

    The lock is freed last, after the input backend released every key and button. Raises
    :class:`~app.lock.DesktopBusyError` when another run holds the desktop, or what building the
    session raised (no display, a bad monitor, ...), with the lock already freed.
    """
    import app.session  # the heavy imports only when a run is asked for
    from control.stop import StopLatch

    latch = latch or StopLatch()
    with ExitStack() as held:
        held.enter_context(desktop_lock())
        # Inside the lock's ``with``: a backend that cannot start (pyautogui without a display)
        # must not leave the lock held until the garbage collector closes its file.
        parts = app.session.RealParts(
            backend=backend(latch) if backend is not None else None, exclude=exclude)
        session = app.session.build_session(request, parts, latch=latch, pause=pause,
                                            touch=touch, make_way=make_way)
        session.on_close(held.pop_all().close, last=True)
    return session


def release_after_abnormal_end() -> bool:
    """At the desktop app's start: when the last run ended abnormally (its process died, so its
    row said ``running`` until now), release every key and button it may have left pressed.

    Runs left ``running`` by a process that is gone are marked ``interrupted`` first (with the
    reason). The release holds the desktop lock, so a run driving the desktop right now is left
    alone: it released everything itself as it started. Whether it released; never raises.
    """
    from app.store import ActionLog
    from control.release import release_everything

    try:
        with ActionLog.open(mark_interrupted=False) as store:
            marked = store.mark_interrupted()
            last = store.list_runs(1)
    except Exception:
        log.warning("could not read the action log to check how the last run ended",
                    exc_info=True)
        return False
    if not marked and not (last and last[0].outcome == "interrupted"):
        return False
    try:
        with desktop_lock():
            return release_everything() is not None
    except DesktopBusyError:
        log.info("not releasing keys at start: another run holds the desktop")
        return False


@contextmanager
def stop_signals(
    on_signal: Callable[[signal.Signals], None],
    *,
    signals: Sequence[str] = STOP_SIGNALS,
    second_interrupt_kills: bool = True,
) -> Iterator[bool]:
    """Call ``on_signal`` on each of ``signals`` while inside; the previous handlers come back.

    With ``second_interrupt_kills``, after the first of them a SIGINT (Ctrl+C again) raises
    :exc:`KeyboardInterrupt` at once, should anything ever hang. Yields whether the handlers
    are in place: Python allows them on the main thread only, elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        log.debug("stop signals not installed: not on the main thread")
        yield False
        return
    # getattr: a platform without one of them (SIGHUP on Windows) skips it.
    wanted = [sig for name in signals if (sig := getattr(signal, name, None)) is not None]

    def handler(signum: int, _frame: FrameType | None) -> None:
        if second_interrupt_kills:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        on_signal(signal.Signals(signum))

    previous = {sig: signal.signal(sig, handler) for sig in wanted}
    try:
        yield True
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def stop_hotkey(combo: str, latch: StopLatch) -> Iterator[bool]:
    """Pull ``latch`` when the person presses ``combo`` anywhere, while inside.

    Yields False when the global listener cannot start: Ctrl+C and the failsafe corner still
    stop the run, which a warning in the log says. On X11 the chord is reserved for holodesk
    (it does not also reach the window in front) unless another program holds it, which a
    warning says too.
    """
    from control.hotkeys import ListenerError
    from control.hotkeys_desktop import system_hotkeys

    hotkeys = system_hotkeys(lambda fallback: log.warning("%s", fallback.message))
    hotkeys.register(combo, lambda: latch.stop("hotkey", combo))
    try:
        hotkeys.start()
    except ListenerError as e:
        log.warning("the stop hotkey %s is not available (%s); stop with Ctrl+C instead",
                    combo, e)
        yield False
        return
    try:
        yield True
    finally:
        hotkeys.stop()


@contextmanager
def foreground(session: Session) -> Iterator[Session]:
    """While inside: the stop signals and the stop hotkey pull the session's stop; on leaving,
    both are undone and the session closed (which frees the desktop lock)."""
    latch = session.latch

    def on_signal(sig: signal.Signals) -> None:
        latch.stop("signal", sig.name)

    try:
        with stop_hotkey(session.settings.stop_hotkey, latch), stop_signals(on_signal):
            yield session
    finally:
        session.close()


def drive(session: Session, on_event: Callable[[Event], None]) -> RunFinished | None:
    """Run ``session`` on a worker thread, handing its events to ``on_event`` on this thread.

    This thread stays free for signals and for the person's answers, as the GUI's event loop
    does. None when the run ended without a result (it crashed: the log file has why).
    """
    events: queue.Queue[Event | None] = queue.Queue()
    result: list[RunFinished] = []

    def work() -> None:
        try:
            result.append(session.run(events.put))
        finally:
            events.put(None)  # the end: no wait for a poll to see the thread gone

    worker = threading.Thread(target=work, name="agent", daemon=True)
    worker.start()
    while True:
        try:
            # A bounded wait keeps this thread responsive to signals.
            event = events.get(timeout=0.1)
        except queue.Empty:
            if worker.is_alive():
                continue
            break  # ended without its end mark (killed mid-put): nothing more will come
        if event is None:
            break
        on_event(event)
    worker.join()
    return result[0] if result else None
