"""Making way: holodesk's own windows out of the work before a run looks.

While a run acts, no holodesk window may cover the application it drives: holodesk paints its
own windows out of every screenshot, so a window over the work leaves a hole where the model
needs to see (issue 24: the demo's practice window half grey under the task window, and the
demo model rightly saying it cannot see it). The agent asks its front end before each
screenshot (app/agent.py) with the :class:`WorkArea` it works in; the front end collapses,
hides or moves its windows, returns once they are out of the way, and says whether anything
changed on the screen (the run then waits for the screen to settle before it looks).

The desktop app makes way with its own windows (ui/stage.py); `holodesk run` and `holodesk demo`
in a terminal ask a running desktop app over its socket (:class:`RemoteWay`), and tell it when
the run is over so that its windows come back.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from model.coords import Point, Rect

log = logging.getLogger(__name__)

__all__ = ["MakeWay", "RemoteWay", "WorkArea", "area_from_message", "area_message"]


@dataclass(frozen=True)
class WorkArea:
    """Where a run works, for the front end to keep its windows off.

    ``capture`` is the rectangle the screenshots show; ``windows`` the window or windows the
    run works in (the one its last action went to, or the focused one before the first), when
    known; both in physical pixels of the virtual screen. ``points`` are where the last action
    landed (the agent's logical screen points). ``step`` and ``doing`` say how far the run is,
    in words (a run bar shows them; secrets already masked by the agent).
    """

    capture: Rect
    windows: tuple[Rect, ...] = ()
    points: tuple[Point, ...] = ()
    step: int = 0
    doing: str = ""


class MakeWay(Protocol):
    """Called on the run's thread before it looks at the screen: returns once holodesk's
    windows are out of ``area``; True when the screen changed for it (a window hidden or
    moved: the run lets the screen settle before it looks). It must not raise."""

    def __call__(self, area: WorkArea) -> bool: ...


def _rect(value: Any) -> Rect | None:
    if (isinstance(value, list | tuple) and len(value) == 4
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        left, top, width, height = value
        if width > 0 and height > 0:
            return Rect(left, top, width, height)
    return None


def area_message(area: WorkArea) -> dict[str, Any]:
    """``area`` as the JSON fields of a ``make_way`` message (app/ipc.py)."""
    c = area.capture
    return {
        "capture": [c.left, c.top, c.width, c.height],
        "windows": [[w.left, w.top, w.width, w.height] for w in area.windows],
        "points": [[p.x, p.y] for p in area.points],
        "step": area.step,
        "doing": area.doing,
    }


def area_from_message(raw: dict[str, Any]) -> WorkArea | None:
    """The work area a ``make_way`` message carries; None when it is malformed."""
    capture = _rect(raw.get("capture"))
    windows_raw, points_raw = raw.get("windows", []), raw.get("points", [])
    step, doing = raw.get("step", 0), raw.get("doing", "")
    if (capture is None or not isinstance(windows_raw, list) or not isinstance(points_raw, list)
            or not isinstance(step, int) or isinstance(step, bool) or not isinstance(doing, str)
            or len(windows_raw) > 8 or len(points_raw) > 8):
        return None
    windows = [_rect(w) for w in windows_raw]
    points: list[Point] = []
    for p in points_raw:
        if not (isinstance(p, list) and len(p) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in p)):
            return None
        points.append(Point(p[0], p[1]))
    if any(w is None for w in windows):
        return None
    return WorkArea(capture, tuple(w for w in windows if w is not None), tuple(points),
                    step, doing[:500])


Send = Callable[[dict[str, Any]], dict[str, Any] | None]


class RemoteWay:
    """A run in a terminal asking the running desktop app to make way (app/instance.py's
    socket), so its windows never cover what the run works in.

    Make it with :meth:`if_app_runs`; call :meth:`over` when the run has ended (the app's
    windows come back; the app also notices a run whose process is gone).
    """

    def __init__(self, task: str, send: Send, pid: int | None = None) -> None:
        self.task = task
        self._send = send
        self.pid = os.getpid() if pid is None else pid
        self._told = False

    @classmethod
    def if_app_runs(cls, task: str, send: Send | None = None) -> RemoteWay | None:
        """One when the desktop app runs for this person (it answers a ping), else None."""
        if send is None:
            from app.instance import send as send_message

            send = send_message
        reply = send({"cmd": "ping"})
        if reply is None or not reply.get("ok"):
            return None
        return cls(task, send)

    def __call__(self, area: WorkArea) -> bool:
        reply = self._send({"cmd": "make_way", "pid": self.pid, "task": self.task[:500],
                            **area_message(area)})
        if reply is None or not reply.get("ok"):
            if not self._told:
                # The app quit, or is an older one: the run goes on, its windows unmoved.
                log.info("the desktop app did not make way: %s", reply)
                self._told = True
            return False
        return bool(reply.get("changed"))

    def over(self) -> None:
        """The run has ended: the app's windows come back."""
        self._send({"cmd": "run_over", "pid": self.pid})
