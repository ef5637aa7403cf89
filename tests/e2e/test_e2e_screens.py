"""End to end across screen sizes, downscaling, offset monitors and coordinate conventions.

The default profile speaks H's contract (points 0-1000 of the image); the pixel and 0-1
conventions are holodesk's own dialect's, so those cases name the ``legacy`` profile.

Xvfb cannot lay out two monitors side by side for mss, so a second, offset monitor is stood in
for by a region of one wide screen: the capture layer takes a rectangle as well as a monitor
index (users get that too, to confine the agent to part of the screen).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.e2e import run_holodesk
from tests.support.fake_vllm import FakeVLLM, SeeingPolicy, Target
from tests.support.home import make_home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb, xvfb_available

pytestmark = pytest.mark.x11

RED = (255, 0, 0)
BLUE = (0, 0, 255)


@dataclass(frozen=True)
class Screen:
    name: str
    size: tuple[int, int]
    app_geometry: str
    monitor: str  # the --monitor argument
    sent: tuple[int, int]  # the screenshot size the model must receive
    convention: str = "norm1000"


SCREENS = [
    Screen("1080p", (1920, 1080), "1000x660+0+0", "1", (1920, 1080)),
    Screen("1440p-downscaled", (2560, 1440), "1000x660+700+400", "1", (2048, 1152)),
    Screen("1366x768", (1366, 768), "1000x660+200+60", "1", (1366, 768)),
    Screen("offset-monitor", (3286, 1080), "1000x660+2100+80", "1366x768+1920+0", (1366, 768)),
    Screen("pixels-convention", (1920, 1080), "1000x660+400+200", "1", (1920, 1080), "pixels"),
    Screen("norm1-convention", (2560, 1440), "1000x660+100+500", "1", (2048, 1152), "norm1"),
]


@pytest.fixture(params=SCREENS, ids=[s.name for s in SCREENS])
def screen(request: pytest.FixtureRequest) -> Screen:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def display(screen: Screen) -> Iterator[Xvfb]:
    if not xvfb_available():
        pytest.skip("Xvfb is not installed (apt-get install xvfb)")
    with Xvfb(*screen.size) as server:
        yield server


def test_the_click_lands_on_the_target(screen: Screen, display: Xvfb, tmp_path: Path) -> None:
    app = RunningApp(display, tmp_path / "target", geometry=screen.app_geometry)
    try:
        policy = SeeingPolicy(
            [Target("Save button", RED), Target("Name field", BLUE, type_text="ok")],
            convention=screen.convention,  # type: ignore[arg-type]
        )
        # H's contract (the default) fixes its points to 0-1000 of the image; the other
        # conventions are holodesk's own dialect's (docs/contract.md).
        legacy = ("--profile", "legacy") if screen.convention != "norm1000" else ()
        with FakeVLLM(policy) as server:
            result = run_holodesk(
                make_home(tmp_path), "run", "press save, then write ok",
                "--confirm", "never", "--monitor", screen.monitor,
                "--convention", screen.convention, *legacy, "--endpoint", server.base_url,
                xvfb=display,
            )
            sizes = {r.images[-1].size for r in server.requests if r.images}
        assert result.returncode == 0, str(result)
        assert sizes == {screen.sent}
        assert app.wait_for(lambda: app.events("click", widget="save"), what="click on save")
        assert app.wait_for(lambda: app.text("field") == "ok", what="typed text")
    finally:
        app.stop()
