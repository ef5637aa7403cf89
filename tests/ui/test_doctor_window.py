"""The "Check set-up" window, offscreen: rows fill in as checks finish on another thread, the
summary and the copied report match the CLI, a second run is refused while one runs, closing
mid-run is safe; and once with the real doctor against the fake vLLM server."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import Qt, QThread, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.doctor import (
    CHECK_NAMES,
    DISPLAY,
    DRY_RUN,
    ENDPOINT,
    HOTKEYS,
    KEYRING,
    TRAY,
    CheckResult,
    Doctor,
    DoctorConfig,
    Status,
    all_passed,
    format_result,
)
from app.settings import Settings
from app.version import version
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home
from ui.doctor_window import STATUS_COLORS, DoctorWindow
from ui.problem_view import fix_text

WAIT = {"thought": "nothing to do", "action": {"action": "wait", "seconds": 0}}
ENDPOINT_URL = "http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def canned() -> list[CheckResult]:
    """Thirteen results in the doctor's order: 9 PASS (one with a note), 1 WARN, 2 FAIL,
    1 SKIP."""
    special = {
        HOTKEYS: CheckResult(HOTKEYS, Status.FAIL, "the listener cannot start <RECORD>",
                             "the X server needs the RECORD extension"),
        TRAY: CheckResult(TRAY, Status.PASS, "no system tray", "use a desktop with a tray"),
        KEYRING: CheckResult(KEYRING, Status.WARN, "no secure keyring",
                             "install and unlock a Secret Service"),
        ENDPOINT: CheckResult(ENDPOINT, Status.FAIL, "No model server answers",
                              "start it with `holodesk serve`"),
        DRY_RUN: CheckResult(DRY_RUN, Status.SKIP, "skipped: the endpoint check did not pass"),
    }
    return [special.get(name, CheckResult(name, Status.PASS, f"{name} is fine"))
            for name in CHECK_NAMES]


class FakeDoctor:
    """Doctor-like: ``run`` reports canned results from a thread of its own.

    Gated: each result waits for :meth:`release`, so a test sees the rows fill in one by one.
    """

    def __init__(self, results: list[CheckResult], *, gated: bool = False) -> None:
        self.results = results
        self.gated = gated
        self._gate = threading.Semaphore(0)
        self.reported = 0
        self.closed = threading.Event()

    def release(self, n: int = 1) -> None:
        for _ in range(n):
            self._gate.release()

    def run(self, on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
        def feed() -> None:
            for result in self.results:
                if self.gated and not self._gate.acquire(timeout=60):
                    raise AssertionError("the test never released the fake doctor")
                if on_result is not None:
                    on_result(result)
                self.reported += 1

        reporter = threading.Thread(target=feed, name="fake-doctor", daemon=True)
        reporter.start()
        reporter.join()
        return list(self.results)

    def close(self) -> None:
        self.closed.set()


class Factory:
    """A doctor_factory handing out the given fakes in turn, recording the settings given."""

    def __init__(self, *doctors: FakeDoctor) -> None:
        self.doctors = list(doctors)
        self.settings: list[Settings] = []

    def __call__(self, settings: Settings) -> FakeDoctor:
        self.settings.append(settings)
        return self.doctors[len(self.settings) - 1]


def settings_provider(reads: list[bool] | None = None) -> Callable[[], Settings]:
    settings = Settings().with_overrides({"endpoint": ENDPOINT_URL})

    def read() -> Settings:
        if reads is not None:
            app = QApplication.instance()
            assert app is not None
            reads.append(QThread.currentThread() is app.thread())
        return settings

    return read


def make_window(qtbot: QtBot, factory: Factory, reads: list[bool] | None = None,
                ) -> DoctorWindow:
    window = DoctorWindow(settings_provider(reads), doctor_factory=factory)
    qtbot.addWidget(window)
    return window


def expected_report(results: list[CheckResult], summary: str) -> str:
    width = max(len(name) for name in CHECK_NAMES)
    lines = [f"holodesk {version()} doctor: checking this desktop and {ENDPOINT_URL}"]
    lines += [format_result(r, width, say=fix_text) for r in results]
    return "\n".join([*lines, "", summary]) + "\n"


# --------------------------------------------------------------------------- with a fake doctor


def test_rows_fill_in_order_while_the_loop_keeps_turning(qtbot: QtBot) -> None:
    results = canned()
    fake = FakeDoctor(results, gated=True)
    factory = Factory(fake)
    reads: list[bool] = []
    window = make_window(qtbot, factory, reads)
    seen: list[str] = []
    window.checked.connect(lambda r: seen.append(r.name))
    finished: list[list[CheckResult]] = []
    window.finished.connect(finished.append)
    ticks: list[int] = []
    timer = QTimer(window)
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()

    window.run_checks()
    assert reads == [True]  # the settings were read on the GUI thread
    assert window.running
    assert not window.run_button.isEnabled()
    rows = window.rows()
    assert [r.name for r in rows] == list(CHECK_NAMES)
    assert rows[0].status == "checking"
    assert all(r.status == "waiting" for r in rows[1:])
    # The worker is blocked in the fake: the event loop still turns.
    qtbot.waitUntil(lambda: len(ticks) >= 5, timeout=5000)
    assert window.rows()[0].status == "checking"

    for i, result in enumerate(results):
        fake.release()
        done = i + 1
        qtbot.waitUntil(lambda: len(window.results) >= done, timeout=10_000)  # noqa: B023
        assert len(window.results) == done
        rows = window.rows()
        assert rows[i].status == result.status.value
        assert rows[i].detail == result.detail
        if i + 1 < len(rows):
            assert rows[i + 1].status == "checking"
            assert all(r.status == "waiting" for r in rows[i + 2:])
        if i + 1 < len(results):
            assert window.summary() == f"Checking… {i + 1} of 13 checks done."

    qtbot.waitUntil(lambda: bool(finished), timeout=10_000)
    assert finished == [results]
    assert seen == list(CHECK_NAMES)
    assert not window.running
    assert window.run_button.isEnabled()
    assert fake.closed.is_set()
    assert factory.settings[0].endpoint == ENDPOINT_URL


def test_rows_show_status_words_colours_and_fixes(qtbot: QtBot) -> None:
    results = canned()
    window = make_window(qtbot, Factory(FakeDoctor(results)))
    with qtbot.waitSignal(window.finished, timeout=10_000):
        window.run_checks()
    rows = {r.name: r for r in window.rows()}
    for result in results:
        row = rows[result.name]
        assert row.status == result.status.value  # the word, not just the colour
        assert row.color == STATUS_COLORS[result.status.value]
    assert rows[HOTKEYS].fix == "Fix: the X server needs the RECORD extension"
    assert rows[HOTKEYS].detail == "the listener cannot start <RECORD>"  # plain text
    assert rows[TRAY].fix == "Note: use a desktop with a tray"
    assert rows[KEYRING].fix == "Fix: install and unlock a Secret Service"  # a WARN's fix
    assert rows[DISPLAY].fix == ""
    assert rows[DRY_RUN].fix == ""
    assert len({STATUS_COLORS[s] for s in ("PASS", "WARN", "FAIL", "SKIP")}) == 4
    # A WARN counts as passed, as for `holodesk doctor`'s exit code.
    assert window.summary() == "10 of 13 checks passed (1 with a warning)."


def test_all_passing_says_so(qtbot: QtBot) -> None:
    results = [CheckResult(name, Status.PASS, "fine") for name in CHECK_NAMES]
    window = make_window(qtbot, Factory(FakeDoctor(results)))
    with qtbot.waitSignal(window.finished, timeout=10_000):
        window.run_checks()
    assert window.summary() == "All 13 checks passed."


def test_a_warning_passes_as_for_the_commands_exit_code(qtbot: QtBot) -> None:
    results = [CheckResult(name, Status.WARN if name == KEYRING else Status.PASS, "fine",
                           "install a keyring" if name == KEYRING else None)
               for name in CHECK_NAMES]
    assert all_passed(results)  # what makes `holodesk doctor` exit 0
    window = make_window(qtbot, Factory(FakeDoctor(results)))
    with qtbot.waitSignal(window.finished, timeout=10_000):
        window.run_checks()
    assert window.summary() == "All 13 checks passed, 1 with a warning."
    row = next(r for r in window.rows() if r.name == KEYRING)
    assert (row.status, row.fix) == ("WARN", "Fix: install a keyring")


def test_copy_report_is_the_cli_text(qtbot: QtBot) -> None:
    results = canned()
    window = make_window(qtbot, Factory(FakeDoctor(results)))
    assert not window.copy_button.isEnabled()
    with qtbot.waitSignal(window.finished, timeout=10_000):
        window.run_checks()
    assert window.copy_button.isEnabled()
    expected = expected_report(results, "10 of 13 checks passed (1 with a warning).")
    assert window.report_text() == expected
    window.copy_button.click()
    assert QGuiApplication.clipboard().text() == expected
    assert "Fix: start it with holodesk serve" in expected  # GUI words: no backticks
    assert "Note: use a desktop with a tray" in expected


def test_a_second_run_while_running_is_ignored(qtbot: QtBot) -> None:
    first = FakeDoctor(canned(), gated=True)
    second = FakeDoctor(canned())
    factory = Factory(first, second)
    window = make_window(qtbot, factory)
    starts: list[int] = []
    finishes: list[int] = []
    window.started.connect(lambda: starts.append(1))
    window.finished.connect(lambda rs: finishes.append(len(rs)))

    window.run_checks()
    first.release(3)
    qtbot.waitUntil(lambda: len(window.results) == 3, timeout=10_000)
    window.run_checks()
    window.run_button.click()  # disabled while running
    assert len(factory.settings) == 1
    assert starts == [1]
    assert [r.status for r in window.rows()[:4]] == ["PASS", "PASS", "PASS", "checking"]

    first.release(len(CHECK_NAMES))
    qtbot.waitUntil(lambda: finishes == [13], timeout=10_000)
    # Once finished, the button runs the checks again, from fresh rows.
    with qtbot.waitSignal(window.finished, timeout=10_000):
        window.run_button.click()
    assert len(factory.settings) == 2
    assert finishes == [13, 13]
    assert len(window.results) == 13


def test_first_show_runs_the_checks_once(qtbot: QtBot) -> None:
    factory = Factory(FakeDoctor(canned()), FakeDoctor(canned()))
    window = make_window(qtbot, factory)
    with qtbot.waitSignal(window.finished, timeout=10_000):
        window.show()
    window.hide()
    window.show()
    qtbot.wait(100)
    assert len(factory.settings) == 1  # shown again after a finished run: no re-run
    with qtbot.waitSignal(window.finished, timeout=10_000):
        window.show_and_run()  # the tray entry checks afresh
    assert len(factory.settings) == 2


def test_closing_while_running_drops_the_late_results(qtbot: QtBot) -> None:
    first = FakeDoctor(canned(), gated=True)
    again = FakeDoctor(canned())
    factory = Factory(first, again)
    window = make_window(qtbot, factory)
    finishes: list[int] = []
    window.finished.connect(lambda rs: finishes.append(len(rs)))
    window.show()
    qtbot.waitUntil(lambda: window.running, timeout=5000)
    first.release(2)
    qtbot.waitUntil(lambda: len(window.results) == 2, timeout=10_000)

    window.close()
    assert not window.running
    first.release(len(CHECK_NAMES))
    assert first.closed.wait(20)
    assert window.wait(20)
    qtbot.wait(200)  # the late results' queued signals arrive now, and are dropped
    assert finishes == []
    assert len(window.results) == 2
    assert [r.status for r in window.rows()[2:]] == ["waiting"] * 11
    assert window.run_button.isEnabled()

    # Shown again, the window checks afresh.
    with qtbot.waitSignal(window.finished, timeout=10_000):
        window.show()
    assert finishes == [13]
    assert len(factory.settings) == 2


def test_deleting_the_window_while_running_is_safe(qtbot: QtBot) -> None:
    fake = FakeDoctor(canned(), gated=True)
    window = DoctorWindow(settings_provider(), doctor_factory=Factory(fake))
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    finishes: list[int] = []
    window.finished.connect(lambda rs: finishes.append(len(rs)))
    window.show()
    qtbot.waitUntil(lambda: window.running, timeout=5000)
    fake.release(1)
    qtbot.waitUntil(lambda: len(window.results) == 1, timeout=10_000)

    window.close()
    qtbot.waitUntil(lambda: not shiboken6.isValid(window), timeout=5000)
    fake.release(len(CHECK_NAMES))  # results keep coming after the window is gone
    assert fake.closed.wait(20)
    qtbot.wait(200)
    assert fake.reported == 13
    assert finishes == []


def test_a_crashing_doctor_is_reported_and_the_window_recovers(qtbot: QtBot) -> None:
    def broken(settings: Settings) -> FakeDoctor:
        raise RuntimeError("no doctor today")

    window = DoctorWindow(settings_provider(), doctor_factory=broken)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.finished, timeout=10_000) as blocker:
        window.run_checks()
    assert blocker.args == [[]]
    assert "RuntimeError: no doctor today" in window.summary()
    assert window.run_button.isEnabled()
    assert "RuntimeError: no doctor today" in window.report_text()


# --------------------------------------------------------------------------- the real doctor


def test_the_real_doctor_against_the_fake_server(qtbot: QtBot) -> None:
    """No display in the doctor's environment: the desktop checks FAIL or SKIP, the server
    checks PASS against the fake vLLM (the key from the environment, never shown)."""
    key = "sk-window-secret-31"
    with FakeVLLM(ScriptedPolicy([WAIT], repeat_last=True), api_key=key) as server:
        def real(settings: Settings) -> Doctor:
            return Doctor(DoctorConfig(settings=settings, environ={"HOLODESK_API_KEY": key},
                                       platform="linux", request_timeout=20.0))

        settings = Settings().with_overrides({"endpoint": server.base_url})
        window = DoctorWindow(lambda: settings, doctor_factory=real)
        qtbot.addWidget(window)
        with qtbot.waitSignal(window.finished, timeout=120_000) as blocker:
            window.run_checks()

    results: list[CheckResult] = blocker.args[0]
    status = {r.name: r.status for r in results}
    assert [r.name for r in results] == list(CHECK_NAMES)
    assert status[DISPLAY] is Status.FAIL
    for name in ("screen capture", "input injection", HOTKEYS, TRAY, DRY_RUN):
        assert status[name] is Status.SKIP, name
    # This process has no secure keyring (tests/conftest.py drops the session bus): a warning
    # whose fix is shown, the key from the environment said.
    assert status[KEYRING] is Status.WARN
    for name in (ENDPOINT, "model", "context length", "image limit", "structured output"):
        assert status[name] is Status.PASS, (name, results)
    assert window.summary() == "7 of 13 checks passed (1 with a warning)."
    rows = {r.name: r for r in window.rows()}
    assert rows[DISPLAY].status == "FAIL"
    assert rows[DISPLAY].fix.startswith("Fix: ")
    assert rows[ENDPOINT].status == "PASS"
    assert rows[KEYRING].status == "WARN" and rows[KEYRING].fix.startswith("Fix: ")
    report = window.report_text()
    assert report == expected_report(results, "7 of 13 checks passed (1 with a warning).").replace(
        ENDPOINT_URL, server.base_url)
    assert key not in report
