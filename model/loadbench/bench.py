"""The load generator behind ``holodesk bench``: many simulated agent sessions against one server.

What H Company published (docs/holotron.md): about 8,900 *total* tokens/s (prompt plus
generated) for Holotron-12B on one H100 with vLLM, 100 concurrent benchmark workers, long
multi-image contexts. This module reproduces that setup so the number can be checked on the
person's own server.

Method
------
* A level is a number N of concurrent sessions. Each session is a thread with its own
  :class:`~model.client.HolotronClient` and sends, back to back, the requests a real run sends:
  the real prompt builder (:func:`model.prompt.build_messages`) with the task, the last three
  screenshots and a growing text history of past steps; the step schema as vLLM structured
  output; streamed with usage reported (``stream_options.include_usage``). The model's parsed
  answer becomes the next turn's history, as in a run. There is no think time between steps
  (the published benchmark's workers had none either).
* A simulated task lasts ``task_steps`` steps, then the session starts a new one. Sessions
  start spread over the task length (but at least at step ``max_images``, so every request
  carries three screenshots from the first), with made-up earlier steps in their history: the
  mix of short and long contexts is steady from the start instead of every session starting at
  step 1 together.
* Every screenshot differs from every other (per session and per step; generated frames also
  per bench run), as on a real desktop: vLLM recognises an image it has seen by its content and
  an image repeated across sessions would cost the server nothing. Earlier screenshots of a
  session are re-sent byte-identical, as in a run, so the server's prefix cache helps exactly
  as much as it would in real use.
* ``duration`` mode (the meaningful numbers): a warm-up first, which ends once every session
  has finished one step (connections open, model name resolved, the first cold prefills done)
  or after ``warmup`` seconds; then the level is measured for ``duration`` seconds: the steps
  that *finish* inside the window count, with the server's token usage, over the window's
  length. Steps still in flight at the end are cancelled (the server stops generating them).
  For a real server use at least 60 s per level so every session finishes several steps.
* ``steps`` mode (quick and exact, for tests and smoke checks): every session runs exactly
  that many steps; the level's time runs from the start of the first step to the end of the
  last, and every step counts, so the token totals equal what the server served.
* Tokens are the server's own usage numbers (``prompt_tokens`` + ``completion_tokens``), not
  estimates; a server that reports none is counted in ``missing_usage``. Latency is one step
  from sending to the last token; time to first token from sending to the first text. An
  invalid answer is not retried (``max_retries`` 0: a retry would hide the cost of a step).
* Errors never stop the bench: a failed step is counted (like a step: inside the window in
  ``duration`` mode, all of them in ``steps`` mode) with its message (the first distinct ones
  are kept), the session waits ``error_backoff`` seconds and tries the same step again, and
  the level is reported with what it measured. ``stop`` (Ctrl+C) cancels what is in
  flight and returns the levels already finished.

Nothing here imports Qt, the app or control: the caller gives plain settings and screenshots.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime
import itertools
import logging
import math
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from model.client import ClientConfig, HolotronClient
from model.coords import Convention
from model.errors import Cancelled, HolotronError
from model.loadbench.frames import Screenshot
from model.prompt import OUTCOME_DONE, PromptConfig, Turn, build_messages
from model.schema import Click, Hotkey, Scroll, Step, Type
from model.structured import step_output_schema

__all__ = [
    "CSV_COLUMNS",
    "DEFAULT_LEVELS",
    "KNEE_GAIN",
    "BenchConfig",
    "BenchReport",
    "FrameSource",
    "LevelResult",
    "LogFrames",
    "Reference",
    "compare",
    "format_errors",
    "format_table",
    "knee",
    "mean_session_tokens",
    "parse_levels",
    "percentile",
    "run_bench",
    "write_csv",
]

logger = logging.getLogger(__name__)

DEFAULT_LEVELS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 100)
MAX_LEVEL = 1000
_KEPT_ERRORS = 3  # distinct error messages kept per level

FrameSource = Callable[[int, int], Screenshot]
"""Screenshots for the sessions: ``frames(session_key, index)`` -> the index-th screenshot.

