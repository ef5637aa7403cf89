"""Talking to the running desktop app: one JSON line out, one JSON line back.

The app (ui/instance.py) listens with a QLocalServer: a Unix socket at a path in the runtime
directory, or a named pipe on Windows. This side is plain Python, so the CLI needs no Qt.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
from typing import Any

from app import paths

Message = dict[str, Any]


def socket_name() -> str:
    """A socket path in the runtime directory on Unix, a pipe name on Windows."""
    if sys.platform == "win32":
        import getpass

        return f"holodesk-{getpass.getuser()}"
    return str(paths.ensure_private_dir(paths.runtime_dir()) / "holodesk.sock")


def send(message: Message, timeout: float = 2.0) -> Message | None:
    """Send ``message`` to the running app; its answer, or None when none is running."""
    line = (json.dumps(message) + "\n").encode()
    try:
        if sys.platform == "win32":
            with open(rf"\\.\pipe\{socket_name()}", "r+b", buffering=0) as pipe:
                pipe.write(line)
                answer = pipe.readline()
        else:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(timeout)
                sock.connect(socket_name())
                sock.sendall(line)
                answer = b""
                while not answer.endswith(b"\n"):
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
    except OSError:
        return None
    try:
        reply = json.loads(answer or b"{}")
    except ValueError:
        return {"ok": False, "error": "the running holodesk sent an unreadable answer"}
    return reply if isinstance(reply, dict) else {"ok": False}


def peer_pid(fd: int) -> int | None:
    """The pid of the process at the other end of the Unix socket ``fd`` (Linux's
    ``SO_PEERCRED``); None where the system does not tell. ``fd`` stays open."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None or fd < 0:
        return None
    try:
        with socket.socket(fileno=socket.dup(fd)) as sock:
            raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    pid = int(struct.unpack("3i", raw)[0])
    return pid if pid > 0 else None
