"""pyautogui loads on a Python without tkinter (a fresh Debian without python3-tk): its
MouseInfo helper would otherwise end the process with sys.exit()."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.fixtures import xvfb_fixture
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(640, 480)

NO_TK = "import sys; sys.modules['tkinter'] = None; sys.modules['_tkinter'] = None\n"


def _run(code: str, xvfb: Xvfb) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", NO_TK + code], env=xvfb.env(),
                          capture_output=True, text=True, timeout=60, check=False)


def test_pyautogui_loads_without_tkinter(xvfb: Xvfb) -> None:
    done = _run("from control.pyautogui_loader import load_pyautogui\n"
                "print(load_pyautogui().size())", xvfb)
    assert done.returncode == 0, done.stderr
    assert "640" in done.stdout


def test_a_plain_import_would_die_there(xvfb: Xvfb) -> None:
    # What the loader prevents: the process ends inside the import.
    done = _run("import pyautogui\nprint('alive')", xvfb)
    assert "alive" not in done.stdout
