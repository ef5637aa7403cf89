"""Start at login: the XDG autostart entry written, read back and removed (app/autostart.py)."""

from __future__ import annotations

import configparser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.autostart import (
    AT_LOGIN_OPTION,
    Autostart,
    AutostartError,
    autostart_dir,
    default_autostart,
    desktop_exec,
    entry_text,
    launch_command,
)


def parse_exec(value: str) -> list[str]:
    """The Desktop Entry spec's reading of an Exec value (string unescape, then quoting)."""
    # The string-value escapes first: \\ is one backslash (\s, \n, \t, \r likewise).
    text, i = "", 0
    escapes = {"\\": "\\", "s": " ", "n": "\n", "t": "\t", "r": "\r"}
    while i < len(value):
        if value[i] == "\\" and i + 1 < len(value) and value[i + 1] in escapes:
            text += escapes[value[i + 1]]
            i += 2
        else:
            text += value[i]
            i += 1
    args: list[str] = []
    word, quoted, started, i = "", False, False, 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\" and i + 1 < len(text) and text[i + 1] in '"`$\\':
                word += text[i + 1]
                i += 1
            elif c == '"':
                quoted = False
            else:
                word += c
        elif c == '"':
            quoted, started = True, True
        elif c == " ":
            if started:
                args.append(word)
            word, started = "", False
        else:
            assert c not in "\\\"`$", f"an unquoted reserved character in {value!r}"
            word += c
            started = True
        i += 1
    assert not quoted, f"an unclosed quote in {value!r}"
    if started:
        args.append(word)
    return [a.replace("%%", "%") for a in args]


def test_a_plain_path_is_written_as_it_is() -> None:
    assert desktop_exec(["/opt/holodesk/holodesk"]) == "/opt/holodesk/holodesk"


def test_spaces_quotes_dollars_backslashes_and_percents_survive() -> None:
    argv = ["/home/a b/.venv/bin/holodesk", 'say "hi"', "$HOME", "back\\slash", "100%", ""]
    assert parse_exec(desktop_exec(argv)) == argv


@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",),
                                      blacklist_characters="\n\r\x00")),
                min_size=1, max_size=4))
def test_any_argv_reads_back_the_same(argv: list[str]) -> None:
    assert parse_exec(desktop_exec(argv)) == argv


def test_a_line_break_is_refused() -> None:
    with pytest.raises(ValueError, match="line break"):
        desktop_exec(["/bin/holodesk", "a\nb"])


def test_the_entry_is_a_valid_desktop_file_that_runs_the_command() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(entry_text(["/opt/holo desk/holodesk"]))
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Icon"] == "holodesk"
    assert parse_exec(entry["Exec"]) == ["/opt/holo desk/holodesk"]


def test_enable_writes_disable_removes(tmp_path: Path) -> None:
    entry = Autostart(tmp_path / "config" / "autostart" / "holodesk.desktop",
                      ("/opt/holodesk/holodesk",))
    assert not entry.enabled()
    entry.disable()  # nothing there: nothing to do
    entry.set(True)
    assert entry.enabled()
    assert "Exec=/opt/holodesk/holodesk\n" in entry.path.read_text()
    entry.set(False)
    assert not entry.path.exists()
    assert not entry.enabled()


@pytest.mark.parametrize("line", ["Hidden=true", "X-GNOME-Autostart-enabled=false"])
def test_an_entry_turned_off_by_the_desktop_is_off(tmp_path: Path, line: str) -> None:
    entry = Autostart(tmp_path / "holodesk.desktop", ("/opt/holodesk/holodesk",))
    entry.enable()
    entry.path.write_text(entry.path.read_text().replace("X-GNOME-Autostart-enabled=true",
                                                         line))
    assert not entry.enabled()
    entry.enable()  # on again: rewritten
    assert entry.enabled()


def test_a_file_in_place_of_the_folder_says_so(tmp_path: Path) -> None:
    # Not a permission trick (root, as in CI, writes anywhere): a path that cannot be a folder.
    (tmp_path / "autostart").write_text("not a folder")
    entry = Autostart(tmp_path / "autostart" / "holodesk.desktop", ("/bin/true",))
    with pytest.raises(AutostartError, match="cannot write the autostart entry"):
        entry.enable()


def test_the_folder_follows_xdg_config_home(tmp_path: Path) -> None:
    assert autostart_dir({"XDG_CONFIG_HOME": str(tmp_path), "HOME": "/nope"}) == \
        tmp_path / "autostart"
    # Unset or relative: ignored, as the XDG spec says.
    assert autostart_dir({"HOME": str(tmp_path)}) == tmp_path / ".config" / "autostart"
    assert autostart_dir({"XDG_CONFIG_HOME": "rel", "HOME": str(tmp_path)}) == \
        tmp_path / ".config" / "autostart"


def test_only_xdg_platforms_have_it(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert default_autostart(env, platform="win32") is None
    assert default_autostart(env, platform="darwin") is None
    linux = default_autostart(env, platform="linux")
    assert linux is not None
    assert linux.path == tmp_path / ".config" / "autostart" / "holodesk.desktop"


def test_the_entry_tells_the_app_it_was_started_at_login(tmp_path: Path) -> None:
    """The "at login" schedules run only when the app was started by this entry."""
    entry = default_autostart({"HOME": str(tmp_path)}, platform="linux")
    assert entry is not None
    assert entry.command[-1] == AT_LOGIN_OPTION
    entry.enable()
    exec_line = next(line for line in entry.path.read_text().splitlines()
                     if line.startswith("Exec="))
    assert parse_exec(exec_line.removeprefix("Exec="))[-1] == "--at-login"
    assert entry.says_at_login()
    # An entry written before schedules existed starts the app without it.
    old = Autostart(entry.path, entry.command[:-1])
    old.enable()
    assert old.enabled() and not old.says_at_login()


def test_the_command_is_this_holodesk(tmp_path: Path) -> None:
    assert launch_command(executable="/opt/holodesk/holodesk", frozen=True) == \
        ["/opt/holodesk/holodesk"]
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    python = venv / "python"
    assert launch_command(executable=str(python), frozen=False) == \
        [str(python), "-m", "ui.main"]
    (venv / "holodesk").write_text("#!/bin/sh\n")
    assert launch_command(executable=str(python), frozen=False) == [str(venv / "holodesk")]
