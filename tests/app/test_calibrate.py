"""`holodesk calibrate`'s core without a display: placing, scoring, asking, the loop, the CLI.

The loop runs for real against the fake vLLM server (a real HTTP server whose model finds the
target by colour in the screenshot it was sent) with a FakeCapturer whose "screen" shows what
the fake target screen was last asked to show.
"""

from __future__ import annotations

import argparse
import datetime
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from app.calibrate import (
    CONVENTIONS,
    TARGETS,
    CalibrationReport,
    Calibrator,
    PlacedTarget,
    ScreenClosed,
    TargetResult,
    calibration_messages,
    calibration_schema,
    format_report,
    land,
    place_targets,
    run_with_screen,
    score,
    target_radius,
    target_visible,
    tolerance_for,
)
from app.cli import calibrate as cli_calibrate
from app.cli import main as cli
from app.cli.exitcodes import EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE
from control.capture import EncodeOptions
from control.stop import StopLatch
from model.client import ClientConfig, HolotronClient
from model.coords import Convention, FrameGeometry, Rect, from_screen
from model.prompt import PromptConfig, system_prompt
from model.schema import Step
from model.structured import step_output_schema
from tests.support.fake_capturer import FakeCapturer
from tests.support.fake_vllm import (
    ChatRequest,
    FakeHTTPError,
    FakeVLLM,
    GarbagePolicy,
    ScriptedPolicy,
    SeeingPolicy,
    StructuredOutputs,
    Target,
    to_convention,
)
from tests.support.home import isolate_home

HD = FrameGeometry(1920, 1080, Rect(0, 0, 1920, 1080))
DOWNSCALED = FrameGeometry(2048, 1152, Rect(0, 0, 2560, 1440))
OFFSET = FrameGeometry(1366, 768, Rect(1920, 0, 1366, 768))


# -- placing ---------------------------------------------------------------------------------


