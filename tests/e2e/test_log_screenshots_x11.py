"""`holodesk run` with ``log_screenshots`` off, through the session the CLI really builds: the
action log holds thumbnails and text only, and `log show` and `log export` cope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.e2e import configure, run_holodesk
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.fixtures import xvfb_fixture
from tests.support.home import Home
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

xvfb = xvfb_fixture(1280, 800)

SCRIPT = [
    {"thought": "let it load", "action": {"action": "wait", "seconds": 0}},
    {"thought": "done", "action": {"action": "answer", "text": "loaded"}},
]


def _shots(home: Home) -> list[str]:
    runs = home.data / "holodesk" / "runs"
    return sorted(p.name for p in runs.rglob("*") if p.is_file())


def test_a_run_with_log_screenshots_off_keeps_thumbnails_only(
    xvfb: Xvfb, home: Home, tmp_path: Path
) -> None:
    configure(home, log_screenshots="false")
    with FakeVLLM(ScriptedPolicy(SCRIPT)) as server:
        result = run_holodesk(home, "run", "wait for it", "--dry-run", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb)
        assert result.returncode == 0, str(result)
        # The model still saw every screenshot: only the log keeps none.
        assert [len(r.images) for r in server.requests] == [1, 2]
    assert _shots(home) == ["step-001-thumb.jpg", "step-002-thumb.jpg"]
    shown = run_holodesk(home, "log", "show", "last")
    assert shown.returncode == 0, str(shown)
    assert shown.stdout.count("thumbnail only:") == 2 and "screenshot:" not in shown.stdout
    exported = run_holodesk(home, "log", "export", "last", "-o", str(tmp_path / "export"))
    assert exported.returncode == 0, str(exported)
    folder = Path(exported.stdout.strip())
    steps = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()][1:]
    assert [(s["screenshot"], s["thumbnail"]) for s in steps] == [
        (None, "step-001-thumb.jpg"), (None, "step-002-thumb.jpg")]


def test_by_default_the_full_screenshots_are_kept(xvfb: Xvfb, home: Home) -> None:
    with FakeVLLM(ScriptedPolicy(SCRIPT)) as server:
        result = run_holodesk(home, "run", "wait for it", "--dry-run", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb)
        assert result.returncode == 0, str(result)
    assert _shots(home) == ["step-001-thumb.jpg", "step-001.jpg",
                            "step-002-thumb.jpg", "step-002.jpg"]
