"""The protocol between a later launch (``holodesk trigger``, a second ``holodesk``) and the
running desktop app: one message in, one reply out (the transport: app/instance.py).

A message is ``{"cmd": "show" | "ping" | "stop" | "run" | "automation", "task": ..., "name":
...}``; a reply is ``{"ok": true}`` or ``{"ok": false, "error": "...", "busy": true}`` (busy:
a run is already active; ``holodesk trigger`` exits with its own code then).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from app.admission import Refusal, Refused


class Command(enum.StrEnum):
    SHOW = "show"
    PING = "ping"
    STOP = "stop"
    RUN = "run"
    AUTOMATION = "automation"


@dataclass(frozen=True)
class Message:
    """A message as understood: its command and the task or automation's name it names."""

    cmd: Command
    task: str = ""
    name: str = ""

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
        return Message(command, task.strip(), name)


def reply_ok() -> dict[str, Any]:
    return {"ok": True}


def reply_error(refused: Refused) -> dict[str, Any]:
    """The reply to a request that was refused; ``busy`` when a run is already active."""
    reply: dict[str, Any] = {"ok": False, "error": refused.text}
    if refused.kind is Refusal.BUSY:
        reply["busy"] = True
    return reply
