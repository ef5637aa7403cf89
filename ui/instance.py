"""One holodesk per user session: the local socket the running app listens on.

A second launch, or ``holodesk trigger …``, connects (app/instance.py) and sends one JSON line;
the running app answers one JSON line. The socket lives in the runtime directory
(XDG_RUNTIME_DIR on Linux), so tests and users get one each.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QLocalServer

from app.instance import Message, peer_pid, send, socket_name

log = logging.getLogger(__name__)

Handler = Callable[[Message], Message]


class InstanceServer(QObject):
    """Listens for messages from later launches and hands each to ``handler``."""

    def __init__(self, handler: Handler, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.handler = handler
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._on_connection)

    def listen(self) -> bool:
        """Start listening; False when another instance already does."""
        name = socket_name()
        # Ask first: with a socket option set, Qt binds in a temporary folder and renames the
        # socket into place, which replaces a running instance's socket instead of failing.
        # Nothing listening (no file, or one left by a crash) refuses the connection at once;
        # the timeout is for a running instance that is busy.
        if send({"cmd": "ping"}, timeout=2.0) is not None:
            return False
        QLocalServer.removeServer(name)
        return self.server.listen(name)

    def close(self) -> None:
        self.server.close()

    def _on_connection(self) -> None:
        socket = self.server.nextPendingConnection()
        if socket is None:
            return
        buffer = bytearray()

        def on_ready() -> None:
            buffer.extend(bytes(socket.readAll().data()))
            if not buffer.endswith(b"\n"):
                return
            try:
                message = json.loads(buffer)
                if isinstance(message, dict):
                    # Who sent it, as the system says: a message about a run must come from
                    # that run's own process (app/ipc.py).
                    message.pop("peer", None)
                    peer = peer_pid(int(socket.socketDescriptor()))
                    if peer is not None:
                        message["peer"] = peer
                reply = self.handler(message) if isinstance(message, dict) else {"ok": False}
            except Exception as e:  # a bad message must not take the app down
                log.warning("bad message from another launch: %s", e)
                reply = {"ok": False, "error": str(e)}
            socket.write((json.dumps(reply) + "\n").encode())
            socket.flush()
            socket.disconnectFromServer()

        socket.readyRead.connect(on_ready)
        socket.disconnected.connect(socket.deleteLater)
