"""Benchmark: holodesk's own time per step with an instant model, by component.

Each screen size gets a private Xvfb showing the capture bench's busy desktop (menus, a file
list, code, a web page, a photo) with the Tk target window on top. For each kind of step,
`holodesk run` (a subprocess, default settings) runs against the fake vLLM server answering
at once with a script of that step repeated:

* move: the pointer to points across the desktop (nothing repaints: no hover effects);
* click: alternately on two lines of the target's list (the selection repaints at once);
* type: five characters into the target's field (they appear at once);
* wait: 0.2 and 0.3 s in turn ("beyond the wait" is the step less its seconds).

Per step, from the action log (app/store.py, timings of app/agent.py): the time from one step's
start to the next's, less the server's own handling of the request (the "model time", zero
generation here); split into capture (grab + settle frame), save (thumbnail + screenshot
files), client (the request less the server's time: prompt, JSON, HTTP, parsing), exec (the
input), settle (the wait after it) and other (the rest: policy, target lookup, log writes).
Beside it, the capture floor: grab + settle frame measured in the same run by this process.
Then the process exit (the run's end in the log to the process gone) and, at 1080p, RSS over
200 steps.

    .venv/bin/python bench/step.py [--steps 30] [--sizes 1920x1080,3840x2160] [--rss-steps 200]
        [--compare /work/main]   # also the same steps with another checkout's holodesk

Targets (issue 13): median <= 80 ms for move and wait (beyond the wait), <= 180 ms for click
and type, at 1080p; 1.5x those at 4K; exit <= 150 ms; RSS flat within 20 MB over 200 steps.
Exits 1 when one is missed. The settle detector's safety (never acting mid-change) is
bench/settle.py's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from capture import busy_desktop  # noqa: E402

from app.store import ActionLog, StepRecord  # noqa: E402
from control.capture import MssCapturer, target_size  # noqa: E402
from model.coords import Convention, FrameGeometry, Rect, from_screen  # noqa: E402
from tests.support.e2e import holodesk_argv, holodesk_env  # noqa: E402
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy  # noqa: E402
from tests.support.home import REPO_ROOT, Home, make_home  # noqa: E402
from tests.support.target_app import RunningApp  # noqa: E402
from tests.support.xvfb import Xvfb  # noqa: E402

KINDS = ("move", "click", "type", "wait")
TARGET_MS = {"move": 80.0, "wait": 80.0, "click": 180.0, "type": 180.0}
TARGET_4K_FACTOR = 1.5
EXIT_TARGET_MS = 150.0
RSS_TARGET_MB = 20.0
WAITS_S = (0.2, 0.3)
COMPONENTS = ("capture", "save", "client", "exec", "settle", "other")


class TimedVLLM(FakeVLLM):
    """The fake server noting how long it handles each chat request (body read to answer
    sent): the model's time, which the bench takes out of the step."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.handled_ms: list[float] = []

    def _chat(self, h: Any, raw: bytes) -> None:
        started = time.perf_counter()
        try:
            super()._chat(h, raw)  # type: ignore[misc]
        finally:
            self.handled_ms.append((time.perf_counter() - started) * 1000)


@dataclass
class KindResult:
    kind: str
    own_ms: list[float] = field(default_factory=list)
    parts: dict[str, list[float]] = field(default_factory=lambda: {c: [] for c in COMPONENTS})
    exit_ms: float = 0.0
    outcome: str = ""


def _norm(x: int, y: int, geom: FrameGeometry) -> dict[str, int]:
    nx, ny = from_screen(x, y, Convention.NORM1000, geom)
    return {"x": round(nx), "y": round(ny)}


