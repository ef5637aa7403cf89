"""Red team, end to end (issue 21 part 3): confirm = never from a file another program wrote,
~/.config/environment.d/60-notes.conf, reaches the person's next ordinary `holodesk run` through
the session's environment (made by systemd's own generator), and the risky click on a button
labelled Delete is done with no question.

Compare tests/e2e/test_safety_settings_x11.py: the same line written into settings.toml is not
applied and the click is asked. This test FAILS on the code as it is (the click happens).
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

pytestmark = [pytest.mark.x11,
              pytest.mark.skipif(not ENVIRONMENT_D_GENERATOR.exists(),
                                 reason="systemd's environment.d generator is not installed")]

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


def test_confirm_never_from_an_environment_d_file_is_asked_before_the_risky_click(
        xvfb: Xvfb, app: RunningApp, home: Home) -> None:
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
