"""holodesk's windows out of the work while a run acts, and back when it is over.

As a run starts, the task window and the tray's stand-in collapse into the run bar
(ui/run_bar.py); before each screenshot the run asks where it works (app/way.py ``WorkArea``),
and any holodesk window over that is hidden and the bar placed off it (ui/panel_place.py
``place_bar``). The windows hidden come back when the run ends, or when it waits for the
person (paused). A window the person brings back during the run (the bar's Show) stays.

The same for a run in a terminal while the app is open (`holodesk run`, `holodesk demo`): it
asks over the app's socket (app/ipc.py), the bar's Stop sends it SIGINT (its Ctrl+C, the
terminal's stop), and its windows come back when it says it is over or its process is gone.

Why the run must wait: holodesk paints its own windows out of every screenshot, so a window
over the work is a hole where the model needs to see. The run's thread blocks in
:meth:`Stage.make_way` until the windows have left and the bar's move reached the screen
(the window system reported it: the painted-out rectangle is the bar's real place).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from app.events import (
    AwaitingConfirmation,
    Event,
    RunPaused,
    RunResumed,
    RunStarted,
    StepDecided,
    StepProposed,
)
from app.way import WorkArea
from control.stop import StopLatch
from model.coords import Rect
from ui.overlay import logical_to_qt, on_screen, physical_rect_to_qt
from ui.panel_place import KEEP_OUT, keep_out_boxes, place_bar
from ui.run_bar import RunBar

log = logging.getLogger(__name__)

#: How long the run waits for the windows to make way before it looks anyway (a window
#: system that never reports the move must not hold the run).
WAY_TIMEOUT_S = 5.0
#: How long the bar's move may take to be reported by the window system.
MOVE_WAIT_MS = 1500
_POLL_MS = 15
#: How often a run in a terminal is looked for (its process may be killed without a word).
OUTSIDE_POLL_MS = 500


@dataclass
class _Asked:
    """A run's request to make way, answered on the GUI thread."""

    area: WorkArea
    done: threading.Event = field(default_factory=threading.Event)
    changed: bool = False


def _overlaps(a: Rect, b: Rect) -> bool:
    return a.left < b.right and b.left < a.right and a.top < b.bottom and b.top < a.bottom


def _qrect(rect: QRect) -> Rect:
    return Rect(rect.x(), rect.y(), rect.width(), rect.height())


def work_boxes(area: WorkArea) -> list[Rect]:
    """What the windows keep off, in Qt coordinates: the windows the run works in (the
    captured rectangle while none is known) and a box around each point it acted on."""
    rects = [physical_rect_to_qt(r) for r in (area.windows or (area.capture,))]
    spots = [(q.x(), q.y()) for q in (logical_to_qt(p.x, p.y) for p in area.points)]
    return rects + keep_out_boxes(spots, KEEP_OUT)


