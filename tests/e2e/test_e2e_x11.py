"""End to end: `holodesk run` on a private Xvfb, a real target window, the fake vLLM server.

The fake model sees: it decodes the screenshot holodesk sent, finds the target by colour and
answers a click in the configured convention. So a click that reaches the right button proves
capture, downscale, prompt, HTTP, parsing, coordinate mapping and input all agree.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from app.cli.exitcodes import EXIT_STOPPED
from model.contracts import Vocabulary
from model.contracts.h_structured import step_schema
from tests.support.e2e import run_holodesk, start_holodesk, wait_exit
from tests.support.fake_vllm import (
    ChatRequest,
    FakeVLLM,
    GarbagePolicy,
    ScriptedPolicy,
    SeeingPolicy,
    StructuredOutputs,
    Target,
)
from tests.support.fixtures import target_app_fixture, xvfb_fixture
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

RED = (255, 0, 0)
BLUE = (0, 0, 255)
CYAN = (0, 255, 255)

xvfb = xvfb_fixture(1920, 1080)


app = target_app_fixture("1000x660+0+0", pointer=(960, 900))


def _log_show(home: Home) -> str:
    result = run_holodesk(home, "log", "show", "last")
    assert result.returncode == 0, str(result)
    return result.stdout


def test_click_and_type_through_real_pixels(xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    policy = SeeingPolicy(
        [Target("Save button", RED), Target("Name field", BLUE, type_text="hello world")]
    )
    with FakeVLLM(policy) as server:
        result = run_holodesk(home, "run", "save, then write hello world in the name field",
                              "--confirm", "never", "--endpoint", server.base_url, xvfb=xvfb)
        sent = server.requests[0].images[-1].size
        steps = [r for r in server.requests if r.images and r.images[-1].width > 100]
    assert result.returncode == 0, str(result)
    assert sent == (1920, 1080)
    # The default profile's schema (H's step in the holo-nano tools), in vLLM's field, on
    # every step (never guided_json).
    assert len(steps) == 4
    schema = step_schema(Vocabulary.HOLO_NANO)
    assert all(r.structured_outputs == {"json": schema} for r in steps)
    assert not any(k.startswith("guided_") for r in server.requests for k in r.body)
    assert app.wait_for(lambda: app.events("click", widget="save"), what="click on save")
    assert app.wait_for(lambda: app.text("field") == "hello world", what="typed text")
    assert not app.events("click", widget="cancel")
    shown = _log_show(home)
    assert "answered" in shown
    assert "Save button" in shown


def test_non_ascii_text_arrives_exactly(xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    text = "héllo wörld 日本"
    policy = SeeingPolicy([Target("Comment field", CYAN, type_text=text)])
    with FakeVLLM(policy) as server:
        result = run_holodesk(home, "run", "write the comment", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb)
    assert result.returncode == 0, str(result)
    assert app.wait_for(lambda: app.text("field2") == text, what="non-ASCII text")


def test_terminal_confirmation_approve_and_stop(xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    policy = SeeingPolicy([Target("Save button", RED)])
    with FakeVLLM(policy) as server:
        approved = run_holodesk(home, "run", "press save", "--confirm", "always",
                                "--endpoint", server.base_url, xvfb=xvfb, stdin="a\n")
    assert approved.returncode == 0, str(approved)
    assert "confirm: click" in approved.stdout
    assert "Save button" in approved.stdout
    assert app.wait_for(lambda: app.events("click", widget="save"), what="approved click")

    mark = app.mark()
    policy = SeeingPolicy([Target("Save button", RED)])
    with FakeVLLM(policy) as server:
        stopped = run_holodesk(home, "run", "press save", "--confirm", "always",
                               "--endpoint", server.base_url, xvfb=xvfb, stdin="q\n")
    assert stopped.returncode == EXIT_STOPPED, str(stopped)
    assert "run stopped" in stopped.stderr
    app.sync()  # whatever the ended run sent has arrived now
    assert not app.events_since(mark, "click")


def test_dry_run_touches_nothing(xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    mark = app.mark()
    policy = SeeingPolicy([Target("Save button", RED)])
    with FakeVLLM(policy) as server:
        result = run_holodesk(home, "run", "press save", "--dry-run", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb)
    assert result.returncode == 0, str(result)
    app.sync()  # whatever the ended run sent has arrived now
    assert not app.events_since(mark, "pointer_press")
    assert "Save button" in _log_show(home)


def _long_type_policy(text: str) -> ScriptedPolicy:
    return ScriptedPolicy([
        {"thought": "type it", "action": {"action": "type", "text": text}},
        {"thought": "done", "action": {"action": "answer", "text": "typed"}},
    ])


def _focus_field(xvfb: Xvfb, app: RunningApp) -> None:
    x, y = app.widgets["field"].solid_center
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"],
                   env=xvfb.env(), check=True)
    app.wait_for(lambda: app.events("focus_in", widget="field"), what="field focus")


@pytest.mark.parametrize("how", ["sigint", "failsafe-corner"])
def test_emergency_stop_cuts_a_long_type_short(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path, how: str
) -> None:
    # Long enough (20 s of typing) that a loaded machine cannot finish before the stop lands.
    text = "abcdefghij" * 300
    _focus_field(xvfb, app)
    with FakeVLLM(_long_type_policy(text)) as server:
        proc = start_holodesk(home, "run", "type a lot", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb, workdir=tmp_path / "run")
        app.wait_for(lambda: len(app.text("field")) >= 20, timeout=60, what="typing to start")
        if how == "sigint":
            proc.send_signal(signal.SIGINT)
        else:
            subprocess.run(["xdotool", "mousemove", "0", "0"], env=xvfb.env(), check=True)
        code = wait_exit(proc)
    stderr = (tmp_path / "run" / "stderr").read_text()
    assert code != 0
    assert "stopped" in stderr
    app.sync()  # every key the process sent before it ended has been handled
    typed = app.text("field")
    assert text.startswith(typed)
    assert 20 <= len(typed) < len(text)
    # Nothing arrives after the process has gone: the stop really stopped.
    app.sync()
    assert app.text("field") == typed
    # No key is left held down.
    downs = len(app.events("key_down"))
    ups = len(app.events("key_up"))
    assert downs == ups
    assert "stopped" in _log_show(home)


def test_a_model_answering_garbage_ends_the_run_clearly(
    xvfb: Xvfb, app: RunningApp, home: Home
) -> None:
    mark = app.mark()
    # Garbage can only come from a server that ignores the schema (a real vLLM enforces it).
    garbage = GarbagePolicy("Sure! I will click the Save button.")
    with FakeVLLM(garbage, structured_outputs=StructuredOutputs.IGNORED) as server:
        result = run_holodesk(home, "run", "press save", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb)
        attempts = len(server.requests)
    assert result.returncode == 1, str(result)
    assert "schema" in result.stderr.lower() or "valid" in result.stderr.lower()
    assert attempts == 3  # the first try and two retries
    assert not app.events_since(mark, "pointer_press")
    shown = _log_show(home)
    assert "Sure! I will click the Save button." in shown  # the raw text is kept


def test_server_dying_mid_run_gives_a_clear_error_and_keeps_the_log(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    script = ScriptedPolicy([
        {"thought": "wait for the page", "action": {"action": "wait", "seconds": 2}},
        {"thought": "again", "action": {"action": "wait", "seconds": 1}},
    ])
    with FakeVLLM(script) as server:
        proc = start_holodesk(home, "run", "wait around", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb, workdir=tmp_path / "run")
        # Served, not just arrived: the first step must reach holodesk before the server dies.
        server.wait_for_served(timeout=60)
        server.kill()
        code = wait_exit(proc)
    stderr = (tmp_path / "run" / "stderr").read_text()
    assert code == 1  # failed
    assert "no model server answers" in stderr.lower()
    shown = _log_show(home)
    assert "wait 2" in shown
    assert ": failed: " in shown.splitlines()[0]


def test_a_second_run_is_refused_while_one_drives_the_desktop(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    script = ScriptedPolicy([{"thought": "wait", "action": {"action": "wait", "seconds": 0.1}},
                             {"thought": "done", "action": {"action": "answer", "text": "ok"}}])
    release = threading.Event()

    def held(request: ChatRequest) -> str:
        # The first run's step is answered only once the second run is over: it holds the
        # desktop for as long as that takes, however slowly the second one starts.
        release.wait(120)
        return script(request)

    with FakeVLLM(held) as server:
        first = start_holodesk(home, "run", "wait", "--confirm", "never",
                               "--endpoint", server.base_url, xvfb=xvfb, workdir=tmp_path / "a")
        try:
            server.wait_for_request(timeout=30)  # the first run holds the desktop lock now
            second = run_holodesk(home, "run", "other", "--endpoint", server.base_url,
                                  xvfb=xvfb)
        finally:
            release.set()
        assert wait_exit(first) == 0
    assert second.returncode == 3, str(second)
    assert "another holodesk run" in second.stderr


def test_export_holds_the_run_and_its_images(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    policy = SeeingPolicy([Target("Save button", RED)])
    with FakeVLLM(policy) as server:
        assert run_holodesk(home, "run", "press save", "--confirm", "never",
                            "--endpoint", server.base_url, xvfb=xvfb).returncode == 0
    out = tmp_path / "export"
    result = run_holodesk(home, "log", "export", "last", "-o", str(out))
    assert result.returncode == 0, str(result)
    folder = Path(result.stdout.strip())
    lines = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()]
    assert len(lines) == 3  # the run, the click, the answer
    assert any(p.suffix == ".jpg" for p in folder.rglob("*"))
    assert os.path.commonpath([folder, out]) == str(out)


def test_the_api_key_is_sent_but_never_written_down(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    key = "sk-holodesk-test-7f3a9c1e5b"
    policy = SeeingPolicy([Target("Save button", RED)])
    with FakeVLLM(policy, api_key=key) as server:
        assert run_holodesk(home, "config", "set", "endpoint", server.base_url).returncode == 0
        stored = run_holodesk(home, "config", "set", "api_key", "-", stdin=key + "\n")
        assert stored.returncode == 0, str(stored)
        result = run_holodesk(home, "run", "press save", "--confirm", "never", "-v", xvfb=xvfb)
        # The server answers 401 to any request without this exact bearer key.
        assert result.returncode == 0, str(result)
        assert not server.errors
    shown = run_holodesk(home, "config", "show")
    exported = run_holodesk(home, "log", "export", "last", "-o", str(tmp_path / "export"))
    assert exported.returncode == 0, str(exported)
    assert key not in shown.stdout + result.stdout + result.stderr
    places = [home.config, home.data, home.state, tmp_path / "export"]
    leaks = [
        str(path)
        for place in places
        for path in place.rglob("*")
        if path.is_file() and key.encode() in path.read_bytes()
    ]
    assert not leaks
    # ...while the keyring does hold it (the test backend is a file, so we can look).
    assert any(key.encode() in p.read_bytes() for p in home.keyring.rglob("*") if p.is_file())


def test_a_run_killed_with_sigkill_leaves_a_readable_log(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    script = ScriptedPolicy([
        {"thought": "first", "action": {"action": "wait", "seconds": 0.2}},
        {"thought": "second", "action": {"action": "wait", "seconds": 0.3}},
        {"thought": "third, long", "action": {"action": "wait", "seconds": 10}},
    ])
    with FakeVLLM(script) as server:
        proc = start_holodesk(home, "run", "wait around", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb, workdir=tmp_path / "run")
        # Step 3's answer served: steps 1 and 2 are committed, the run is in its 10 s wait.
        server.wait_for_served(count=3, timeout=60)
        proc.send_signal(signal.SIGKILL)
        wait_exit(proc)
    shown = _log_show(home)
    # Marked interrupted as the log was opened again: it never finished, so it failed.
    assert ": failed: the holodesk process (pid " in shown.splitlines()[0], shown
    assert "ended before the run finished" in shown
    assert "wait 0.2 s" in shown
    assert "wait 0.3 s" in shown


def test_ctrl_c_at_the_confirmation_prompt_stops_at_once(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    policy = SeeingPolicy([Target("Save button", RED)])
    out = tmp_path / "run"
    with FakeVLLM(policy) as server:
        proc = start_holodesk(home, "run", "press save", "--confirm", "always",
                              "--endpoint", server.base_url, xvfb=xvfb, workdir=out,
                              stdin_open=True)
        app.wait_for(lambda: "confirm:" in (out / "stdout").read_text(), timeout=60,
                     what="the confirmation prompt")
        proc.send_signal(signal.SIGINT)
        code = wait_exit(proc, timeout=15)  # nobody answers the prompt: it must not wait
    assert code == EXIT_STOPPED
    assert "stopped" in (out / "stderr").read_text()
    assert not app.events("click", widget="save")
    assert "stopped" in _log_show(home)


def test_the_failsafe_corner_stops_a_run_while_the_model_thinks(
    xvfb: Xvfb, app: RunningApp, home: Home, tmp_path: Path
) -> None:
    policy = SeeingPolicy([Target("Save button", RED)])
    with FakeVLLM(policy) as server:
        server.delay = 600.0  # the model thinks for minutes: only a cancel ends it in time
        proc = start_holodesk(home, "run", "press save", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb,
                              workdir=tmp_path / "run")
        server.wait_for_request(timeout=30)
        subprocess.run(["xdotool", "mousemove", "0", "0"], env=xvfb.env(), check=True)
        server.wait_for_disconnect(timeout=10)  # the stop hung up on the request in flight
        code = wait_exit(proc, timeout=10)
    assert code == EXIT_STOPPED
    assert "failsafe-corner" in (tmp_path / "run" / "stderr").read_text()
    assert not app.events("click", widget="save")