``session_key`` is unique per session of the whole bench (level and session number)."""

_TASKS = (
    "Open the quarterly report in the text editor and write its total in a new note.",
    "Find the invoice from last month in the Files app and email it to accounting.",
    "In the spreadsheet, sort the orders by date and save the file.",
    "Change the display settings to dark mode and close the settings window.",
    "Search the browser for the shipping status of order 4471 and note the delivery date.",
    "Archive every mail older than a week in the inbox.",
)


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class BenchConfig:
    """What to run. Exactly one of ``duration`` (seconds per level) and ``steps`` is set."""

    client: ClientConfig
    levels: tuple[int, ...] = DEFAULT_LEVELS
    duration: float | None = 60.0
    steps: int | None = None
    warmup: float = 30.0
    task_steps: int = 30
    convention: Convention = Convention.NORM1000
    thinking: bool = False
    max_images: int = 3
    error_backoff: float = 0.5

    def __post_init__(self) -> None:
        if (self.duration is None) == (self.steps is None):
            raise ValueError("give either a duration per level or a number of steps, not both")
        if self.duration is not None and self.duration <= 0:
            raise ValueError(f"duration must be positive, got {self.duration}")
        if self.steps is not None and self.steps < 1:
            raise ValueError(f"steps must be at least 1, got {self.steps}")
        if not self.levels:
            raise ValueError("give at least one concurrency level")
        for level in self.levels:
            if not 1 <= level <= MAX_LEVEL:
                raise ValueError(f"concurrency levels must be 1-{MAX_LEVEL}, got {level}")
        if self.task_steps < self.max_images:
            raise ValueError(f"task_steps must be at least max_images ({self.max_images})")
        if self.warmup < 0:
            raise ValueError("warmup cannot be negative")


def parse_levels(text: str) -> tuple[int, ...]:
    """``"1,2,4,100"`` -> (1, 2, 4, 100); raises ``ValueError`` with the problem."""
    levels: list[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        if not part.isdigit():
            raise ValueError(f"not a concurrency level: {part!r} (give numbers like 1,2,4,8)")
        level = int(part)
        if not 1 <= level <= MAX_LEVEL:
            raise ValueError(f"concurrency levels must be 1-{MAX_LEVEL}, got {level}")
        if level not in levels:
            levels.append(level)
    if not levels:
        raise ValueError("give at least one concurrency level, e.g. 1,2,4,8")
    return tuple(levels)


@dataclass(frozen=True)
class Reference:
    """A published throughput to compare with: total tokens/s at a concurrency level."""

    tokens_per_s: float
    concurrency: int

    @classmethod
    def parse(cls, text: str) -> Reference:
        """``"8900@100"`` (or ``"8,900@100"``) -> Reference(8900, 100)."""
        match = re.fullmatch(r"\s*([\d,_]+(?:\.\d+)?)\s*@\s*(\d+)\s*", text)
        if match is None:
            raise ValueError(f"not a reference: {text!r} (give TOKENS@LEVEL, e.g. 8900@100)")
        tokens = float(match.group(1).replace(",", "").replace("_", ""))
        level = int(match.group(2))
        if tokens <= 0 or level < 1:
            raise ValueError(f"not a reference: {text!r} (tokens/s and level must be positive)")
        return cls(tokens, level)


class LogFrames:
    """Screenshots from the action log, handed out so neighbouring sessions differ.

    Session ``k`` starts ``3 * k`` screenshots into the list and walks on from there; with
    fewer screenshots than sessions times three, some sessions send the same images.
    """

    def __init__(self, shots: Sequence[Screenshot]) -> None:
        if not shots:
            raise ValueError("no screenshots given")
        self.shots = list(shots)

    def __call__(self, session_key: int, index: int) -> Screenshot:
        return self.shots[(session_key * 3 + index) % len(self.shots)]


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class StepSample:
    """One finished step (or failed attempt) of a session."""

    finished_at: float  # time.monotonic()
    latency: float
    ttft: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    error: tuple[str, str] | None = None  # (message, fix)


@dataclass(frozen=True)
class LevelResult:
    """What one concurrency level measured (see the module doc for the method)."""

    concurrency: int
    seconds: float
    steps: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    ttft_p50: float | None
    ttft_p95: float | None
    latency_p50: float | None
    latency_p95: float | None
    error_messages: tuple[tuple[str, str], ...] = ()  # first distinct (message, fix)
    missing_usage: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def total_tokens_per_s(self) -> float:
        """Prompt plus generated tokens per second: the published measure."""
        return self.total_tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def generated_tokens_per_s(self) -> float:
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0

    @property
    def mean_prompt_tokens(self) -> float | None:
        return self.prompt_tokens / self.steps if self.steps else None


@dataclass(frozen=True)
class BenchReport:
    """The finished levels, in the order run; ``interrupted`` when a stop cut the sweep short."""

    levels: tuple[LevelResult, ...]
    interrupted: bool
    model: str
    endpoint: str
    mode: str  # e.g. "60 s per level after warm-up" or "3 steps per session"
    started: datetime.datetime = field(default_factory=datetime.datetime.now)

    @property
    def ok(self) -> bool:
        """Every level ran to its end with no failed step and at least one step measured."""
        return (
            not self.interrupted
            and bool(self.levels)
            and all(lv.errors == 0 and lv.steps > 0 for lv in self.levels)
        )

    def level(self, concurrency: int) -> LevelResult | None:
        return next((lv for lv in self.levels if lv.concurrency == concurrency), None)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _summarize(concurrency: int, seconds: float, samples: Sequence[StepSample]) -> LevelResult:
    good = [s for s in samples if s.error is None]
    failed = [s for s in samples if s.error is not None]
    distinct: list[tuple[str, str]] = []
    for sample in failed:
        assert sample.error is not None
        if sample.error not in distinct and len(distinct) < _KEPT_ERRORS:
            distinct.append(sample.error)
    ttfts = [s.ttft for s in good if s.ttft is not None]
    latencies = [s.latency for s in good]
    return LevelResult(
        concurrency=concurrency,
        seconds=seconds,
        steps=len(good),
        errors=len(failed),
        prompt_tokens=sum(s.prompt_tokens or 0 for s in good),
        completion_tokens=sum(s.completion_tokens or 0 for s in good),
        ttft_p50=percentile(ttfts, 50),
        ttft_p95=percentile(ttfts, 95),
        latency_p50=percentile(latencies, 50),
        latency_p95=percentile(latencies, 95),
        error_messages=tuple(distinct),
        missing_usage=sum(1 for s in good if s.prompt_tokens is None),
    )


# --------------------------------------------------------------------------- one session


def _made_up_step(rng: random.Random, step_no: int) -> Step:
    """A plausible earlier step for a session that starts in the middle of a task."""
    kind = rng.randrange(4)
    x, y = rng.randrange(20, 980), rng.randrange(20, 960)
    note = f"The order number is {rng.randrange(1000, 9999)}." if rng.random() < 0.2 else ""
    if kind == 0:
        return Step(
            note=note,
            thought="Open the next item.",
            action=Click(element=f"Item {step_no} in the list", x=x, y=y),
        )
    if kind == 1:
        return Step(
            note=note,
            thought="Fill in the field.",
            action=Type(text=f"quarterly report {rng.randrange(100)}", press_enter=True),
        )
    if kind == 2:
        return Step(
            note=note,
            thought="The rest of the list is below.",
            action=Scroll(element="File list", x=x, y=y, direction="down"),
        )
    return Step(note=note, thought="Save the changes.", action=Hotkey(keys=["ctrl", "s"]))


class _Session:
    """One simulated agent: its own client, task and history; runs on its own thread."""

    def __init__(
        self,
        config: BenchConfig,
        client: HolotronClient,
        frames: FrameSource,
        key: int,
        start_step: int,
        level_stop: threading.Event,
        record: Callable[[int, StepSample], None],
    ) -> None:
        self.config = config
        self.client = client
        self.frames = frames
        self.key = key
        self.level_stop = level_stop
        self.record = record
        self.schema = step_output_schema()
        self.rng = random.Random(key)
        self.shot_no = 0
        self.task = ""
        self.prompt: PromptConfig | None = None
        self.turns: list[Turn] = []
        self.setup_error: BaseException | None = None
        self._start_task(start_step)

    def _shot(self) -> Screenshot:
        shot = self.frames(self.key, self.shot_no)
        self.shot_no += 1
        return shot

    def _start_task(self, start_step: int) -> None:
        """A new task whose history already holds ``start_step - 1`` made-up steps."""
        self.task = _TASKS[self.rng.randrange(len(_TASKS))]
        keep = self.config.max_images
        turns: list[Turn] = []
        for step_no in range(1, start_step):
            # Only the newest screenshots are ever sent; older turns need no image bytes.
            shown = step_no > start_step - keep
            shot = self._shot() if shown else None
            turns.append(
                Turn(
                    step_no=step_no,
                    image=shot.data if shot else b"",
                    mime=shot.mime if shot else "image/jpeg",
                    step=_made_up_step(self.rng, step_no),
                    outcome=OUTCOME_DONE,
                )
            )
        current = self._shot()
        turns.append(Turn(step_no=start_step, image=current.data, mime=current.mime))
        self.turns = turns
        self.prompt = PromptConfig(
            convention=self.config.convention,
            sent_width=current.width,
            sent_height=current.height,
            today=datetime.date.today(),
            thinking=self.config.thinking,
            max_images=self.config.max_images,
        )

    def _advance(self, step: Step) -> None:
        current = self.turns[-1]
        self.turns[-1] = dataclasses.replace(current, step=step, outcome=OUTCOME_DONE)
        if current.step_no >= self.config.task_steps:
            self._start_task(1)
            return
        # Drop the bytes of screenshots that left the window: 100 sessions x 30 steps of
        # half-megabyte frames would otherwise pile up.
        aged = len(self.turns) - self.config.max_images
        if aged >= 0 and self.turns[aged].image:
            self.turns[aged] = dataclasses.replace(self.turns[aged], image=b"")
        shot = self._shot()
        self.turns.append(Turn(step_no=current.step_no + 1, image=shot.data, mime=shot.mime))

    def run(self, ready: threading.Barrier, limit: int | None) -> None:
        """Wait for the level to start, then step until the level stops (or ``limit`` steps)."""
        try:
            self.client.resolve_model()
        except HolotronError:
            pass  # the first step reports it, as an error of the level
        except Exception:
            # Anything else too: a thread that dies here never reaches the barrier, and the
            # level would wait for it forever.
            logger.exception("bench session %d could not resolve the model", self.key)
        try:
            ready.wait()
        except threading.BrokenBarrierError:
            return
        done = 0
        while not self.level_stop.is_set() and (limit is None or done < limit):
            done += 1
            assert self.prompt is not None
            sent = time.monotonic()
            try:
                messages = build_messages(self.task, self.turns, self.prompt)
                reply = self.client.next_step(
                    messages, self.schema, should_stop=self.level_stop.is_set
                )
            except Cancelled:
                return
            except HolotronError as exc:
                if self.level_stop.is_set():
                    return  # cut off by the end of the level, not a failure of the server
                self._failed(sent, exc.message, exc.fix.text if exc.fix else "")
                continue
            except Exception as exc:  # a bug must show as an error of the level, not a hang
                logger.exception("bench session %d failed", self.key)
                self._failed(sent, f"{type(exc).__name__}: {exc}", "see the log file")
                continue
            self.record(
                self.key,
                StepSample(
                    finished_at=time.monotonic(),
                    latency=reply.elapsed,
                    ttft=reply.time_to_first_token,
                    prompt_tokens=reply.prompt_tokens,
                    completion_tokens=reply.completion_tokens,
                ),
            )
            try:
                self._advance(reply.step)
            except Exception as exc:
                logger.exception("bench session %d failed", self.key)
                self._failed(sent, f"{type(exc).__name__}: {exc}", "see the log file")

    def _failed(self, sent: float, message: str, fix: str) -> None:
        now = time.monotonic()
        self.record(self.key, StepSample(now, now - sent, None, None, None, (message, fix)))
        # An instant failure (a 400) must not turn into a busy loop of 100 threads.
        self.level_stop.wait(self.config.error_backoff)


# --------------------------------------------------------------------------- the sweep

ClientFactory = Callable[[ClientConfig], HolotronClient]


def run_bench(
    config: BenchConfig,
    frames: FrameSource,
    *,
    stop: threading.Event | None = None,
    on_progress: Callable[[str], None] | None = None,
    on_level: Callable[[LevelResult], None] | None = None,
    client_factory: ClientFactory = HolotronClient,
) -> BenchReport:
    """Run every level of ``config`` in turn and return what was measured.

    ``stop`` (set from any thread, e.g. a Ctrl+C handler) cancels the level in flight and
    returns the finished ones with ``interrupted`` set. ``on_progress`` receives one line per
    phase, ``on_level`` each level's result as soon as it is known. Server failures never
    raise: they are counted in the levels.
    """
    stop = stop or threading.Event()
    progress = on_progress or (lambda _line: None)
    client_config = dataclasses.replace(config.client, max_retries=0)
    if config.duration is not None:
        mode = f"{config.duration:g} s per level after warm-up"
    else:
        mode = f"{config.steps} step(s) per session"
    # Resolve the served name once, so no session asks for it inside a measured level.
    probe = client_factory(client_config)
    try:
        client_config = dataclasses.replace(client_config, model=probe.resolve_model())
    except HolotronError as exc:
        logger.warning("bench: cannot resolve the model name: %s", exc.message)
    finally:
        probe.close()
    results: list[LevelResult] = []
    interrupted = False
    for number, level in enumerate(config.levels):
        if stop.is_set():
            interrupted = True
            break
        result = _run_level(
            config, client_config, frames, level, number, stop, progress, client_factory
        )
        if result is None:
            interrupted = True
            break
        results.append(result)
        if on_level is not None:
            on_level(result)
    return BenchReport(
        levels=tuple(results),
        interrupted=interrupted,
        model=client_config.model or "",
        endpoint=client_config.base_url,
        mode=mode,
    )


def _start_steps(level: int, config: BenchConfig) -> list[int]:
    # Spread over the task, never before step max_images (see the module doc).
    first = config.max_images
    span = config.task_steps - first + 1
    return [first + (i * span) // level for i in range(level)]


def _run_level(
    config: BenchConfig,
    client_config: ClientConfig,
    frames: FrameSource,
    level: int,
    number: int,
    stop: threading.Event,
    progress: Callable[[str], None],
    client_factory: ClientFactory,
) -> LevelResult | None:
    """One level; None when ``stop`` cut it short."""
    samples: list[StepSample] = []
    finished_sessions: set[int] = set()
    lock = threading.Lock()

    def record(key: int, sample: StepSample) -> None:
        with lock:
            samples.append(sample)
            finished_sessions.add(key)

    level_stop = threading.Event()
    progress(f"level {level}: preparing {level} session(s)")
    ready = threading.Barrier(level + 1)
    sessions: list[_Session] = []
    threads: list[threading.Thread] = []
    limit = config.steps
    try:
        for i, start_step in enumerate(_start_steps(level, config)):
            key = (number + 1) * 100_000 + i
            session = _Session(
                config, client_factory(client_config), frames, key, start_step, level_stop, record
            )
            sessions.append(session)
            thread = threading.Thread(
                target=session.run, args=(ready, limit), name=f"bench-{level}-{i}", daemon=True
            )
            threads.append(thread)
            thread.start()
            if stop.is_set():
                break
        if not stop.is_set():
            # Sessions resolve the model name before the barrier: wait for them, stop-aware.
            _wait_barrier(ready, level, stop)
        if stop.is_set():
            return None
        started = time.monotonic()
        if config.duration is not None:
            progress(f"level {level}: warming up (until every session finished a step)")
            warm_end = started + config.warmup
            while time.monotonic() < warm_end and not stop.is_set():
                with lock:
                    if len(finished_sessions) >= level:
                        break
                time.sleep(0.05)
            window_start = time.monotonic()
            progress(f"level {level}: measuring for {config.duration:g} s")
            window_end = window_start + config.duration
            while time.monotonic() < window_end and not stop.is_set():
                time.sleep(min(0.05, max(0.0, window_end - time.monotonic())))
            if stop.is_set():
                return None
            window_end = time.monotonic()
            with lock:
                counted = [s for s in samples if window_start <= s.finished_at <= window_end]
            seconds = window_end - window_start
        else:
            progress(f"level {level}: {limit} step(s) per session")
            while any(t.is_alive() for t in threads) and not stop.is_set():
                time.sleep(0.02)
            if stop.is_set():
                return None
            with lock:
                counted = list(samples)
            last = max((s.finished_at for s in counted), default=started)
            seconds = max(last - started, 1e-6)
        return _summarize(level, seconds, counted)
    finally:
        level_stop.set()
        ready.abort()
        for session in sessions:
            session.client.cancel()
        # One deadline for all: a cancelled session ends within milliseconds; a stuck one must
        # not hold the sweep for ten seconds per thread.
        deadline = time.monotonic() + 15
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        for session in sessions:
            try:
                session.client.close()
            except Exception:
                logger.debug("closing a bench client", exc_info=True)
        forget = getattr(frames, "forget", None)
        if callable(forget):
            forget()


def _wait_barrier(ready: threading.Barrier, level: int, stop: threading.Event) -> None:
    done = threading.Event()

    def wait() -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            ready.wait()
        done.set()

    threading.Thread(target=wait, name=f"bench-{level}-start", daemon=True).start()
    while not done.wait(0.05):
        if stop.is_set():
            ready.abort()
            return


# --------------------------------------------------------------------------- output

CSV_COLUMNS = (
    "concurrency",
    "seconds",
    "steps",
    "errors",
    "total_tokens_per_s",
    "generated_tokens_per_s",
    "steps_per_s",
    "ttft_p50_s",
    "ttft_p95_s",
    "latency_p50_s",
    "latency_p95_s",
    "prompt_tokens",
    "completion_tokens",
    "mean_prompt_tokens",
    "first_error",
)


def _num(value: float | None, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def write_csv(report: BenchReport, path: Path) -> Path:
    """One row per level, the columns of :data:`CSV_COLUMNS`; returns ``path``."""
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for lv in report.levels:
            writer.writerow(
                [
                    lv.concurrency,
                    _num(lv.seconds),
                    lv.steps,
                    lv.errors,
                    _num(lv.total_tokens_per_s, 1),
                    _num(lv.generated_tokens_per_s, 1),
                    _num(lv.steps_per_s),
                    _num(lv.ttft_p50),
                    _num(lv.ttft_p95),
                    _num(lv.latency_p50),
                    _num(lv.latency_p95),
                    lv.prompt_tokens,
                    lv.completion_tokens,
                    _num(lv.mean_prompt_tokens, 0),
                    lv.error_messages[0][0] if lv.error_messages else "",
                ]
            )
    return path


def _secs(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def format_table(report: BenchReport) -> str:
    """The levels as a plain-text table for the terminal."""
    head = (
        "concurrency", "steps", "errors", "total tok/s", "gen tok/s", "steps/s",
        "TTFT p50", "TTFT p95", "step p50", "step p95",
    )  # fmt: skip
    rows = [
        (
            str(lv.concurrency),
            str(lv.steps),
            str(lv.errors),
            f"{lv.total_tokens_per_s:,.0f}",
            f"{lv.generated_tokens_per_s:,.1f}",
            f"{lv.steps_per_s:.2f}",
            _secs(lv.ttft_p50),
            _secs(lv.ttft_p95),
            _secs(lv.latency_p50),
            _secs(lv.latency_p95),
        )
        for lv in report.levels
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def format_errors(report: BenchReport) -> str:
    """The levels' error messages (first distinct ones), with their fix; empty when none."""
    lines: list[str] = []
    for lv in report.levels:
        if not lv.errors:
            continue
        lines.append(f"level {lv.concurrency}: {lv.errors} failed step(s)")
        for message, fix in lv.error_messages:
            lines.append(f"  - {message}")
            lines.append(f"    Fix: {fix}")
        if lv.missing_usage:
            lines.append(f"  ({lv.missing_usage} step(s) had no token usage from the server)")
    missing = [lv for lv in report.levels if lv.missing_usage and not lv.errors]
    for lv in missing:
        lines.append(
            f"level {lv.concurrency}: {lv.missing_usage} step(s) came without token usage "
            "(the server ignores stream_options.include_usage): token rates undercount"
        )
    return "\n".join(lines)


