"""End to end: `holodesk eval`'s two-window task (copy-order-number) stops its run when either
of its windows moves, on Xvfb with openbox, the real CLI as a subprocess.

The capture is the rectangle holding both windows as they opened (app/eval_windows.py): once
one of them moved, what shows there is partly the desktop behind it, so the run stops before
the next screenshot, whichever window it was (as for one window, tests/e2e/
test_redteam7_eval_escape_x11.py). The model here drags a window by its title bar, which the
capture's top margin shows and which only_in counts as the window.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.e2e import run_holodesk
from tests.support.fake_policies import ScriptedPolicy
from tests.support.fake_vllm import FakeVLLM
from tests.support.fixtures import xvfb_fixture
from tests.support.home import Home
from tests.support.wm import WindowManager
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1280, 800)


@pytest.fixture(autouse=True)
def _desktop(openbox: WindowManager, xvfb: Xvfb) -> Iterator[None]:
    subprocess.run(["xdotool", "mousemove", "40", "600"], env=xvfb.env(), check=True)
    yield


def _step(action: dict[str, Any]) -> dict[str, Any]:
    return {"thought": "move this window", "action": action}


# norm1000 points of the captured image (both windows side by side, the order's on the left):
# y=15 is in the top margin, over the lower part of the title bars; y=700 is inside both
# windows' client areas, so the drop lands in the dragged window itself.
@pytest.mark.parametrize(("window", "x"), [("the order window", 200), ("the form", 800)])
def test_either_window_moving_stops_the_run(xvfb: Xvfb, home: Home, window: str,
                                            x: int) -> None:
    script = ScriptedPolicy([
        _step({"action": "drag", "element": f"{window}'s title bar", "x": x, "y": 15,
               "to_x": x, "to_y": 700}),
        _step({"action": "answer", "text": "done"})], repeat_last=True)
    with FakeVLLM(script) as server:
        result = run_holodesk(home, "eval", "--endpoint", server.base_url, "--profile",
                              "legacy", "--tasks", "copy-order-number", "--max-steps", "3",
                              xvfb=xvfb, timeout=300)
        asked = len(server.requests)
    assert result.returncode == 1, str(result)
    assert "the task's window moved" in result.stdout, str(result)
    assert asked == 1, str(result)  # stopped before the next screenshot was sent
