"""One run drives the desktop at a time: an OS file lock that dies with its process.

An OS lock (not a pid file) so a run killed with SIGKILL never leaves a stale lock behind.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import IO

from app import paths
from model.problem import HolodeskError


class DesktopBusyError(HolodeskError):
    """Another holodesk run holds the desktop."""


class DesktopLock:
    """An exclusive, non-blocking lock on ``path``; the holder's pid is written inside."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`DesktopBusyError` naming the holder."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        f = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the lock's life
        try:
            _lock_file(f)
        except OSError:
            f.seek(0)
            holder = f.read().strip() or "unknown"
            f.close()
            raise DesktopBusyError(
                f"another holodesk run or calibration (pid {holder}) is driving the desktop; "
                "wait for it to finish or stop it first"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        self._file = f

    def release(self) -> None:
        if self._file is not None:
            f, self._file = self._file, None
            f.seek(0)
            f.truncate()
            f.close()  # closing the descriptor drops the lock

    def __enter__(self) -> DesktopLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _lock_file(f: IO[str]) -> None:
    if sys.platform == "win32":
        import msvcrt

        f.seek(0)
        msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


@contextmanager
def editing(path: Path) -> Iterator[None]:
    """Hold an exclusive lock next to ``path`` while reading, changing and writing it.

    Waits for another holder (a second holodesk process saving the same file) instead of
    failing: such sections are short. Atomic writes already prevent a torn file; this keeps
    two read-modify-write changes from losing one of them.
    """
    lock_path = path.with_name(f".{path.name}.lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    # A run's tripwire protects the folder: the lock (made the first time) and the change of
    # ``path`` are holodesk's own. Not while waiting for the lock: nothing would be judged.
    with paths.own_write(lock_path):
        f = open(lock_path, "a+", encoding="utf-8")  # noqa: SIM115 (closed below)
    with f:
        if sys.platform == "win32":
            import msvcrt

            f.seek(0)
            msvcrt.locking(f.fileno(), msvcrt.LK_LOCK, 1)  # retries for about 10 s
        else:
            import fcntl

            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        with paths.own_write(path):
            yield  # closing the file drops the lock
