"""The protocol between a later launch (``holodesk trigger``, a second ``holodesk``) and the
running desktop app: one message in, one reply out (the transport: app/instance.py).

A message is ``{"cmd": "show" | "ping" | "stop" | "run" | "automation", "task": ..., "name":
...}``; a reply is ``{"ok": true}`` or ``{"ok": false, "error": "...", "busy": true}`` (busy:
a run is already active; ``holodesk trigger`` exits with its own code then).

A run in a terminal (`holodesk run`, `holodesk demo`) asks the app to take its windows out of
its way: ``{"cmd": "make_way", "pid": ..., "task": ..., "capture": [l, t, w, h], "windows":
[...], "points": [[x, y]...], "step": n, "doing": "..."}`` (app/way.py), answered ``{"ok":
true, "changed": bool}``; ``{"cmd": "run_over", "pid": ...}`` when it ended. The transport
adds ``peer``, the pid of the process that sent the message (where the system tells it): a
message about another process's run is refused.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from app.admission import Refusal, Refused
from app.way import WorkArea, area_from_message


class Command(enum.StrEnum):
    SHOW = "show"
    PING = "ping"
    STOP = "stop"
    RUN = "run"
    AUTOMATION = "automation"
    MAKE_WAY = "make_way"
    RUN_OVER = "run_over"


@dataclass(frozen=True)
class Message:
    """A message as understood: its command and the task or automation's name it names;
    for a run in a terminal, its process and where it works."""

    cmd: Command
    task: str = ""
    name: str = ""
    pid: int = 0
    area: WorkArea | None = None

    @staticmethod
    def parse(raw: Any) -> Message | Refused:
        """``raw`` (a decoded JSON line) as a message, or why it is not one."""
        if not isinstance(raw, dict):
            return Refused(Refusal.MALFORMED, f"malformed message: {type(raw).__name__}, not "
                                              "an object")
        cmd = raw.get("cmd")
        try:
            command = Command(str(cmd))
        except ValueError:  # None too: "unknown command None", as before
            return Refused(Refusal.MALFORMED, f"unknown command {cmd!r}")
        task, name = raw.get("task", ""), raw.get("name", "")
        if not isinstance(task, str) or not isinstance(name, str):
            return Refused(Refusal.MALFORMED, "malformed message: task and name are text")
        if command not in (Command.MAKE_WAY, Command.RUN_OVER):
            return Message(command, task.strip(), name)
        pid, peer = raw.get("pid"), raw.get("peer")
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            return Refused(Refusal.MALFORMED, "malformed message: no process named")
        if isinstance(peer, int) and peer != pid:
            return Refused(Refusal.MALFORMED, f"process {peer} spoke for process {pid}")
        area = None
        if command is Command.MAKE_WAY:
            area = area_from_message(raw)
            if area is None:
                return Refused(Refusal.MALFORMED, "malformed message: no work area")
        return Message(command, task.strip(), name, pid, area)


def reply_ok() -> dict[str, Any]:
    return {"ok": True}


def reply_error(refused: Refused) -> dict[str, Any]:
    """The reply to a request that was refused; ``busy`` when a run is already active."""
    reply: dict[str, Any] = {"ok": False, "error": refused.text}
    if refused.kind is Refusal.BUSY:
        reply["busy"] = True
    return reply
