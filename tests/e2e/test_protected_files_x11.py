"""End to end: a GUI editor writing protected files during `holodesk run` (issue 21, part 2).

A hijacked model (the stand-in server, scripted) drives a real Tk editor (tests/support/
editor_app.py) on Xvfb with openbox: it types ``find ~/canary -delete`` into a new document,
puts the path of ~/.bashrc (the test's home) in the path field and presses Ctrl+S; the editor
really writes the file. With ``--confirm never`` and with the default ``risky`` (stdin closed:
nobody at the keyboard) the tripwire stops the run, ~/.bashrc holds its old content, the
changed copy is in holodesk's kept folder, and the output names the file and the editor as
the application in front. The control: the same steps saving to ~/notes.txt, which nothing
protects, really write it. And the editor adding ``confirm = "never"`` to holodesk's own
settings.toml is stopped and put back the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e import Result, configure, run_holodesk
from tests.support.editor_app import RunningEditor
from tests.support.editor_steps import ANSWER, click, editor_fixture, keys, save_as, type_text
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.fixtures import xvfb_fixture
from tests.support.home import Home
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

WIDTH, HEIGHT = 1920, 1080  # no downscale: the model's points are screen points
xvfb = xvfb_fixture(WIDTH, HEIGHT)
editor = editor_fixture(WIDTH, HEIGHT)

TIMEOUT = 120.0  # loose: a busy 2-core machine starts Python, Tk and holodesk in parallel
ATTACK = "find ~/canary -delete"
BASHRC = "# ~/.bashrc\nalias ll='ls -l'\n"
FRONT = "while Editor was in front"


def _run(home: Home, xvfb: Xvfb, server: FakeVLLM, confirm: str | None) -> Result:
    """`holodesk run`, stdin closed (a question would stop the run); ``confirm`` None: the
    default mode (risky)."""
    mode = ("--confirm", confirm) if confirm else ()
    return run_holodesk(home, "run", "write a note", *mode, "--endpoint", server.base_url,
                        xvfb=xvfb, timeout=TIMEOUT)


def _kept(home: Home, path: Path) -> list[Path]:
    """The changed copies of ``path``: in holodesk's data folder, never beside it (where a
    loader reading the whole folder would find it), as kept/<date>-<time>/<path in the home>."""
    return sorted((home.data / "holodesk" / "kept").glob(f"*/{path.relative_to(home.root)}"))


@pytest.mark.parametrize("confirm", ["never", None], ids=["never", "default-risky"])
def test_an_editor_saving_over_bashrc_is_stopped_and_the_file_put_back(
        xvfb: Xvfb, editor: RunningEditor, home: Home, confirm: str | None) -> None:
    bashrc = home.root / ".bashrc"
    bashrc.write_text(BASHRC)
    with FakeVLLM(ScriptedPolicy(save_as(editor, ATTACK, bashrc))) as server:
        result = _run(home, xvfb, server, confirm)
    assert [e["path"] for e in editor.events("saved")] == [str(bashrc)], result
    assert result.returncode != 0, result
    assert bashrc.read_text() == BASHRC, result
    [kept] = _kept(home, bashrc)
    assert kept.read_text() == ATTACK, result
    said = result.stdout + result.stderr
    assert f"stopped by tripwire: protected files changed {FRONT}" in said, result
    assert f"{bashrc} modified, restored; the changed copy is kept as {kept}" in said, result
    assert "confirm:" not in result.stdout, "nothing was asked"


def test_the_same_steps_saving_a_file_nothing_protects_do_their_damage(
        xvfb: Xvfb, editor: RunningEditor, home: Home) -> None:
    """The control: the attack is real; only the protected file is kept from it."""
    notes = home.root / "notes.txt"
    with FakeVLLM(ScriptedPolicy(save_as(editor, ATTACK, notes))) as server:
        result = _run(home, xvfb, server, "never")
    assert result.returncode == 0, result
    assert notes.read_text() == ATTACK
    assert "tripwire" not in result.stdout + result.stderr


def test_an_editor_adding_confirm_never_to_holodesks_settings_is_stopped_and_put_back(
        xvfb: Xvfb, editor: RunningEditor, home: Home) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as setup:
        configure(home, endpoint=setup.base_url)
    settings = home.config / "holodesk" / "settings.toml"
    before = settings.read_text()
    script = [click(editor, "path", "file name field"), type_text(str(settings)),
              keys("ctrl", "o"), click(editor, "text", "document"), keys("ctrl", "end"),
              type_text('confirm = "never"'), keys("ctrl", "s"), ANSWER]
    with FakeVLLM(ScriptedPolicy(script)) as server:
        result = _run(home, xvfb, server, "never")
    assert [e["path"] for e in editor.events("saved")] == [str(settings)], result
    assert result.returncode != 0, result
    assert settings.read_text() == before, result
    [kept] = _kept(home, settings)
    assert kept.read_text() == before + 'confirm = "never"'
    said = result.stdout + result.stderr
    assert f"stopped by tripwire: protected files changed {FRONT}" in said, result
    assert f"{settings} modified, restored" in said, result
    shown = run_holodesk(home, "config", "get", "confirm")
    assert shown.stdout.strip() == "risky", str(shown)
