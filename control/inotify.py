"""Linux inotify, through ctypes: the kernel says when a watched folder's entries change.

A small binding of what the tripwire needs (``inotify_init1``, ``inotify_add_watch``,
``inotify_rm_watch`` and reading events with a timeout), so the frozen .deb carries no extra
dependency. Importing works everywhere; using it anywhere but Linux raises
:class:`InotifyUnavailable` with what to do instead.

The tripwire takes events as a wake-up only: whatever the events say, it looks at the files
again and compares (an overflowed queue, a watch added late or a folder replaced all end in a
fresh look, never in a missed change being trusted).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import select
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

# From <sys/inotify.h>.
IN_ACCESS = 0x00000001
IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000

#: Everything that changes a folder's entries or a file in it (no reads: they change nothing).
CHANGES = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
           | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)

_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = getattr(os, "O_CLOEXEC", 0o2000000)
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of NUL-padded name
_READ_SIZE = 64 * 1024


class InotifyUnavailable(OSError):
    """inotify cannot be used here; the message says why and what still works."""


@dataclass(frozen=True)
class InotifyEvent:
    """One event: the watch it came from, what happened (``mask``), and the entry's name inside
    the watched folder ("" when the event is about the folder itself)."""

    wd: int
    mask: int
    cookie: int
    name: str

    @property
    def overflow(self) -> bool:
        """The kernel's queue overflowed: events were lost, look at everything again."""
        return bool(self.mask & IN_Q_OVERFLOW)

    @property
    def ignored(self) -> bool:
        """The watch is gone (its folder was deleted or moved off the file system, or removed)."""
        return bool(self.mask & IN_IGNORED)


def _libc() -> ctypes.CDLL:
    if not sys.platform.startswith("linux"):
        raise InotifyUnavailable(
            f"inotify exists on Linux only (this is {sys.platform}): files are compared at each "
            "step instead of being watched")
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        for fn in ("inotify_init1", "inotify_add_watch", "inotify_rm_watch"):
            getattr(libc, fn)
    except (OSError, AttributeError) as e:
        raise InotifyUnavailable(f"the C library has no inotify ({e}): files are compared at "
                                 "each step instead of being watched") from e
    libc.inotify_init1.argtypes = [ctypes.c_int]
    libc.inotify_init1.restype = ctypes.c_int
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    libc.inotify_add_watch.restype = ctypes.c_int
    libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.inotify_rm_watch.restype = ctypes.c_int
    return libc


class Inotify:
    """One inotify instance (non-blocking, closed on exec). Close it when done."""

    def __init__(self) -> None:
        self._libc = _libc()
        fd = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            fix = (" (the per-user limit of inotify instances is reached: raise "
                   "fs.inotify.max_user_instances)" if err == errno.EMFILE else "")
            raise InotifyUnavailable(err, f"cannot start inotify: {os.strerror(err)}{fix}")
        self._fd: int = int(fd)

    def fileno(self) -> int:
        return self._fd

    def add_watch(self, path: Path | str, mask: int) -> int:
        """Watch ``path`` for the events in ``mask``; the watch descriptor (the same one again
        for a path already watched). Raises OSError (ENOENT, EACCES, ENOSPC: the per-user
        limit of watches, ``fs.inotify.max_user_watches``)."""
        wd = int(self._libc.inotify_add_watch(self._fd, os.fsencode(path), mask))
        if wd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(path))
        return wd

    def rm_watch(self, wd: int) -> None:
        """Stop a watch; one already gone (its folder deleted) is no error."""
        if self._libc.inotify_rm_watch(self._fd, wd) < 0:
            err = ctypes.get_errno()
            if err != errno.EINVAL:
                raise OSError(err, os.strerror(err))

    def read(self, timeout: float | None, wake: int | None = None) -> list[InotifyEvent]:
        """The events queued, waiting up to ``timeout`` seconds (None: until there are some)
        for the first; [] on a timeout, or when the descriptor ``wake`` became readable first
        (the caller drains it)."""
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        if wake is not None:
            poller.register(wake, select.POLLIN)
        ms = None if timeout is None else max(0, int(timeout * 1000))
        ready = {fd for fd, _ in poller.poll(ms)}
        if self._fd not in ready:
            return []
        return self._drain()

    def _drain(self) -> list[InotifyEvent]:
        events: list[InotifyEvent] = []
        while True:
            try:
                data = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                return events
            if not data:
                return events
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, cookie, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                raw = data[offset:offset + length].split(b"\0", 1)[0]
                offset += length
                events.append(InotifyEvent(wd, mask, cookie, os.fsdecode(raw)))

    def close(self) -> None:
        """Close the instance (every watch goes with it); safe to call twice."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __enter__(self) -> Inotify:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
