"""The command line without a display: clear errors and exit codes, settings, the empty log."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e import run_holodesk
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home
from tests.support.xvfb import Xvfb

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "ok"}}


def test_help_lists_the_commands(home: Home) -> None:
    result = run_holodesk(home, "--help")
    assert result.returncode == 0
    for command in ("run", "log", "config", "trigger"):
        assert command in result.stdout
    # What a newcomer needs first: the app itself and the demo (tests/app/test_cli_help.py
    # has the rest), the same through the `holodesk` entry point as through the CLI's.
    start = result.stdout.split("Start here:\n", 1)[1].splitlines()
    assert start[0].split()[0] == "holodesk" and "desktop app" in start[0]
    assert next(line for line in start[1:] if line.startswith("  holodesk")).split()[:2] == [
        "holodesk", "demo"]
    assert run_holodesk(home, "help").stdout == result.stdout


def test_trigger_without_a_running_app_says_so(home: Home) -> None:
    result = run_holodesk(home, "trigger", "show")
    assert result.returncode == 1
    assert "not running" in result.stderr


def test_without_a_display_the_run_says_so(home: Home) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        result = run_holodesk(home, "run", "anything", "--endpoint", server.base_url)
    assert result.returncode == 1
    assert "no display" in result.stderr
    assert not server.requests


@pytest.mark.x11
def test_a_server_that_is_down_is_named_with_the_fix(home: Home, xvfb: Xvfb) -> None:
    server = FakeVLLM(ScriptedPolicy([ANSWER]))
    server.start()
    server.stop()
    result = run_holodesk(home, "run", "anything", "--endpoint", server.root_url, xvfb=xvfb)
    assert result.returncode == 1
    assert "no model server answers" in result.stderr.lower()
    assert "holodesk serve" in result.stderr  # the command that starts one
    assert "Traceback" not in result.stderr


@pytest.mark.x11
def test_a_wrong_model_name_lists_the_served_ones(home: Home, xvfb: Xvfb) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        result = run_holodesk(home, "run", "anything", "--endpoint", server.base_url,
                              "--model", "holotron-13b", xvfb=xvfb)
    assert result.returncode == 1
    assert "holotron-13b" in result.stderr
    assert "holotron" in result.stderr.replace("holotron-13b", "")


@pytest.mark.x11
def test_a_model_still_loading_says_so(home: Home, xvfb: Xvfb) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER]), loading=True) as server:
        result = run_holodesk(home, "run", "anything", "--endpoint", server.base_url, xvfb=xvfb)
    assert result.returncode == 1
    assert "loading" in result.stderr.lower()


def test_bad_settings_name_the_key_and_value(home: Home) -> None:
    result = run_holodesk(home, "config", "set", "max_steps", "lots")
    assert result.returncode == 2
    assert "max_steps" in result.stderr and "lots" in result.stderr
    settings = home.config / "holodesk" / "settings.toml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('confirm = "sometimes"\n')
    shown = run_holodesk(home, "run", "anything")
    assert shown.returncode == 2
    assert "confirm" in shown.stderr and "sometimes" in shown.stderr
    assert "Traceback" not in shown.stderr


def test_config_set_refuses_an_everyday_stop_hotkey_and_a_stored_one_falls_back(
    home: Home,
) -> None:
    refused = run_holodesk(home, "config", "set", "stop_hotkey", "ctrl+c")
    assert refused.returncode == 2
    assert "stop_hotkey" in refused.stderr and "all day" in refused.stderr
    settings = home.config / "holodesk" / "settings.toml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('stop_hotkey = "ctrl+c"\n')
    shown = run_holodesk(home, "config", "show")
    assert shown.returncode == 0, shown.stderr
    assert "ctrl+alt+shift+escape" in shown.stdout
    assert "WARNING" in shown.stderr and "is used instead" in shown.stderr


def test_config_set_then_show(home: Home) -> None:
    assert run_holodesk(home, "config", "set", "confirm", "always").returncode == 0
    assert run_holodesk(home, "config", "set", "endpoint", "http://10.1.2.3:9000").returncode == 0
    shown = run_holodesk(home, "config", "show")
    assert shown.returncode == 0
    assert "always" in shown.stdout
    assert "http://10.1.2.3:9000/v1" in shown.stdout


def test_config_get_prints_the_value_in_effect_for_scripts(home: Home) -> None:
    assert run_holodesk(home, "config", "get", "max_steps").stdout == "30\n"  # the default
    assert run_holodesk(home, "config", "set", "max-steps", "12").returncode == 0
    assert run_holodesk(home, "config", "get", "max-steps").stdout == "12\n"
    assert run_holodesk(home, "config", "get", "model").stdout == "\n"  # none: from the server
    assert run_holodesk(home, "config", "set", "only_in", "firefox, xterm").returncode == 0
    assert run_holodesk(home, "config", "get", "only_in").stdout == "firefox,xterm\n"
    overridden = run_holodesk(home, "config", "get", "max_steps",
                              env={"HOLODESK_MAX_STEPS": "7"})
    assert overridden.stdout == "7\n"
    unknown = run_holodesk(home, "config", "get", "max_stepz")
    assert unknown.returncode == 2 and "unknown setting 'max_stepz'" in unknown.stderr
    assert unknown.stdout == ""


def test_config_get_never_prints_the_api_key(home: Home) -> None:
    key = "sk-never-printed-0123456789abcdef"
    assert run_holodesk(home, "config", "set", "api_key", stdin=key + "\n").returncode == 0
    shown = run_holodesk(home, "config", "get", "api_key")
    assert shown.returncode == 2
    assert "never printed" in shown.stderr and "stored in the keyring" in shown.stderr
    assert key not in shown.stdout + shown.stderr


def test_config_unset_returns_a_setting_to_its_default(home: Home) -> None:
    assert run_holodesk(home, "config", "set", "confirm", "always").returncode == 0
    assert run_holodesk(home, "config", "set", "max_steps", "12").returncode == 0
    unset = run_holodesk(home, "config", "unset", "confirm")
    assert unset.returncode == 0, unset
    assert "back to its default (risky)" in unset.stdout
    assert run_holodesk(home, "config", "get", "confirm").stdout == "risky\n"
    assert run_holodesk(home, "config", "get", "max_steps").stdout == "12\n"  # untouched
    saved = (home.config / "holodesk" / "settings.toml").read_text()
    assert "confirm" not in saved and "max_steps = 12" in saved
    still = run_holodesk(home, "config", "unset", "max_steps", env={"HOLODESK_MAX_STEPS": "7"})
    assert "HOLODESK_MAX_STEPS in the environment still sets it to 7" in still.stdout
    bad = run_holodesk(home, "config", "unset", "nonsense")
    assert bad.returncode == 2 and "unknown setting" in bad.stderr


def test_config_unset_api_key_forgets_it(home: Home) -> None:
    assert run_holodesk(home, "config", "set", "api_key", stdin="sk-forget-me-0123456789\n"
                        ).returncode == 0
    assert "stored in the keyring" in run_holodesk(home, "config", "show").stdout
    forgot = run_holodesk(home, "config", "unset", "api_key")
    assert forgot.returncode == 0 and "api_key forgotten" in forgot.stdout
    assert "none stored" in run_holodesk(home, "config", "show").stdout


@pytest.mark.parametrize("task", ["", "   ", "\n\t"])
def test_an_empty_task_is_refused_before_anything_starts(home: Home, task: str) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        result = run_holodesk(home, "run", task, "--endpoint", server.base_url)
    assert result.returncode == 2, result
    assert "the task is empty" in result.stderr and "Fix: say what to do" in result.stderr
    assert not server.requests
    assert "no runs yet" in run_holodesk(home, "log", "list").stdout


def test_the_readmes_log_examples_work_with_several_runs_a_day(
    home: Home, tmp_path: Path
) -> None:
    from app.store import ActionLog

    with ActionLog.open(home.data / "holodesk" / "holodesk.db") as log:
        for task in ("the first task", "the second task"):
            run = log.start_run(task, "http://127.0.0.1:8000/v1", "holotron", {})
            log.finish_run(run.id, "answered", "done")
    day = run.id[:8]
    by_date = run_holodesk(home, "log", "show", day)  # what the README no longer shows
    assert by_date.returncode == 2 and "matches several runs" in by_date.stderr
    shown = run_holodesk(home, "log", "show", "last")
    assert shown.returncode == 0 and "task: the second task" in shown.stdout
    exported = run_holodesk(home, "log", "export", "last", "-o", str(tmp_path / "runs"))
    assert exported.returncode == 0
    assert (tmp_path / "runs" / f"holodesk-run-{run.id}" / "run.jsonl").exists()


def test_the_log_of_a_new_user_is_empty_and_unknown_runs_are_refused(home: Home) -> None:
    listed = run_holodesk(home, "log", "list")
    assert listed.returncode == 0
    missing = run_holodesk(home, "log", "show", "20990101")
    assert missing.returncode == 2
    assert "20990101" in missing.stderr


def test_the_display_check_names_wayland_and_passes_x11() -> None:
    from control.display import NoDisplayError, check_display

    check_display({"DISPLAY": ":0"}, "linux")
    check_display({}, "darwin")
    with pytest.raises(NoDisplayError, match="Wayland"):
        check_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
