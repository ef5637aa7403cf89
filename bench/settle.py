"""Benchmark: dead time per step with the settle detector beside a fixed 1 s sleep.

A Tk window on a private Xvfb animates for a known time after its "Animate" button is
clicked (a 420x290 area flips colour every 40 ms, like a progress animation). Each trial
clicks it through the real executor (PyAutoGuiBackend), then waits the way the agent loop
would, and compares the moment it would act with the moment the window really settled (the
app logs when it requested its last change; monotonic clocks are shared across processes on
Linux). A click on a button with no visible effect shows the cost of an action that changes
nothing.

    .venv/bin/python bench/settle.py [--trials 5]

Target: never act before the window settled, and at most 150 ms after it did.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from control.capture import MssCapturer  # noqa: E402
from control.input import Executor, PyAutoGuiBackend  # noqa: E402
from control.settle import settle_for, wait_until_settled  # noqa: E402
from control.stop import StopLatch  # noqa: E402
from model.coords import Point  # noqa: E402
from model.schema import Click  # noqa: E402
from tests.support.target_app import RunningApp  # noqa: E402
from tests.support.xvfb import Xvfb  # noqa: E402

FIXED_SLEEP_S = 1.0
# The wait the agent loop does after a click (app/agent.py: no floor by default).
CLICK = settle_for("click")
MAX_LATE_MS = 150.0
SCENARIOS_MS = [300, 800, 1500]


def run_scenario(server: Xvfb, workdir: Path, animate_ms: int, trials: int,
                 cap: MssCapturer, executor: Executor) -> dict[str, list[float]]:
    app = RunningApp(server, workdir / f"anim-{animate_ms}", geometry="1000x660+0+0",
                     extra_args=("--animate-ms", str(max(animate_ms, 1))))
    out: dict[str, list[float]] = {"detector": [], "fixed": [], "waited": [], "stall": []}
    button = "animate" if animate_ms else "save"
    try:
        for _ in range(trials):
            mark = app.mark()
            # The agent's way (app/agent.py _act): the wait's own frames, a change dated from
            # its look's read, the next screenshot made during the wait.
            grab = cap.small_grabber()
            before = grab()
            x, y = app.widgets[button].solid_center
            executor.execute(Click(element=button, x=0, y=0), [Point(x, y)])
            acted = time.monotonic()
            result = wait_until_settled(grab, executor.latch, before=before,
                                        min_s=0.0, reaction_s=CLICK.reaction_s,
                                        quiet_s=CLICK.quiet_s, on_still=grab.prepare,
                                        looked_at=grab.looked_at)
            returned = time.monotonic()
            if animate_ms:
                end = app.wait_for(lambda m=mark: app.events_since(m, "animate_end"),
                                   what="animation end")[0]
                settled_at = float(end["changed_at"])
                changes = [float(e["changed_at"]) for e in app.events_since(mark, "animate_frame")]
                changes.append(settled_at)
                # The longest pause of the animation: a loaded machine can stall the app
                # longer than the quiet period, which no detector can tell from the end.
                out["stall"].append(max(b - a for a, b in itertools.pairwise(changes)) * 1000)
            else:
                app.wait_for(lambda m=mark: app.events_since(m, "release"), what="click")
                settled_at = acted  # nothing changes: settled as soon as the click is done
            out["detector"].append((returned - settled_at) * 1000)
            out["fixed"].append((acted + FIXED_SLEEP_S - settled_at) * 1000)
            out["waited"].append(result.waited_s * 1000)
            time.sleep(0.6)  # past the double-click time: each trial is a single click
    finally:
        app.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="holodesk-settle-") as tmp, \
            Xvfb(1280, 800) as server, server.activated():
        # This process talks to the bench's Xvfb only: the environment points there before
        # pyautogui is imported (it binds its display at import).
        latch = StopLatch()
        executor = Executor(PyAutoGuiBackend(latch), latch)
        with MssCapturer(display=server.display) as cap:
            for animate_ms in [0, *SCENARIOS_MS]:
                print(f"... {animate_ms} ms", file=sys.stderr, flush=True)
                rows.append((animate_ms, run_scenario(server, Path(tmp), animate_ms,
                                                      args.trials, cap, executor)))

    print("\nDead time after the window settled, per step (ms; negative = acted too early)\n")
    print("| window changes for | detector median | detector max | detector early | "
          "fixed 1 s median | fixed 1 s early | longest app pause | met |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    all_met = True
    for animate_ms, r in rows:
        early = sum(1 for v in r["detector"] if v < 0)
        fixed_early = sum(1 for v in r["fixed"] if v < 0)
        worst = max(r["detector"])
        if animate_ms:
            ok = early == 0 and worst <= MAX_LATE_MS
            all_met &= ok
            met = "met" if ok else "NOT MET"
            label = f"{animate_ms} ms"
        else:
            met = "(reaction wait, see notes)"
            label = "nothing (no-op click)"
        stall = f"{max(r['stall']):.0f}" if r["stall"] else "-"
        print(f"| {label} | {statistics.median(r['detector']):.0f} | {worst:.0f} | "
              f"{early}/{len(r['detector'])} | {statistics.median(r['fixed']):.0f} | "
              f"{fixed_early}/{len(r['fixed'])} | {stall} | {met} |")
    total_detector = sum(statistics.median(r["detector"]) for _, r in rows)
    total_fixed = sum(max(0.0, statistics.median(r["fixed"])) for _, r in rows)
    print(f"\nSum of median dead time over the {len(rows)} scenarios: detector "
          f"{total_detector:.0f} ms, fixed 1 s sleep {total_fixed:.0f} ms")
    print(f"Target (animated windows: never early, at most {MAX_LATE_MS:.0f} ms late): "
          f"{'met' if all_met else 'NOT MET'}")


if __name__ == "__main__":
    main()
