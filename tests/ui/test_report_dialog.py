"""Report a problem in the desktop app, offscreen: the dialog lists every file with its masked
text, adds screenshots only when ticked, saves through a worker, shows a failed save with its
fix, and never blocks the event loop while the report is gathered."""

from __future__ import annotations

import datetime as dt
import io
import json
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image
from PySide6.QtCore import QTimer
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import QLabel, QPlainTextEdit
from pytestqt.qtbot import QtBot

from app.doctor import CheckResult, DoctorConfig, run_doctor
from app.report import Report, ReportPart, collect_report, project_address, send_words
from app.settings import Settings
from app.store import ActionLog, StepRecord
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home, isolate_home
from tests.support.memory_secrets import MemoryStore
from ui.problem_view import fix_text
from ui.report_dialog import GATHERING, ReportDialog
from ui.tray import TrayActions

ENDPOINT = "http://127.0.0.1:9/v1"
API_KEY = "sk-dialog-test-0a1b2c3d4e5f6a7b8c9d"
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "ok"}}
PARTS = ["README.txt", "version.txt", "doctor.json", "settings.txt", "log.txt", "last-run.txt"]


def listed(dialog: ReportDialog) -> list[str]:
    """The names of the files the dialog lists (what Save writes)."""
    return [item.text() for i in range(dialog.parts.count())
            if (item := dialog.parts.item(i)) is not None]


@pytest.fixture
def planted_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    home = isolate_home(monkeypatch, tmp_path)
    log_file = home.state / "holodesk" / "holodesk.log"
    log_file.parent.mkdir(parents=True)
    log_file.write_text(f"a line\n401 for Bearer {API_KEY}\n")
    with ActionLog.open(home.data / "holodesk" / "holodesk.db") as log:
        run = log.start_run("open the mail", ENDPOINT, "holotron", {})
        out = io.BytesIO()
        Image.new("RGB", (32, 24), (200, 10, 10)).save(out, "JPEG")
        shot, _thumb = log.save_screenshot(run.id, 1, out.getvalue(), "image/jpeg")
        log.add_step(StepRecord(run.id, 1, run.started_at, run.started_at + 1,
                                screenshot_path=str(shot), thought=f"the key {API_KEY} works"))
        log.finish_run(run.id, "answered", "done")
    return home


def _doctor(settings: Settings) -> list[CheckResult]:
    return run_doctor(DoctorConfig(settings=settings, environ={}, platform="linux",
                                   check_timeout=10, request_timeout=5))


def _collect() -> Report:
    return collect_report(Settings(endpoint=ENDPOINT), say=fix_text, doctor=_doctor,
                          store=MemoryStore({ENDPOINT: API_KEY}), environ={})


def _dialog(qtbot: QtBot, collect: Callable[[], Report], path: Path | None) -> ReportDialog:
    dialog = ReportDialog(collect, choose_path=lambda _parent, _suggested: str(path))
    qtbot.addWidget(dialog)
    dialog.show_and_start()
    return dialog


def test_the_dialog_lists_the_files_with_their_masked_text_and_saves(
    qtbot: QtBot, planted_home: Home, tmp_path: Path
) -> None:
    out = tmp_path / "report.zip"
    dialog = _dialog(qtbot, _collect, out)
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=30_000)
    assert listed(dialog) == PARTS
    assert not dialog.screenshots.isChecked()  # off until the person ticks it
    for row, name in enumerate(PARTS):
        dialog.parts.setCurrentRow(row)
        text = dialog.preview.toPlainText()
        assert text, name
        assert API_KEY not in text, name
    dialog.parts.setCurrentRow(PARTS.index("last-run.txt"))
    assert "the key *** works" in dialog.preview.toPlainText()

    with qtbot.waitSignal(dialog.saved, timeout=30_000):
        dialog.save_button.click()
    assert "Saved to" in dialog.status.text()
    with zipfile.ZipFile(out) as bundle:
        assert sorted(bundle.namelist()) == sorted(PARTS)
        for name in bundle.namelist():
            assert API_KEY not in bundle.read(name).decode("utf-8")


