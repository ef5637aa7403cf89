"""`holodesk config set api_key`: the key is read without echo or from stdin, never from argv
(every local user sees argv in `ps`, and the shell keeps it in its history)."""

from __future__ import annotations

from pathlib import Path

from tests.support.e2e import run_holodesk
from tests.support.home import Home

KEY = "sk-holodesk-argv-7d1e0c5a"


def _stored(home: Home) -> bool:
    return any(KEY.encode() in p.read_bytes() for p in Path(home.keyring).rglob("*")
               if p.is_file())


def test_a_key_on_the_command_line_is_refused_with_how_to_give_it(home: Home) -> None:
    result = run_holodesk(home, "config", "set", "api_key", KEY)
    assert result.returncode == 2
    assert KEY not in result.stdout + result.stderr  # never repeated
    assert "not taken from the command line" in result.stderr
    assert "holodesk config set api_key" in result.stderr  # the fix names the way that works
    assert "history" in result.stderr
    assert not _stored(home)


def test_the_key_is_read_from_stdin_when_left_out(home: Home) -> None:
    result = run_holodesk(home, "config", "set", "api_key", stdin=KEY + "\n")
    assert result.returncode == 0, str(result)
    assert KEY not in result.stdout + result.stderr
    assert _stored(home)
    shown = run_holodesk(home, "config", "show")
    assert "stored in the keyring" in shown.stdout


def test_the_dash_still_reads_stdin_and_other_keys_need_a_value(home: Home) -> None:
    assert run_holodesk(home, "config", "set", "api_key", "-", stdin=KEY + "\n").returncode == 0
    assert _stored(home)
    missing = run_holodesk(home, "config", "set", "max_steps")
    assert missing.returncode == 2
    assert "needs a value" in missing.stderr and "Fix:" in missing.stderr
