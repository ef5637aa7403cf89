"""Stopping pynput's listeners on Xvfb is quick: a CLI run ends by stopping the hotkey listener
and the touch detector's two, and pynput's own join() waited a full second on an empty error
queue each time (issue 13). So stop() never joins a listener: the test counts the joins (a
stopwatch would fail on a loaded machine). Run in a child process: pynput binds its display at
import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.home import REPO_ROOT
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

_CHILD = """
import json
from pynput._util import AbstractListener
from control.hotkeys import PynputHotkeys
from control.touch import TouchDetector

joined = []
_join = AbstractListener.join
def join(self, *args, **kwargs):
    joined.append(type(self).__module__ + "." + type(self).__name__)
    return _join(self, *args, **kwargs)
AbstractListener.join = join

hotkeys = PynputHotkeys()
hotkeys.register("ctrl+alt+shift+escape", lambda: None)
hotkeys.start()
touch = TouchDetector(lambda _t: None)
touch.start()
started = [t for t in (hotkeys._listener, *touch._listeners) if t is not None]
hotkeys.stop()
touch.stop()
print(json.dumps({"started": len(started), "joined": joined,
                  "running": [t.running for t in started]}))
"""


def test_stopping_the_hotkey_and_touch_listeners_waits_on_no_join(xvfb: Xvfb) -> None:
    out = subprocess.run([sys.executable, "-c", _CHILD], env=xvfb.env(), cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # Three listeners, each stopped without pynput's join (a second each before).
    assert result["started"] == 3, result
    assert result["joined"] == [], result
    assert result["running"] == [False, False, False], result
