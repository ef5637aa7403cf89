"""Trying holodesk in the desktop app on the practice window with the built-in demo model
(as `holodesk demo`): the real run, with the app's confirmation panel, log and stop."""

from __future__ import annotations

import logging
from collections.abc import Callable

from app.admission import Refused, RunSource, busy, what_run
from app.demo.run import Demo, DemoResult
from app.events import RunFinished
from app.result import RunResult
from app.run_request import make_run_request
from app.settings import Settings
from ui.bridge import RunController
from ui.task_window import TaskWindow
from ui.tray import Tray, TrayState
from ui.workers import Background

log = logging.getLogger(__name__)

#: What the tray (or its stand-in window) says while the practice window opens: not the model
#: server probe's "No model server answers…", which the demo does not need.
DEMO_OPENING = ("holodesk: the demo is starting (it needs no model server): opening the "
                "practice window…")


class DemoControl:
    """Starts the demo's parts off the GUI thread with ``background``, then its run on
    ``controller``; closes them when the run ends.

    ``admit`` says why a run may not start now (app/controller.py, told already);
    ``refused`` tells a refusal found later; ``tell`` says a problem; the ``task_window``
    (brought forward with ``show_window``) and the ``tray`` show the practice window opening,
    ``opened`` that it is done; ``finished``
    gets the demo's result; ``closed`` is whether the app is closing.
    """

    def __init__(self, controller: RunController, background: Background, *,
                 settings: Callable[[], Settings],
                 admit: Callable[[RunSource], Refused | None],
                 refused: Callable[[Refused], None], tell: Callable[[str], None],
                 task_window: TaskWindow, show_window: Callable[[], None],
                 opened: Callable[[], None],
                 tray: Tray | None = None,
                 finished: Callable[[DemoResult], None], closed: Callable[[], bool]) -> None:
        self._controller, self._background, self._settings = controller, background, settings
        self._admit, self._refused, self._tell = admit, refused, tell
        self._task_window, self._show_window = task_window, show_window
        self._tray = tray
        self._opened, self._finished = opened, finished
        self._closed = closed
        #: The demo being run, between start and its end.
        self.demo: Demo | None = None
        #: Whether its parts are starting (a run, as far as admission is concerned).
        self.starting = False
        #: What the demo's run came to, once it ended (its check's verdict, or a stop).
        self.result: RunResult | None = None
        controller.run_event.connect(self._on_event)

    def start(self) -> bool:
        """The practice window and the demo model start off the GUI thread; the run starts
        when both are up. False, and the reason told, when it cannot start now."""
        if self._admit(RunSource.DEMO) is not None:
            return False
        from app.demo.run import start_demo

        self.starting = True
        self._task_window.set_model_status("Demo: opening the practice window…", "loading")
        if self._tray is not None:
            self._tray.set_state(TrayState.WORKING, DEMO_OPENING)
        self._show_window()
        settings = self._settings()
        self._background.run(lambda: start_demo(settings), self._run, self._failed)
        return True

    def _failed(self, error: BaseException) -> None:
        self.starting = False
        if self._closed():
            return
        self._opened()
        self._tell(f"The demo cannot start: {error}")

    def _run(self, demo: Demo) -> None:
        self.starting = False
        if self._closed():  # quit while the practice window was opening: close it again
            demo.close()
            return
        self._opened()
        # The practice window's own state decides whether the run is done (Demo.check).
        if not self._controller.start(make_run_request(demo.settings, demo.task,
                                                       check=demo.check)):
            demo.close()
            self._refused(busy(what_run(RunSource.DEMO)))  # a run began while it was opening
            return
        self.demo = demo
        self.result = None
        # Closing the practice window ends the run: nothing is left to practise on.
        demo.watch(self._controller.latch)

    def _on_event(self, event: object) -> None:
        if isinstance(event, RunFinished) and self.demo is not None:
            self.result = event.result

    def end(self) -> None:
        """The run is over: the practice window and the model are closed."""
        demo, self.demo = self.demo, None
        if demo is None:
            return
        # Closing waits for the practice window's process to end: off the GUI thread.
        self._background.run(demo.finish, self._ended)

    def _ended(self, result: DemoResult) -> None:
        # The run's end said the result everywhere already (the run's check is this verdict).
        log.info("%s", result.message)
        if self.result is RunResult.DONE:  # in the task window, back since the run ended
            self._task_window.show_next_steps()
        self._finished(result)

    def close(self) -> None:
        """The app quits: its end would come after the event loop is gone."""
        if self.demo is not None:
            self.demo.close()
            self.demo = None

