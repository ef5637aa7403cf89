"""A stop while the model thinks cancels the request in flight (the core, no display).

The agent ties its stop latch to the client's cancel (app/agent.py). Without that tie a stop
while the model thinks would still end the run, but only once the model answered or the
request timed out. So the stand-in holds the answer for ten minutes, and the test asks for
the run's end within a loose 10 s and for the hang-up the server saw. Every stop path of the
product pulls this latch; tests/e2e/test_stop_while_thinking_x11.py drives each of them.
"""

from __future__ import annotations

import json
import threading
import time

from app.events import Outcome, RunFinished
from tests.support.agent_harness import HarnessFor
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy

HOLD = 600.0  # seconds the stand-in thinks: far beyond the bound
BOUND = 10.0

CLICK = {"thought": "click the red box",
         "action": {"action": "click", "element": "red box", "x": 156, "y": 188}}


def test_a_stop_while_the_model_thinks_hangs_up_on_the_request(harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([json.dumps(CLICK)])) as server:
        server.delay = HOLD
        h = harness_for(server)
        result: list[RunFinished] = []
        # The run on a thread of its own, so a broken cancel fails here within the bound
        # instead of after the client's own request timeout.
        runner = threading.Thread(target=lambda: result.append(h.run()), daemon=True)
        runner.start()
        server.wait_for_request(timeout=30)
        stopped_at = time.monotonic()
        h.latch.stop("hotkey", "test")
        runner.join(BOUND)
        took = time.monotonic() - stopped_at
        # Leaving the block stops the server, which frees a run still waiting (if broken).
        assert not runner.is_alive(), f"the run still waits for the model {took:.1f} s on"
        server.wait_for_disconnect(timeout=BOUND)
    finished = result[0]
    assert finished.outcome is Outcome.STOPPED, finished
    assert "hotkey" in finished.reason
    assert server.served == 0
    assert h.backend.calls == []
    assert [s.result for s in h.store.steps(finished.run_id)] == ["stopped"]
