"""The demo's launcher and settings, without a display: the practice window's command line
(also in the frozen app), the route in ui/main.py, and settings that stay the person's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.demo.look import PRACTICE_WM_CLASS
from app.demo.practice import PRACTICE_OPTION, PracticeState, practice_command, practice_env
from app.demo.run import demo_settings
from app.demo.server import DEMO_MODEL_NAME
from app.demo.window_process import MARGIN
from app.settings import load_settings, save_settings, set_values
from model.coords import Rect
from tests.support.home import isolate_home


def test_the_command_line_runs_holodesk_itself(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    assert practice_command(state, frozen=True) == [
        sys.executable, PRACTICE_OPTION, "--state", str(state)]
    assert practice_command(state, frozen=False) == [
        sys.executable, "-P", "-m", "ui.main", PRACTICE_OPTION, "--state", str(state)]


def test_ui_main_routes_the_hidden_option_to_the_practice_window() -> None:
    from ui.main import main

    with pytest.raises(SystemExit) as exit_info:  # the practice window's own parser
        main([PRACTICE_OPTION, "--no-such-option"])
    assert exit_info.value.code == 2


def test_the_window_is_always_an_x11_one() -> None:
    env = practice_env({"QT_QPA_PLATFORM": "wayland", "PATH": "/bin"})
    if sys.platform.startswith("linux"):
        assert env["QT_QPA_PLATFORM"] == "xcb"
    assert env["PATH"] == "/bin"


def test_a_missing_or_half_written_state_is_none(tmp_path: Path) -> None:
    assert PracticeState.read(tmp_path / "none.json") is None
    (tmp_path / "half.json").write_text('{"ready": tr')
    assert PracticeState.read(tmp_path / "half.json") is None


def test_demo_settings_are_the_persons_with_the_demos_on_top(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, file_keyring: object) -> None:
    isolate_home(monkeypatch, tmp_path)
    # The person's own: a stop hotkey written by hand would wait for their approval.
    set_values({"confirm": "always", "stop_hotkey": "ctrl+alt+k",
                "endpoint": "https://gpu.example:8000/v1"}, source="test")
    person = load_settings()
    state = PracticeState(ready=True, window=Rect(300, 200, 760, 520), steps={}, done=False,
                          events=())
    demo = demo_settings(person, "http://127.0.0.1:4321/v1", state, confirm="never")
    assert demo.endpoint == "http://127.0.0.1:4321/v1"
    assert demo.model == DEMO_MODEL_NAME
    assert demo.only_in == (PRACTICE_WM_CLASS,)
    assert demo.monitor == f"{760 + 2 * MARGIN}x{520 + 2 * MARGIN}+{300 - MARGIN}+{200 - MARGIN}"
    assert str(demo.confirm) == "never"
    assert demo.stop_hotkey == "ctrl+alt+k"  # the person's own stop still stops it
    assert str(demo_settings(person, "http://127.0.0.1:1/v1", state).confirm) == "always"
    save_settings(demo)  # even saved by mistake, the demo's values are not written
    assert load_settings() == person


def test_a_window_that_cannot_open_is_told_and_nothing_is_left(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No display at all: the window's process exits, the demo says so and leaves nothing."""
    from app.demo.practice import PracticeWindow
    from app.demo.window_process import PracticeWindowError

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    window = PracticeWindow(tmp_path)
    with pytest.raises(PracticeWindowError, match="did not open"):
        window.start(timeout=120)
    assert not window.alive
