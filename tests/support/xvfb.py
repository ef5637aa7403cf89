"""A private Xvfb per test module (or bench run), so nothing ever touches the developer's display.

``Xvfb(width, height)`` starts its own server on a free display number (the server picks it and
reports it through ``-displayfd`` once it accepts connections), with a fresh MIT cookie in a
private Xauthority file. ``env()`` is the environment to hand to any process that should talk
to it: ``DISPLAY`` and ``XAUTHORITY`` point at this server, Wayland variables are dropped so
toolkits and pyperclip cannot wander off to another display.
"""

from __future__ import annotations

import os
import secrets
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

# Variables that would let a child reach a display other than ours.
_LEAKY_VARS = ("WAYLAND_DISPLAY", "WAYLAND_SOCKET", "XDG_SESSION_TYPE", "DBUS_SESSION_BUS_ADDRESS")
_FAMILY_LOCAL = 256
_FAMILY_WILD = 65535
#: Set (to the message) when this test run must start no X server (`make test-quick`).
FORBIDDEN: str | None = None


def xvfb_available() -> bool:
    """Whether the Xvfb binary is installed."""
    return shutil.which("Xvfb") is not None


def _auth_entry(family: int, address: bytes, number: bytes, name: bytes, data: bytes) -> bytes:
    # The Xauthority format: big-endian u16 family, then four length-prefixed byte strings.
    out = struct.pack(">H", family)
    for field in (address, number, name, data):
        out += struct.pack(">H", len(field)) + field
    return out


class XvfbError(RuntimeError):
    """Xvfb failed to start; the message carries its log."""


class Xvfb:
    """A virtual X server of the given size, started on enter and killed on exit."""

    def __init__(
        self, width: int = 1280, height: int = 800, depth: int = 24, *, start_timeout: float = 15.0,
        without: tuple[str, ...] = (), tcp: bool = False,
    ) -> None:
        self.without = without  # X extensions this server lacks (e.g. RECORD)
        # Also listen on TCP (port 6000 + the display number), cookie-protected as ever: a
        # client can then name it as a remote display (localhost:N, as ssh -X sets it).
        self.tcp = tcp
        self.width = width
        self.height = height
        self.depth = depth
        self.start_timeout = start_timeout
        self.display = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._dir: Path | None = None

    @property
    def authority(self) -> Path:
        """The private Xauthority file holding this server's cookie."""
        assert self._dir is not None, "Xvfb not started"
        return self._dir / "Xauthority"

    @property
    def log_path(self) -> Path:
        assert self._dir is not None, "Xvfb not started"
        return self._dir / "xvfb.log"

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """A copy of ``base`` (default ``os.environ``) that talks to this server only."""
        if not self.display:
            raise XvfbError("Xvfb not started")
        env = dict(os.environ if base is None else base)
        for var in _LEAKY_VARS:
            env.pop(var, None)
        env["DISPLAY"] = self.display
        env["XAUTHORITY"] = str(self.authority)
        return env

    @contextmanager
    def activated(self) -> Iterator[Xvfb]:
        """Point this process's environment at the server for the duration (restored after).

        For in-process clients that read the environment when they connect (libxcb reads
        ``XAUTHORITY`` for the cookie). Pass the display name explicitly as well.
        """
        saved = {var: os.environ.get(var) for var in ("DISPLAY", "XAUTHORITY", *_LEAKY_VARS)}
        os.environ.update({"DISPLAY": self.display, "XAUTHORITY": str(self.authority)})
        for var in _LEAKY_VARS:
            os.environ.pop(var, None)
        try:
            yield self
        finally:
            for var, value in saved.items():
                if value is None:
                    os.environ.pop(var, None)
                else:
                    os.environ[var] = value

    def start(self) -> Xvfb:
        """Start the server and wait until it accepts connections."""
        if FORBIDDEN is not None:
            raise XvfbError(FORBIDDEN)
        if not xvfb_available():
            raise XvfbError("Xvfb is not installed (apt-get install xvfb)")
        self._dir = Path(tempfile.mkdtemp(prefix="holodesk-xvfb-"))
        cookie = secrets.token_bytes(16)
        name = b"MIT-MAGIC-COOKIE-1"
        # The server only reads the cookie; address and number are for clients, set below.
        self.authority.write_bytes(_auth_entry(_FAMILY_WILD, b"", b"", name, cookie))
        read_fd, write_fd = os.pipe()
        log = self.log_path.open("wb")
        try:
            self._proc = subprocess.Popen(
                [
                    "Xvfb",
                    "-displayfd",
                    str(write_fd),
                    "-screen",
                    "0",
                    f"{self.width}x{self.height}x{self.depth}",
                    "-auth",
                    str(self.authority),
                    "-listen" if self.tcp else "-nolisten",
                    "tcp",
                    "-noreset",
                    *(arg for name in self.without for arg in ("-extension", name)),
                ],
                pass_fds=(write_fd,),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # a Ctrl+C in the terminal must not reach it half-way
            )
        finally:
            os.close(write_fd)
            log.close()
        try:
            number = self._read_display_number(read_fd)
        except BaseException:
            os.close(read_fd)
            self.stop()
            raise
        os.close(read_fd)
        self.display = f":{number}"
        num = str(number).encode()
        host = socket.gethostname().encode()
        # FamilyLocal+hostname is what python-xlib (pyautogui) looks up; FamilyWild serves libXau.
        self.authority.write_bytes(
            _auth_entry(_FAMILY_LOCAL, host, num, name, cookie)
            + _auth_entry(_FAMILY_WILD, b"", num, name, cookie)
        )
        return self

    def _read_display_number(self, fd: int) -> int:
        deadline = time.monotonic() + self.start_timeout
        buf = b""
        while not buf.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise XvfbError(f"Xvfb exited with {self._proc.returncode}: {self._log_tail()}")
            if remaining <= 0:
                raise XvfbError(f"Xvfb did not report its display in time: {self._log_tail()}")
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.2))
            if ready:
                chunk = os.read(fd, 64)
                if not chunk:
                    continue  # closed: the poll above reports the exit
                buf += chunk
        return int(buf.strip())

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Kill the server (and its process group) and remove its files."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        self.display = ""

    def __enter__(self) -> Xvfb:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Xvfb({self.width}x{self.height}x{self.depth}, display={self.display or 'stopped'})"