def script_for(kind: str, steps: int, app: RunningApp, geom: FrameGeometry,
               width: int, height: int) -> list[dict[str, Any]]:
    """``steps`` scripted steps of ``kind`` (a first click into the field for ``type``)."""
    out: list[dict[str, Any]] = []
    if kind == "type":
        fx, fy = app.widgets["field"].solid_center
        out.append({"thought": "focus", "action": {"action": "click", "element": "field",
                                                    **_norm(fx, fy, geom)}})
    left, top, w, _h = app.widgets["list"].rect
    lines = [(left + w // 2, top + 10), (left + w // 2, top + 40)]
    for i in range(steps):
        if kind == "move":
            # Across the busy desktop, outside the target window, never twice the same point.
            x = width // 2 + (i % 7) * width // 20
            y = height // 2 + (i % 5) * height // 12
            action = {"action": "move", "element": "desktop", **_norm(x, y, geom)}
        elif kind == "click":
            x, y = lines[i % 2]
            action = {"action": "click", "element": "list line", **_norm(x, y, geom)}
        elif kind == "type":
            action = {"action": "type", "text": f"ab{i % 10}cd"}
        else:
            action = {"action": "wait", "seconds": WAITS_S[i % 2]}
        out.append({"thought": kind, "action": action})
    out.append({"thought": "done", "action": {"action": "answer", "text": "done"}})
    return out


def run_holodesk(home: Home, server: Xvfb, fake: TimedVLLM, workdir: Path, steps: int,
                 on_pid: Callable[[int], None] | None = None,
                 code: Path | None = None) -> tuple[int, float]:
    """One `holodesk run` to its end; (exit code, wall time when the process was gone).
    ``code``: another checkout whose holodesk runs instead of this one's."""
    env = holodesk_env(home, server)
    # The defaults under test, not the test suite's quick settle floor.
    env.pop("HOLODESK_SETTLE_MIN", None)
    env.pop("HOLODESK_SETTLE_MAX", None)
    args = ("run", "bench steps", "--confirm", "never", "--max-steps", str(steps + 5),
            "--endpoint", fake.base_url)
    argv, cwd = holodesk_argv(*args), REPO_ROOT
    if code is not None:
        env["PYTHONPATH"] = str(code)
        argv, cwd = [sys.executable, "-m", "ui.main", *args], code
    workdir.mkdir(parents=True, exist_ok=True)
    with (workdir / "stdout").open("w") as out, (workdir / "stderr").open("w") as err:
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=err)
        if on_pid is not None:
            on_pid(proc.pid)
        code = proc.wait(timeout=600)
        gone = time.time()
    return code, gone


def last_run(home: Home) -> tuple[Any, list[StepRecord]]:
    log = ActionLog.open(home.data / "holodesk" / "holodesk.db")
    try:
        run = log.list_runs(1)[0]
        return run, log.steps(run.id)
    finally:
        log.close()


def measure_kind(kind: str, steps: int, home: Home, server: Xvfb, app: RunningApp,
                 geom: FrameGeometry, size: tuple[int, int], workdir: Path,
                 code: Path | None = None) -> KindResult:
    script = script_for(kind, steps, app, geom, *size)
    with TimedVLLM(ScriptedPolicy(script)) as fake:
        fake.keep_requests = False
        fake.decode_images = False
        status, gone = run_holodesk(home, server, fake, workdir / kind, steps, code=code)
        handled = list(fake.handled_ms)
    run, records = last_run(home)
    result = KindResult(kind, outcome=f"{run.outcome} (exit {status})")
    result.exit_ms = (gone - (run.finished_at or gone)) * 1000
    first = 2 if kind == "type" else 1  # the focusing click is not a type step
    # Step k's own time needs step k+1's start; the first measured step warms up (imports,
    # connection), so it is left out too.
    for k in range(first, len(records) - 1):
        rec, nxt = records[k], records[k + 1]
        t = rec.timings
        if rec.action is None or rec.action.get("action") != kind:
            continue
        server_ms = handled[k] if k < len(handled) else 0.0
        own = (nxt.started_at - rec.started_at) * 1000 - server_ms
        if kind == "wait":
            own -= float(rec.action["seconds"]) * 1000
        parts = {
            "capture": t.get("capture_ms", 0.0),
            "save": t.get("save_ms", 0.0),
            "client": t.get("model_ms", 0.0) - server_ms,
            "exec": t.get("exec_ms", 0.0) - (float(rec.action["seconds"]) * 1000
                                             if kind == "wait" else 0.0),
            "settle": t.get("settle_ms", 0.0),
        }
        if kind == "wait":
            # The watched end of the wait is part of its seconds: exec + settle less the wait.
            parts["exec"], parts["settle"] = 0.0, parts["exec"] + parts["settle"]
        parts["other"] = own - sum(parts.values())
        result.own_ms.append(own)
        for name, value in parts.items():
            result.parts[name].append(value)
    return result


def capture_floor(server: Xvfb, runs: int = 20) -> tuple[float, float]:
    """Median ms of grab() + grab_small() (what a step cannot do without) and of grab_small()."""
    with MssCapturer(display=server.display) as cap:
        cap.grab()
        full: list[float] = []
        small: list[float] = []
        for _ in range(runs):
            t0 = time.perf_counter()
            cap.grab()
            t1 = time.perf_counter()
            cap.grab_small()
            t2 = time.perf_counter()
            full.append((t2 - t0) * 1000)
            small.append((t2 - t1) * 1000)
    return statistics.median(full), statistics.median(small)


def rss_over(steps: int, home: Home, server: Xvfb, app: RunningApp, geom: FrameGeometry,
             size: tuple[int, int], workdir: Path) -> tuple[float, float, float]:
    """RSS (MB) of `holodesk run` at step 20 and its highest and last after it, over ``steps``
    steps alternating moves and clicks (each request carries the whole text history)."""
    moves = script_for("move", steps // 2, app, geom, *size)[:-1]
    clicks = script_for("click", steps - steps // 2, app, geom, *size)
    script = [step for pair in zip(moves, clicks, strict=False) for step in pair]
    script += clicks[len(moves):]
    samples: list[tuple[int, float]] = []
    stop = threading.Event()

    with TimedVLLM(ScriptedPolicy(script)) as fake:
        fake.keep_requests = False
        fake.decode_images = False

        def watch(pid: int) -> None:
            def loop() -> None:
                status = Path(f"/proc/{pid}/status")
                while not stop.is_set():
                    try:
                        text = status.read_text()
                    except OSError:
                        return
                    for line in text.splitlines():
                        if line.startswith("VmRSS:"):
                            samples.append((fake.chat_requests, int(line.split()[1]) / 1024))
                    stop.wait(0.02)

            threading.Thread(target=loop, daemon=True).start()

        run_holodesk(home, server, fake, workdir / "rss", steps, on_pid=watch)
        stop.set()
    later = [mb for n, mb in samples if n >= 20]
    if not later:
        return 0.0, 0.0, 0.0
    return later[0], max(later), later[-1]


def bench_size(width: int, height: int, steps: int, rss_steps: int,
               work: Path, compare: Path | None = None) -> dict[str, Any]:
    picture = work / f"desktop-{width}x{height}.png"
    busy_desktop(width, height).save(picture)
    home = make_home(work / f"home-{width}")
    row: dict[str, Any] = {"size": (width, height), "kinds": {}}
    with Xvfb(width, height) as server, server.activated():
        subprocess.run(["xdotool", "mousemove", str(width - 5), str(height - 5)],
                       env=server.env(), check=True)
        desktop = RunningApp(server, work / f"desktop-{width}",
                             geometry=f"{width}x{height}+0+0", extra_args=("--image", str(picture)))
        app = RunningApp(server, work / f"app-{width}", geometry="1000x660+60+60")
        try:
            (sw, sh), _ = target_size(width, height, 2048)
            geom = FrameGeometry(sw, sh, Rect(0, 0, width, height))
            row["floor"] = capture_floor(server)
            for kind in KINDS:
                print(f"... {width}x{height} {kind}", file=sys.stderr, flush=True)
                row["kinds"][kind] = measure_kind(kind, steps, home, server, app, geom,
                                                  (width, height), work / f"runs-{width}")
                if compare is not None:
                    # Right after, on the same desktop: the load the two see is alike.
                    row.setdefault("before", {})[kind] = measure_kind(
                        kind, steps, home, server, app, geom, (width, height),
                        work / f"before-{width}", code=compare)
            if rss_steps:
                print(f"... {width}x{height} RSS over {rss_steps} steps", file=sys.stderr,
                      flush=True)
                row["rss"] = rss_over(rss_steps, home, server, app, geom, (width, height),
                                      work / f"runs-{width}")
        finally:
            app.stop()
            desktop.stop()
    return row


def report(rows: list[dict[str, Any]]) -> bool:
    met_all = True
    print("\nholodesk's own time per step, instant model, busy desktop (median ms; model time "
          "excluded; wait: beyond its seconds)\n")
    print("| screen | step | n | own | capture | save | client | exec | settle | other | "
          "capture floor | target | met |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for row in rows:
        width, height = row["size"]
        factor = 1.0 if width * height <= 1920 * 1080 else TARGET_4K_FACTOR
        floor, _small = row["floor"]
        for kind in KINDS:
            r: KindResult = row["kinds"][kind]
            if not r.own_ms:
                print(f"| {width}x{height} | {kind} | 0 | - | | | | | | | | | NOT MET "
                      f"({r.outcome}) |")
                met_all = False
                continue
            own = statistics.median(r.own_ms)
            target = TARGET_MS[kind] * factor
            ok = own <= target and r.outcome.startswith("answered")
            met_all &= ok
            parts = " | ".join(f"{statistics.median(r.parts[c]):.0f}" for c in COMPONENTS)
            print(f"| {width}x{height} | {kind} | {len(r.own_ms)} | {own:.0f} | {parts} | "
                  f"{floor:.0f} | <= {target:.0f} | {'yes' if ok else 'NO'} |")
    before_rows = [row for row in rows if "before" in row]
    if before_rows:
        print("\nThe same steps with the --compare checkout, each run right after this one's "
              "(median ms):\n")
        print("| screen | step | n | own | capture | save | client | exec | settle | other | "
              "this checkout | exit ms |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in before_rows:
            width, height = row["size"]
            for kind in KINDS:
                b: KindResult = row["before"][kind]
                ours: KindResult = row["kinds"][kind]
                if not b.own_ms or not ours.own_ms:
                    continue
                parts = " | ".join(f"{statistics.median(b.parts[c]):.0f}" for c in COMPONENTS)
                print(f"| {width}x{height} | {kind} | {len(b.own_ms)} | "
                      f"{statistics.median(b.own_ms):.0f} | {parts} | "
                      f"{statistics.median(ours.own_ms):.0f} | {b.exit_ms:.0f} |")
    print("\nProcess exit after the run ended (ms): ", end="")
    exits = [(row["size"], k, row["kinds"][k].exit_ms) for row in rows for k in KINDS]
    worst = max(e for _, _, e in exits)
    print(", ".join(f"{w}x{h} {k} {e:.0f}" for (w, h), k, e in exits))
    exit_ok = worst <= EXIT_TARGET_MS
    met_all &= exit_ok
    print(f"worst {worst:.0f} ms, target <= {EXIT_TARGET_MS:.0f}: "
          f"{'met' if exit_ok else 'NOT MET'}")
    for row in rows:
        floor, small = row["floor"]
        width, height = row["size"]
        print(f"{width}x{height}: capture floor {floor:.1f} ms (of which the settle frame "
              f"{small:.1f} ms)")
        if "rss" in row:
            at_20, peak, last = row["rss"]
            growth = peak - at_20
            ok = growth <= RSS_TARGET_MB and at_20 > 0
            met_all &= ok
            print(f"{width}x{height}: RSS at step 20 {at_20:.0f} MB, highest after {peak:.0f} MB, "
                  f"at the end {last:.0f} MB: growth {growth:.1f} MB, target <= "
                  f"{RSS_TARGET_MB:.0f}: {'met' if ok else 'NOT MET'}")
    print(f"\nAll targets: {'met' if met_all else 'NOT met'}")
    return met_all


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--sizes", default="1920x1080,3840x2160")
    parser.add_argument("--rss-steps", type=int, default=200,
                        help="steps of the RSS run at the first size (0: none)")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT",
                        help="also run the holodesk of this checkout (e.g. /work/main), each "
                        "kind of step right after this one's: a before and after under the "
                        "same load")
    args = parser.parse_args()
    compare = args.compare.resolve() if args.compare else None
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="holodesk-bench-step-") as tmp:
        for i, (w, h) in enumerate(sizes):
            rows.append(bench_size(w, h, args.steps, args.rss_steps if i == 0 else 0,
                                   Path(tmp), compare))
    if args.json:
        args.json.write_text(json.dumps(
            [{"size": r["size"], "floor": r["floor"], "rss": r.get("rss"),
              "kinds": {k: {"own_ms": v.own_ms, "parts": v.parts, "exit_ms": v.exit_ms,
                            "outcome": v.outcome} for k, v in r["kinds"].items()}}
             for r in rows], indent=1))
    return 0 if report(rows) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
