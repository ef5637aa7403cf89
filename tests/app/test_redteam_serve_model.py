"""Red team, issue 21 part 3: a setting outside the safety keys that makes holodesk run code
written by another program: serve_model, served with --trust-remote-code.

The attacker is a hijacked model working a GUI text editor or file manager with the
person's file rights (create, edit, rename, delete, no terminal): files are changed here as such
a program would, outside holodesk's code (tests/support/hand_edits.py). Each test FAILS on the
code as it is: it asserts what docs/safety.md ("Safety settings") promises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.serving import serve_config
from app.settings import load_settings, set_value
from model.serving.launcher import build_command
from tests.support.hand_edits import edit_settings_by_hand
from tests.support.home import Home, isolate_home


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


def test_a_serve_model_written_by_hand_is_not_served_with_remote_code(
        home: Home, file_keyring: Any) -> None:
    """`holodesk serve` and the tray's Start server run `vllm serve MODEL --trust-remote-code`.
    With serve_model a local folder, vLLM (transformers) imports the Python files its
    config.json names (auto_map): text files an editor can write. serve_model is taken from
    the file as it is, so the next server start runs the attacker's code as the person."""
    set_value("max_steps", "40")
    folder = home.root / ".cache" / "notes"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(
        '{"model_type": "x", "auto_map": {"AutoConfig": "configuration_x.XConfig"}}',
        encoding="utf-8")
    (folder / "configuration_x.py").write_text("import os; os.system('id > ~/pwned')\n",
                                               encoding="utf-8")
    edit_settings_by_hand(serve_model=str(folder))
    argv = build_command(serve_config(load_settings()))
    assert not (str(folder) in argv and "--trust-remote-code" in argv), argv
