"""The desktop app's schedule timer: wakes at the next due time and says what to run.

The decisions are :class:`app.scheduler.Scheduler`'s (Qt-free); this only wakes it. One
precise single-shot timer is armed for the next due time (at most :data:`MAX_WAIT_MS` ahead,
since a timer counts monotonic time, which stands still while the machine sleeps), and a
light watchdog every :data:`WAKE_CHECK_MS` notices the machine waking or the clock being set
(:class:`app.scheduler.WakeDetector`) and plans again. The app also plans again when the
automations file changes (:meth:`ScheduleTimer.set_automations`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from app.automations import Automation
from app.scheduler import Clock, Plan, Scheduler, SystemClock, WakeDetector, schedule_state_path

__all__ = ["MAX_WAIT_MS", "WAKE_CHECK_MS", "ScheduleTimer"]

log = logging.getLogger(__name__)

#: A due time further ahead is approached in steps: the plan is checked again at least hourly.
MAX_WAIT_MS = 3_600_000
#: How often the watchdog compares the clocks for a wake from sleep.
WAKE_CHECK_MS = 60_000


class ScheduleTimer(QObject):
    """``due(name)``: run the automation now; ``missed(Missed)``: due times that passed unseen.

    ``planned(Plan)`` after every look (tests and the Automations window's "next run").
    """

    due = Signal(str)
    missed = Signal(object)
    planned = Signal(object)

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        clock: Clock | None = None,
        state_path: Path | None = None,
        wake_check_ms: int = WAKE_CHECK_MS,
    ) -> None:
        super().__init__(parent)
        self.clock: Clock = SystemClock() if clock is None else clock
        self.core = Scheduler(self.clock, state_path or schedule_state_path())
        self._wake = WakeDetector(self.clock)
        self.next_at: datetime | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)  # a coarse one may fire early
        self._timer.timeout.connect(self.replan)
        self._watchdog = QTimer(self)
        self._watchdog.setInterval(wake_check_ms)
        self._watchdog.timeout.connect(self._check_wake)
        self._watchdog.start()
        self._stopped = False

    def set_automations(self, items: Sequence[Automation]) -> None:
        """Use these automations' schedules and plan again."""
        self.core.set_automations(items)
        self.replan()

    def at_login(self) -> list[str]:
        """The automations to run once because the app was started at login."""
        return self.core.at_login()

    @property
    def armed_ms(self) -> int:
        """Milliseconds until the timer wakes; -1 when it is not armed."""
        return self._timer.remainingTime() if self._timer.isActive() else -1

    def replan(self) -> Plan:
        """Handle what is due now, then arm the timer for the next due time."""
        plan = self.core.check()
        self.next_at = plan.wake_at
        self._timer.stop()
        if plan.wake_at is not None and not self._stopped:
            wait = (plan.wake_at - self.clock.now()).total_seconds() * 1000
            # Rounded up: a wake a hair before the due time would find nothing due.
            self._timer.start(math.ceil(min(max(wait, 0.0), MAX_WAIT_MS)))
        for m in plan.missed:
            self.missed.emit(m)
        for name in plan.run:
            self.due.emit(name)
        self.planned.emit(plan)
        return plan

    def _check_wake(self) -> None:
        if self._wake.jumped():
            log.info("the clock jumped (a wake from sleep, or the time was set): planning again")
            self.replan()

    def stop(self) -> None:
        """Nothing fires any more (quit)."""
        self._stopped = True
        self._timer.stop()
        self._watchdog.stop()
