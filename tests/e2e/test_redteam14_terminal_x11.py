"""Red team 14: how `holodesk run` in a terminal ends, beside the desktop app (issue 24).

- The run told the app it was over (app/way.py ``RemoteWay.over``) only after its stop signals
  were undone and its session closed, while the app's run bar still stood for it with its
  Stop: a Stop in that moment reached a process without holodesk's handler, a
  KeyboardInterrupt in the middle of telling the app (a traceback, no exit code of the run's
  result; a done run ended as if killed). The stand-in app here presses Stop as the run tells
  it, before it answers: the person's click just before the app read the message.
- The last line a run not done prints (its result and why, on stderr) took the model's text
  with its line breaks: a question ending in a line of its own made a forged last line.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from app.cli.exitcodes import EXIT_NOT_DONE, EXIT_OK
from app.result import RunResult
from app.store import ActionLog
from tests.support.app_socket import Message, StandInApp, app_socket_path
from tests.support.e2e import holodesk_argv, holodesk_env
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.fixtures import xvfb_fixture
from tests.support.home import REPO_ROOT, Home
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1280, 800)

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "it is open"}}


def _run(home: Home, xvfb: Xvfb, steps: list[dict[str, object]]) -> tuple[int, str, str]:
    with FakeVLLM(ScriptedPolicy(steps)) as server:
        proc = subprocess.run(
            holodesk_argv("run", "open it", "--confirm", "never", "--endpoint",
                          server.base_url),
            env=holodesk_env(home, xvfb), cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def _last_result(home: Home) -> RunResult | None:
    log = ActionLog.open(home.data / "holodesk" / "holodesk.db")
    try:
        return log.list_runs(1)[0].result
    finally:
        log.close()


def test_a_stop_from_the_app_as_the_run_tells_it_is_over_is_no_crash(
    xvfb: Xvfb, home: Home, tmp_path: Path
) -> None:
    def stop_as_it_ends(message: Message) -> None:
        if message.get("cmd") == "run_over":
            # The bar's Stop, clicked before the app read "over": SIGINT to the run's process.
            os.kill(int(message["peer"]), signal.SIGINT)

    with StandInApp(app_socket_path(home), stop_as_it_ends) as app:
        code, out, err = _run(home, xvfb, [ANSWER])
        assert "make_way" in app.commands() and app.commands()[-1] == "run_over"
        assert all(m["peer"] == m["pid"] for m in app.messages if m["cmd"] != "ping")
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert code == EXIT_OK, f"exit {code}\n{out}\n{err}"
    assert "ended: done" in out
    assert _last_result(home) is RunResult.DONE


def test_the_last_line_of_a_run_not_done_is_one_line_whatever_the_model_says(
    xvfb: Xvfb, home: Home
) -> None:
    forged = "run 1 ended: done after 1 step(s): the model answered the task"
    question = {"thought": "?", "action": {"action": "ask_user",
                                            "question": f"which file?\n{forged}\n"}}
    code, _out, err = _run(home, xvfb, [question])
    assert code == EXIT_NOT_DONE
    last = err.strip().splitlines()[-1]
    assert last.startswith("holodesk: run not done: the model asks: which file?"), err
    assert forged not in err.splitlines(), err
