"""The load generator (model/loadbench/bench.py) run in-process against the fake vLLM server.

Real parts: real HTTP to FakeVLLM on 127.0.0.1, the real client, prompt builder and schema.
No timing assertion beyond orderings the fake's latency model makes certain.
"""

from __future__ import annotations

import csv
import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from model.client import ClientConfig
from model.loadbench.bench import (
    CSV_COLUMNS,
    BenchConfig,
    BenchReport,
    LevelResult,
    LogFrames,
    Reference,
    compare,
    format_errors,
    format_table,
    knee,
    mean_session_tokens,
    parse_levels,
    percentile,
    run_bench,
    write_csv,
)
from model.loadbench.frames import GeneratedFrames, Screenshot, encode_jpeg
from model.loadbench.plot import render_chart, save_chart
from model.structured import step_output_schema
from tests.support.fake_vllm import ChatRequest, FakeVLLM, ScriptedPolicy
from tests.support.fake_vllm_tokens import image_tokens

STEP = {
    "note": "",
    "thought": "Press the OK button.",
    "action": {"action": "click", "element": "OK button", "x": 500, "y": 400},
}
SMALL = (320, 180)  # small frames keep 2 cores free for the server and the sessions


@pytest.fixture
def fake() -> Iterator[FakeVLLM]:
    with FakeVLLM(ScriptedPolicy([STEP], repeat_last=True)) as server:
        server.decode_images = False
        server.keep_requests = False
        yield server


def bench_config(fake: FakeVLLM, **changes: object) -> BenchConfig:
    values: dict[str, object] = {
        "client": ClientConfig(base_url=fake.base_url, request_timeout=60.0),
        "levels": (1, 2, 4),
        "duration": None,
        "steps": 2,
        "error_backoff": 0.01,
    }
    values.update(changes)
    return BenchConfig(**values)  # type: ignore[arg-type]


def frames() -> GeneratedFrames:
    return GeneratedFrames(*SMALL)


# --------------------------------------------------------------------------- the requests


def test_each_step_is_a_real_agent_request() -> None:
    with FakeVLLM(ScriptedPolicy([STEP], repeat_last=True)) as fake:
        config = bench_config(fake, levels=(1,), steps=4, task_steps=5)
        report = run_bench(config, frames())
        requests: list[ChatRequest] = list(fake.requests)
    assert report.ok, format_errors(report)
    assert len(requests) == 4
    schema = step_output_schema()
    for request in requests:
        assert request.stream and request.include_usage
        assert request.body["structured_outputs"] == {"json": schema}
        assert "guided_json" not in request.body
        assert request.max_tokens == 1024
        assert request.messages[0]["role"] == "system"
        assert all(image.size == SMALL for image in request.images)
    # The one session starts at step 3 (three screenshots from the first request), runs to the
    # end of its 5-step task, then starts a new task at step 1 with one screenshot.
    assert [len(r.images) for r in requests] == [3, 3, 3, 1]
    assert "This is step 3." in requests[0].text
    assert "This is step 5." in requests[2].text
    assert "This is step 1." in requests[3].text
    # The model's answers come back as assistant turns: the history grows.
    answers = [
        sum(1 for m in r.messages if m["role"] == "assistant" and "OK button" in m["content"])
        for r in requests
    ]
    assert answers == [0, 1, 2, 0]
    # Every new screenshot is new; earlier ones are re-sent byte-identical.
    newest = [_image_urls(r)[-1] for r in requests]
    assert len(set(newest)) == len(newest)
    assert _image_urls(requests[1])[:2] == _image_urls(requests[0])[1:]


def _image_urls(request: ChatRequest) -> list[str]:
    return [
        part["image_url"]["url"]
        for m in request.messages
        if isinstance(m["content"], list)
        for part in m["content"]
        if part.get("type") == "image_url"
    ]


# --------------------------------------------------------------------------- levels


