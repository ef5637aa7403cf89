"""Run work off the GUI thread and get the result back on it, without ever blocking the loop.

The pattern of Anki's ``aqt`` (``run_in_background`` / ``run_on_main``) on Qt's own pieces::

    tasks = Background(parent=self)                 # created on the GUI thread
    tasks.run(lambda: log.list_runs(), self._show_runs, self._show_error)

``fn`` runs on a :class:`QThreadPool` thread; ``on_done(result)`` or ``on_error(exc)`` then runs
on the GUI thread, delivered by a queued signal of one relay object that lives as long as the
application. Callbacks are kept on the GUI side only, keyed by a ticket: the worker never
touches them, and a Background deleted meanwhile (its window closed) simply gets nothing.
A :class:`Background` with one thread (``max_threads=1``) runs its tasks in submission order,
which keeps reads and writes of one resource (a SQLite connection) in sequence.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import shiboken6
from PySide6.QtCore import (
    QCoreApplication,
    QObject,
    QRunnable,
    Qt,
    QThread,
    QThreadPool,
    Signal,
    Slot,
)

__all__ = ["Background", "run_in_background", "run_on_main"]

_log = logging.getLogger(__name__)

T = TypeVar("T")
_DEFAULT_NAME = "holodesk-background"
_RELAY_NAME = "holodesk-relay"


@dataclass(frozen=True)
class _Result:
    ticket: int
    ok: bool
    value: Any


class _Relay(QObject):
    """The one object workers signal: it lives as long as the application.

    Workers never emit on a :class:`Background` itself: its window may be deleted on the GUI
    thread while a worker emits, and emitting on a QObject being destroyed crashes. The relay
    outlives every task (Qt waits for the global pool before destroying the application), and
    checks on the GUI thread that the Background still exists.
    """

    results = Signal(object)  # (Background, _Result)
    calls = Signal(object)  # a callable to run on the GUI thread

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.setObjectName(_RELAY_NAME)
        # Queued explicitly: the signals are emitted on other threads, the slots run here.
        self.results.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self.calls.connect(self._invoke, Qt.ConnectionType.QueuedConnection)

    @Slot(object)
    def _deliver(self, item: tuple[Background, _Result]) -> None:
        owner, result = item
        if shiboken6.isValid(owner):
            owner._deliver(result)

    @Slot(object)
    def _invoke(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            _log.exception("callback on the GUI thread failed")


def _relay() -> _Relay:
    """The application's relay, created on first use (which must be on the GUI thread)."""
    app = QCoreApplication.instance()
    if app is None:
        raise RuntimeError("ui.workers needs a QApplication")
    found = app.findChild(_Relay, _RELAY_NAME)
    if isinstance(found, _Relay):
        return found
    if QThread.currentThread() is not app.thread():
        raise RuntimeError(
            "create a Background (or call run_in_background) on the GUI thread before using "
            "run_on_main from a worker thread"
        )
    return _Relay(app)


class _Task(QRunnable):
    def __init__(
        self, relay: _Relay, owner: Background, ticket: int, fn: Callable[[], Any]
    ) -> None:
        super().__init__()
        self._relay = relay
        self._owner = owner
        self._ticket = ticket
        self._fn = fn

    def run(self) -> None:
        try:
            result = _Result(self._ticket, True, self._fn())
        except BaseException as exc:  # delivered to on_error on the GUI thread
            result = _Result(self._ticket, False, exc)
        self._fn = _nothing  # drop references to the closure at once
        with contextlib.suppress(RuntimeError):  # the application is gone: nobody to tell
            self._relay.results.emit((self._owner, result))


def _nothing() -> None:
    return None


class Background(QObject):
    """Runs callables on a thread pool and delivers results on the GUI thread.

    Create it on the GUI thread (a QApplication must exist). ``max_threads`` None shares Qt's
    global pool; a number gives this object a pool of its own (1: tasks run one after another,
    in order). Deleting the Background (e.g. with its window) drops the results still to come.
    """

    def __init__(self, parent: QObject | None = None, *, max_threads: int | None = None) -> None:
        super().__init__(parent)
        self._relay = _relay()
        if max_threads is None:
            self._pool = QThreadPool.globalInstance()
        else:
            self._pool = QThreadPool(self)
            self._pool.setMaxThreadCount(max_threads)
        self._tickets = itertools.count(1)
        self._callbacks: dict[
            int, tuple[Callable[[Any], None] | None, Callable[[BaseException], None] | None]
        ] = {}
        self._closed = False

    @property
    def pending(self) -> int:
        """Tasks submitted whose callbacks have not run yet."""
        return len(self._callbacks)

    def run(
        self,
        fn: Callable[[], T],
        on_done: Callable[[T], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        """Run ``fn()`` on the pool; then ``on_done(result)`` or ``on_error(exc)`` here.

        Without ``on_error`` a failure is logged with its traceback (never silent).
        """
        if self._closed:
            raise RuntimeError("this Background was closed")
        ticket = next(self._tickets)
        self._callbacks[ticket] = (on_done, on_error)
        self._pool.start(_Task(self._relay, self, ticket, fn))

    def call_soon(self, fn: Callable[[], None]) -> None:
        """Run ``fn()`` on the GUI thread at the next turn of its event loop; any thread."""
        self._relay.calls.emit(fn)

    def wait(self, msecs: int = -1) -> bool:
        """Block until the pool is idle (tests and shutdown only); False on timeout.

        Results still have to be delivered by the event loop afterwards.
        """
        return bool(self._pool.waitForDone(msecs))

    def forget_pending(self) -> None:
        """Drop the callbacks of tasks still running: their results will be ignored."""
        self._callbacks.clear()

    def close(self, msecs: int = 5000) -> None:
        """Refuse new work, forget pending callbacks, and wait for running tasks (own pool)."""
        self._closed = True
        self._callbacks.clear()
        if self._pool is not QThreadPool.globalInstance():
            self._pool.waitForDone(msecs)

    def _deliver(self, result: _Result) -> None:
        callbacks = self._callbacks.pop(result.ticket, None)
        if callbacks is None:
            return  # forgotten or closed meanwhile
        on_done, on_error = callbacks
        if result.ok:
            if on_done is not None:
                on_done(result.value)
            return
        error: BaseException = result.value
        if on_error is not None:
            on_error(error)
        else:
            _log.error("background task failed", exc_info=error)


def _default() -> Background:
    """The application-wide :class:`Background`: a child of the QCoreApplication."""
    app = QCoreApplication.instance()
    if app is None:
        raise RuntimeError("run_in_background needs a QApplication")
    found = app.findChild(Background, _DEFAULT_NAME)
    if isinstance(found, Background):
        return found
    background = Background(app)
    background.setObjectName(_DEFAULT_NAME)
    return background


def run_in_background(
    fn: Callable[[], T],
    on_done: Callable[[T], None] | None = None,
    on_error: Callable[[BaseException], None] | None = None,
) -> None:
    """:meth:`Background.run` on the application-wide pool (call from the GUI thread)."""
    _default().run(fn, on_done, on_error)


def run_on_main(fn: Callable[[], None]) -> None:
    """Run ``fn()`` on the GUI thread soon; callable from any thread.

    The first :class:`Background` (or a first call on the GUI thread) sets up the relay; a
    worker thread calling before that gets a RuntimeError.
    """
    _relay().calls.emit(fn)
