"""A relay between X clients and a test's Xvfb: what ``ssh -X`` does for a remote program.

``ssh -X host xterm`` runs xterm on the other machine; the local ssh client opens the local X
server's socket on the program's behalf and copies bytes both ways. The X server then knows
the connection as the ssh client's (its X-Resource client pid is ssh's, a process that holds
no terminal and has no child), while the program that draws the window, holds the pty and runs
the shell is elsewhere. Here that program is a sibling process of the relay, neither the relay
nor below it.

``XRelay(xvfb, workdir)`` (a context manager) starts ``python -m tests.support.x_relay`` and
waits until it accepts connections; ``env()`` is the environment of a program reached through
it. The relay takes a free display number of its own (the lock file ``/tmp/.X<N>-lock`` and
the socket ``/tmp/.X11-unix/X<N>``, so no Xvfb started meanwhile takes the number) and removes
both when terminated.
"""

from __future__ import annotations

import os
import selectors
import signal
import socket
import subprocess
import sys
from pathlib import Path
from types import TracebackType

from tests.support.gui import poll
from tests.support.home import REPO_ROOT
from tests.support.xvfb import Xvfb, _auth_entry

_SOCKETS = Path("/tmp/.X11-unix")
_FIRST = 400  # far above the numbers Xvfb -displayfd picks first
_FAMILY_WILD = 65535


def _claim() -> tuple[int, Path, socket.socket]:
    _SOCKETS.mkdir(mode=0o1777, exist_ok=True)
    for number in range(_FIRST, _FIRST + 500):
        lock = Path(f"/tmp/.X{number}-lock")
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        except FileExistsError:
            continue
        os.write(fd, f"{os.getpid():>10}\n".encode())
        os.close(fd)
        path = _SOCKETS / f"X{number}"
        if path.exists():
            lock.unlink()
            continue
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(16)
        return number, lock, listener
    raise SystemExit("no free display number for the relay")


def _relay(server: str, ready: Path) -> None:
    number, lock, listener = _claim()
    path = _SOCKETS / f"X{number}"

    def cleanup(*_: object) -> None:
        for p in (path, lock):
            p.unlink(missing_ok=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, cleanup)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    peers: dict[socket.socket, socket.socket] = {}
    ready.write_text(f"{number}\n")
    while True:
        for key, _ in sel.select():
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if sock is listener:
                client, _addr = listener.accept()
                upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                upstream.connect(server)
                peers[client], peers[upstream] = upstream, client
                sel.register(client, selectors.EVENT_READ)
                sel.register(upstream, selectors.EVENT_READ)
                continue
            other = peers.get(sock)
            if other is None:
                continue
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if data:
                try:
                    other.sendall(data)
                    continue
                except OSError:
                    pass
            for s in (sock, other):
                sel.unregister(s)
                peers.pop(s, None)
                s.close()


def _cookie(authority: Path) -> tuple[bytes, bytes]:
    """The (name, data) of the first entry of an Xauthority file."""
    raw = authority.read_bytes()
    at = 2  # the family
    fields = []
    for _ in range(4):
        size = int.from_bytes(raw[at:at + 2], "big")
        fields.append(raw[at + 2:at + 2 + size])
        at += 2 + size
    return fields[2], fields[3]


class XRelay:
    """The relay on a test's Xvfb (see the module's docstring)."""

    def __init__(self, xvfb: Xvfb, workdir: Path) -> None:
        self.xvfb = xvfb
        self.workdir = workdir
        self.display = ""
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The environment of a program whose X connection goes through the relay (the same
        cookie: a relay copies the client's bytes, authentication included)."""
        env = self.xvfb.env(base)
        env.update(DISPLAY=self.display, XAUTHORITY=str(self.workdir / "Xauthority"))
        return env

    def __enter__(self) -> XRelay:
        self.workdir.mkdir(parents=True, exist_ok=True)
        name, data = _cookie(self.xvfb.authority)
        (self.workdir / "Xauthority").write_bytes(_auth_entry(_FAMILY_WILD, b"", b"", name,
                                                              data))
        ready = self.workdir / "ready"
        server = str(_SOCKETS / f"X{self.xvfb.display.lstrip(':')}")
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.x_relay", server, str(ready)],
            env=env, stdin=subprocess.DEVNULL, start_new_session=True)
        poll(lambda: ready.exists() and ready.read_text().endswith("\n"), 30,
             "the X relay to accept connections",
             lambda: None if self._proc is None or self._proc.poll() is None
             else f"the relay exited with {self._proc.returncode}")
        self.display = f":{ready.read_text().strip()}"
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            proc.wait(10)


class RelayedDisplay:
    """What :class:`tests.support.terminal.Terminal` needs of a display (``env()``), for a
    terminal whose X connection goes through ``relay``."""

    def __init__(self, relay: XRelay) -> None:
        self.relay = relay

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        return self.relay.env(base)


if __name__ == "__main__":
    _relay(sys.argv[1], Path(sys.argv[2]))