def test_levels_count_steps_and_usage_totals_match_the_server(fake: FakeVLLM) -> None:
    report = run_bench(bench_config(fake), frames())
    assert report.ok, format_errors(report)
    assert not report.interrupted
    assert report.model == "holotron"
    assert [lv.concurrency for lv in report.levels] == [1, 2, 4]
    assert [lv.steps for lv in report.levels] == [2, 4, 8]
    assert all(lv.errors == 0 and lv.seconds > 0 for lv in report.levels)
    assert fake.served == 14
    assert sum(lv.prompt_tokens for lv in report.levels) == fake.served_prompt_tokens
    assert sum(lv.completion_tokens for lv in report.levels) == fake.served_completion_tokens
    for lv in report.levels:
        # Three images per request, each counted by its tiles as the model's processor cuts it.
        assert lv.mean_prompt_tokens is not None
        assert lv.mean_prompt_tokens > 3 * image_tokens(*SMALL)
        assert lv.total_tokens_per_s > lv.generated_tokens_per_s > 0
        assert lv.steps_per_s > 0
        assert lv.ttft_p50 is not None and lv.latency_p50 is not None
        assert lv.ttft_p50 <= lv.latency_p50 <= (lv.latency_p95 or 0)
    table = format_table(report)
    assert "total tok/s" in table and "TTFT p50" in table
    assert len(table.splitlines()) == 4


def test_latency_grows_with_concurrency_under_the_fakes_load_model(fake: FakeVLLM) -> None:
    fake.delay_per_active = 0.15  # every request in flight adds 0.15 s before the answer
    report = run_bench(bench_config(fake, levels=(1, 4), steps=3), frames())
    assert report.ok, format_errors(report)
    one, four = report.levels
    assert one.latency_p50 is not None and four.latency_p50 is not None
    assert one.latency_p50 >= 0.15
    assert four.latency_p50 > one.latency_p50
    assert fake.max_active >= 2


def test_failed_steps_are_counted_and_reported_never_raised() -> None:
    with FakeVLLM(ScriptedPolicy([STEP], repeat_last=True), image_limit=1) as fake:
        fake.decode_images = False
        report = run_bench(bench_config(fake, levels=(1, 2)), frames())
    assert not report.ok
    assert [lv.steps for lv in report.levels] == [0, 0]
    assert [lv.errors for lv in report.levels] == [2, 4]
    message, fix = report.levels[0].error_messages[0]
    assert "at most 1 image(s)" in message
    assert "--limit-mm-per-prompt" in fix
    assert len(report.levels[1].error_messages) == 1  # the same message, kept once
    text = format_errors(report)
    assert "level 2: 4 failed step(s)" in text and "at most 1 image(s)" in text
    assert report.levels[0].total_tokens_per_s == 0


def test_a_stop_mid_level_keeps_the_finished_levels(fake: FakeVLLM) -> None:
    stop = threading.Event()
    served = {"calls": 0}

    def policy(request: ChatRequest) -> str:
        served["calls"] += 1
        if served["calls"] == 3:  # the first request of the second level
            stop.set()
        return json.dumps(STEP)

    fake.policy = policy
    report = run_bench(bench_config(fake, levels=(1, 2, 4)), frames(), stop=stop)
    assert report.interrupted and not report.ok
    assert [lv.concurrency for lv in report.levels] == [1]
    assert report.levels[0].steps == 2


def test_a_stop_before_the_start_measures_nothing(fake: FakeVLLM) -> None:
    stop = threading.Event()
    stop.set()
    report = run_bench(bench_config(fake), frames(), stop=stop)
    assert report.interrupted and report.levels == ()
    assert fake.chat_requests == 0


def test_duration_mode_measures_a_window_after_warm_up(fake: FakeVLLM) -> None:
    lines: list[str] = []
    config = bench_config(fake, levels=(1, 2), steps=None, duration=1.0, warmup=20.0)
    report = run_bench(config, frames(), on_progress=lines.append)
    assert report.ok, format_errors(report)
    assert report.mode == "1 s per level after warm-up"
    for lv in report.levels:
        assert lv.seconds >= 1.0
        assert lv.steps > 0
    # Warm-up steps and steps cut at the end are served but not counted.
    assert sum(lv.steps for lv in report.levels) <= fake.chat_requests
    assert any("warming up" in line for line in lines)
    assert any("measuring for 1 s" in line for line in lines)


