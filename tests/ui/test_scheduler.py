"""Schedules in the desktop app, offscreen with injected clocks: the timer (ui/scheduler.py)
and the app running a due schedule through its run path with the stand-in model server."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pytestqt.qtbot import QtBot

from app.automations import Automation, save_automations
from app.scheduler import Missed
from app.settings import Settings
from control.policy import ConfirmMode
from tests.support.app_rig import Rig
from tests.support.fake_clock import FakeWallClock
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home, isolate_home
from ui.app import HolodeskApp
from ui.scheduler import MAX_WAIT_MS, ScheduleTimer

BERLIN = ZoneInfo("Europe/Berlin")
CLICK = {"thought": "click", "action": {"action": "click", "element": "OK", "x": 500, "y": 500}}
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}
TIMEOUT = 20000


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=BERLIN)


def _a(name: str, schedule: str | None, **values: object) -> Automation:
    return Automation.make("", name=name, task=f"do {name}", schedule=schedule, **values)


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def timers(qtbot: QtBot) -> Iterator[list[ScheduleTimer]]:
    made: list[ScheduleTimer] = []
    yield made
    for timer in made:
        timer.stop()
        timer.deleteLater()
    qtbot.wait(20)


def _timer(made: list[ScheduleTimer], clock: FakeWallClock, state: Path,
           *items: Automation, wake_check_ms: int = 60_000) -> tuple[ScheduleTimer, list[str],
                                                                   list[Missed]]:
    timer = ScheduleTimer(clock=clock, state_path=state, wake_check_ms=wake_check_ms)
    made.append(timer)
    due: list[str] = []
    missed: list[Missed] = []
    timer.due.connect(due.append)
    timer.missed.connect(missed.append)
    timer.set_automations(items)
    return timer, due, missed


# -- the timer ---------------------------------------------------------------------------------


def test_the_timer_waits_for_the_due_time_and_fires_then(
        qtbot: QtBot, tmp_path: Path, timers: list[ScheduleTimer]) -> None:
    # Real time passes on this clock: the due time is a moment ahead, the timer really waits.
    clock = FakeWallClock(_at("2026-03-10 08:59:59.400"), real=True)
    timer, due, missed = _timer(timers, clock, tmp_path / "s.json", _a("timesheet", "daily 09:00"))
    assert due == [] and timer.next_at == _at("2026-03-10 09:00")
    # Armed for the due time, not polling: at most 0.6 s ahead (less, or none, when a loaded
    # machine took that long to get here; time only runs one way).
    assert timer.armed_ms <= 700
    qtbot.waitUntil(lambda: due == ["timesheet"], timeout=TIMEOUT)
    assert clock.now() >= _at("2026-03-10 09:00")
    assert missed == []
    assert timer.next_at == _at("2026-03-11 09:00")  # and re-armed for tomorrow


def test_a_far_due_time_is_approached_in_steps_of_at_most_an_hour(
        tmp_path: Path, timers: list[ScheduleTimer]) -> None:
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    timer, _, _ = _timer(timers, clock, tmp_path / "s.json", _a("weekly", "weekly sun 09:00"))
    assert timer.next_at == _at("2026-03-15 09:00")
    assert MAX_WAIT_MS - 5000 < timer.armed_ms <= MAX_WAIT_MS
    timer.set_automations([])
    assert timer.armed_ms == -1 and timer.next_at is None


def test_never_twice_across_a_restart_of_the_app(
        qtbot: QtBot, tmp_path: Path, timers: list[ScheduleTimer]) -> None:
    state = tmp_path / "s.json"
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    first, due, _ = _timer(timers, clock, state, _a("timesheet", "daily 09:00"))
    clock.set(_at("2026-03-10 09:00:01"))
    first.replan()  # what its timer does at the due time
    assert due == ["timesheet"]
    first.stop()
    clock.advance(5)  # restarted at once: the run is still within its grace
    _, due_again, missed_again = _timer(timers, clock, state, _a("timesheet", "daily 09:00"))
    qtbot.wait(50)
    assert due_again == [] and missed_again == []


def test_a_sleep_through_the_due_time_is_noticed_and_reported_not_run(
        qtbot: QtBot, tmp_path: Path, timers: list[ScheduleTimer]) -> None:
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    timer, due, missed = _timer(timers, clock, tmp_path / "s.json",
                                _a("timesheet", "daily 09:00"), wake_check_ms=20)
    planned: list[object] = []
    timer.planned.connect(planned.append)
    qtbot.wait(100)
    assert planned == []  # awake, clocks together: the watchdog plans nothing
    clock.sleep(6 * 3600)  # suspended over 09:00; the monotonic clock stood still
    qtbot.waitUntil(lambda: bool(missed), timeout=TIMEOUT)
    assert due == []
    assert missed[0].name == "timesheet" and missed[0].times == (_at("2026-03-10 09:00"),)
    assert timer.next_at == _at("2026-03-11 09:00")


# -- the app -----------------------------------------------------------------------------------


def _app(qtbot: QtBot, server: FakeVLLM, clock: FakeWallClock, state: Path, *,
         at_login: bool = False) -> tuple[HolodeskApp, Rig, list[str]]:
    rig = Rig(server)
    app = HolodeskApp(Settings(endpoint=server.base_url, confirm=ConfirmMode.NEVER),
                      session_factory=rig.factory, use_system_tray=False, probe=False,
                      clock=clock, schedule_state=state, at_login=at_login)
    app.controller.run_event.connect(rig.events.append)
    told: list[str] = []

    def notify(title: str, message: str, error: bool = False) -> bool:
        told.append(message)
        return True

    app.tray.notify = notify  # type: ignore[method-assign]
    return app, rig, told


def _close(qtbot: QtBot, app: HolodeskApp) -> None:
    app.close()
    qtbot.wait(50)


def test_a_due_schedule_runs_through_the_apps_run_path_and_waits_for_the_person(
        qtbot: QtBot, home: Home, tmp_path: Path) -> None:
    path = home.config / "holodesk" / "automations.toml"
    save_automations([_a("timesheet", "daily 09:00", confirm="always", monitor="mouse"),
                      _a("mail", "daily 09:00")], path)
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    with FakeVLLM(ScriptedPolicy([CLICK, ANSWER])) as server:
        app, rig, told = _app(qtbot, server, clock, tmp_path / "s.json")
        try:
            assert app.scheduler.next_at == _at("2026-03-10 09:00")
            clock.set(_at("2026-03-10 09:00:02"))
            app.scheduler.replan()  # the timer's wake at 09:00
            # The first runs with its own confirmation mode and monitor; it waits for the
            # person, who is told.
            qtbot.waitUntil(lambda: app.controller.pending is not None, timeout=TIMEOUT)
            assert rig.started() == ["do timesheet"]
            assert (str(rig.settings[0].confirm), rig.settings[0].monitor) == \
                ("always", "mouse")
            assert any("Scheduled run of “timesheet” started" in t for t in told)
            qtbot.waitUntil(lambda: any("“timesheet” waits for your approval" in t
                                        for t in told), timeout=TIMEOUT)
            assert app.confirm_panel.isVisible()
            # The second, due at the same time, is skipped and said so, never queued.
            assert any("“mail” was skipped: another run was active" in t for t in told)
            assert "skipped" in app.teller.schedule_notes["mail"]
            app.controller.stop("test")
            qtbot.waitUntil(lambda: not app.controller.running, timeout=TIMEOUT)
            qtbot.wait(200)
            assert rig.started() == ["do timesheet"]
        finally:
            _close(qtbot, app)


def test_a_restart_after_a_missed_time_reports_it_and_runs_nothing(
        qtbot: QtBot, home: Home, tmp_path: Path) -> None:
    path = home.config / "holodesk" / "automations.toml"
    save_automations([_a("timesheet", "daily 09:00")], path)
    state = tmp_path / "s.json"
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig, _ = _app(qtbot, server, clock, state)
        _close(qtbot, app)  # quit before 09:00
        clock.set(_at("2026-03-11 12:00"))  # started again the next day at noon
        app, rig, told = _app(qtbot, server, clock, state)
        try:
            qtbot.waitUntil(lambda: bool(told), timeout=TIMEOUT)
            assert "“timesheet” missed 2 scheduled runs" in told[0]
            assert "not run late" in told[0]
            qtbot.wait(200)
            assert rig.started() == []
            app.show_automations()
            dialog = app.automations_dialog
            assert dialog is not None
            assert "missed 2 scheduled runs" in dialog.schedule_status.text()
            assert "Next run: tomorrow 09:00" in dialog.schedule_status.text()
        finally:
            _close(qtbot, app)


def test_at_login_runs_once_when_started_at_login_only(
        qtbot: QtBot, home: Home, tmp_path: Path) -> None:
    path = home.config / "holodesk" / "automations.toml"
    save_automations([_a("mail", "at login"), _a("news", "at login")], path)
    clock = FakeWallClock(_at("2026-03-10 08:00"))
    with FakeVLLM(ScriptedPolicy([ANSWER, ANSWER])) as server:
        app, rig, _ = _app(qtbot, server, clock, tmp_path / "s.json")
        qtbot.wait(200)
        assert rig.started() == []  # started by hand: no login runs
        _close(qtbot, app)
        app, rig, told = _app(qtbot, server, clock, tmp_path / "s.json", at_login=True)
        try:
            # One after another, in the file's order.
            qtbot.waitUntil(lambda: rig.finished() == 2, timeout=TIMEOUT)
            assert rig.started() == ["do mail", "do news"]
            assert sum("Scheduled run of" in t for t in told) == 2
        finally:
            _close(qtbot, app)
