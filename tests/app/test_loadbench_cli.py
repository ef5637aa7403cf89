"""`holodesk bench` through the real CLI (a subprocess in an isolated home) against FakeVLLM."""

from __future__ import annotations

import csv
import io
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from app.store import ActionLog, StepRecord
from model.loadbench.bench import CSV_COLUMNS
from tests.support.e2e import Result, holodesk_argv, holodesk_env
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, find_color, screenshot
from tests.support.home import REPO_ROOT, Home, isolate_home, make_home

STEP = {
    "note": "",
    "thought": "Press the OK button.",
    "action": {"action": "click", "element": "OK button", "x": 500, "y": 400},
}


@pytest.fixture
def fake() -> Iterator[FakeVLLM]:
    with FakeVLLM(ScriptedPolicy([STEP], repeat_last=True)) as server:
        server.decode_images = False
        server.keep_requests = False
        yield server


def bench_env(home: Home) -> dict[str, str]:
    env = holodesk_env(home)
    env["HOLODESK_MAX_SIDE"] = "1366"  # the smallest frames settings allow: less work for 2 cores
    return env


def bench(home: Home, *args: str, timeout: float = 240.0) -> Result:
    proc = subprocess.run(
        holodesk_argv("bench", *args),
        env=bench_env(home),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def read_csv(folder: Path) -> list[dict[str, str]]:
    (path,) = folder.glob("bench-*.csv")
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == CSV_COLUMNS
        return list(reader)


def test_bench_prints_a_table_and_writes_csv_and_chart(tmp_path: Path, fake: FakeVLLM) -> None:
    home = make_home(tmp_path)
    out = tmp_path / "out"
    result = bench(
        home, "--levels", "1,2", "--steps", "2", "--endpoint", fake.base_url,
        "--reference", "1000@2", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result
    assert "total tok/s" in result.stdout and "step p95" in result.stdout
    assert "x the reference 1,000" in result.stdout
    assert " tok/s at 2 = " in result.stdout
    # The capacity plan's prediction for this run's mean step, next to the measured knee
    # (two levels of a stand-in that answers at once: still rising, or flat at 1).
    assert "plan (holodesk serve --plan): " in result.stdout
    assert "tokens (this run's mean step) fit " in result.stdout
    assert "measured knee: " in result.stdout
    rows = read_csv(out)
    assert [r["concurrency"] for r in rows] == ["1", "2"]
    assert [r["steps"] for r in rows] == ["2", "4"]
    assert all(r["errors"] == "0" for r in rows)
    # The server's usage, all of it: steps mode counts every step.
    assert sum(int(r["prompt_tokens"]) for r in rows) == fake.served_prompt_tokens
    assert sum(int(r["completion_tokens"]) for r in rows) == fake.served_completion_tokens
    assert fake.served == 6
    (png,) = out.glob("bench-*.png")
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size == (1200, 900)


def test_bench_defaults_to_the_data_folder(tmp_path: Path, fake: FakeVLLM) -> None:
    home = make_home(tmp_path)
    result = bench(home, "--levels", "1", "--steps", "1", "--endpoint", fake.base_url)
    assert result.returncode == 0, result
    folder = home.data / "holodesk" / "bench"
    assert len(read_csv(folder)) == 1
    assert str(folder) in result.stdout


def test_failing_steps_are_reported_and_the_exit_code_says_so(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with FakeVLLM(ScriptedPolicy([STEP], repeat_last=True), image_limit=1) as fake:
        fake.decode_images = False
        result = bench(
            home, "--levels", "1,2", "--steps", "1", "--endpoint", fake.base_url,
            "--out", str(tmp_path / "out"),
        )  # fmt: skip
    assert result.returncode == 1, result
    assert "level 2: 2 failed step(s)" in result.stdout
    assert "at most 1 image(s)" in result.stdout
    assert "--limit-mm-per-prompt" in result.stdout
    assert "some steps failed" in result.stderr
    rows = read_csv(tmp_path / "out")
    assert [r["errors"] for r in rows] == ["1", "2"]
    assert "at most 1 image(s)" in rows[0]["first_error"]


def test_no_server_fails_early_with_the_fix(tmp_path: Path, fake: FakeVLLM) -> None:
    home = make_home(tmp_path)
    url = fake.base_url
    fake.stop()
    result = bench(home, "--levels", "1", "--steps", "1", "--endpoint", url, timeout=60)
    assert result.returncode == 1, result
    assert "No model server answers" in result.stderr
    assert "Fix:" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--levels", "0"),
        ("--levels", "1,x"),
        ("--reference", "lots"),
        ("--steps", "0"),
        ("--duration", "0"),
        ("--duration", "5", "--steps", "2"),
        ("--images", "log"),  # an empty action log
    ],
)
def test_bad_arguments_are_usage_errors(
    tmp_path: Path, fake: FakeVLLM, args: tuple[str, ...]
) -> None:
    home = make_home(tmp_path)
    result = bench(home, *args, "--endpoint", fake.base_url, timeout=60)
    assert result.returncode == 2, result
    assert fake.chat_requests == 0


def seed_log(home: Home, colors: list[tuple[int, int, int]]) -> None:
    """Runs in the action log whose screenshots are each one colour block on grey."""
    with ActionLog.open() as log:
        run = log.start_run("seeded", "http://127.0.0.1:1/v1", "holotron", {})
        for step_no, color in enumerate(colors, start=1):
            image = screenshot((1600, 900), [((400, 200, 1200, 700), color)])
            buffer = io.BytesIO()
            image.save(buffer, format="JPEG", quality=90)
            shot, _ = log.save_screenshot(run.id, step_no, buffer.getvalue(), "image/jpeg")
            log.add_step(
                StepRecord(run_id=run.id, step_no=step_no, started_at=time.time(),
                           screenshot_path=str(shot))
            )  # fmt: skip
        log.finish_run(run.id, "answered")


def test_log_images_are_recent_screenshots_reencoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolate_home(monkeypatch, tmp_path)  # this process seeds the same home
    colors = [(220, 30, 30), (30, 160, 40), (30, 60, 220), (200, 180, 20)]
    seed_log(home, colors)
    with FakeVLLM(ScriptedPolicy([STEP], repeat_last=True)) as fake:
        result = bench(
            home, "--levels", "1", "--steps", "2", "--images", "log", "--endpoint",
            fake.base_url, "--out", str(tmp_path / "out"),
        )  # fmt: skip
        requests = list(fake.requests)
    assert result.returncode == 0, result
    assert len(requests) == 2
    seen: set[tuple[int, int, int]] = set()
    for request in requests:
        assert len(request.images) == 3
        for sent in request.images:
            # Downscaled to the settings' max_side (1366) like a run sends them.
            assert sent.size == (1366, 768)
            assert sent.mime == "image/jpeg"
            seen |= {c for c in colors if find_color(sent.image, c, min_pixels=1000)}
    assert len(seen) >= 3


def test_ctrl_c_stops_and_reports_the_finished_levels(tmp_path: Path, fake: FakeVLLM) -> None:
    home = make_home(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        holodesk_argv(
            "bench", "--levels", "1,2", "--duration", "1", "--warmup", "20",
            "--endpoint", fake.base_url, "--out", str(out),
        ),
        env=bench_env(home),
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "stderr").open("w"),
        text=True,
    )  # fmt: skip
    try:
        # Level 1 ends after its one-second window; interrupt during level 2.
        deadline = time.monotonic() + 120
        while "level 2: " not in (tmp_path / "stderr").read_text():
            assert proc.poll() is None, (tmp_path / "stderr").read_text()
            assert time.monotonic() < deadline, "level 2 never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = (tmp_path / "stderr").read_text()
    assert proc.returncode == 1, stdout + stderr
    assert "stopped: the levels above are the ones that finished" in stderr
    rows = read_csv(out)
    assert [r["concurrency"] for r in rows] == ["1"]
    assert int(rows[0]["steps"]) > 0