def test_a_hundred_sessions_at_once(fake: FakeVLLM) -> None:
    config = bench_config(fake, levels=(100,), steps=1)
    report = run_bench(config, GeneratedFrames(160, 90))
    assert report.ok, format_errors(report)
    assert report.levels[0].steps == 100
    assert fake.served == 100


def test_an_unreachable_server_is_a_failed_level(fake: FakeVLLM) -> None:
    url = fake.base_url
    fake.stop()
    client = ClientConfig(base_url=url, connect_timeout=2.0, request_timeout=10.0)
    config = BenchConfig(client=client, levels=(1,), duration=None, steps=1, error_backoff=0.01)
    report = run_bench(config, frames())
    assert not report.ok
    assert report.levels[0].errors == 1
    assert "No model server answers" in report.levels[0].error_messages[0][0]


# --------------------------------------------------------------------------- screenshots


def test_generated_frames_are_realistic_and_all_different() -> None:
    source = GeneratedFrames()  # the default 2048x1152
    a, b, c = source(1, 0), source(1, 1), source(2, 0)
    for shot in (a, b, c):
        assert (shot.width, shot.height) == (2048, 1152)
        assert shot.mime == "image/jpeg"
        # A busy 16:9 desktop at q90 4:4:4 is a few hundred kilobytes.
        assert 100_000 < len(shot.data) < 2_000_000
        with Image.open(io.BytesIO(shot.data)) as image:
            assert image.size == (2048, 1152)
    assert len({a.data, b.data, c.data}) == 3
    assert source(1, 0).data == a.data  # deterministic within a bench
    assert GeneratedFrames(nonce=source.nonce + 1)(1, 0).data != a.data  # not across benches


def test_log_frames_walk_the_list_from_a_different_place_per_session() -> None:
    shots = [
        Screenshot(encode_jpeg(Image.new("RGB", (64, 36), (i * 20, 0, 0))), "image/jpeg", 64, 36)
        for i in range(10)
    ]
    frames_ = LogFrames(shots)
    assert frames_(0, 0) is shots[0] and frames_(0, 1) is shots[1]
    assert frames_(1, 0) is shots[3]
    assert frames_(0, 10) is shots[0]
    with pytest.raises(ValueError):
        LogFrames([])


# --------------------------------------------------------------------------- output


def sample_report() -> BenchReport:
    def level(c: int, prompt: int, gen: int, lat: float, err: int = 0) -> LevelResult:
        return LevelResult(
            concurrency=c, seconds=10.0, steps=c * 5, errors=err, prompt_tokens=prompt,
            completion_tokens=gen, ttft_p50=lat / 2, ttft_p95=lat / 1.5, latency_p50=lat,
            latency_p95=lat * 1.2,
            error_messages=(("boom", "fix it"),) if err else (),
        )  # fmt: skip

    return BenchReport(
        levels=(level(1, 9_000, 300, 1.0), level(10, 30_000, 1_000, 2.0),
                level(100, 50_000, 1_200, 6.0, err=2)),
        interrupted=False, model="holotron", endpoint="http://127.0.0.1:8000/v1",
        mode="60 s per level after warm-up",
    )  # fmt: skip


def test_reference_ratio_line() -> None:
    report = sample_report()
    assert Reference.parse("8900@100") == Reference(8900.0, 100)
    assert Reference.parse("8,900 @ 100") == Reference(8900.0, 100)
    line = compare(report, Reference(8900, 100))
    assert line == "5,120 tok/s at 100 = 0.58x the reference 8,900"
    missing = compare(report, Reference(8900, 64))
    assert "not measured" in missing and "1, 10, 100" in missing
    for bad in ("8900", "x@100", "8900@", "0@100"):
        with pytest.raises(ValueError):
            Reference.parse(bad)


