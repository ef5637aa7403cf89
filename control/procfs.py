"""What the processes behind a window are and hold, read from ``/proc`` (Linux).

The safety policy needs to know whether a window is a terminal: whatever a terminal is called,
it is a program that holds the master side of a pseudo-terminal (or a terminal device) and runs
a session on it, and a line it submits is run by whatever program is in front on that
terminal. So holodesk asks the kernel, not the window's name:

* the window's process holds a pty master (an open ``/dev/ptmx``: xterm, gnome-terminal's
  server, kitty, an editor's built-in terminal, an emulator nobody has heard of), or a terminal
  device opened beyond its standard input and output (a serial console program);
* a process below it leads a session on a terminal (a shell or any program started on a pty:
  an IDE's terminal host, ``pterm -e python3``);
* the foreground process group of that terminal is the program "inside" (bash, python3, vim,
  mc, a multiplexer's client);
* a process whose open files cannot be read (another user's, or one that made itself
  unreadable) cannot be judged: :data:`TerminalSign.UNREADABLE`, and the policy treats it as a
  terminal.

A program that merely was started from a terminal (its standard input and output are the
terminal's) is not one: it leads no session there and holds no master.

Everything here answers from a ``proc`` folder given by the caller (tests write their own).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

__all__ = [
    "PROC",
    "ProcStat",
    "TerminalSign",
    "TerminalView",
    "child_pids",
    "descendants",
    "foreground_program",
    "holds_pty_master",
    "look_into",
    "process_name",
    "read_stat",
]

PROC = Path("/proc")

_PROC_NAME_LIMIT = 15  # /proc/<pid>/comm holds at most 15 characters
#: A window's process tree is walked this far (an IDE or a browser has tens of processes):
#: beyond it the tree cannot be judged whole, and is treated as unreadable.
MAX_DESCENDANTS = 512
#: The pty master device, as a process's open file shows it (devpts's own node too).
_PTY_MASTERS = ("/dev/ptmx", "/dev/pts/ptmx")


class TerminalSign(StrEnum):
    """Why a window counts as a terminal, in words for the person."""

    PTY_MASTER = "holds a pseudo-terminal"
    TTY_SESSION = "runs a program on a terminal"
    TTY_DEVICE = "holds a terminal device"
    UNREADABLE = "runs as a process holodesk cannot look into"
    NO_PROCESS = "has no process holodesk can find"
    ELSEWHERE = "runs on another machine, where holodesk cannot look"


@dataclass(frozen=True)
class ProcStat:
    """The fields of ``/proc/<pid>/stat`` holodesk reads."""

    pid: int
    comm: str
    ppid: int
    pgrp: int
    session: int
    tty_nr: int
    tpgid: int  # the foreground process group of the process's terminal, -1 without one


@dataclass(frozen=True)
class TerminalView:
    """What a window's processes hold: ``sign`` is None when nothing makes it a terminal;
    ``inside`` is the program in front on its terminal ("" when none or unknown)."""

    sign: TerminalSign | None = None
    inside: str = ""


def read_stat(pid: int, proc: Path = PROC) -> ProcStat | None:
    """The process's stat line, or None when it is gone (or unreadable)."""
    try:
        raw = (proc / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # The name sits in parentheses and may itself hold spaces and parentheses.
    head, sep, tail = raw.rpartition(")")
    if not sep:
        return None
    comm = head.partition("(")[2]
    fields = tail.split()
    try:
        return ProcStat(pid, comm, int(fields[1]), int(fields[2]), int(fields[3]),
                        int(fields[4]), int(fields[5]))
    except (IndexError, ValueError):
        return None


def process_name(pid: int, proc: Path = PROC) -> str:
    """The process's name: ``comm``, or the program's file name where ``comm`` is cut at 15
    characters (``gnome-terminal-`` is ``gnome-terminal-server``); "" when it is gone."""
    try:
        comm = (proc / str(pid) / "comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        stat = read_stat(pid, proc)
        comm = stat.comm if stat else ""
    if len(comm) >= _PROC_NAME_LIMIT:
        try:
            argv0 = (proc / str(pid) / "cmdline").read_bytes().split(b"\0", 1)[0]
        except OSError:
            argv0 = b""
        program = os.path.basename(argv0.decode("utf-8", "replace"))
        if program.startswith(comm):
            return program
    return comm


def child_pids(pid: int, proc: Path = PROC) -> list[int]:
    """The process's children: from ``/proc/<pid>/task/*/children`` where the kernel has it,
    else by scanning every process's parent."""
    found: list[int] = []
    listed = False
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        tasks = []
    for task in tasks:
        try:
            text = (task / "children").read_text()
        except OSError:
            continue
        listed = True
        found.extend(int(p) for p in text.split() if p.isdigit())
    if listed:
        return sorted(set(found))
    try:
        entries = [e.name for e in proc.iterdir() if e.name.isdigit()]
    except OSError:
        return []
    out = []
    for name in entries:
        stat = read_stat(int(name), proc)
        if stat is not None and stat.ppid == pid:
            out.append(stat.pid)
    return sorted(out)


def descendants(pid: int, proc: Path = PROC, *, limit: int = MAX_DESCENDANTS
                ) -> tuple[list[int], bool]:
    """The processes below ``pid``, breadth first, and whether the walk saw them all (False
    when it stopped at ``limit``)."""
    out: list[int] = []
    seen = {pid}
    level = [pid]
    while level:
        below: list[int] = []
        for parent in level:
            for child in child_pids(parent, proc):
                if child in seen:
                    continue
                if len(out) >= limit:
                    return out, False
                seen.add(child)
                out.append(child)
                below.append(child)
        level = below
    return out, True


def _open_files(pid: int, proc: Path) -> Iterator[tuple[int, str]]:
    """``(fd, what it names)`` for each open file of ``pid``; PermissionError when the kernel
    will not show them, FileNotFoundError when the process is gone."""
    folder = proc / str(pid) / "fd"
    for entry in os.scandir(folder):
        if not entry.name.isdigit():
            continue
        try:
            yield int(entry.name), os.readlink(entry.path)
        except OSError:
            continue  # closed while listed


def holds_pty_master(pid: int, proc: Path = PROC) -> bool:
    """Whether the process holds the master side of a pseudo-terminal (False when it cannot
    be read)."""
    try:
        return any(name in _PTY_MASTERS for _fd, name in _open_files(pid, proc))
    except OSError:
        return False


def _device(tty_nr: int) -> int:
    """``tty_nr`` of /proc/<pid>/stat as a device number (its own split of major and minor)."""
    major = (tty_nr >> 8) & 0xFFF
    minor = (tty_nr & 0xFF) | ((tty_nr >> 12) & 0xFFF00)
    return os.makedev(major, minor)


def _is_terminal_device(name: str) -> bool:
    # /dev/tty alone is the process's own controlling terminal, whatever it is.
    return name.startswith(("/dev/pts/", "/dev/tty", "/dev/console")) and name != "/dev/tty"


def _own_terminal_sign(pid: int, proc: Path) -> TerminalSign | None:
    """What the process itself holds: a pty master, or a terminal device it opened besides
    its standard input, output and error (those are where it was started from) and besides its
    controlling terminal. Raises OSError when its files cannot be read."""
    stat = read_stat(pid, proc)
    ctty = _device(stat.tty_nr) if stat is not None and stat.tty_nr else None
    found: TerminalSign | None = None
    for fd, name in _open_files(pid, proc):
        if name in _PTY_MASTERS:
            return TerminalSign.PTY_MASTER
        if fd > 2 and _is_terminal_device(name):
            try:
                rdev = os.stat(proc / str(pid) / "fd" / str(fd)).st_rdev
            except OSError:
                continue
            if rdev != ctty:
                found = TerminalSign.TTY_DEVICE
    return found


def foreground_program(sessions: Iterable[int], proc: Path = PROC) -> str:
    """The program in front of a terminal: the foreground job of the first of ``sessions``
    (processes leading a session on a terminal), else that leader itself. Processes that lead
    no session on a terminal (an app's helpers started from one) are passed over."""
    for pid in sessions:
        stat = read_stat(pid, proc)
        if stat is None or stat.tty_nr == 0 or stat.session != pid:
            continue
        if stat.tpgid > 0 and stat.tpgid != pid:
            front = process_name(stat.tpgid, proc)
            if front:
                return front
        return process_name(pid, proc) or stat.comm
    return ""


def look_into(pid: int | None, proc: Path = PROC) -> TerminalView:
    """Whether the window whose process is ``pid`` is a terminal, and what runs in front on it.

    A process below the window's that leads a session on a terminal is a terminal's session
    (a shell, a REPL, an IDE terminal's shell); the window's process holding a pty master or
    a terminal device is a terminal even before (or after) anything runs on it. A process
    tree that cannot be read whole cannot be cleared.
    """
    if not pid:
        return TerminalView(TerminalSign.NO_PROCESS)
    if read_stat(pid, proc) is None:
        return TerminalView(TerminalSign.NO_PROCESS)
    try:
        own = _own_terminal_sign(pid, proc)
    except FileNotFoundError:
        return TerminalView(TerminalSign.NO_PROCESS)  # gone while looked at
    except OSError:
        own = TerminalSign.UNREADABLE
    below, whole = descendants(pid, proc)
    sessions = []
    for child in below:
        stat = read_stat(child, proc)
        if stat is not None and stat.tty_nr != 0 and stat.session == child:
            sessions.append(child)
    inside = foreground_program(sessions, proc)
    if own is not None:
        return TerminalView(own, inside)
    if sessions:
        return TerminalView(TerminalSign.TTY_SESSION, inside)
    if not whole:
        return TerminalView(TerminalSign.UNREADABLE)
    return TerminalView(None)
