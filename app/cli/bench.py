"""The `holodesk bench` command: measure the model server's throughput under concurrent sessions.

This module gathers what the load generator needs from the app (settings, the API key from
the keyring, screenshots from the action log) and hands plain data to :mod:`model.loadbench.bench`,
which documents the method. It prints a table, the capacity plan's prediction for the context
the run measured (``holodesk serve --plan``, model/serving/capacity.py) next to the measured knee
of the throughput curve, writes a CSV and a PNG chart, and compares with a published reference
when asked (``--reference 8900@100``: H Company's figure for one H100 at 100 concurrent workers).
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.helptext import examples
from app.cli.output import EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, error, stop_signals
from model.problem import Fix, Problem

if TYPE_CHECKING:
    import signal

    from app.settings import Settings
    from model.loadbench.bench import BenchReport
    from model.loadbench.frames import Screenshot

log = logging.getLogger(__name__)

DEFAULT_LEVELS = "1,2,4,8,16,32,64,100"
DEFAULT_DURATION = 60.0
MAX_LOG_SHOTS = 300  # three screenshots for each of 100 sessions


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    p = sub.add_parser(
        "bench",
        help="measure the model server's throughput under many concurrent agent sessions",
        description=(
            "Run N simulated agent sessions at once against the server (realistic step "
            "requests: three screenshots, growing history, structured output, streamed) for "
            "each concurrency level, and report tokens/s, steps/s, latency and errors."
        ),
        epilog=examples(("holodesk bench --levels 1,8,32", "three levels of sessions"),
                        ("holodesk bench --levels 1,4 --steps 3", "a quick look"),
                        ("holodesk bench --reference 8900@100", "against a published figure")),
    )
    p.add_argument("--levels", default=DEFAULT_LEVELS,
                   help=f"concurrency levels, comma-separated (default {DEFAULT_LEVELS})")
    amount = p.add_mutually_exclusive_group()
    amount.add_argument("--duration", type=float, metavar="S",
                        help=f"seconds measured per level after warm-up "
                             f"(default {DEFAULT_DURATION:g})")
    amount.add_argument("--steps", type=int, metavar="N",
                        help="instead: every session runs exactly N steps (quick, exact totals)")
    p.add_argument("--warmup", type=float, default=30.0, metavar="S",
                   help="at most this long per level waiting for every session's first step "
                        "(default 30)")
    p.add_argument("--images", choices=["generated", "log"], default="generated",
                   help="generated desktop-like frames (default) or real screenshots from the "
                        "action log")
    p.add_argument("--reference", metavar="TOKS@LEVEL",
                   help="a published total tokens/s to compare with, e.g. 8900@100")
    p.add_argument("--gpu-memory-gb", type=float, metavar="GIB",
                   help="the server GPU's memory in GiB, for the capacity plan printed next to "
                        "the measured knee (default: the largest GPU nvidia-smi lists here, "
                        "else an 80 GB H100)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="folder for the CSV and PNG (default: bench/ in the data folder)")
    p.add_argument("--endpoint", help="the server's base URL (default from settings)")
    p.add_argument("--model", help="the served model name (default: read from /v1/models)")
    p.add_argument("--max-tokens", type=int, default=1024, metavar="N",
                   help="most tokens generated per step (default 1024, as a run)")
    p.add_argument("-v", "--verbose", action="store_true", help="log more")
    p.set_defaults(func=_cmd_bench)


def _cmd_bench(args: argparse.Namespace) -> int:
    try:
        return _bench(args)
    except KeyboardInterrupt:  # Ctrl+C while preparing (re-encoding screenshots, probing)
        error("interrupted")
        return EXIT_RUN_FAILED


def _bench(args: argparse.Namespace) -> int:
    # Heavy imports here: the parser is built for every command.
    from app import paths
    from app.logs import mask
    from app.parts import client_config
    from app.secrets import api_key
    from app.settings import load_with_overrides
    from model.client import HolotronClient
    from model.errors import HolotronError
    from model.loadbench.bench import (
        BenchConfig,
        FrameSource,
        LevelResult,
        LogFrames,
        Reference,
        compare,
        format_errors,
        format_table,
        parse_levels,
        run_bench,
        write_csv,
    )
    from model.loadbench.frames import GeneratedFrames
    from model.loadbench.plot import save_chart

    settings = load_with_overrides({k: getattr(args, k) for k in ("endpoint", "model")})
    try:
        levels = parse_levels(args.levels)
        reference = Reference.parse(args.reference) if args.reference else None
        if args.max_tokens < 1:
            raise ValueError("--max-tokens must be at least 1")
        if args.gpu_memory_gb is not None and not args.gpu_memory_gb >= 1:
            raise ValueError("--gpu-memory-gb must be at least 1 (the GPU's memory in GiB)")
        key = api_key(settings.endpoint)
        mask(key)  # as a run does: the key never reaches a log line, even inside an error
        client = client_config(settings, key, max_tokens=args.max_tokens)
        config = BenchConfig(
            client=client,
            levels=levels,
            duration=None
            if args.steps is not None
            else (DEFAULT_DURATION if args.duration is None else args.duration),
            steps=args.steps,
            warmup=args.warmup,
            task_steps=max(settings.max_steps, 3),
            convention=settings.convention,
            thinking=settings.thinking,
        )
    except ValueError as e:
        error(str(e))
        return EXIT_USAGE

    frames: FrameSource
    if args.images == "log":
        shots = _log_screenshots(settings)
        if not shots:
            error("the action log has no screenshots yet: run a task first, "
                   "or use --images generated")
            return EXIT_USAGE
        most = max(levels) * 3
        if len(shots) < most:
            print(f"note: {len(shots)} screenshot(s) from the action log for up to {most} "
                  "images in flight: sessions share some, which the server may serve from "
                  "its cache", file=sys.stderr)
        frames = LogFrames(shots)
    else:
        width = settings.max_side
        frames = GeneratedFrames(width, round(width * 9 / 16), quality=settings.jpeg_quality)

    # Fail early, with the fix, when there is nothing to measure.
    with HolotronClient(client) as probe:
        try:
            model = probe.resolve_model()
        except HolotronError as e:
            error(e)
            return EXIT_RUN_FAILED

    out_dir = args.out if args.out is not None else paths.data_dir() / "bench"
    try:
        paths.ensure_private_dir(out_dir)
    except OSError as e:
        error(f"cannot create {out_dir}: {e}")
        return EXIT_USAGE

    print(f"Benchmarking {model} at {settings.endpoint}: levels "
          f"{','.join(map(str, levels))}, "
          + (f"{config.steps} step(s) per session" if config.steps is not None
             else f"{config.duration:g} s per level after warm-up")
          + f", {args.images} screenshots. Ctrl+C stops and keeps the finished levels.",
          flush=True)

    stop = threading.Event()

    def on_signal(_sig: signal.Signals) -> None:
        print("\nstopping: cancelling the level in flight (Ctrl+C again quits at once)",
              file=sys.stderr, flush=True)
        stop.set()

    def on_level(result: LevelResult) -> None:
        print(f"level {result.concurrency}: {result.total_tokens_per_s:,.0f} tok/s, "
              f"{result.steps} step(s), {result.errors} error(s)", file=sys.stderr, flush=True)

    try:
        with stop_signals(on_signal):
            report = run_bench(
                config,
                frames,
                stop=stop,
                on_progress=lambda line: print(line, file=sys.stderr, flush=True),
                on_level=on_level,
            )
    except KeyboardInterrupt:  # the second Ctrl+C: quit now, the sessions are daemon threads
        error("interrupted")
        return EXIT_RUN_FAILED

    if not report.levels:
        error("stopped before any level finished; nothing to report")
        return EXIT_RUN_FAILED
    print()
    print(format_table(report))
    errors = format_errors(report)
    if errors:
        print()
        print(errors)
    print()
    print(_prediction(report, settings, args.gpu_memory_gb))
    stamp = report.started.strftime("%Y%m%d-%H%M%S")
    print()
    written = True
    try:
        print(f"CSV: {write_csv(report, out_dir / f'bench-{stamp}.csv')}")
        print(f"Chart: {save_chart(report, out_dir / f'bench-{stamp}.png', reference)}")
    except OSError as e:  # a full disk must not lose the table printed above
        error(Problem(f"cannot write the results to {out_dir}: {e}",
                      Fix("free some space or pass --out with another folder")))
        written = False
    if reference is not None:
        # Last, as the README promises: the one line to compare with the published number.
        print(compare(report, reference))
    if report.interrupted:
        error("stopped: the levels above are the ones that finished")
        return EXIT_RUN_FAILED
    if not report.ok:
        error("some steps failed (see above); the numbers of those levels are not comparable")
        return EXIT_RUN_FAILED
    return EXIT_OK if written else EXIT_RUN_FAILED


def _prediction(report: BenchReport, settings: Settings, gpu_gib: float | None) -> str:
    """The capacity plan's sessions for the context this bench measured, and the knee of the
    measured curve: where more sessions stopped adding throughput."""
    from app.serving import PlanUnknown, capacity_plan, plan_gpu
    from model.loadbench.bench import KNEE_GAIN, knee, mean_session_tokens
    from model.serving.capacity import GIB, GpuSource

    lines: list[str] = []
    tokens = mean_session_tokens(report)
    plan = None
    if tokens is not None:
        try:
            plan = capacity_plan(settings, gpu=plan_gpu(gpu_gib), context=tokens)
        except PlanUnknown as e:
            lines.append(f"plan: {e.message}")
    if plan is not None:
        gpu = plan.gpu
        where = {GpuSource.NVIDIA_SMI: "nvidia-smi on this machine",
                 GpuSource.OPTION: "--gpu-memory-gb",
                 GpuSource.DEFAULT: "assumed; --gpu-memory-gb sets it"}[gpu.source]
        lines.append(
            f"plan (holodesk serve --plan): {plan.hybrid.sessions_fit:,} sessions of "
            f"{tokens:,} tokens (this run's mean step) fit {gpu.name}, "
            f"{gpu.memory_bytes / GIB:.1f} GiB ({where}) with {plan.hybrid.arch.name}; "
            f"{plan.attention.sessions_fit:,} with an attention-only model of Holo2-8B's shape")
    found = knee(report)
    if found is not None:
        lines.append(
            f"measured knee: {found.concurrency} sessions ({found.total_tokens_per_s:,.0f} "
            f"tok/s); more sessions added under {KNEE_GAIN:.0%} per doubling")
    else:
        top = max(lv.concurrency for lv in report.levels)
        lines.append(f"measured knee: not reached (tokens/s still rising at {top} sessions, "
                     "or too few clean levels to tell)")
    return "\n".join(lines)


def _log_screenshots(settings: Settings) -> list[Screenshot]:
    """Recent runs' screenshots, re-encoded as a run with these settings would send them."""
    from app.store import ActionLog

    files: list[Path] = []
    with ActionLog.open(mark_interrupted=False) as store:
        for run in store.list_runs(limit=100):
            for step in store.steps(run.id):
                if step.screenshot_path:
                    files.append(Path(step.screenshot_path))
            if len(files) >= MAX_LOG_SHOTS:
                break
    shots: list[Screenshot] = []
    for file in files[:MAX_LOG_SHOTS]:
        try:
            shots.append(_reencode(file, settings))
        except (OSError, ValueError) as e:
            log.warning("skipping screenshot %s: %s", file, e)
    return shots


def _reencode(file: Path, settings: Settings) -> Screenshot:
    """One stored screenshot, downscaled and encoded by the capture code, as a run sends it."""
    from PIL import Image

    from control.capture import EncodeOptions, encode_bgrx
    from model.loadbench.frames import Screenshot

    with Image.open(file) as image:
        rgb = image.convert("RGB")
    raw = rgb.tobytes("raw", "BGRX")
    options = EncodeOptions(
        max_side=settings.max_side,
        image_format=settings.image_format,
        jpeg_quality=settings.jpeg_quality,
    )
    data, width, height = encode_bgrx(raw, rgb.width, rgb.height, options)
    mime = "image/jpeg" if settings.image_format == "jpeg" else "image/png"
    return Screenshot(data, mime, width, height)
