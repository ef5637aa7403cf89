"""A stand-in for the desktop app's socket (ui/instance.py), for the tests of a run in a
terminal beside the app: it answers `ping`, `make_way` and `run_over` as the app does, records
every message with the sender's pid as the system tells it (``peer``), and lets a test act
the moment a message arrives, before it is answered (``on_message``): what the person does
in the app while the terminal's run waits for the answer.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.instance import peer_pid
from tests.support.home import Home

Message = dict[str, Any]


def app_socket_path(home: Home) -> Path:
    """Where the app of ``home`` listens (app/instance.py ``socket_name``, Linux)."""
    return home.runtime / "holodesk" / "holodesk.sock"


class StandInApp:
    """Listens at ``path`` until closed; ``messages`` holds each message (with ``peer``)."""

    def __init__(self, path: Path, on_message: Callable[[Message], None] = lambda _m: None
                 ) -> None:
        self.path = path
        self.on_message = on_message
        self.messages: list[Message] = []
        self._lock = threading.Lock()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(8)
        self._thread = threading.Thread(target=self._serve, name="stand-in app", daemon=True)
        self._thread.start()

    def __enter__(self) -> StandInApp:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._server.close()
        self._thread.join(10)
        self.path.unlink(missing_ok=True)

    def commands(self) -> list[str]:
        with self._lock:
            return [str(m.get("cmd")) for m in self.messages]

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return  # closed
            with conn:
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        buffer = b""
        while not buffer.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                return
            buffer += chunk
        message = json.loads(buffer)
        message["peer"] = peer_pid(conn.fileno())
        with self._lock:
            self.messages.append(message)
        self.on_message(message)
        reply: Message = {"ok": True}
        if message.get("cmd") == "make_way":
            reply["changed"] = False
        conn.sendall((json.dumps(reply) + "\n").encode())
