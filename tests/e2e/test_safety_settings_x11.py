"""End to end: holodesk's own settings written by something other than holodesk (issue 21).

The attack: a hijacked model, working a text editor during one run, adds ``confirm = "never"``
to settings.toml and saves. The person's next ordinary ``holodesk run`` must still ask before a
risky step. Here the file is written as an editor would (a line added to what holodesk wrote),
then a real ``holodesk run`` on Xvfb, stdin closed (nobody to answer), gets a scripted model that
clicks the Tk window's red button, labelled Delete. The control shows the click is real: after
``holodesk config set confirm never`` (the person's own way) the same run clicks.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.e2e import configure, run_holodesk
from tests.support.fake_vllm import FakeVLLM, SeeingPolicy, Target
from tests.support.fixtures import xvfb_fixture
from tests.support.hand_edits import ENVIRONMENT_D_GENERATOR, session_environment
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

RED = (255, 0, 0)  # the target app's first button, labelled Delete here
TASK = "tidy up the list"

xvfb = xvfb_fixture(1920, 1080)


@pytest.fixture
def app(xvfb: Xvfb, tmp_path: Path) -> Iterator[RunningApp]:
    subprocess.run(["xdotool", "mousemove", "960", "900"], env=xvfb.env(), check=True)
    running = RunningApp(xvfb, tmp_path / "target", geometry="1000x660+0+0",
                         extra_args=("--label", "save=Delete"))
    yield running
    running.stop()


def _settings(home: Home) -> Path:
    return home.config / "holodesk" / "settings.toml"


def _run(home: Home, xvfb: Xvfb) -> tuple[str, str, int]:
    with FakeVLLM(SeeingPolicy([Target("Delete button", RED)])) as server:
        result = run_holodesk(home, "run", TASK, "--endpoint", server.base_url, xvfb=xvfb)
    return result.stdout, result.stderr, result.returncode


def test_confirm_never_written_by_an_editor_is_not_applied_and_the_step_is_asked(
        xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    configure(home, max_steps="5")  # the file as holodesk writes it
    path = _settings(home)
    path.write_text(path.read_text(encoding="utf-8") + 'confirm = "never"\n', encoding="utf-8")
    mark = app.mark()
    out, err, code = _run(home, xvfb)
    assert "confirm = never in the file; not applied, risky (approved) is used" in err, err
    assert "holodesk config approve" in err
    assert "confirm: click" in out and "Delete" in out  # asked; no answer on a closed stdin
    assert code != 0
    app.sync()  # whatever the ended run sent has arrived now
    assert not app.events_since(mark, "click")


def test_the_control_config_set_confirm_never_runs_the_click(
        xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    configure(home, max_steps="5", confirm="never")
    out, err, code = _run(home, xvfb)
    assert code == 0, f"{out}\n{err}"
    assert "not applied" not in err and "confirm:" not in out
    assert app.wait_for(lambda: app.events("click", widget="save"), what="the click on Delete")


@pytest.mark.skipif(not ENVIRONMENT_D_GENERATOR.exists(),
                    reason="systemd's environment.d generator is not installed")
def test_confirm_never_from_an_environment_d_file_is_asked_before_the_risky_click(
        xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    """Red team (issue 21 part 3): the same line in ~/.config/environment.d/, reaching the
    next run through the session's environment (made by systemd's own generator)."""
    configure(home, max_steps="5")  # an ordinary install: risky, approved by holodesk
    session = session_environment(home, "HOLODESK_CONFIRM=never\n")
    mark = app.mark()
    with FakeVLLM(SeeingPolicy([Target("Delete button", RED)])) as server:
        result = run_holodesk(home, "run", TASK, "--endpoint", server.base_url, xvfb=xvfb,
                              env={"HOLODESK_CONFIRM": session["HOLODESK_CONFIRM"]})
    app.sync()  # whatever the run sent has arrived now
    clicked = app.events_since(mark, "click")
    assert not clicked, f"the Delete click was done with no question:\n{result}"
    assert "confirm: click" in result.stdout, result
