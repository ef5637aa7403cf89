"""control/procfs.py: a terminal is known by what its processes hold, whatever it is called.

Each signal is tested alone (a window that matches only one of them), on a /proc tree written by
the test and on real processes holding real pseudo-terminals: removing any one signal fails a
test here. A program merely started from a terminal, and an application named like a terminal
that holds none, are not terminals.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from control.procfs import (
    MAX_DESCENDANTS,
    TerminalSign,
    TerminalView,
    child_pids,
    foreground_program,
    holds_pty_master,
    look_into,
)
from tests.support.fake_proc import FakeProc
from tests.support.gui import poll

PTS = 34816  # tty_nr of /dev/pts/0 (major 136)


@pytest.fixture
def proc(tmp_path: Path) -> FakeProc:
    return FakeProc(tmp_path / "proc")


# -- a /proc tree written by the test: each signal alone -------------------------------------


def test_a_pty_master_alone_makes_a_terminal(proc: FakeProc) -> None:
    # Nothing runs on it (yet, or any more): still a terminal.
    proc.add(700, "notes", 1, master=True)
    assert look_into(700, proc.root) == TerminalView(TerminalSign.PTY_MASTER)


def test_a_session_on_a_terminal_below_makes_a_terminal_and_names_the_front(
        proc: FakeProc) -> None:
    # An IDE whose terminal host (not the window's process) holds the pty: the shell below it
    # leads a session on a terminal, and vim is its foreground job.
    proc.add(700, "studio", 1)
    proc.add(705, "ptyhost", 700)
    proc.add(710, "bash", 705, session=710, tty=PTS, tpgid=730)
    proc.add(730, "vim", 710, session=710, tty=PTS, tpgid=730)
    assert look_into(700, proc.root) == TerminalView(TerminalSign.TTY_SESSION, "vim")


def test_a_terminal_device_opened_beyond_stdio_makes_a_terminal(proc: FakeProc) -> None:
    # A serial console program: the device is open at fd 3, not its standard input.
    proc.add(700, "console", 1, files={3: "/dev/console"})
    assert look_into(700, proc.root).sign is TerminalSign.TTY_DEVICE


def test_open_files_that_cannot_be_read_count_as_a_terminal(proc: FakeProc) -> None:
    proc.add(700, "rootapp", 1, unreadable=True)
    assert look_into(700, proc.root).sign is TerminalSign.UNREADABLE


def test_a_process_that_cannot_be_found_counts_as_a_terminal(proc: FakeProc) -> None:
    assert look_into(None, proc.root).sign is TerminalSign.NO_PROCESS
    assert look_into(4321, proc.root).sign is TerminalSign.NO_PROCESS  # gone


def test_a_tree_too_large_to_walk_whole_is_not_cleared(proc: FakeProc) -> None:
    proc.add(700, "browser", 1)
    for n in range(MAX_DESCENDANTS + 1):
        proc.add(1000 + n, "helper", 700)
    assert look_into(700, proc.root).sign is TerminalSign.UNREADABLE


def test_an_app_named_like_a_terminal_that_holds_none_is_not_one(proc: FakeProc) -> None:
    proc.add(700, "xterm", 1)
    proc.add(710, "helper", 700)
    assert look_into(700, proc.root) == TerminalView(None)


def test_an_app_started_from_a_terminal_is_not_one(proc: FakeProc) -> None:
    # Its standard input and output are the terminal's, its helpers share that terminal, but
    # none of them leads a session on it.
    proc.add(700, "firefox", 1, session=300, tty=PTS, tpgid=300,
             files={0: "/dev/pts/0", 1: "/dev/pts/0", 2: "/dev/pts/0"})
    proc.add(710, "Socket Process", 700, session=300, tty=PTS, tpgid=300)
    assert look_into(700, proc.root) == TerminalView(None)
    assert foreground_program([710], proc.root) == ""


def test_the_program_in_front_of_a_terminal_is_the_sessions_foreground_job(
        proc: FakeProc) -> None:
    proc.add(700, "xterm", 1, master=True)
    # bash leads its own session on the pty; vim is the foreground group.
    proc.add(710, "bash", 700, session=710, tty=PTS, tpgid=730)
    proc.add(730, "vim", 710, session=710, tty=PTS, tpgid=730)
    assert child_pids(700, proc.root) == [710]
    assert foreground_program([710], proc.root) == "vim"
    assert look_into(700, proc.root) == TerminalView(TerminalSign.PTY_MASTER, "vim")
    # At the prompt, the session leader itself is in front, whatever it is.
    proc.add(800, "pterm", 1, master=True)
    proc.add(810, "python3", 800, session=810, tty=PTS + 1, tpgid=810)
    assert look_into(800, proc.root) == TerminalView(TerminalSign.PTY_MASTER, "python3")


def test_children_are_found_by_parent_where_the_kernel_keeps_no_list(proc: FakeProc) -> None:
    proc.add(700, "xterm", 1)
    proc.add(710, "bash", 700)
    for children in proc.root.glob("*/task/*/children"):
        children.unlink()
    assert child_pids(700, proc.root) == [710]


# -- real processes on real pseudo-terminals -------------------------------------------------


def _spawn(code: str, **kwargs: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                            **kwargs)  # type: ignore[call-overload]


@pytest.fixture
def reaped() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for p in started:
        p.kill()
        p.wait()


_READY = "import sys; sys.stdout.write('ready\\n'); sys.stdout.flush()\n"


def _ready(p: subprocess.Popen[bytes]) -> None:
    assert p.stdout is not None
    assert p.stdout.readline() == b"ready\n"


def test_a_real_emulator_running_python_directly_is_a_terminal_with_python_in_front(
        reaped: list[subprocess.Popen[bytes]]) -> None:
    # What pterm -e python3 is: a master held, python3 leading a session on the slave.
    emulator = _spawn(
        "import os, pty, sys, time\n"
        "pid, fd = pty.fork()\n"
        "if pid == 0:\n"
        "    os.execv(sys.executable, [sys.executable, '-i', '-q'])\n"
        + _READY + "time.sleep(600)\n", stdout=subprocess.PIPE)
    reaped.append(emulator)
    _ready(emulator)
    assert holds_pty_master(emulator.pid)
    view = poll(lambda: (v := look_into(emulator.pid)).inside and v, 30, "python3 on the pty")
    assert view.sign is TerminalSign.PTY_MASTER
    assert view.inside.startswith("python")


def test_a_real_session_on_a_pty_below_a_process_holding_none_is_a_terminal(
        reaped: list[subprocess.Popen[bytes]]) -> None:
    # The test holds the master; the "window" process holds nothing of the pty, its child
    # leads a session on the slave (an IDE's terminal host shape).
    master, slave = pty.openpty()
    name = os.ttyname(slave)
    os.close(slave)
    try:
        leader = (f"import os, time; os.setsid(); fd = os.open({name!r}, os.O_RDWR); "
                  "print('ready', flush=True); time.sleep(600)")
        window = _spawn(f"import subprocess, sys, time\n"
                        f"subprocess.Popen([sys.executable, '-c', {leader!r}])\n"
                        "time.sleep(600)\n", stdout=subprocess.PIPE)
        reaped.append(window)
        _ready(window)
        assert not holds_pty_master(window.pid)
        assert look_into(window.pid).sign is TerminalSign.TTY_SESSION
    finally:
        os.close(master)


def test_a_real_terminal_device_held_beyond_stdio_is_a_terminal(
        reaped: list[subprocess.Popen[bytes]]) -> None:
    master, slave = pty.openpty()
    try:
        holder = _spawn(_READY + "import time; time.sleep(600)\n", stdout=subprocess.PIPE,
                        pass_fds=(slave,), start_new_session=True)
        reaped.append(holder)
        _ready(holder)
        assert look_into(holder.pid).sign is TerminalSign.TTY_DEVICE
    finally:
        os.close(slave)
        os.close(master)


def test_a_real_program_started_on_a_terminal_is_not_one(
        reaped: list[subprocess.Popen[bytes]]) -> None:
    # Started from a terminal: its standard input and output are the pty's slave.
    master, slave = pty.openpty()
    try:
        app = subprocess.Popen([sys.executable, "-c", _READY + "import time; time.sleep(600)"],
                               stdin=slave, stdout=subprocess.PIPE, stderr=slave)
        reaped.append(app)
        _ready(app)
        assert look_into(app.pid) == TerminalView(None)
    finally:
        os.close(slave)
        os.close(master)
