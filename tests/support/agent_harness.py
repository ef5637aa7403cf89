"""One agent over real parts for the core's tests (a plugin: see tests/conftest.py).

The model is the fake vLLM over real HTTP, the screen a picture through the real capture and
encode code, the input the dry-run backend recording every primitive, the log a real SQLite
file. ``harness_for(server, **options)`` makes one and closes it after the test.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw

from app.agent import Agent, AgentParts, RunConfig, RunLimits
from app.events import AwaitingConfirmation, ConfirmReply, Event, RunFinished
from app.pause import PauseGate
from app.store import ActionLog
from control.input import DryRunBackend, Executor
from control.policy import ConfirmMode, SafetyPolicy
from control.stop import StopLatch
from model.client import ClientConfig, HolotronClient
from model.contracts import Codec
from model.run_secrets import RunSecrets
from tests.support.fake_capturer import FakeCapturer
from tests.support.fake_vllm import FakeVLLM

W, H = 1280, 800


def red_box_screen() -> Image.Image:
    """A grey 1280x800 screen with a red box at (100, 100)-(299, 199)."""
    image = Image.new("RGB", (W, H), (200, 200, 200))
    ImageDraw.Draw(image).rectangle((100, 100, 299, 199), fill=(255, 0, 0))
    return image


class AgentHarness:
    """One agent over real parts; ``events`` collects everything it emitted.

    ``answer`` answers each confirmation (from another thread, as a front end does);
    ``on_event`` sees every event as it is emitted (tests set it to act mid-run); ``gate`` is
    the run's pause; ``codec`` the contract the client speaks (default holodesk's own).
    """

    def __init__(self, server: FakeVLLM, tmp_path: Path, *, mode: ConfirmMode = ConfirmMode.NEVER,
                 screen: Callable[[], Image.Image] = red_box_screen,
                 answer: Callable[[AwaitingConfirmation], ConfirmReply] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 codec: Codec | None = None) -> None:
        self.latch = StopLatch()
        self.gate = PauseGate()
        self.screen = screen
        self.backend = DryRunBackend()
        # One run's secrets, shared as app/session.py shares them (store, policy, log file).
        self.secrets = RunSecrets()
        self.store = ActionLog.open(tmp_path / "log.db", secrets=self.secrets)
        self.capturer = FakeCapturer(lambda: np.asarray(self.screen()))
        self.client = HolotronClient(ClientConfig(base_url=server.base_url), codec)
        self.events: list[Event] = []
        self.answer = answer
        self.on_event: Callable[[Event], None] = lambda _e: None
        self.parts = AgentParts(
            client=self.client,
            capturer=self.capturer,
            executor=Executor(self.backend, self.latch),
            policy=SafetyPolicy(mode, secrets=self.secrets),
            store=self.store,
            latch=self.latch,
            clock=clock,
            pause=self.gate,
        )

    def emit(self, event: Event) -> None:
        self.events.append(event)
        self.on_event(event)
        if isinstance(event, AwaitingConfirmation) and self.answer is not None:
            reply = self.answer(event)
            threading.Thread(target=event.request.reply, args=(reply,)).start()

    def run(self, task: str = "press save", **limits: Any) -> RunFinished:
        config = RunConfig(task=task, limits=RunLimits(settle_min=0.0, settle_max=0.05, **limits))
        return Agent(self.parts, self.emit).run(config)

    def kinds(self) -> list[str]:
        """The names of the events so far, streaming text left out."""
        return [type(e).__name__ for e in self.events if type(e).__name__ != "ModelText"]

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def close(self) -> None:
        self.store.close()
        self.client.close()


#: ``harness_for(server, **options)``: a new :class:`AgentHarness`.
HarnessFor = Callable[..., AgentHarness]


@pytest.fixture
def harness_for(tmp_path: Path) -> Iterator[HarnessFor]:
    made: list[AgentHarness] = []

    def make(server: FakeVLLM, **options: Any) -> AgentHarness:
        harness = AgentHarness(server, tmp_path, **options)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()
