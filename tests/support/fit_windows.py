"""The windows a newcomer sees, built in the states that stretch their text, on a screen of a
given size, and measured by tests/support/text_fit.py.

    python -m tests.support.fit_windows 1366x768 [--shots DIR]

prints one JSON object: ``{"screen": [w, h], "clipped": ["...", ...]}``. It runs in a process
of its own because Qt fixes the screen's size when the application starts: the test process's
offscreen screen is 800x600, and a window's first size depends on the screen (Qt gives a new
window at most two thirds of it). Here the offscreen platform gets a screen of the size asked
for; it measures text as the xcb platform on Xvfb does (the same fontconfig fonts and style).

The states: Settings after Test connection with a long answer, on a machine without a secure
keyring; the stand-in tray window after a run of long messages; Report a problem with a long
report (long lines, many of them); the action log with demo runs and runs of long tasks, one
selected, its steps' thoughts and actions long. ``--shots`` saves a picture of each.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.support.home import make_home

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

LONG_SERVER_TEXT = (
    "The model server at http://127.0.0.1:8000/v1 answered 500 Internal Server Error: "
    "{\"object\":\"error\",\"message\":\"The engine could not take the request: the "
    "scheduler's queue is full (max_num_seqs=4 running, 12 waiting); the KV cache is 97.6% "
    "full and CUDA graphs are still being captured for batch sizes 1, 2, 4, 8, 16, 24, 32, "
    "40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184, "
    "192, 200, 208, 216, 224, 232, 240, 248, 256; retry once the server says it is ready, or "
    "lower --max-num-seqs and --max-model-len so that the cache fits the GPU's memory\","
    "\"type\":\"ServiceUnavailableError\",\"param\":null,\"code\":503,\"request_id\":"
    "\"chatcmpl-9f1c2b7e4a6d4c0f8e3b5a7d9c1e2f40-7b3a9c5d1e2f4a6b8c0d2e4f6a8b0c2d\"}. "
) * 3

LONG_MESSAGES = (
    "holodesk: No model server answers at http://127.0.0.1:8000/v1. Start the model server and "
    "check the server address: host, port, and the /v1 path.",
    "holodesk: working on 'Demo: in the holodesk practice window, type the name Ada Lovelace, "
    "choose Blue, save the entry, then delete the draft'",
    "holodesk: working on 'Open the timesheet page in the browser and file today's hours: "
    "7.5 on project Atlas, with the note that the quarterly figures were reviewed with "
    "finance and the budget for the second half of the year was agreed with everyone'",
    "holodesk: waiting for your approval",
    "holodesk: answered: the model answered the task, and then it said a great deal more "
    "about what it did and why, at length, in a sentence that does not end soon at all",
)

LONG_TASKS = (
    "Open the timesheet page in the browser and file today's hours: 7.5 on project Atlas, "
    "with the note 'reviewed the quarterly figures with finance'",
    "Rename every screenshot on the desktop from Screenshot from 2026-01-15 10-42-33.png to "
    "the date it was taken, then move them into Pictures/Screenshots/2026",
    "In Downloads, move every PDF older than a month into Documents/Archive and empty the "
    "trash afterwards",
)

LONG_THOUGHT = (
    "The practice window is open at the centre of the screen. Its checklist says the name "
    "field comes first, then the colour list, then Save, and Delete draft last, which asks "
    "before it runs. The name field is empty and has the focus ring, so I will type the "
    "name there and press nothing else until I see it landed."
)


def _config(tmp: Path, width: int, height: int) -> str:
    path = tmp / "screen.json"
    path.write_text(json.dumps({"screens": [{
        "name": "fit", "x": 0, "y": 0, "width": width, "height": height,
        "logicalDpi": 96, "dpr": 1}]}))
    return f"offscreen:configfile={path}"


def _settle(ms: int = 50) -> None:
    from tests.support.qtwait import wait_until

    done: list[bool] = []
    from PySide6.QtCore import QTimer

    QTimer.singleShot(ms, lambda: done.append(True))
    wait_until(lambda: bool(done), "the layouts to settle")


def _settings(test: bool) -> QWidget:
    """Settings as opened on a machine without a secure keyring, and with ``test``, after
    Test connection answered a long error."""
    from keyring.backends import null

    from app.secrets import KeyringStore
    from app.status import ServerStatus
    from model.problem import Fix, Remedy
    from tests.support.qtwait import wait_until
    from ui.settings_dialog import SettingsDialog

    def probe(endpoint: str, *_args: Any, **_kw: Any) -> ServerStatus:
        return ServerStatus(
            "error", LONG_SERVER_TEXT,
            Fix("Start the model server and check the server address: host, port, and the /v1 "
                "path.", setting="endpoint", remedy=Remedy.START_SERVER),
            endpoint=endpoint)

    no_keyring = null.Keyring()  # type: ignore[no-untyped-call]
    dialog = SettingsDialog(secret_store=KeyringStore(backend=no_keyring), environ={},
                            probe_fn=probe)
    checked: list[object] = []
    dialog.status_checked.connect(checked.append)
    dialog.show()
    wait_until(lambda: not dialog.key_label.text().startswith("Looking"), "the keyring")
    _settle(200)
    if test:
        dialog.test_connection()
        wait_until(lambda: bool(checked), "Test connection")
        _settle(200)
    return dialog


def settings_opened() -> QWidget:
    """Settings as it opens where there is no secure keyring."""
    return _settings(test=False)


def settings_tested() -> QWidget:
    """Settings after Test connection answered a long error."""
    return _settings(test=True)


def stand_in() -> QWidget:
    """The tray's stand-in window of the desktop app, after long messages (its server entry
    as this machine has it: without a GPU, it says so)."""
    from app.settings import Settings
    from tests.support.qtwait import wait_until
    from ui.app import HolodeskApp
    from ui.tray import TrayState

    app = HolodeskApp(Settings(), use_system_tray=False, probe=False)
    window = app.tray.window
    assert window is not None
    window.show()
    wait_until(lambda: not app.server_menu._checks.pending, "the GPU check")
    for message in LONG_MESSAGES:
        app.tray.set_state(TrayState.WORKING, message)
        _settle(20)
    _CLOSE[window] = app.close  # the app's own close: the window alone would ask first
    _settle(100)
    return window


def report_dialog() -> QWidget:
    """Report a problem with a long report: long lines, many of them."""
    from app.report import Report, ReportPart
    from tests.support.qtwait import wait_until
    from ui.report_dialog import ReportDialog

    lines = [f"2026-01-15 10:42:{n % 60:02d} INFO app.agent: step {n}: " + "a long line of "
             "the log that goes on and on past the edge of any window " * 3 for n in range(400)]
    parts = (
        ReportPart("README.txt", "what this report holds",
                   "A holodesk problem report.\n\n  version.txt: holodesk's version\n"),
        ReportPart("log.txt", "the last 400 lines of holodesk's log file", "\n".join(lines)),
    )
    report = Report(parts, (), dt.datetime(2026, 1, 15, 10, 42, 33))
    dialog = ReportDialog(lambda: report)
    dialog.show_and_start()
    wait_until(lambda: dialog.report is not None, "the report")
    dialog.parts.setCurrentRow(1)
    _settle(200)
    return dialog


def log_window() -> QWidget:
    """The action log with demo runs and runs of long tasks, one selected."""
    from PIL import Image

    from app.demo.run import DEMO_TASK
    from app.store import ActionLog, StepRecord, StepResult
    from tests.support.qtwait import wait_until
    from ui.log_window import LogWindow

    picture = io.BytesIO()
    Image.new("RGB", (200, 100), (200, 200, 200)).save(picture, "PNG")
    with ActionLog.open() as log:
        selected = ""
        for index, task in enumerate((DEMO_TASK, *LONG_TASKS, DEMO_TASK, DEMO_TASK)):
            run = log.start_run(task, "http://127.0.0.1:8000/v1", "holotron", {})
            for step_no in (1, 2):
                shot, _thumb = log.save_screenshot(run.id, step_no, picture.getvalue(),
                                                   "image/png")
                log.add_step(StepRecord(
                    run.id, step_no, run.started_at, run.started_at + 2.5,
                    screenshot_path=str(shot), thought=LONG_THOUGHT,
                    action={"action": "type", "text": "Ada Lovelace, the first programmer, "
                            "wrote the notes on the Analytical Engine", "press_enter": True},
                    decision="approved", result=StepResult.OK))
            log.finish_run(run.id, "answered" if index % 2 else "error",
                           "done" if index % 2 else "the model server stopped answering")
            selected = run.id
    window = LogWindow(lambda: ActionLog.open(mark_interrupted=False))
    window.show()
    wait_until(lambda: not window.busy and window.runs_table.rowCount() > 0, "the runs")
    wait_until(lambda: window.select_run(selected), "the run to select")
    wait_until(lambda: not window.busy and len(window.step_numbers()) == 2, "the steps")
    _settle(200)
    return window


#: How to close a built window that is part of more (the stand-in: its app).
_CLOSE: dict[QWidget, Callable[[], None]] = {}

BUILDERS: dict[str, Callable[[], QWidget]] = {
    "settings": settings_opened,
    "settings-tested": settings_tested,
    "stand-in": stand_in,
    "report": report_dialog,
    "action-log": log_window,
}


def measure(shots: Path | None) -> list[str]:
    """Build each window, measure it, close it; the findings in words."""
    from tests.support.text_fit import clipped_text, off_screen

    findings: list[str] = []
    for name, build in BUILDERS.items():
        window = build()
        findings += [f"[{name}] {c}" for c in (*clipped_text(window), *off_screen([window]))]
        if shots is not None:
            window.grab().save(str(shots / f"{name}.png"))
        close = _CLOSE.pop(window, window.close)
        close()
        window.deleteLater()
    return findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("screen", help="WIDTHxHEIGHT")
    parser.add_argument("--shots", type=Path, help="save a picture of each window here")
    args = parser.parse_args(argv)
    width, height = (int(n) for n in args.screen.lower().split("x"))
    with tempfile.TemporaryDirectory(prefix="holodesk-fit-") as tmp:
        home = make_home(Path(tmp))
        os.environ.update(home.env())
        os.environ["QT_QPA_PLATFORM"] = _config(Path(tmp), width, height)
        os.environ["LANG"] = os.environ["LC_ALL"] = "C.UTF-8"
        from PySide6.QtWidgets import QApplication

        app = QApplication(["holodesk"])
        if args.shots is not None:
            args.shots.mkdir(parents=True, exist_ok=True)
        findings = measure(args.shots)
        print(json.dumps({"screen": [width, height], "clipped": findings}, indent=1))
        app.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
