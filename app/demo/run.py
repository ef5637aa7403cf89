"""The demo as a use case: the practice window, the demo model, and the settings of a real run.

:func:`start_demo` opens the practice window and serves the demo model on the loopback;
the caller then runs :attr:`Demo.task` with :attr:`Demo.settings` the way it runs any task (the
CLI through `holodesk run`'s code, the desktop app through its run controller), so capture,
policy, confirmation, executor, stop and the action log are the real ones. The settings are
the person's own with the demo's on top, in memory only: the saved settings never change. The
run is limited to the practice window twice over: ``only_in`` names its window class (the
policy refuses any other target) and the capture is the window's own rectangle, so the model
sees nothing else of the desktop; the demo model itself refuses points outside the window.
:meth:`Demo.finish` reads whether the practice task got done and closes the window.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.demo.look import NAME, PRACTICE_WM_CLASS
from app.demo.practice import PracticeState, PracticeWindow
from app.demo.server import DEMO_MODEL_NAME, DemoServer
from app.demo.window_process import PracticeWindowError, capture_region, watch_window
from app.settings import Settings
from control.stop import StopLatch
from model.profiles import DEFAULT_PROFILE

log = logging.getLogger(__name__)

__all__ = ["DEMO_TASK", "Demo", "DemoResult", "PracticeWindowError", "start_demo"]

#: The task of every demo run: the action log and every window show it, labelled as the demo.
DEMO_TASK = (f"Demo: in the holodesk practice window, type the name {NAME}, choose Blue, save "
             "the entry, then delete the draft")
_STEP_NAMES = {"name": "type the name", "colour": "choose Blue", "saved": "save the entry",
               "deleted": "delete the draft"}


@dataclass(frozen=True)
class DemoResult:
    """How the demo ended: whether the practice task is done, in words for the person, and
    the practice window's checklist as it last showed it."""

    done: bool
    message: str
    checklist: str = ""


@dataclass
class Demo:
    """A running demo: close it with :meth:`finish` (or :meth:`close`)."""

    practice: PracticeWindow
    server: DemoServer
    settings: Settings
    task: str = DEMO_TASK
    _unwatch: Callable[[], None] = field(default=lambda: None, repr=False)

    def watch(self, latch: StopLatch, poll: float = 0.2) -> None:
        """Stop the run behind ``latch`` when the practice window goes away (the person
        closed it): there is nothing left to practise on."""

        self._unwatch = watch_window(lambda: self.practice.alive, latch, "demo",
                                     "the practice window was closed", poll)

    def result(self) -> DemoResult:
        """Whether the practice task is done, from the practice window's own state."""
        state = self.practice.state()
        if state is None:
            return DemoResult(False, "Demo: the practice window said nothing about the task.")
        checklist = "Demo: the practice window's checklist: " + "; ".join(
            f"{what}: {state.steps.get(step, 'unknown')}" for step, what in _STEP_NAMES.items())
        if state.done:
            return DemoResult(True, "Demo: done. The demo model typed the name, chose Blue, "
                                    "saved the entry and deleted the draft in the practice "
                                    "window.", checklist)
        missing = ", ".join(_STEP_NAMES[s] for s in state.missing())
        return DemoResult(False, f"Demo: the practice task is not done (still to do: "
                                 f"{missing}).", checklist)

    def finish(self) -> DemoResult:
        """The result, then close everything."""
        result = self.result()
        self.close()
        return result

    def close(self) -> None:
        """Close the practice window and stop the demo model; safe to call twice."""
        self._unwatch()  # before the window goes: closing it is no stop
        self.practice.close()
        self.server.stop()


def demo_settings(settings: Settings, endpoint: str, state: PracticeState,
                  confirm: str | None = None) -> Settings:
    """``settings`` with the demo's on top (in memory: never saved)."""
    assert state.window is not None
    region = capture_region(state.window)
    overrides: dict[str, object] = {
        "endpoint": endpoint,
        "model": DEMO_MODEL_NAME,
        # The demo model stands in for the default model: spoken to in its contract.
        "model_profile": settings.model_profile or DEFAULT_PROFILE.key,
        "tls_fingerprint": None,
        "convention": "norm1000",
        "thinking": False,
        "only_in": (PRACTICE_WM_CLASS,),
        "monitor": region,
        "max_steps": 20,
        "max_seconds": 600.0,
    }
    if confirm:
        overrides["confirm"] = confirm
    return settings.with_overrides(overrides, source="the demo")


def start_demo(settings: Settings, *, confirm: str | None = None,
               folder: Path | None = None) -> Demo:
    """Open the practice window and serve the demo model; the demo to run.

    Raises :class:`PracticeWindowError` when the window cannot open (nothing is left running).
    """
    practice = PracticeWindow(folder)
    state = practice.start()
    server = DemoServer().start()
    try:
        demo_config = demo_settings(settings, server.base_url, state, confirm)
    except Exception:
        server.stop()
        practice.close()
        raise
    log.info("demo ready: practice window at %s, model at %s", state.window, server.base_url)
    return Demo(practice=practice, server=server, settings=demo_config)
