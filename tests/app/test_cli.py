"""The command line without a display: clear errors and exit codes, settings, the empty log."""

from __future__ import annotations

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
