"""`holodesk ARGS` on a pseudo-terminal of its own: its controlling terminal, so ``isatty`` is
true and getpass really turns echo off. Read up to a text, answer, read to the end."""

from __future__ import annotations

import contextlib
import os
import select
import time

from tests.support.home import REPO_ROOT


class Pty:
    """A child process on a new pseudo-terminal (see the module doc)."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        import pty

        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: never returns
            os.chdir(REPO_ROOT)
            os.execvpe(argv[0], argv, env)
        self.seen = ""

    def read_until(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {text!r}; seen:\n{self.seen}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    break
                self.seen += chunk.decode("utf-8", "replace")
        assert text in self.seen, f"{text!r} never came; seen:\n{self.seen}"
        return self.seen

    def send(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\r")

    def wait(self, timeout: float = 60.0) -> int:
        with contextlib.suppress(AssertionError):
            self.read_until("\x00never\x00", timeout)  # drain to the end
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)
