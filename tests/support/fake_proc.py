"""A /proc tree written by a test: the files control/procfs.py reads, for processes the test
makes up (a terminal nobody has heard of, a session leader on a pty, a process whose open files
cannot be listed)."""

from __future__ import annotations

import os
from pathlib import Path


class FakeProc:
    """``add(pid, name, ppid, ...)`` writes the stat, comm, cmdline and children files of a
    process, and its open files (``master``: a pty master; ``files``: fd to what it names)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def add(self, pid: int, name: str, ppid: int, *, session: int = 0, tty: int = 0,
            tpgid: int = -1, argv0: str = "", master: bool = False,
            files: dict[int, str] | None = None, unreadable: bool = False) -> None:
        d = self.root / str(pid)
        (d / "task" / str(pid)).mkdir(parents=True)
        comm = name[:15]
        # pid (comm) state ppid pgrp session tty_nr tpgid flags ...
        (d / "stat").write_text(
            f"{pid} ({comm}) S {ppid} {pid} {session or pid} {tty} {tpgid} 4194304 0 0\n")
        (d / "comm").write_text(comm + "\n")
        (d / "cmdline").write_bytes((argv0 or name).encode() + b"\0--flag\0")
        (d / "task" / str(pid) / "children").write_text("")
        if unreadable:
            # Where the kernel refuses the listing (another user's process) reading it fails
            # with an error other than "gone": a file where the folder should be does that
            # for any user, root included.
            (d / "fd").write_text("")
        else:
            (d / "fd").mkdir()
            opened = {0: "/dev/null", 1: "/dev/null", 2: "/dev/null", **(files or {})}
            if master:
                opened[len(opened) + 3] = "/dev/ptmx"
            for fd, what in opened.items():
                os.symlink(what, d / "fd" / str(fd))
        parent = self.root / str(ppid) / "task" / str(ppid) / "children"
        if parent.exists():
            parent.write_text(parent.read_text() + f"{pid} ")
