"""The demo as a use case: the practice window, the demo model, and the settings of a real run.

:func:`start_demo` opens the practice window and serves the demo model on the loopback;
the caller then runs :attr:`Demo.task` with :attr:`Demo.settings` the way it runs any task (the
CLI through `holodesk run`'s code, the desktop app through its run controller), so capture,
policy, confirmation, executor, stop and the action log are the real ones. The settings are
the person's own with the demo's on top, in memory only: the saved settings never change. The
run is limited to the practice window twice over: ``only_in`` names its window class (the
policy refuses any other target) and the capture is the window's own rectangle, so the model
sees nothing else of the desktop; the demo model itself refuses points outside the window.
The practice window's own state is the run's check (:meth:`Demo.check`, given with the run's
request): the run is done only when the window says so, whatever the demo model answered, so
the demo's result, the action log, the exit code and every window agree. :meth:`Demo.finish`
gives that verdict (read afresh when the run ended before its check: stopped or failed) and
closes the window. A done demo ends with :data:`WHAT_HAPPENED` and :data:`NEXT_STEPS`.
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
from app.result import Check
from app.settings import Settings
from control.stop import StopLatch
from model.profiles import DEFAULT_PROFILE

log = logging.getLogger(__name__)

__all__ = ["DEMO_TASK", "NEXT_STEPS", "WHAT_HAPPENED", "Demo", "DemoResult", "NextStep",
           "PracticeWindowError", "start_demo"]

#: The task of every demo run: the action log and every window show it, labelled as the demo.
DEMO_TASK = (f"Demo: in the holodesk practice window, type the name {NAME}, choose Blue, save "
             "the entry, then delete the draft")
_STEP_NAMES = {"name": "type the name", "colour": "choose Blue", "saved": "save the entry",
               "deleted": "delete the draft"}

#: What a done demo tells the person it showed them (the terminal and the task window).
WHAT_HAPPENED = (
    "What just happened: holodesk took a screenshot of the practice window before each step, "
    "a built-in demo model chose the step, and the real safety rules, confirmation, input and "
    "action log carried it out, as they will for a real model on your own tasks.")


@dataclass(frozen=True)
class NextStep:
    """One thing to try after the demo: a button's ``title`` in the task window, and the
    ``command`` that does it in a terminal."""

    title: str
    command: str


#: What to try after a done demo, in order.
NEXT_STEPS = (
    NextStep("Set up a model server",
             "holodesk serve on a machine with an NVIDIA GPU (README: Set up the model server), "
             "or use a server elsewhere: holodesk config set endpoint https://HOST:8000/v1"),
    NextStep("Write a first task", 'holodesk run "open the Downloads folder"'),
    NextStep("Open the action log", "holodesk log show last (or holodesk log list)"),
)


@dataclass(frozen=True)
class DemoResult:
    """How the demo ended: whether the practice task is done, in words for the person
    (``message`` labelled as the demo's, ``reason`` as a run's reason), and the practice
    window's checklist as it last showed it."""

    done: bool
    message: str
    checklist: str = ""
    reason: str = ""


@dataclass
class Demo:
    """A running demo: close it with :meth:`finish` (or :meth:`close`)."""

    practice: PracticeWindow
    server: DemoServer
    settings: Settings
    task: str = DEMO_TASK
    _unwatch: Callable[[], None] = field(default=lambda: None, repr=False)
    #: The verdict the run's check gave (:meth:`check`), the one the run ended with.
    _checked: DemoResult | None = field(default=None, repr=False)

    def watch(self, latch: StopLatch, poll: float = 0.2) -> None:
        """Stop the run behind ``latch`` when the practice window goes away (the person
        closed it): there is nothing left to practise on."""

        self._unwatch = watch_window(lambda: self.practice.alive, latch, "demo",
                                     "the practice window was closed", poll)

    def result(self) -> DemoResult:
        """Whether the practice task is done, from the practice window's own state."""
        state = self.practice.state()
        if state is None:
            said = "the practice window said nothing about the task"
            return DemoResult(False, f"Demo: {said}.", reason=said)
        items = "; ".join(f"{what}: {state.steps.get(step, 'unknown')}"
                          for step, what in _STEP_NAMES.items())
        checklist = f"Demo: the practice window's checklist: {items}"
        if state.done:
            return DemoResult(True, "Demo: done. The demo model typed the name, chose Blue, "
                                    "saved the entry and deleted the draft in the practice "
                                    "window.", checklist,
                              reason="the practice window's checklist is all done: "
                                     + ", ".join(_STEP_NAMES.values()))
        missing = ", ".join(_STEP_NAMES[s] for s in state.missing())
        reason = f"the practice task is not done (still to do: {missing})"
        return DemoResult(False, f"Demo: {reason}.", checklist, reason=reason)

    def check(self, _answer: str | None = None) -> Check:
        """The run's check (app/result.py ``TaskCheck``): done only when the practice window
        says so, whatever the demo model answered. Asked on the run's thread as it ends."""
        result = self._checked = self.result()
        return Check(result.done, result.reason)

    def finish(self) -> DemoResult:
        """The run's verdict (the practice window read afresh when the run ended before its
        check, stopped or failed), then close everything."""
        result = self._checked or self.result()
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
