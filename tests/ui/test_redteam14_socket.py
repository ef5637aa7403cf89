"""Red team 14: who may make the app collapse into a run bar whose Stop signals a process.

The app's socket (ui/instance.py) adds ``peer``, the sender's pid as the system tells it, and
a ``make_way`` naming another process is refused (app/ipc.py). Held: a sender that writes a
``peer`` of its own is not believed. Mended: a message whose sender the system did not tell
(no ``peer``) named any process it liked, and the bar's Stop would send that one SIGINT.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from app.admission import Refused
from app.instance import send
from app.ipc import Message
from app.way import WorkArea, area_message
from model.coords import Rect
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import REPO_ROOT, isolate_home
from ui.instance import InstanceServer

WAIT = {"thought": "wait", "action": {"action": "wait", "seconds": 0}}


def _area() -> dict[str, Any]:
    screen = QGuiApplication.primaryScreen()
    assert screen is not None
    g = screen.availableGeometry()
    return area_message(WorkArea(Rect(g.x(), g.y(), g.width(), g.height())))


@pytest.fixture
def victim() -> Iterator[subprocess.Popen[bytes]]:
    """Some other process of the person's."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                            cwd=REPO_ROOT)
    yield proc
    proc.kill()
    proc.wait(30)


def _sent(qtbot: QtBot, message: dict[str, Any]) -> dict[str, Any] | None:
    """``message`` sent to the app's socket from this process, as `holodesk run` sends."""
    replies: list[dict[str, Any] | None] = []
    thread = threading.Thread(target=lambda: replies.append(send(message, timeout=20)))
    thread.start()
    qtbot.waitUntil(lambda: bool(replies), timeout=30_000)
    thread.join()
    return replies[0]


def test_a_sender_that_names_another_process_is_not_believed(
        qtbot: QtBot, make_app: MakeApp, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        victim: subprocess.Popen[bytes]) -> None:
    isolate_home(monkeypatch, tmp_path)
    with FakeVLLM(ScriptedPolicy([WAIT])) as server:
        app, _rig = make_app(server)
        listening = InstanceServer(app.handle_message)
        assert listening.listen()
        try:
            forged = {"cmd": "make_way", "pid": victim.pid, "peer": victim.pid,
                      "task": "x", **_area()}
            reply = _sent(qtbot, forged)
        finally:
            listening.close()
    assert reply == {"ok": False,
                     "error": f"process {os.getpid()} spoke for process {victim.pid}"}
    assert not app.run_bar.isVisible() and app.stage.outside_pid == 0


def test_a_message_whose_sender_is_not_known_names_no_process() -> None:
    """Where the system does not say who sent it (no SO_PEERCRED, a pid of 0 from another
    pid namespace), the transport adds no ``peer``: the process it names is not believed."""
    for cmd in ("make_way", "run_over"):
        parsed = Message.parse({"cmd": cmd, "pid": 4242, "task": "x", **_area_raw()})
        assert isinstance(parsed, Refused), cmd
        assert parsed.text == "the system did not say which process sent the message"
    # A peer that is no number is none.
    parsed = Message.parse({"cmd": "run_over", "pid": 4242, "peer": True})
    assert isinstance(parsed, Refused)


def _area_raw() -> dict[str, Any]:
    return area_message(WorkArea(Rect(0, 0, 1280, 800)))
