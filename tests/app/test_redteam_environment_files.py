"""Red team, issue 21 part 3: "The environment (HOLODESK_CONFIRM=never) ... apply as before: they
are set in your own process, not in a file another program can change" (docs/safety.md).

On a systemd desktop (GNOME, KDE Plasma 6, most others) the session's environment is made from
``~/.config/environment.d/*.conf``: text files a GUI editor writes, read at the next login for
every program the session starts (the desktop app's autostart entry, each terminal). The file
is in neither holodesk's folders nor the issue's protected set. Here the real generator systemd
runs for this (30-systemd-environment-d-generator) turns such a file into the environment,
and holodesk is given that environment, as the desktop would.

Through it a file-writing program sets any HOLODESK_* safety value (confirm never, a
never_touch without the password managers, a stop hotkey nobody presses, a plain-http
endpoint) with no question, or moves XDG_CONFIG_HOME so that holodesk reads settings from a
folder with no record: the person's approved values are gone. (PYTHONPATH there would load
Python into holodesk; that is beyond settings and left to the tripwire.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.settings import NEVER_TOUCH, load_settings
from control.hotkeys import DEFAULT_STOP_HOTKEY
from control.policy import ConfirmMode
from tests.support.e2e import run_holodesk
from tests.support.hand_edits import ENVIRONMENT_D_GENERATOR, session_environment
from tests.support.home import Home, isolate_home

pytestmark = pytest.mark.skipif(not ENVIRONMENT_D_GENERATOR.exists(),
                                reason="systemd's environment.d generator is not installed")


@pytest.mark.parametrize(("line", "key", "approved"), [
    ("HOLODESK_CONFIRM=never", "confirm", ConfirmMode.RISKY),
    ("HOLODESK_NEVER_TOUCH=gedit", "never_touch", NEVER_TOUCH),
    ("HOLODESK_STOP_HOTKEY=ctrl+alt+shift+f20", "stop_hotkey", DEFAULT_STOP_HOTKEY),
    ("HOLODESK_PLAIN_HTTP_OK=http://203.0.113.7:8000/v1", "plain_http_ok", ()),
])
def test_a_safety_value_from_an_environment_d_file_is_not_applied_unasked(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, line: str, key: str,
        approved: Any) -> None:
    home = isolate_home(monkeypatch, tmp_path)
    session = session_environment(home, line + "\n")
    assert line.split("=", 1)[0] in session  # the desktop hands it to every program
    settings = load_settings(environ=session)
    assert getattr(settings, key) == approved or settings.pending, (
        f"{key} = {getattr(settings, key)!r} from a file, applied with nothing asked")


def test_xdg_config_home_moved_by_an_environment_d_file_keeps_the_approved_values(
        home: Home) -> None:
    """The person approved confirm = always. One line in environment.d points XDG_CONFIG_HOME
    at an empty folder: holodesk finds no settings and no record there, takes itself for a
    fresh install, and says nothing."""
    assert run_holodesk(home, "config", "set", "confirm", "always").returncode == 0
    session = session_environment(home, "XDG_CONFIG_HOME=${HOME}/.cache/notes\n")
    moved = {"XDG_CONFIG_HOME": session["XDG_CONFIG_HOME"]}
    result = run_holodesk(home, "config", "get", "confirm", env=moved)
    assert result.returncode == 0, result
    assert result.stdout.strip() == "always" or "approved" in result.stderr, result
