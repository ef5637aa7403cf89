"""Parameters end to end on a private Xvfb: `holodesk automation run NAME --set` sends the model
the filled task, and a secret parameter from the keyring is typed into the field in full while
it is in none of the terminal, the log file, the action log or the automations file.

The stand-in model types what the task asks for, so what reaches the target's field is what the
model was told.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess

import pytest

from tests.support.e2e import holodesk_argv, holodesk_env, run_holodesk
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.fixtures import target_app_fixture, xvfb_fixture
from tests.support.home import Home
from tests.support.pty_run import Pty
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1920, 1080)
app = target_app_fixture("1000x660+0+0", pointer=(960, 900))

#: Looks like nothing the secret rules recognize: only its declaration makes it a secret.
SECRET = "velvet-otter-lantern"
ANSWER = {"note": "", "thought": "done", "action": {"action": "answer", "text": "done"}}


def _typing(text: str) -> list[object]:
    return [{"note": "", "thought": f"The field has focus; I type {text}.",
             "action": {"action": "type", "text": text}}, ANSWER]


def _ok(home: Home, *args: str, stdin: str = "") -> str:
    result = run_holodesk(home, *args, stdin=stdin)
    assert result.returncode == 0, str(result)
    return result.stdout


def _focus_field(xvfb: Xvfb, app: RunningApp) -> None:
    x, y = app.widgets["field"].solid_center
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], env=xvfb.env(),
                   check=True)
    app.wait_for(lambda: app.events("focus_in", widget="field"), what="the field's focus")


def _last_run_settings(home: Home) -> dict[str, object]:
    db = next(p for p in home.root.rglob("holodesk.db"))
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT settings_json FROM runs ORDER BY started_at DESC").fetchone()
    settings: dict[str, object] = json.loads(row[0])
    return settings


def test_run_with_set_sends_the_filled_task(xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    _focus_field(xvfb, app)
    with FakeVLLM(ScriptedPolicy(_typing("report-2026.pdf"))) as server:
        _ok(home, "config", "set", "endpoint", server.base_url)
        _ok(home, "automation", "add", "name it", "--task", "type {file} into the {where}",
            "--param", "file", "--param", "where=field", "--confirm", "never")
        result = run_holodesk(home, "automation", "run", "name it", "--set",
                              "file=report-2026.pdf", xvfb=xvfb)
        assert result.returncode == 0, str(result)
        task_sent = server.requests[0].text
    assert "type report-2026.pdf into the field" in task_sent
    assert "{file}" not in task_sent
    assert app.text("field") == "report-2026.pdf"
    recorded = _last_run_settings(home)
    assert recorded["parameters"] == {"file": "report-2026.pdf", "where": "field"}
    assert recorded["masked_parameters"] == []


def test_a_secret_parameter_is_typed_but_never_written_down(
        xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    _focus_field(xvfb, app)
    with FakeVLLM(ScriptedPolicy(_typing(SECRET))) as server:
        _ok(home, "config", "set", "endpoint", server.base_url)
        _ok(home, "automation", "add", "sign in", "--task", "type {password} into the field",
            "--secret-param", "password", "--confirm", "never")
        _ok(home, "automation", "set-secret", "sign in", "password", stdin=SECRET + "\n")
        result = run_holodesk(home, "automation", "run", "sign in", "-v", xvfb=xvfb)
        assert result.returncode == 0, str(result)
        assert SECRET in server.requests[0].text  # the model is told what to type
    assert app.text("field") == SECRET  # typed in full
    assert SECRET not in result.stdout + result.stderr, str(result)
    assert "type *** into the field" in result.stdout  # the task shown, masked
    # Neither in the log file, the action log, its screenshots' folder nor the automations
    # file; the test keyring (home.keyring) is the only place holding it.
    held = [str(p) for place in (home.config, home.data, home.state) for p in place.rglob("*")
            if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert held == []
    recorded = _last_run_settings(home)
    assert recorded["parameters"] == {} and recorded["masked_parameters"] == ["password"]


def test_missing_values_are_asked_on_the_terminal_a_secret_without_echo(
        xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    _focus_field(xvfb, app)
    with FakeVLLM(ScriptedPolicy(_typing(f"ann {SECRET}"))) as server:
        _ok(home, "config", "set", "endpoint", server.base_url)
        _ok(home, "automation", "add", "sign in", "--task", "type {user} {password}",
            "--param", "user=bob", "--secret-param", "password", "--confirm", "never")
        term = Pty(holodesk_argv("automation", "run", "sign in", "--ask"),
                    holodesk_env(home, xvfb))
        term.read_until("user [bob]: ")
        term.send("ann")
        term.read_until("password (input hidden): ")
        term.send(SECRET)
        code = term.wait()
        assert code == 0, term.seen
        assert "type ann " in server.requests[0].text
    assert SECRET not in term.seen  # not echoed, and masked in what the run printed
    assert app.text("field") == f"ann {SECRET}"