class Stage(QObject):
    """Collapses and brings back holodesk's windows around runs; keeps the run bar off the work.

    ``collapsible`` are the windows that collapse into the bar as every run starts (the task
    window, the stand-in); ``windows`` gives every other holodesk window that is hidden when it
    is over the work. ``reveal`` brings a window back (un-minimised). ``stop_outside`` stops a
    run in a terminal by its pid (default: SIGINT).
    """

    _asked = Signal(object)
    #: A run in a terminal ended or its process is gone (its pid).
    outside_over = Signal(int)

    def __init__(self, bar: RunBar, *, collapsible: Callable[[], Sequence[QWidget | None]],
                 windows: Callable[[], Sequence[QWidget | None]],
                 reveal: Callable[[QWidget], None],
                 stop_outside: Callable[[int], None] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.bar = bar
        self._collapsible = collapsible
        self._windows = windows
        self._reveal = reveal
        self._stop_outside = stop_outside or _interrupt
        self._asked.connect(self._on_asked, Qt.ConnectionType.QueuedConnection)
        #: The windows hidden for the run, to bring back, in the order they were hidden.
        self.hidden: list[QWidget] = []
        #: Windows the person brought back during this run: they stay where the person wants.
        self._kept: set[int] = set()
        self.active = False
        self._placed = False  # the bar has a place of this run (or the person's drag)
        self._task = ""
        #: The pid of a run in a terminal the bar stands for (0: the app's own run, or none).
        self.outside_pid = 0
        self._outside_watch = QTimer(self)
        self._outside_watch.setInterval(OUTSIDE_POLL_MS)
        self._outside_watch.timeout.connect(self._look_for_outside)
        bar.moved_by_person.connect(self._dragged)
        bar.stop_clicked.connect(self._stop_clicked)

    # -- a run starts and ends ---------------------------------------------------------------

    def begin(self, task: str = "") -> None:
        """The app's own run starts: the task window and the stand-in collapse into the run
        bar (the bar stays a terminal's run's while one is active)."""
        if not self.outside_pid:
            self._collapse(task)

    def end(self) -> None:
        """The app's own run is over: the windows hidden for it come back, the bar goes."""
        if not self.outside_pid:
            self._release()

    def _collapse(self, task: str) -> None:
        self.active = True
        self._kept.clear()
        self._task = task
        self.bar.set_outside(bool(self.outside_pid))
        self.bar.set_paused(False)
        self.bar.show_step("Starting the run", task)
        for window in self._collapsible():
            self._hide(window)
        if not self._placed:
            self.bar.place_default()
        self.bar.show()
        self.bar.raise_()

    def _release(self) -> None:
        self.active = False
        self.outside_pid = 0
        self._outside_watch.stop()
        self.bar.hide()
        self.bar.set_outside(False)
        self._placed = False
        self.bring_back()

    def bring_back(self) -> None:
        """The windows hidden for the run come back (the run waits for the person, or ended);
        the next screenshot hides again any that is over the work."""
        hidden, self.hidden = self.hidden, []
        for window in hidden:
            self._reveal(window)

    def kept(self, window: QWidget) -> None:
        """The person brought ``window`` back during the run: it is not hidden again."""
        self._kept.add(id(window))
        if window in self.hidden:
            self.hidden.remove(window)

    def on_event(self, event: Event) -> None:
        """What the bar says of the app's own run."""
        if isinstance(event, RunStarted):
            self._task = event.task
            self.bar.show_step("Starting the run", event.task)
        elif isinstance(event, StepProposed):
            self.bar.show_step(f"Step {event.step_no}: {event.description}", self._task)
        elif isinstance(event, AwaitingConfirmation):
            self.bar.show_step("Waiting for your approval", event.request.description)
        elif isinstance(event, StepDecided):
            self.bar.show_step(f"Step {event.step_no}", self._task)
        elif isinstance(event, RunPaused):
            self.bar.set_paused(True)
            self.bar.show_step("Paused", event.reason)
        elif isinstance(event, RunResumed):
            self.bar.set_paused(False)
            self.bar.show_step("Going on", self._task)
            # It acts again: what came back while it waited collapses again.
            for window in self._collapsible():
                if window is not None and id(window) not in self._kept:
                    self._hide(window)

    # -- making way (the run's thread asks, the GUI thread does) -------------------------------

    def make_way(self, area: WorkArea, latch: StopLatch | None = None) -> bool:
        """Called on the run's thread: returns once holodesk's windows are out of ``area``;
        whether anything moved. A stop, or a GUI that does not answer, ends the wait."""
        asked = _Asked(area)
        self._asked.emit(asked)
        deadline = time.monotonic() + WAY_TIMEOUT_S
        while not asked.done.wait(0.05):
            if latch is not None and latch.is_set:
                return False
            if time.monotonic() > deadline:
                log.warning("holodesk's windows did not make way in %.0f s", WAY_TIMEOUT_S)
                return False
        return asked.changed

    def _on_asked(self, asked: _Asked) -> None:
        if not self.active:
            asked.done.set()
            return
        changed, target = self.clear(asked.area)
        if not changed:
            asked.done.set()
            return
        asked.changed = True
        deadline = time.monotonic() + MOVE_WAIT_MS / 1000

        def reported() -> None:
            # The window system says the bar is where it was sent: the rectangle painted out
            # of the screenshots (ui/overlay.py WindowRects) is its real place now.
            if target is None or self.bar.pos() == target or time.monotonic() > deadline:
                QGuiApplication.sync()
                asked.done.set()
            else:
                QTimer.singleShot(_POLL_MS, reported)

        QGuiApplication.sync()
        reported()

    def clear(self, area: WorkArea) -> tuple[bool, QPoint | None]:
        """On the GUI thread: hide the windows over ``area``, place the bar off it; whether
        anything changed, and where the bar was sent (None: it stays)."""
        boxes = work_boxes(area)
        changed = False
        for window in [*self._collapsible(), *self._windows()]:
            if window is None or window is self.bar or id(window) in self._kept:
                continue
            if on_screen(window) and any(_overlaps(_qrect(window.frameGeometry()), box)
                                         for box in boxes):
                changed = self._hide(window) or changed
        target = self._place(area, boxes)
        if target is not None:
            self.bar.move(target)
            changed = True
        if self.outside_pid and area.step:
            self.bar.show_step(f"Step {area.step}: {area.doing}" if area.doing
                               else f"Step {area.step}", self._task)
        return changed, target

    def _place(self, area: WorkArea, boxes: list[Rect]) -> QPoint | None:
        """Where the bar goes to be off the work, or None when it is off it already."""
        bar = _qrect(self.bar.frameGeometry())
        screens = [_qrect(s.availableGeometry()) for s in QGuiApplication.screens()]
        if not screens:
            return None
        if self._placed and self.bar.isVisible() and not any(_overlaps(bar, b) for b in boxes) \
                and any(_overlaps(bar, s) for s in screens):
            return None  # off the work already (where the run or the person put it): it stays
        windows = [physical_rect_to_qt(r) for r in (area.windows or (area.capture,))]
        spots = [(q.x(), q.y()) for q in (logical_to_qt(p.x, p.y) for p in area.points)]
        placed = place_bar((bar.width, bar.height), spots, screens, keep_out=KEEP_OUT,
                           avoid=windows)
        if placed.covers and self._placed:
            # Nothing is free of the work (its window fills the screen): the bar stays where
            # the person last saw it, unless it is over a point the run acts on.
            points = keep_out_boxes(spots, KEEP_OUT)
            if not any(_overlaps(bar, b) for b in points):
                return None
        self._placed = True
        target = QPoint(placed.rect.left, placed.rect.top)
        return None if target == self.bar.pos() else target

    def _hide(self, window: QWidget | None) -> bool:
        if window is None or not on_screen(window):
            return False
        window.hide()
        if window not in self.hidden:
            self.hidden.append(window)
        return True

    def _dragged(self) -> None:
        self._placed = True  # where the person put it, unless it is over the work

    # -- a run in a terminal ---------------------------------------------------------------

    def outside(self, pid: int, task: str, area: WorkArea) -> bool:
        """A run in a terminal (process ``pid``) asks to make way: the windows collapse into
        the bar, which stands for that run; whether anything changed on the screen (the run
        waits for it to settle). Refused (False) while the app's own run is active."""
        if self.active and self.outside_pid != pid:
            return False
        if not self.active:
            self.outside_pid = pid
            self._collapse(task)
            self._outside_watch.start()
            changed = True
        else:
            changed = False
        self._task = task or self._task
        moved, _target = self.clear(area)
        # Synchronously, as the socket's reply waits: the hidden windows are unmapped and the
        # bar's move sent before the run is told; it lets the screen settle after.
        QGuiApplication.sync()
        return changed or moved

    def outside_ended(self, pid: int) -> None:
        """The run in a terminal said it is over."""
        if self.outside_pid and pid == self.outside_pid:
            self._release()
            self.outside_over.emit(pid)

    def _look_for_outside(self) -> None:
        pid = self.outside_pid
        if pid and not _alive(pid):
            log.info("the run in process %d is gone: holodesk's windows come back", pid)
            self.outside_ended(pid)

    def _stop_clicked(self) -> None:
        if self.outside_pid:
            self._stop_outside(self.outside_pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process has the number now: the run (ours) is gone
    return True


def _interrupt(pid: int) -> None:
    """Stop a run in a terminal as its Ctrl+C does (app/runner.py stops on SIGINT)."""
    try:
        os.kill(pid, signal.SIGINT)
    except OSError as e:
        log.warning("could not stop the run in process %d: %s", pid, e)