def test_csv_has_the_columns_and_one_row_per_level(tmp_path: Path) -> None:
    path = write_csv(sample_report(), tmp_path / "bench.csv")
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [r["concurrency"] for r in rows] == ["1", "10", "100"]
    assert rows[2]["total_tokens_per_s"] == "5120.0"
    assert rows[2]["errors"] == "2" and rows[2]["first_error"] == "boom"
    assert rows[0]["first_error"] == ""


def test_chart_is_a_png_of_sane_size(tmp_path: Path) -> None:
    path = save_chart(sample_report(), tmp_path / "bench.png", Reference(8900, 100))
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.size == (1200, 900)
        colors = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colors is not None and len(colors) > 10  # something was drawn
    one_level = BenchReport(levels=sample_report().levels[:1], interrupted=False, model="m",
                            endpoint="e", mode="m")  # fmt: skip
    assert render_chart(one_level).size == (1200, 900)
    empty = BenchReport(levels=(), interrupted=True, model="m", endpoint="e", mode="m")
    assert render_chart(empty).size == (1200, 900)


def test_parse_levels_and_percentiles() -> None:
    assert parse_levels("1,2,4,8,16,32,64,100") == (1, 2, 4, 8, 16, 32, 64, 100)
    assert parse_levels(" 4, 1,4 ") == (4, 1)
    for bad in ("", "0", "a", "1,-2", "5000"):
        with pytest.raises(ValueError):
            parse_levels(bad)
    assert percentile([], 50) is None
    assert percentile([3.0], 95) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([float(i) for i in range(101)], 95) == 95.0


def test_config_wants_a_duration_or_steps() -> None:
    client = ClientConfig()
    with pytest.raises(ValueError):
        BenchConfig(client=client, duration=10.0, steps=3)
    with pytest.raises(ValueError):
        BenchConfig(client=client, duration=None, steps=None)
    with pytest.raises(ValueError):
        BenchConfig(client=client, levels=(0,))


# --------------------------------------------------------------------------- the knee


def curve(*points: tuple[int, float], errors_at: int | None = None) -> BenchReport:
    """A report whose level ``c`` measured ``tps`` total tokens/s over 10 s, 4 steps each."""
    levels = tuple(
        LevelResult(
            concurrency=c, seconds=10.0, steps=4, errors=1 if c == errors_at else 0,
            prompt_tokens=round(tps * 10) - 400, completion_tokens=400, ttft_p50=None,
            ttft_p95=None, latency_p50=None, latency_p95=None,
        )
        for c, tps in points
    )  # fmt: skip
    return BenchReport(levels=levels, interrupted=False, model="m", endpoint="e", mode="m")


def test_the_knee_is_where_doubling_stops_paying() -> None:
    # 1 -> 2: x1.9 (+90% per doubling); 2 -> 4: x1.8; 4 -> 8: x1.05 (+5% < 10%): the knee
    # is 4 sessions.
    report = curve((1, 1000), (2, 1900), (4, 3420), (8, 3591), (16, 3600))
    found = knee(report)
    assert found is not None and found.concurrency == 4


def test_a_gain_between_uneven_levels_is_scaled_to_a_doubling() -> None:
    # 64 -> 100 is log2(100/64) = 0.644 doublings: x1.07 over it is 1.07^(1/0.644) - 1
    # = 11.1% per doubling: still rising. 100 -> 128 (0.356 doublings), x1.02: 5.7%: the knee.
    report = curve((64, 7000), (100, 7490), (128, 7640))
    found = knee(report)
    assert found is not None and found.concurrency == 100


def test_no_knee_while_the_curve_still_rises() -> None:
    assert knee(curve((1, 1000), (2, 1900), (4, 3600))) is None
    assert knee(curve((4, 3600))) is None
    # A level with failed steps is not a point of the curve.
    assert knee(curve((1, 1000), (2, 1900), (4, 1950), errors_at=4)) is None


def test_mean_session_tokens_come_from_the_highest_clean_level() -> None:
    # Level 16: (3,600 x 10 s) = 36,000 tokens over 4 steps = 9,000 tokens a step.
    assert mean_session_tokens(curve((1, 1000), (16, 3600))) == 9_000
    assert mean_session_tokens(curve((1, 1000), (16, 3600), errors_at=16)) == 2_500
