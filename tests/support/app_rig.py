"""The desktop app over real parts, for pytest-qt tests (a plugin: see tests/conftest.py).

``make_app(server, **settings)`` builds a :class:`ui.app.HolodeskApp` whose runs talk to the
fake model server over HTTP, see a drawn screen and record their input instead of acting;
every app made is closed after the test. Qt is imported only when the fixture is used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from PIL import Image, ImageDraw
from pytestqt.qtbot import QtBot

from app.agent import AgentParts
from app.events import Event, RunFinished, RunStarted
from app.pause import PauseGate
from app.run_request import RunRequest
from app.session import RunParts, Session, build_session
from app.settings import Settings, load_settings
from app.store import ActionLog
from control.input import DryRunBackend, Executor
from control.policy import SafetyPolicy
from control.stop import StopLatch
from model.client import ClientConfig, HolotronClient
from model.run_secrets import RunSecrets
from tests.support.fake_capturer import FakeCapturer
from tests.support.fake_vllm import FakeVLLM

if TYPE_CHECKING:
    from ui.app import HolodeskApp


def screen() -> Any:
    """A grey 1280x800 screen with a red box at (100, 100)-(299, 199)."""
    image = Image.new("RGB", (1280, 800), (200, 200, 200))
    ImageDraw.Draw(image).rectangle((100, 100, 299, 199), fill=(255, 0, 0))
    return np.asarray(image)


class Rig:
    """The app's runs over real parts: ``requests``, ``settings`` and ``backends`` hold each
    run's request, settings and recorded input, ``events`` every event the app's controller
    relayed."""

    def __init__(self, server: FakeVLLM) -> None:
        self.server = server
        self.requests: list[RunRequest] = []
        self.settings: list[Settings] = []
        self.backends: list[DryRunBackend] = []
        self.events: list[Event] = []

    def factory(self, request: RunRequest, latch: StopLatch, gate: PauseGate) -> Session:
        """The app's session factory: the run's session built as every front end builds it
        (app/session.py ``build_session``), over this rig's parts."""
        self.requests.append(request)
        self.settings.append(request.settings)
        return build_session(request, self.parts, latch=latch, pause=gate)

    def parts(self, request: RunRequest, latch: StopLatch, pause: PauseGate | None) -> RunParts:
        backend = DryRunBackend()
        self.backends.append(backend)
        secrets = RunSecrets()  # one per run, as app/session.py's RealParts makes it
        return RunParts(AgentParts(
            client=HolotronClient(ClientConfig(base_url=self.server.base_url)),
            capturer=FakeCapturer(screen),
            executor=Executor(backend, latch),
            policy=SafetyPolicy(request.settings.confirm, secrets=secrets),
            store=ActionLog.open(secrets=secrets),
            latch=latch,
            pause=pause,
        ), dry_run=True)

    def started(self) -> list[str]:
        return [e.task for e in self.events if isinstance(e, RunStarted)]

    def finished(self) -> int:
        return sum(isinstance(e, RunFinished) for e in self.events)


#: ``make_app(server, **settings)``: the app and its rig.
MakeApp = Callable[..., "tuple[HolodeskApp, Rig]"]


@pytest.fixture
def make_app(qtbot: QtBot) -> Iterator[MakeApp]:
    from ui.app import HolodeskApp

    apps: list[HolodeskApp] = []

    def make(server: FakeVLLM, **settings: Any) -> tuple[HolodeskApp, Rig]:
        rig = Rig(server)
        given = {"endpoint": server.base_url, **settings}

        def load() -> Settings:
            # As run_gui's: the settings read afresh for each run, the test's on top (as a
            # command line's options would be).
            return load_settings().with_overrides(given, source="test")

        app = HolodeskApp(Settings(**given), session_factory=rig.factory,
                          use_system_tray=False, probe=False, load=load)
        app.controller.run_event.connect(rig.events.append)
        apps.append(app)
        return app, rig

    yield make
    for app in apps:
        app.close()
    qtbot.wait(50)  # let the deleteLater()s run