def test_screenshots_are_listed_and_saved_only_when_ticked(
    qtbot: QtBot, planted_home: Home, tmp_path: Path
) -> None:
    out = tmp_path / "with.zip"
    dialog = _dialog(qtbot, _collect, out)
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=30_000)
    dialog.screenshots.setChecked(True)
    assert listed(dialog) == [*PARTS, "screenshots/step-001.jpg"]
    dialog.parts.setCurrentRow(len(PARTS))
    assert dialog.viewer.currentIndex() == 1  # the picture itself, not words about it
    assert dialog.image.pixmap().size().toTuple() == (32, 24)
    assert "not masked" in dialog.parts.currentItem().toolTip()
    dialog.parts.setCurrentRow(0)
    assert dialog.viewer.currentIndex() == 0 and dialog.preview.toPlainText()
    with qtbot.waitSignal(dialog.saved, timeout=30_000):
        dialog.save_button.click()
    with zipfile.ZipFile(out) as bundle:
        assert "screenshots/step-001.jpg" in bundle.namelist()
    dialog.screenshots.setChecked(False)
    assert listed(dialog) == PARTS


def test_a_save_that_fails_says_why_and_leaves_nothing(
    qtbot: QtBot, planted_home: Home, tmp_path: Path
) -> None:
    out = tmp_path / "missing-folder" / "report.zip"
    dialog = _dialog(qtbot, _collect, out)
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=30_000)
    dialog.save_button.click()
    qtbot.waitUntil(lambda: "does not exist" in dialog.status.text(), timeout=30_000)
    assert "Fix: choose an existing folder" in dialog.status.text()
    assert dialog.save_button.isEnabled()  # another place can be chosen
    assert not out.parent.exists()


def test_the_event_loop_runs_while_the_report_is_gathered(
    qtbot: QtBot, planted_home: Home, tmp_path: Path
) -> None:
    release = threading.Event()

    def slow_collect() -> Report:
        assert release.wait(30), "never released"
        return _collect()

    ticks: list[int] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(10)
    dialog = _dialog(qtbot, slow_collect, tmp_path / "r.zip")
    try:
        assert dialog.status.text() == GATHERING and not dialog.save_button.isEnabled()
        qtbot.waitUntil(lambda: len(ticks) >= 5, timeout=10_000)  # the loop keeps turning
        assert dialog.report is None and dialog.status.text() == GATHERING
    finally:
        release.set()
        timer.stop()
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=30_000)
    assert dialog.save_button.isEnabled()


def test_the_tray_offers_report_a_problem(qtbot: QtBot) -> None:
    actions = TrayActions()
    assert actions.report.text() == "Report a problem…"
    assert actions.report in actions.all()


def test_report_a_problem_in_the_app_gathers_with_the_apps_settings(
    qtbot: QtBot, make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No display for the checks: they must not look at the developer's screen.
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    with FakeVLLM(ScriptedPolicy([ANSWER], repeat_last=True)) as server:
        app, _rig = make_app(server)
        app.actions.report.trigger()
        dialog = app.report_dialog
        assert dialog is not None and dialog.isVisible()
        qtbot.waitUntil(lambda: dialog.report is not None, timeout=60_000)
        assert dialog.report is not None
        doctor = json.loads(dialog.report.part("doctor.json").text)
        assert doctor["endpoint"] == app.settings.endpoint
        checks = {c["name"]: c["status"] for c in doctor["checks"]}
        assert checks["endpoint"] == "PASS" and checks["display server"] == "FAIL"
        app.actions.report.trigger()  # again: the same window, a fresh report
        assert app.report_dialog is dialog
        qtbot.waitUntil(lambda: dialog.report is not None, timeout=60_000)


def test_a_report_shows_its_lines_as_they_are_and_says_where_to_send_it(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """Issue 24: a ⏎ at every line end, long lines cut at the window's edge, and nowhere said
    where the saved file goes."""
    long_line = "2026-01-15 10:42:33 INFO app.agent: " + "a long line of the log " * 20 + "END"
    text = f"first line\n{long_line}\nan escape \x1b[31m here\n\nlast line\n"
    report = Report((ReportPart("log.txt", "the log", text),), (), dt.datetime(2026, 1, 15))
    out = tmp_path / "report.zip"
    dialog = _dialog(qtbot, lambda: report, out)
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=30_000)
    shown = dialog.preview.toPlainText()
    assert shown.splitlines()[:2] == ["first line", long_line]  # lines as they are
    assert "⏎" not in shown
    assert "\x1b" not in shown and "␛[31m" in shown  # a control character made visible
    # Long lines wrap to the window, inside a word too: nothing is cut at its edge.
    assert dialog.preview.lineWrapMode() != QPlainTextEdit.LineWrapMode.NoWrap
    assert dialog.preview.wordWrapMode() == QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere
    assert dialog.preview.horizontalScrollBar().maximum() == 0
    intro = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert send_words(project_address()) in intro
    assert "bug report for the holodesk project" in send_words(None)
    with qtbot.waitSignal(dialog.saved, timeout=30_000):
        dialog.save_button.click()
    said = dialog.status.text()
    assert str(out) in said and send_words(project_address()) in said