def test_five_distinct_targets_spread_over_the_monitor() -> None:
    area = Rect(1920, 0, 1366, 768)
    placed = place_targets(area)
    assert len(placed) >= 5
    assert len({p.target.rgb for p in placed}) == len(placed)
    assert len({p.target.label for p in placed}) == len(placed)
    for p in placed:
        assert area.contains(p.center.x - p.radius, p.center.y - p.radius)
        assert area.contains(p.center.x + p.radius, p.center.y + p.radius)
    xs = sorted({p.center.x for p in placed})
    ys = sorted({p.center.y for p in placed})
    # Corners inset plus the centre: both axes are spanned, so scale and offset errors show.
    assert xs[0] - area.left < area.width * 0.15 and area.right - xs[-1] < area.width * 0.15
    assert ys[0] - area.top < area.height * 0.15 and area.bottom - ys[-1] < area.height * 0.15
    assert any(abs(p.center.x - (area.left + area.width // 2)) <= 1 for p in placed)
    assert [p.index for p in placed] == list(range(1, len(placed) + 1))


def test_the_colours_are_far_apart_for_jpeg() -> None:
    colours = [t.rgb for t in TARGETS] + [(236, 236, 236), (40, 40, 40)]
    for i, a in enumerate(colours):
        for b in colours[i + 1:]:
            assert max(abs(x - y) for x, y in zip(a, b, strict=True)) > 100, (a, b)


def test_tolerance_is_the_radius_or_a_share_of_the_diagonal() -> None:
    assert tolerance_for(Rect(0, 0, 1920, 1080), 27) == pytest.approx(33.04, abs=0.01)
    small = Rect(0, 0, 400, 300)
    assert tolerance_for(small, target_radius(small)) == target_radius(small) == 10


# -- scoring -----------------------------------------------------------------------------------


def _answers(geom: FrameGeometry, convention: Convention,
             seen: FrameGeometry | None = None) -> list[TargetResult]:
    """A model answering like SeeingPolicy: the target's pixel centre, rounded as it rounds.

    ``seen`` is the geometry the model wrongly assumes (default: the real one).
    """
    results = []
    for p in place_targets(geom.logical_monitor):
        model_view = seen or geom
        ix, iy = from_screen(p.center.x + 0.5, p.center.y + 0.5, Convention.PIXELS, model_view)
        x, y = to_convention(ix, iy, model_view.sent_width, model_view.sent_height,
                             convention.value)  # type: ignore[arg-type]
        results.append(TargetResult(p, (x, y), "click", "", land(x, y, p.center, geom),
                                    geometry=geom))
    return results


def _tolerance(geom: FrameGeometry) -> float:
    area = geom.logical_monitor
    return tolerance_for(area, target_radius(area))


@pytest.mark.parametrize("geom", [HD, DOWNSCALED, OFFSET], ids=["hd", "downscaled", "offset"])
@pytest.mark.parametrize("convention", list(CONVENTIONS))
def test_the_models_convention_wins_with_a_small_error(geom: FrameGeometry,
                                                      convention: Convention) -> None:
    verdict = score(_answers(geom, convention), _tolerance(geom))
    assert verdict.best is not None
    assert verdict.best.convention is convention
    assert verdict.best.worst <= 2.0
    assert verdict.best.within == verdict.answered == len(TARGETS)
    assert verdict.also_fitting == []
    assert all(not s.fits for s in verdict.scores[1:])


def test_a_model_that_ignores_the_downscale_misses_everywhere() -> None:
    # Pixels of the full 2560 px screen while it was sent at 2048: a 25 % scale error.
    full = FrameGeometry(2560, 1440, DOWNSCALED.monitor)
    results = _answers(DOWNSCALED, Convention.PIXELS, seen=full)
    verdict = score(results, _tolerance(DOWNSCALED))
    assert verdict.best is None
    assert verdict.enough
    closest = verdict.closest
    assert closest is not None and closest.convention is Convention.PIXELS
    assert closest.within < closest.answered
    report = CalibrationReport(tuple(results), verdict, DOWNSCALED, Convention.NORM1000)
    text = format_report(report)
    assert "WARNING: the model's clicks miss under every convention" in text
    assert "closest: pixels" in text
    assert "Do not trust this model's clicks" in text


def test_a_wrong_monitor_offset_misses_everywhere() -> None:
    # The model's points are right for the image; the image is not of where the targets are.
    elsewhere = FrameGeometry(1366, 768, Rect(0, 0, 1366, 768))
    results = _answers(OFFSET, Convention.NORM1000)
    shifted = [
        TargetResult(r.placed, r.answer, "click", "",
                     land(*r.answer, r.placed.center, elsewhere)) for r in results
        if r.answer is not None
    ]
    assert score(shifted, _tolerance(OFFSET)).best is None


def test_one_wild_click_spoils_the_fit() -> None:
    results = _answers(HD, Convention.NORM1000)
    bad = results[2]
    results[2] = TargetResult(bad.placed, (900.0, 100.0), "click", "",
                              land(900, 100, bad.placed.center, HD))
    verdict = score(results, _tolerance(HD))
    assert verdict.best is None
    assert verdict.closest is not None
    assert verdict.closest.convention is Convention.NORM1000
    assert verdict.closest.within == len(TARGETS) - 1


def test_too_few_answers_give_no_verdict() -> None:
    results = _answers(HD, Convention.NORM1000)
    for i in (0, 1, 2):
        results[i] = TargetResult(results[i].placed, error="No model server answers at x.")
    verdict = score(results, _tolerance(HD))
    assert verdict.answered == 2 and not verdict.enough
    assert verdict.best is None
    text = format_report(CalibrationReport(tuple(results), verdict, HD, Convention.NORM1000))
    assert "Too few answers to judge: 2 of 5" in text
    assert "No answer for A: No model server answers at x." in text


def test_when_two_conventions_agree_the_prompts_wins() -> None:
    # A 1000x1000 image: pixels and norm1000 are the same numbers.
    square = FrameGeometry(1000, 1000, Rect(0, 0, 1000, 1000))
    results = _answers(square, Convention.PIXELS)
    for prefer in (Convention.PIXELS, Convention.NORM1000):
        verdict = score(results, _tolerance(square), prefer=prefer)
        assert verdict.best is not None and verdict.best.convention is prefer
        assert verdict.also_fitting == [
            Convention.NORM1000 if prefer is Convention.PIXELS else Convention.PIXELS
        ]


def test_the_report_table() -> None:
    results = _answers(HD, Convention.NORM1)
    verdict = score(results, _tolerance(HD))
    text = format_report(CalibrationReport(tuple(results), verdict, HD, Convention.NORM1000,
                                           model="holotron", monitor_label="1"))
    assert "Monitor 1: 1920x1080+0+0" in text
    assert "sent at 1920x1080" in text
    assert "model 'holotron'" in text
    assert "A red, top left" in text
    assert "(192, 108)" in text
    assert "click (0.1003, 0.1005)" in text
    assert "The model uses norm1: median error" in text
    header = next(line for line in text.splitlines() if line.startswith("target"))
    assert header.split()[-3:] == ["norm1000", "norm1", "pixels"]
    row = next(line for line in text.splitlines() if line.startswith("A red"))
    assert row.split()[-3].endswith("*") and not row.split()[-2].endswith("*")


# -- asking ------------------------------------------------------------------------------------


def test_the_schema_allows_only_a_click() -> None:
    schema = calibration_schema()
    variants = schema["properties"]["action"]["anyOf"]
    assert [v["properties"]["action"]["const"] for v in variants] == ["click"]
    # The run's schema is untouched.
    assert len(step_output_schema()["properties"]["action"]["anyOf"]) == 10


def _picture(placed: PlacedTarget | None, monitor: Rect, draw: bool = True) -> Image.Image:
    """The monitor as the target window paints it: ``placed`` alone on the background."""
    image = Image.new("RGB", (monitor.width, monitor.height), (236, 236, 236))
    if placed is not None and draw:
        cx = placed.center.x - monitor.left + 0.5
        cy = placed.center.y - monitor.top + 0.5
        r = placed.radius
        ImageDraw.Draw(image).ellipse((cx - r, cy - r, cx + r, cy + r), fill=placed.target.rgb)
    return image


def _frame_with(placed: PlacedTarget | None, monitor: Rect, draw: bool = True) -> FakeCapturer:
    return FakeCapturer(lambda: _picture(placed, monitor, draw), monitor=monitor)


def test_messages_are_a_runs_first_step() -> None:
    monitor = Rect(0, 0, 1600, 900)
    placed = place_targets(monitor)[1]
    frame = _frame_with(placed, monitor).grab()
    messages = calibration_messages(placed, frame, Convention.PIXELS)
    config = PromptConfig(Convention.PIXELS, 1600, 900, datetime.date.today())
    assert messages[0] == {"role": "system", "content": system_prompt(config)}
    images = [part for m in messages[1:] for part in m["content"]
              if part.get("type") == "image_url"]
    assert len(images) == 1
    task = messages[1]["content"][0]["text"]
    assert "blue circle labelled B" in task


def test_the_target_is_checked_in_the_frame() -> None:
    monitor = Rect(1920, 0, 1366, 768)
    placed = place_targets(monitor)[0]
    assert target_visible(_frame_with(placed, monitor).grab(), placed)
    assert not target_visible(_frame_with(placed, monitor, draw=False).grab(), placed)
    other = place_targets(monitor)[4]  # drawn elsewhere: not where this one should be
    assert not target_visible(_frame_with(other, monitor).grab(), placed)


# -- the loop ----------------------------------------------------------------------------------


class FakeScreen:
    """The TargetScreen protocol without a window: remembers the target shown."""

    def __init__(self, on_cancel: Callable[[], None], *, cancel_at: int | None = None) -> None:
        self.on_cancel = on_cancel
        self.cancel_at = cancel_at
        self.shown: list[PlacedTarget] = []
        self.closed = threading.Event()
        self.loop_thread: threading.Thread | None = None

    @property
    def current(self) -> PlacedTarget | None:
        return self.shown[-1] if self.shown else None

    def show(self, target: PlacedTarget) -> None:
        if self.closed.is_set():
            raise ScreenClosed("closed")
        if self.cancel_at is not None and target.index == self.cancel_at:
            self.on_cancel()  # the person pressing Escape
        if self.closed.is_set():
            raise ScreenClosed("closed")
        self.shown.append(target)

    def close(self) -> None:
        self.closed.set()

    def run_until(self, done: Callable[[], bool]) -> None:
        self.loop_thread = threading.current_thread()
        while not done():
            time.sleep(0.01)


MONITOR = Rect(100, 50, 1600, 900)


def _calibrate(policy: Callable[[ChatRequest], str], *, monitor: Rect = MONITOR,
               convention: Convention = Convention.NORM1000, cancel_at: int | None = None,
               stop_server: bool = False,
               structured_outputs: StructuredOutputs = StructuredOutputs.ENFORCED,
               ) -> tuple[CalibrationReport, FakeScreen]:
    screens: list[FakeScreen] = []

    def factory(on_cancel: Callable[[], None]) -> FakeScreen:
        screens.append(FakeScreen(on_cancel, cancel_at=cancel_at))
        return screens[0]

    def picture() -> Image.Image:
        current = screens[0].current if screens else None
        return _picture(current, monitor)

    capturer = FakeCapturer(picture, monitor=monitor, options=EncodeOptions())
    latch = StopLatch()
    with FakeVLLM(policy, structured_outputs=structured_outputs) as server:
        if stop_server:
            server.stop()
        client = HolotronClient(ClientConfig(base_url=server.base_url, request_timeout=20))
        try:
            calibrator = Calibrator(client, capturer, latch, convention=convention,
                                    visible_timeout=0.5)
            report = run_with_screen(factory, latch, calibrator.run)
        finally:
            client.close()
    return report, screens[0]


def _seeing(convention: str) -> SeeingPolicy:
    return SeeingPolicy([Target(t.description, t.rgb) for t in TARGETS],
                        convention=convention)  # type: ignore[arg-type]


@pytest.mark.parametrize("convention", list(CONVENTIONS))
def test_the_loop_finds_the_convention(convention: Convention) -> None:
    report, screen = _calibrate(_seeing(convention.value))
    assert screen.loop_thread is threading.main_thread()
    assert screen.closed.is_set()
    assert [t.target.label for t in screen.shown] == [t.label for t in TARGETS]
    assert report.stopped is None
    assert all(r.visible and r.answered for r in report.results)
    best = report.verdict.best
    assert best is not None and best.convention is convention
    assert best.worst <= 2.0
    assert report.geometry.monitor == Rect(100, 50, 1600, 900)


def test_errors_per_target_do_not_lose_the_rest() -> None:
    seeing = SeeingPolicy([Target(t.description, t.rgb) for t in TARGETS if t.label != "B"])
    ask = {"thought": "?", "action": {"action": "ask_user", "question": "which circle?"}}
    garbage = GarbagePolicy()

    def policy(request: ChatRequest) -> str:
        task = request.messages[1]["content"][0]["text"]
        if "labelled B" in task:
            raise FakeHTTPError(400, "the image is too large")
        if "labelled D" in task:
            return garbage(request)
        if "labelled E" in task:
            return ScriptedPolicy([ask])(request)
        return seeing(request)

    # The garbage comes from a server that ignores the schema; a real one could not send it.
    report, _ = _calibrate(policy, structured_outputs=StructuredOutputs.IGNORED)
    by_label = {r.placed.target.label: r for r in report.results}
    assert by_label["A"].answered and by_label["C"].answered
    assert not by_label["B"].answered and by_label["B"].error
    assert "not a valid step" in (by_label["D"].error or "") or by_label["D"].error
    assert by_label["E"].error == "the model answered 'ask_user' instead of a click"
    assert garbage.calls == 3  # asked again twice, as in a run
    assert not report.verdict.enough
    assert "Too few answers to judge: 2 of 5" in format_report(report)


def test_a_server_that_is_down_fails_each_target_and_ends() -> None:
    report, _ = _calibrate(_seeing("norm1000"), stop_server=True)
    assert len(report.results) == len(TARGETS)
    assert all("No model server answers" in (r.error or "") for r in report.results)
    assert report.verdict.answered == 0 and report.verdict.best is None


def test_escape_stops_and_keeps_what_was_measured() -> None:
    report, screen = _calibrate(_seeing("norm1000"), cancel_at=3)
    assert [r.placed.target.label for r in report.results] == ["A", "B"]
    assert report.stopped == "the calibration window was closed"
    assert screen.closed.is_set()
    assert "Stopped early (the calibration window was closed): 2 of 5" in format_report(report)


def test_a_failing_worker_raises_on_the_calling_thread() -> None:
    def boom(_screen: object) -> int:
        raise ValueError("capture failed")

    with pytest.raises(ValueError, match="capture failed"):
        run_with_screen(lambda on_cancel: FakeScreen(on_cancel), StopLatch(), boom)


def test_the_latch_closes_the_screen() -> None:
    latch = StopLatch()
    screens: list[FakeScreen] = []

    def factory(on_cancel: Callable[[], None]) -> FakeScreen:
        screens.append(FakeScreen(on_cancel))
        return screens[0]

    def work(screen: object) -> str:
        latch.stop("signal", "SIGINT")
        return "done" if screens[0].closed.wait(5) else "still open"

    assert run_with_screen(factory, latch, work) == "done"


# -- the command -------------------------------------------------------------------------------


def test_the_parser() -> None:
    parser = cli._parser()
    args = parser.parse_args(["calibrate", "--monitor", "1366x768+1920+0", "--save"])
    assert args.save is True and args.monitor == "1366x768+1920+0"
    assert parser.parse_args(["calibrate", "--no-save"]).save is False
    assert parser.parse_args(["calibrate"]).save is None
    with pytest.raises(SystemExit):
        parser.parse_args(["calibrate", "--save", "--no-save"])


def test_without_a_screen_factory_it_says_how_to_run_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    isolate_home(monkeypatch, tmp_path)
    assert cli.main(["calibrate"]) == EXIT_USAGE
    assert "holodesk calibrate" in capsys.readouterr().err


def test_without_a_display_it_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    isolate_home(monkeypatch, tmp_path)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    made: list[FakeScreen] = []

    def factory(on_cancel: Callable[[], None]) -> FakeScreen:
        made.append(FakeScreen(on_cancel))
        return made[-1]

    code = cli.main(["calibrate"], calibrate_screen=factory)
    assert code == EXIT_RUN_FAILED
    assert "no display" in capsys.readouterr().err
    assert made == []  # no window for nothing


@pytest.mark.parametrize(("save", "tty", "typed", "saved"), [
    (True, False, "", True),
    (False, True, "y", False),
    (None, False, "", False),
    (None, True, "y", True),
    (None, True, "", False),
])
def test_saving_the_convention(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str], save: bool | None, tty: bool,
                               typed: str, saved: bool) -> None:
    from app.settings import load_settings

    isolate_home(monkeypatch, tmp_path)
    monkeypatch.setattr("sys.stdin.isatty", lambda: tty)
    asked: list[str] = []
    def fake_input(question: str) -> str:
        asked.append(question)
        return typed

    monkeypatch.setattr("builtins.input", fake_input)
    cli_calibrate._offer_to_save(Convention.PIXELS, save)
    out = capsys.readouterr().out
    assert load_settings().convention is (Convention.PIXELS if saved else Convention.NORM1000)
    assert bool(asked) == (save is None and tty)
    if not saved:
        assert "holodesk config set convention pixels" in out


def test_the_command_end_to_end_without_x(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The command's own flow (report, exit code, --save) with the display parts faked."""
    from app.settings import load_settings

    isolate_home(monkeypatch, tmp_path)
    geom = FrameGeometry(1366, 768, Rect(0, 0, 1366, 768))
    results = _answers(geom, Convention.NORM1)
    verdict = score(results, _tolerance(geom))
    report = CalibrationReport(tuple(results), verdict, geom, Convention.NORM1000)
    monkeypatch.setattr(cli_calibrate, "_calibrate", lambda settings, factory: report)
    args = argparse.Namespace(monitor=None, endpoint=None, model=None, save=True,
                              calibrate_screen=FakeScreen)
    assert cli_calibrate._cmd_calibrate(args) == EXIT_OK
    out = capsys.readouterr().out
    assert "The model uses norm1" in out and "Saved: convention = norm1." in out
    assert load_settings().convention is Convention.NORM1

    wrong = _answers(geom, Convention.PIXELS, seen=FrameGeometry(683, 384, geom.monitor))
    bad = CalibrationReport(tuple(wrong), score(wrong, _tolerance(geom)), geom,
                            Convention.NORM1000)
    monkeypatch.setattr(cli_calibrate, "_calibrate", lambda settings, factory: bad)
    assert cli_calibrate._cmd_calibrate(args) == EXIT_RUN_FAILED
    assert "WARNING" in capsys.readouterr().out


def test_steps_the_fake_sends_parse_as_clicks() -> None:
    # Guards the e2e tests' premise: SeeingPolicy's answer is a Step with a Click.
    text = '{"note":"","thought":"t","action":{"action":"click","element":"e","x":1,"y":2}}'
    assert Step.model_validate_json(text).action.action == "click"
