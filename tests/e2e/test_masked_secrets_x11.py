"""Masked secrets stay masked: never in holodesk.log, the terminal, or the thought streamed to
the UI (Xvfb).

Two secrets are masked: the API key (from the keyring, known before the run starts) and
typed text that looks like a password or card number (known once the step that types it is
parsed; control/policy.py marks the verdict ``secret``). The model here types a password,
then mentions it and the API key in a later step's thought and note, and once answers
an answer so long it is cut short at the length limit, so not a step, whose start quotes both:
the client writes such a rejected answer to the log file at debug level, so that line exists
and must carry ``***`` instead.

* `holodesk run` (a subprocess, the real session builder and logging): neither secret in
  what it prints (it prints each step's thought) nor in ``holodesk.log``
  (``$XDG_STATE_HOME/holodesk/``, app/paths.py) nor anywhere else but the keyring.
* The thought shown in the desktop app: the events of a run built by the real
  ``build_session`` are fed, one by one, to the real task window, whose thought view shows
  the streamed text (``ModelText``, parsed as it comes) and then the step's thought
  (``StepProposed``); after every event neither secret is on show.

Not pinned: a password the model writes in its thought *before* the step that types it is
shown while that thought streams (nothing marks it a secret until the action arrives); once
the step is parsed it is masked everywhere.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.events import Event, ModelText, Outcome, RunFinished, StepProposed
from app.settings import Settings
from tests.support.e2e import run_holodesk
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, ScriptItem
from tests.support.fixtures import target_app_fixture, xvfb_fixture
from tests.support.home import Home, isolate_home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1920, 1080)

#: Looks like a password (three character classes); the quote is JSON-escaped in the model's
#: raw answer, so both forms must be masked. Tests look for its distinctive start.
PASSWORD = 'Hunter2!x9"q'
PASSWORD_MARK = "Hunter2"
KEY = "sk-holodesk-test-7f3a9c1e5b"
#: How the log file's line for the cut-short answer starts, once masked.
REJECTED = 'rejected answer: {"note": null, "thought": "Sure! I used ***'


def _script(password: str | None, key: str | None) -> list[ScriptItem]:
    """Type ``password`` (when given), then a step whose thought and note quote the secrets,
    then a rejected (cut short) answer quoting them, then the answer."""
    secrets = " and ".join(s for s in (password, key) if s)
    steps: list[ScriptItem] = []
    if password is not None:
        steps.append({"note": "", "thought": "The password field has focus; type it.",
                      "action": {"action": "type", "text": password}})
    steps += [
        {"note": f"remember: {secrets}", "thought": f"I used {secrets}; wait for the page.",
         "action": {"action": "wait", "seconds": 0.1}},
        # Longer than the 4096 tokens a step may take (the default profile's budget): cut
        # short at the length limit, so not a step; the client logs its start as a rejected
        # answer and asks again.
        {"note": "", "thought": f"Sure! I used {secrets} to sign in. " + "Then I wait. " * 1500,
         "action": {"action": "wait", "seconds": 0.1}},
        {"note": "", "thought": f"Signed in with {secrets}.",
         "action": {"action": "answer", "text": "signed in"}},
    ]
    return steps


def _files_holding(text: str, *places: Path) -> list[str]:
    """Every file under ``places`` whose bytes contain ``text`` (raw or JSON-escaped)."""
    forms = {text.encode(), json.dumps(text)[1:-1].encode()}
    return [str(path) for place in places for path in place.rglob("*")
            if path.is_file() and any(form in path.read_bytes() for form in forms)]


app = target_app_fixture("1000x660+0+0", pointer=(960, 900))


def _log_file(home: Home) -> str:
    return (home.state / "holodesk" / "holodesk.log").read_text(encoding="utf-8")


def test_a_typed_password_is_in_neither_the_terminal_nor_the_log_file(
    xvfb: Xvfb, app: RunningApp, home: Home
) -> None:
    x, y = app.widgets["field"].solid_center
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], env=xvfb.env(),
                   check=True)
    app.wait_for(lambda: app.events("focus_in", widget="field"), what="the field's focus")
    with FakeVLLM(ScriptedPolicy(_script(PASSWORD, None))) as server:
        result = run_holodesk(home, "run", "sign in", "--confirm", "never", "-v",
                              "--endpoint", server.base_url, xvfb=xvfb)
    assert result.returncode == 0, str(result)
    assert app.text("field") == PASSWORD  # typed in full: only what is written down is masked
    assert PASSWORD_MARK not in result.stdout + result.stderr, str(result)
    assert "thinks: I used ***" in result.stdout  # the thought is printed, masked
    log = _log_file(home)
    assert REJECTED in log  # the line that would leak is there, masked
    assert PASSWORD_MARK not in log
    # Nor in the action log, its screenshots' folder or the settings.
    assert not _files_holding(PASSWORD, home.config, home.data, home.state)


def test_the_api_key_in_a_thought_is_in_neither_the_terminal_nor_the_log_file(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    with FakeVLLM(ScriptedPolicy(_script(None, KEY)), api_key=KEY) as server:
        assert run_holodesk(home, "config", "set", "endpoint", server.base_url).returncode == 0
        stored = run_holodesk(home, "config", "set", "api_key", "-", stdin=KEY + "\n")
        assert stored.returncode == 0, str(stored)
        result = run_holodesk(home, "run", "sign in", "--confirm", "never", "-v", xvfb=xvfb)
        assert not server.errors  # every request carried the key
    assert result.returncode == 0, str(result)
    assert KEY not in result.stdout + result.stderr, str(result)
    assert "thinks: I used ***" in result.stdout
    log = _log_file(home)
    assert REJECTED in log
    assert KEY not in log
    exported = run_holodesk(home, "log", "export", "last", "-o", str(tmp_path / "export"))
    assert exported.returncode == 0, str(exported)
    assert not _files_holding(KEY, home.config, home.data, home.state, tmp_path / "export")


def test_the_thought_shown_in_the_app_never_shows_a_secret(
    xvfb: Xvfb, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from app.run_request import make_run_request
    from app.session import build_session
    from ui.task_window import TaskWindow

    isolate_home(monkeypatch, tmp_path)
    monkeypatch.setenv("HOLODESK_API_KEY", KEY)  # the key as the session builder looks it up
    window = TaskWindow()
    qtbot.addWidget(window)
    events: list[Event] = []
    with FakeVLLM(ScriptedPolicy(_script(PASSWORD, KEY)), api_key=KEY) as server:
        settings = Settings(endpoint=server.base_url, confirm="never", settle_min=0.0,
                            settle_max=0.05)
        with xvfb.activated():
            session = build_session(make_run_request(settings, "sign in", dry_run=True))
            try:
                finished = session.run(events.append)
            finally:
                session.close()
        assert not server.errors
    assert isinstance(finished, RunFinished)
    assert finished.outcome is Outcome.ANSWERED, finished
    shown: list[str] = []
    for event in events:
        window.on_event(event)
        shown.append(window.thought())
    streamed = [e for e in events if isinstance(e, ModelText)]
    proposed = [e for e in events if isinstance(e, StepProposed)]
    assert any("I used ***" in e.text for e in streamed)  # the stream went on, masked
    assert [e.step.thought for e in proposed][1:] == ["I used *** and ***; wait for the page.",
                                                    "Signed in with *** and ***."]
    leaks: list[Any] = [text for text in shown if PASSWORD_MARK in text or KEY in text]
    assert not leaks
    # What the terminal and the log window read from the events, masked as well.
    assert not [e for e in proposed if PASSWORD_MARK in e.step.note or KEY in e.step.note]
