"""On a real X server: a hotkey field records a combination holodesk already reserves.

The reserved hotkeys (control/hotkeys_x11.py) are X grabs: without more, pressing one in the
field would fire it and the field would get nothing. While the field has the focus it holds
the keyboard, which a passive grab cannot take from it. The listener behind the grab still
hears the press (so the stop hotkey works whoever holds the keyboard); the app's registry
ignores automation hotkeys while a field records (ui/test_hotkey_edit.py). The app runs in a
child process on the test's own Xvfb (Qt's xcb platform), with the grab held by the same
listener the app uses.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.target_app import REPO_ROOT
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

_APP = """
import json, os, subprocess, sys
from PySide6.QtWidgets import QApplication, QLineEdit, QVBoxLayout, QWidget
from PySide6.QtTest import QTest
from control.hotkeys import validate_stop_hotkey
from control.hotkeys_desktop import system_hotkeys
from ui.hotkey_edit import HotkeyEdit

app = QApplication([])
fired = []
hotkeys = system_hotkeys()
hotkeys.register("ctrl+alt+h", lambda: fired.append("ctrl+alt+h"))
hotkeys.start()
window = QWidget()
other = QLineEdit()
edit = HotkeyEdit(validate_stop_hotkey)
layout = QVBoxLayout(window)
layout.addWidget(other)
layout.addWidget(edit)
window.show()
window.activateWindow()
QTest.qWaitForWindowExposed(window)

def wait(condition, what):
    for _ in range(500):
        app.processEvents()
        if condition():
            return
        QTest.qWait(20)
    raise SystemExit(f"timed out waiting for {what}")

def press(keys):
    subprocess.run(["xdotool", "key", keys], check=True)
    app.processEvents()

out = {}
other.setFocus()
wait(other.hasFocus, "the other field's focus")
press("ctrl+alt+h")
wait(lambda: fired, "the hotkey")
out["fired_outside"] = list(fired)
edit.setFocus()
wait(edit.field.hasFocus, "the hotkey field's focus")
press("ctrl+alt+h")
wait(lambda: edit.text(), "the recorded hotkey")
out["recorded"] = edit.text()
wait(lambda: len(fired) == 2, "the listener hearing it")
out["fired_while_recording"] = list(fired)
other.setFocus()
wait(other.hasFocus, "the focus back")
press("ctrl+alt+h")
wait(lambda: len(fired) == 3, "the hotkey again")
out["fired_after"] = list(fired)
hotkeys.stop()
print(json.dumps(out), flush=True)
"""


def test_a_reserved_hotkey_can_be_recorded_in_the_field(xvfb: Xvfb) -> None:
    env = xvfb.env()
    env["PYTHONPATH"] = str(REPO_ROOT)
    env["QT_QPA_PLATFORM"] = "xcb"
    done = subprocess.run([sys.executable, "-c", _APP], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["fired_outside"] == ["ctrl+alt+h"]  # reserved: it fires elsewhere
    assert out["recorded"] == "ctrl+alt+h"  # ... and reaches the field while it records
    # The grab did not take it from the field; the listener heard it, once.
    assert out["fired_while_recording"] == ["ctrl+alt+h"] * 2
    assert out["fired_after"] == ["ctrl+alt+h"] * 3  # and fires, once, afterwards