#: Past the knee, doubling the sessions adds less than this share of throughput.
KNEE_GAIN = 0.10


def knee(report: BenchReport, gain: float = KNEE_GAIN) -> LevelResult | None:
    """The knee of the throughput curve: the lowest measured level after which more sessions
    add less than ``gain`` of total tokens/s per doubling of sessions (the gain between two
    measured levels is scaled to a doubling, so 64 -> 100 counts as 0.64 of one). None while
    the curve still rises at the highest level, or with fewer than two clean levels."""
    clean = sorted((lv for lv in report.levels if lv.steps > 0 and lv.errors == 0),
                   key=lambda lv: lv.concurrency)
    for low, high in itertools.pairwise(clean):
        if low.total_tokens_per_s <= 0:
            continue
        doublings = math.log2(high.concurrency / low.concurrency)
        per_doubling = (high.total_tokens_per_s / low.total_tokens_per_s) ** (1 / doublings) - 1
        if per_doubling < gain:
            return low
    return None


def mean_session_tokens(report: BenchReport) -> int | None:
    """Tokens a session holds at a step (prompt plus answer), averaged over the highest clean
    level: the context the capacity plan should be asked about."""
    clean = [lv for lv in report.levels if lv.steps > 0 and lv.errors == 0]
    if not clean:
        return None
    top = max(clean, key=lambda lv: lv.concurrency)
    return round(top.total_tokens / top.steps) or None


def compare(report: BenchReport, reference: Reference) -> str:
    """The measured total tokens/s at the reference's level against it, in one line."""
    ref = f"{reference.tokens_per_s:,.0f}"
    level = report.level(reference.concurrency)
    if level is None:
        measured = ", ".join(str(lv.concurrency) for lv in report.levels) or "none"
        return (
            f"the reference {ref} tok/s is at concurrency {reference.concurrency}, "
            f"which was not measured (levels: {measured}); add it to --levels"
        )
    ratio = level.total_tokens_per_s / reference.tokens_per_s
    return (
        f"{level.total_tokens_per_s:,.0f} tok/s at {level.concurrency} = {ratio:.2f}x "
        f"the reference {ref}"
    )
