"""The bridge between the Qt event loop and the agent core.

One worker thread does the slow work (building the session, the run itself); the GUI receives
the core's typed events through a queued signal and answers confirmations by replying to the
request the worker blocks on (the Dangerzone pattern). Nothing here blocks the event loop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from app import protected
from app.automations import AutomationError
from app.events import (
    AwaitingConfirmation,
    ConfirmReply,
    ConfirmRequest,
    Event,
    RunFinished,
    RunStarted,
    StepDecided,
)
from app.lock import DesktopBusyError
from app.pause import PauseGate
from app.result import RunResult
from app.run_request import RunRequest
from app.session import TOUCH_GRACE_S, NeverTouchUnseen, Session
from app.way import MakeWay
from control.capture import ExcludeRects
from control.stop import StopLatch
from model.plain_http import PlainHttpRefused
from model.problem import HolodeskError
from ui.problem_view import view

log = logging.getLogger(__name__)

#: What refuses a run as it is built, before it acts (the rest is a failure to start): another
#: run holds the desktop, plain http not agreed to, never-touch applications holodesk cannot
#: tell apart, an automation changed outside holodesk and not approved.
_REFUSALS = (DesktopBusyError, PlainHttpRefused, NeverTouchUnseen, AutomationError)

#: Builds the session of one run from its request (app/session.py ``build_session``, over the
#: real parts or a test's); the latch is the run's stop, the gate its pause.
SessionFactory = Callable[[RunRequest, StopLatch, PauseGate], Session]


def real_session(request: RunRequest, latch: StopLatch, gate: PauseGate, *,
                 exclude: ExcludeRects | None = None,
                 make_way: MakeWay | None = None) -> Session:
    """The real parts, with hand back on touch: the person's own input pauses the run.

    ``exclude`` lists holodesk's own visible windows, masked out of every screenshot;
    ``make_way`` takes them out of where the run works before each one (app/way.py).
    """
    from app.runner import open_run
    from control.input import InputBackend, PyAutoGuiBackend
    from control.touch import TouchDetector

    detector = TouchDetector(lambda kind: gate.pause(f"you used the {kind}; resume when ready"))

    def backend(latch: StopLatch) -> InputBackend:
        return detector.wrap(PyAutoGuiBackend(latch))

    # The same lock as `holodesk run` and a headless `trigger NAME`: two runs must never drive
    # one mouse. DesktopBusyError's message says who holds it; the controller shows it. The
    # session frees the lock when it closes.
    return open_run(request, latch=latch, pause=gate, backend=backend, exclude=exclude,
                    touch=detector, make_way=make_way)


class RunController(QObject):
    """Starts, stops and relays one run at a time.

    ``run_event`` carries every :mod:`app.events` event, delivered on the GUI thread (a signal
    emitted from the worker crosses threads as a queued connection). ``failed`` carries a
    sentence when a run could not even start (no display, bad monitor, ...), ``notice`` one to
    say as it starts.
    """

    run_event = Signal(object)
    running_changed = Signal(bool)
    failed = Signal(str)
    #: Just before ``failed``: what the run that could not start came to (a
    #: :class:`~app.result.RunResult`: refused, or failed) and the same sentence.
    unstarted = Signal(object, str)
    #: Something to tell the person as a run starts (protected files changed since the last
    #: run, or watched less closely in this one); delivered on the GUI thread.
    notice = Signal(str)

    def __init__(
        self, session_factory: SessionFactory = real_session, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._factory = session_factory
        self._latch = StopLatch()
        self._gate = PauseGate()
        self._thread: threading.Thread | None = None
        self._pending: ConfirmRequest | None = None
        self._session: Session | None = None
        self._touch_token = 0  # bumped by each confirmation: a late "listen again" is dropped
        self._notices: list[str] = []  # said as the run starts (on the worker)
        self.run_event.connect(self._track)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def latch(self) -> StopLatch:
        """The latch of the current (or last) run: every stop path pulls this one."""
        return self._latch

    def start(self, request: RunRequest | Callable[[], RunRequest]) -> bool:
        """Start the run of ``request`` on the worker; False (and nothing started) when one is
        running. ``request`` may be a function that makes it, called on the worker as the run
        starts (the settings read afresh: the keyring may keep it waiting); what it raises is
        said as a run that could not start.
        """
        if self.running:
            return False
        # A new latch per run: a stop stays latched until the person starts again.
        self._latch = StopLatch()
        self._gate = PauseGate()
        self._thread = threading.Thread(
            target=self._work, args=(request, self._latch, self._gate),
            name="agent",
            daemon=True,
        )
        self._thread.start()
        self.running_changed.emit(True)
        return True

    def stop(self, source: str = "ui", reason: str = "") -> None:
        """Pull the emergency stop; safe from any thread, and also while a confirmation waits."""
        self._latch.stop(source, reason)

    def pause(self, reason: str = "paused by you") -> None:
        """Pause before the next screenshot or action; :meth:`resume` goes on afresh."""
        self._gate.pause(reason)

    def resume(self) -> None:
        self._gate.resume()

    def answer(self, reply: ConfirmReply) -> None:
        """Answer the confirmation the worker is waiting on, if any."""
        request, self._pending = self._pending, None
        if request is not None:
            request.reply(reply)

    @property
    def pending(self) -> ConfirmRequest | None:
        """The confirmation waiting for the person, if any."""
        return self._pending

    def wait(self, timeout: float | None = None) -> bool:
        """Join the worker (for shutdown and tests); True when it has ended."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    # -- the worker side -----------------------------------------------------------------

    def _work(self, prepare: RunRequest | Callable[[], RunRequest], latch: StopLatch,
              gate: PauseGate) -> None:
        try:
            try:
                request = prepare if isinstance(prepare, RunRequest) else prepare()
                session = self._factory(request, latch, gate)
                self._session = session
            except Exception as e:
                log.warning("cannot start the run: %s", e, exc_info=True)
                # A holodesk problem names its fix in the windows' terms (a Settings field).
                said = view(e).text() if isinstance(e, HolodeskError) else str(e)
                text = f"Cannot start the run: {said}"
                self.unstarted.emit(
                    RunResult.REFUSED if isinstance(e, _REFUSALS) else RunResult.FAILED, text)
                self.failed.emit(text)
                return
            noticed = protected.changed_since_last_run(request.settings)
            self._notices = ([protected.changed_message(noticed)] if noticed else []) + [
                f"This run: {text}" for text in session.notices]
            try:
                session.run(self._relay)
            except Exception as e:  # Agent.run reports everything; this is the last net
                log.exception("the run crashed")
                self.failed.emit(f"The run crashed: {type(e).__name__}: {e}")
            finally:
                session.close()
                for text in session.after_close:  # protected files changed as it ended
                    self.notice.emit(text[:1].upper() + text[1:])
        finally:
            self.running_changed.emit(False)

    def _relay(self, event: Event) -> None:
        self.run_event.emit(event)  # from the worker: delivered queued, on the GUI thread
        if isinstance(event, RunStarted | RunFinished):
            # After the start, which clears what the task window showed before it.
            notices, self._notices = self._notices, []
            for text in notices:
                self.notice.emit(text)

    def _track(self, event: Event) -> None:
        # On the GUI thread, first of the run_event slots: ``pending`` is what the person sees.
        touch = self._session.touch if self._session is not None else None
        if isinstance(event, AwaitingConfirmation):
            self._pending = event.request
            if touch is not None:  # the person is meant to use mouse and keys now
                self._touch_token += 1
                touch.enabled = False
        elif isinstance(event, RunFinished):
            self._pending = None
        elif isinstance(event, StepDecided) and touch is not None:
            if touch.enabled:
                touch.rearm()
                return
            # Out of a confirmation: the Enter or click that answered it is not a touch.
            self._touch_token += 1
            token = self._touch_token

            def listen_again() -> None:
                if token == self._touch_token and touch is not None:  # no newer confirmation
                    touch.enabled = True
                    touch.rearm()

            QTimer.singleShot(int(TOUCH_GRACE_S * 1000), self, listen_again)
