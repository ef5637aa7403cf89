"""Runs the real executor (PyAutoGuiBackend) in a subprocess bound to a test's Xvfb.

pyautogui connects to ``$DISPLAY`` when imported and keeps that connection for the life of the
process, so the test process never imports it: it starts this worker with ``env=xvfb.env()``
and sends it JSON commands, one per line, on stdin; each gets one JSON reply line.

Commands (``op``):

* ``execute``: ``action`` (schema JSON), ``points`` ([[x, y], ...]); optional
  ``stop_after_calls`` (pull the stop from the backend right after the Nth primitive) and
  ``stop_when_text`` ({"events": path, "widget": name, "min_len": n}: a watcher thread pulls
  the stop once the app logged that much text). Reply: ``ok``, ``error``/``source`` on failure,
  ``calls`` (primitives done), ``calls_at_stop``, ``held_keys``, ``held_buttons``,
  ``sticky_keys`` (what ``key_down`` actions left down), ``elapsed``.
* ``clipboard_get`` / ``clipboard_set`` (``text``), ``position``, ``reset`` (clear the latch),
  ``release_all`` (what the agent does as a run ends; replies ``sticky_keys``), ``quit``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from control.clipboard import SystemClipboard
from control.input import Executor, PyAutoGuiBackend
from control.stop import StopLatch, StoppedError
from model.coords import Point
from model.schema import ACTION_ADAPTER


class CountingBackend:
    """Delegates to the real backend, counting primitives and optionally pulling the stop."""

    PRIMITIVES = frozenset({"move_to", "mouse_down", "mouse_up", "scroll", "key_down", "key_up",
                            "write_char", "paste"})

    def __init__(self, inner: PyAutoGuiBackend, latch: StopLatch) -> None:
        self.inner = inner
        self.latch = latch
        self.calls = 0
        self.calls_at_stop: int | None = None
        self.stop_after: int | None = None
        self.log: list[str] = []
        # Recorded by the stopping thread at the very moment the latch is set.
        latch.add_listener(lambda _info: setattr(self, "calls_at_stop", self.calls))

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name not in self.PRIMITIVES:
            return target

        def call(*args: Any) -> Any:
            result = target(*args)
            self.calls += 1
            self.log.append(name)
            if self.stop_after is not None and self.calls >= self.stop_after:
                self.stop_after = None
                self.latch.stop("test", f"after {self.calls} primitives")
            return result

        return call


def _watch_text(latch: StopLatch, spec: dict[str, Any], done: threading.Event) -> None:
    path = Path(spec["events"])
    seen = int(spec["seen"])  # only what this action causes counts
    while not done.is_set():
        for line in path.read_text(encoding="utf-8").splitlines()[seen:]:
            if not line.endswith("}"):
                continue
            event = json.loads(line)
            if (event["type"] == "text" and event["widget"] == spec["widget"]
                    and len(event["value"]) >= spec["min_len"]):
                latch.stop("test-thread", "enough text arrived")
                return
        time.sleep(0.01)


def main() -> None:
    # The protocol gets its own descriptor; fd 1 goes to stderr so that helpers we spawn
    # (xclip stays alive as the clipboard owner) never hold the test's pipe open.
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    latch = StopLatch()
    backend = CountingBackend(PyAutoGuiBackend(latch), latch)
    executor = Executor(backend, latch)  # a duck-typed proxy of the backend
    clipboard = SystemClipboard()
    out.write(json.dumps({"ready": True, "display": os.environ.get("DISPLAY")}) + "\n")
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        reply: dict[str, Any] = {"ok": True}
        if op == "execute":
            backend.calls = 0
            backend.calls_at_stop = None
            backend.log = []
            backend.stop_after = cmd.get("stop_after_calls")
            done = threading.Event()
            watcher = None
            if cmd.get("stop_when_text"):
                spec = cmd["stop_when_text"]
                spec["seen"] = len(Path(spec["events"]).read_text(encoding="utf-8").splitlines())
                watcher = threading.Thread(target=_watch_text, daemon=True,
                                           args=(latch, cmd["stop_when_text"], done))
                watcher.start()
            started = time.monotonic()
            try:
                action = ACTION_ADAPTER.validate_python(cmd["action"])
                points = [Point(int(x), int(y)) for x, y in cmd.get("points", [])]
                executor.execute(action, points)
            except StoppedError as exc:
                reply = {"ok": False, "error": "StoppedError", "source": exc.info.source,
                         "message": str(exc)}
            except Exception as exc:
                reply = {"ok": False, "error": type(exc).__name__, "message": str(exc)}
            finally:
                done.set()
            reply.update(calls=backend.calls, calls_at_stop=backend.calls_at_stop,
                         primitives=backend.log, held_keys=list(executor.held_keys),
                         held_buttons=list(executor.held_buttons),
                         sticky_keys=list(executor.sticky_keys),
                         elapsed=time.monotonic() - started, ended_at=time.monotonic())
        elif op == "clipboard_get":
            reply["text"] = clipboard.get()
        elif op == "clipboard_set":
            clipboard.set(cmd["text"])
            # xclip takes the selection in the background after set() returns: the person's
            # copy is done once the clipboard reads it back.
            deadline = time.monotonic() + 10
            while clipboard.get() != cmd["text"] and time.monotonic() < deadline:
                time.sleep(0.01)
        elif op == "position":
            reply["position"] = list(backend.inner.position())
        elif op == "reset":
            latch.reset()
        elif op == "release_all":
            executor.release_all()
            reply["sticky_keys"] = list(executor.sticky_keys)
        elif op == "quit":
            out.write(json.dumps(reply) + "\n")
            break
        else:
            reply = {"ok": False, "error": "bad op", "message": op}
        out.write(json.dumps(reply) + "\n")


if __name__ == "__main__":
    main()
