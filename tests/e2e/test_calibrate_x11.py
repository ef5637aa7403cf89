"""End to end: the real `holodesk calibrate` on a private Xvfb against the fake vLLM server.

The fake model really looks: it decodes the screenshot holodesk sent, finds the target's colour
and answers a click in a chosen convention. So the report naming that convention with a small
error proves the window, the capture, the prompt, the mapping and the scoring all agree.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.calibrate import TARGETS
from tests.support.e2e import Result, holodesk_argv, holodesk_env
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, SeeingPolicy, Target
from tests.support.home import REPO_ROOT, Home, make_home
from tests.support.xvfb import Xvfb, xvfb_available

pytestmark = pytest.mark.x11

WIDE = (3286, 1080)  # a 1920 px "monitor" and, right of it, a 1366x768 one (as a region)
OFFSET_MONITOR = "1366x768+1920+0"


@pytest.fixture(scope="module")
def wide() -> Iterator[Xvfb]:
    if not xvfb_available():
        pytest.skip("Xvfb is not installed (apt-get install xvfb)")
    with Xvfb(*WIDE) as server:
        yield server


def _env(home: Home, xvfb: Xvfb) -> dict[str, str]:
    env = holodesk_env(home, xvfb)
    # The real X platform: tests/conftest.py's offscreen default must not reach the window.
    env["QT_QPA_PLATFORM"] = "xcb"
    return env


def _calibrate(home: Home, xvfb: Xvfb, *args: str, timeout: float = 120.0) -> Result:
    proc = subprocess.run(holodesk_argv("calibrate", *args), env=_env(home, xvfb), cwd=REPO_ROOT,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _seeing(convention: str) -> SeeingPolicy:
    return SeeingPolicy([Target(t.description, t.rgb) for t in TARGETS],
                        convention=convention)  # type: ignore[arg-type]


def _convention_in_settings(home: Home) -> str:
    path = home.config / "holodesk" / "settings.toml"
    text = path.read_text() if path.exists() else ""
    for line in text.splitlines():
        if line.startswith("convention"):
            return line.split("=", 1)[1].strip().strip('"')
    return "norm1000 (default)"


@pytest.mark.parametrize("convention", ["norm1000", "norm1", "pixels"])
def test_the_report_names_the_models_convention(wide: Xvfb, tmp_path: Path,
                                                convention: str) -> None:
    home = make_home(tmp_path)
    with FakeVLLM(_seeing(convention)) as server:
        result = _calibrate(home, wide, "--monitor", "1", "--endpoint", server.base_url,
                            "--save")
        requests = list(server.requests)
    assert result.returncode == 0, str(result)
    assert len(requests) == len(TARGETS)
    assert {r.latest_image.size for r in requests if r.latest_image} == {(2048, 673)}
    # One click per target, asked like a run: the run's system prompt, a click-only schema.
    assert all(len(r.images) == 1 for r in requests)
    assert "computer-use agent" in requests[0].messages[0]["content"]
    schema = requests[0].schema
    assert schema is not None
    assert [v["properties"]["action"]["const"]
            for v in schema["properties"]["action"]["anyOf"]] == ["click"]
    assert f"The model uses {convention}:" in result.stdout, str(result)
    # The window and the capture agree on where every target is.
    assert "did not show in the screenshot" not in result.stdout
    median = float(result.stdout.split("median error ")[1].split(" px")[0])
    assert median <= 3.0, str(result)
    assert "Saved" in result.stdout or "already use" in result.stdout
    expected = "norm1000 (default)" if convention == "norm1000" else convention
    assert _convention_in_settings(home) == expected


def test_an_offset_monitor_region(wide: Xvfb, tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with FakeVLLM(_seeing("norm1000")) as server:
        result = _calibrate(home, wide, "--monitor", OFFSET_MONITOR, "--endpoint",
                            server.base_url, "--no-save")
        sizes = {r.latest_image.size for r in server.requests if r.latest_image}
    assert result.returncode == 0, str(result)
    assert sizes == {(1366, 768)}
    assert "1366x768+1920+0" in result.stdout
    # The top-left target of the region, in screen coordinates.
    assert "(2056, 76)" in result.stdout, str(result)
    assert "The model uses norm1000:" in result.stdout, str(result)
    assert "Not saved" not in result.stdout  # norm1000 is already the setting
    assert _convention_in_settings(home) == "norm1000 (default)"


def test_a_model_that_clicks_one_fixed_point_gets_the_warning(wide: Xvfb, tmp_path: Path) -> None:
    home = make_home(tmp_path)
    fixed = {"thought": "There.", "action": {"action": "click", "element": "it",
                                              "x": 500, "y": 500}}
    with FakeVLLM(ScriptedPolicy([fixed], repeat_last=True)) as server:
        result = _calibrate(home, wide, "--monitor", "1", "--endpoint", server.base_url,
                            "--save")
    assert result.returncode == 1, str(result)
    assert "WARNING: the model's clicks miss under every convention" in result.stdout
    assert "Do not trust this model's clicks" in result.stdout
    assert "Saved" not in result.stdout
    assert _convention_in_settings(home) == "norm1000 (default)"


def test_the_server_down_is_said_before_any_window(wide: Xvfb, tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with FakeVLLM(_seeing("norm1000")) as server:
        url = server.base_url
    result = _calibrate(home, wide, "--endpoint", url, "--no-save")
    assert result.returncode == 1, str(result)
    assert "No model server answers" in result.stderr
    assert "Fix:" in result.stderr


def test_ctrl_c_stops_cleanly(wide: Xvfb, tmp_path: Path) -> None:
    home = make_home(tmp_path)
    workdir = tmp_path / "proc"
    workdir.mkdir()
    with FakeVLLM(_seeing("norm1000")) as server:
        server.delay = 30.0
        proc = subprocess.Popen(
            holodesk_argv("calibrate", "--endpoint", server.base_url, "--no-save"),
            env=_env(home, wide), cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
            stdout=(workdir / "stdout").open("w"), stderr=(workdir / "stderr").open("w"),
            text=True,
        )
        try:
            server.wait_for_request(1, timeout=60)  # in flight: Ctrl+C must cut it
            os.kill(proc.pid, signal.SIGINT)
            code = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)
        disconnects = server.disconnects
    out = (workdir / "stdout").read_text()
    assert code == 1, out + (workdir / "stderr").read_text()
    assert "Stopped early" in out
    assert "Nothing saved" in out
    assert disconnects >= 1  # the request in flight was cut, not waited for
    # The window is gone with the process; nothing of holodesk is left on the display.
    tree = subprocess.run(["xwininfo", "-root", "-tree"], env=wide.env(), capture_output=True,
                          text=True, check=True).stdout
    assert "holodesk calibration" not in tree


def test_on_hs_contract_each_target_is_asked_as_hs_localization(wide: Xvfb,
                                                                tmp_path: Path) -> None:
    """`calibrate --profile holotron-12b`: one single-turn localization request per target
    (temperature 0, the point schema, no thinking), and the points land (issue 22)."""
    home = make_home(tmp_path)
    with FakeVLLM(_seeing("norm1000")) as server:
        result = _calibrate(home, wide, "--monitor", "1", "--endpoint", server.base_url,
                            "--profile", "holotron-12b", "--no-save")
        requests = list(server.requests)
    assert result.returncode == 0, str(result)
    assert len(requests) == len(TARGETS)
    first = requests[0]
    assert first.schema is not None and first.schema.get("title") == "VisualLocalizerOutput"
    assert first.temperature == 0.0
    assert [m["role"] for m in first.messages] == ["user"]
    assert "The model uses norm1000:" in result.stdout, str(result)
    median = float(result.stdout.split("median error ")[1].split(" px")[0])
    assert median <= 3.0, str(result)
