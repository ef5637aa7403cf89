"""Stopping pynput's listeners on Xvfb is quick: a CLI run ends by stopping the hotkey listener
and the touch detector's two, and pynput's own join() waited a full second on an empty error
queue each time (issue 13). Run in a child process: pynput binds its display at import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.home import REPO_ROOT
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

_CHILD = """
import json, time
from control.hotkeys import PynputHotkeys
from control.touch import TouchDetector

hotkeys = PynputHotkeys()
hotkeys.register("ctrl+alt+shift+escape", lambda: None)
hotkeys.start()
touch = TouchDetector(lambda _t: None)
touch.start()
t0 = time.perf_counter()
hotkeys.stop()
touch.stop()
took = time.perf_counter() - t0
print(json.dumps({"took": took}))
"""


def test_stopping_the_hotkey_and_touch_listeners_takes_no_second(xvfb: Xvfb) -> None:
    out = subprocess.run([sys.executable, "-c", _CHILD], env=xvfb.env(), cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # Three listeners, 1 s each before; loose for a busy machine.
    assert result["took"] < 0.3, result
