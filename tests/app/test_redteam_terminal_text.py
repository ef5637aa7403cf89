"""Red team, issue 21 part 3: text another program wrote into holodesk's files reaches the
person's terminal raw. `config approve` and the run's question pass every line through
app.visible ("a file any program wrote: no escape sequences"), but `holodesk automation list`
prints each task as the file has it, and `holodesk config show` prints the value waiting for
approval ("not applied: settings.toml says ...") as the file has it.

With ESC sequences a task line can erase the lines above it (the footnote saying a mode was
changed outside holodesk, the CONFIRM column) or, with OSC 52, put a command on the clipboard
of the terminals that allow it (kitty, foot, alacritty, wezterm by default), ready for the
next paste. Each test failed before its fix and now pins it.
"""

from __future__ import annotations

import json

from tests.support.e2e import run_holodesk
from tests.support.home import Home

#: OSC 52 (the clipboard becomes "rm -rf ~\n"), then cursor up and erase line, twice.
HIDDEN = "\x1b]52;c;cm0gLXJmIH4K\x07" + "\x1b[1A\x1b[2K" * 2


def test_automation_list_shows_a_task_from_the_file_without_escape_sequences(
        home: Home) -> None:
    folder = home.config / "holodesk"
    folder.mkdir(parents=True)
    (folder / "automations.toml").write_text(
        'version = 2\n\n[[automation]]\nname = "notes"\n'
        f'task = {json.dumps("file my notes" + HIDDEN)}\nconfirm = "risky"\n',
        encoding="utf-8")
    result = run_holodesk(home, "automation", "list")
    assert result.returncode == 0, result
    assert "\x1b" not in result.stdout, repr(result.stdout)


def test_config_show_shows_a_value_waiting_for_approval_without_escape_sequences(
        home: Home) -> None:
    folder = home.config / "holodesk"
    folder.mkdir(parents=True)
    (folder / "settings.toml").write_text(
        f"never_touch = [{json.dumps('notes' + HIDDEN)}]\n", encoding="utf-8")
    result = run_holodesk(home, "config", "show")
    assert result.returncode == 0, result
    assert "not applied" in result.stdout
    assert "\x1b" not in result.stdout, repr(result.stdout)
