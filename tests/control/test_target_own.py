"""control/target_x11.py without a display: what counts as holodesk's own, read from a /proc
tree written by the test; the program in front of a terminal; which finder a desktop gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from control.target import NoTargetFinder, Target, TargetKind, WindowListError
from control.target_x11 import (
    OwnProcess,
    X11TargetFinder,
    _local_display,
    child_pids,
    foreground_program,
    make_target_finder,
    process_name,
    terminal_ancestors,
)


class FakeProc:
    """A /proc tree: ``add(pid, name, ppid)`` writes the stat, comm and cmdline files the
    finder reads (and the children list the kernel keeps)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def add(self, pid: int, name: str, ppid: int, *, session: int = 0, tty: int = 0,
            tpgid: int = -1, argv0: str = "") -> None:
        d = self.root / str(pid)
        (d / "task" / str(pid)).mkdir(parents=True)
        comm = name[:15]
        # pid (comm) state ppid pgrp session tty_nr tpgid flags ...
        (d / "stat").write_text(
            f"{pid} ({comm}) S {ppid} {pid} {session or pid} {tty} {tpgid} 4194304 0 0\n")
        (d / "comm").write_text(comm + "\n")
        (d / "cmdline").write_bytes((argv0 or name).encode() + b"\0--flag\0")
        (d / "task" / str(pid) / "children").write_text("")
        parent = self.root / str(ppid) / "task" / str(ppid) / "children"
        if parent.exists():
            parent.write_text(parent.read_text() + f"{pid} ")


@pytest.fixture
def proc(tmp_path: Path) -> FakeProc:
    return FakeProc(tmp_path / "proc")


def desktop_session(proc: FakeProc) -> None:
    proc.add(1, "systemd", 0)
    proc.add(500, "systemd", 1)  # the user's service manager
    proc.add(600, "openbox", 500)


def test_in_a_terminal_the_walk_takes_the_shell_and_the_terminal_and_stops_there(
        proc: FakeProc) -> None:
    desktop_session(proc)
    proc.add(700, "xterm", 600)
    proc.add(710, "bash", 700)
    proc.add(720, "holodesk", 710)
    own = OwnProcess.current(proc=proc.root, environ={}, tty=True, pid=720)
    assert own.pids == {720, 710, 700}
    assert terminal_ancestors(720, proc.root) == (710, 700)


def test_without_a_terminal_only_this_process_is_own(proc: FakeProc) -> None:
    desktop_session(proc)
    proc.add(700, "xterm", 600)
    proc.add(710, "bash", 700)
    proc.add(720, "holodesk", 710)
    # Started from a launcher (no tty): the parents are not where the person typed.
    assert OwnProcess.current(proc=proc.root, environ={}, tty=False, pid=720).pids == {720}


def test_a_terminal_whose_name_the_kernel_cuts_is_still_found(proc: FakeProc) -> None:
    desktop_session(proc)
    proc.add(700, "gnome-terminal-server", 500, argv0="/usr/libexec/gnome-terminal-server")
    proc.add(710, "bash", 700)
    proc.add(720, "python3", 710)
    assert process_name(700, proc.root) == "gnome-terminal-server"
    assert OwnProcess.current(proc=proc.root, environ={}, tty=True, pid=720).pids == {
        720, 710, 700}


@pytest.mark.parametrize("session", ["sshd", "login", "gnome-shell", "plasmashell",
                                     "xfce4-session", "systemd"])
def test_the_walk_never_takes_the_session_or_pid_1(proc: FakeProc, session: str) -> None:
    proc.add(1, "systemd", 0)
    proc.add(400, session, 1)
    proc.add(710, "bash", 400)
    proc.add(720, "holodesk", 710)
    assert OwnProcess.current(proc=proc.root, environ={}, tty=True, pid=720).pids == {720, 710}


def test_a_shell_straight_under_pid_1_stops_the_walk(proc: FakeProc) -> None:
    proc.add(1, "systemd", 0)
    proc.add(710, "bash", 1)
    proc.add(720, "holodesk", 710)
    assert 1 not in OwnProcess.current(proc=proc.root, environ={}, tty=True, pid=720).pids


def test_a_tmux_server_is_taken_and_the_session_above_it_is_not(proc: FakeProc) -> None:
    desktop_session(proc)
    proc.add(650, "tmux: server", 500)
    proc.add(710, "bash", 650)
    proc.add(720, "holodesk", 710)
    assert OwnProcess.current(proc=proc.root, environ={}, tty=True, pid=720).pids == {
        720, 710, 650}


def test_windowid_names_the_terminal_window(proc: FakeProc) -> None:
    proc.add(720, "holodesk", 1)
    own = OwnProcess.current(proc=proc.root, environ={"WINDOWID": "6291468"}, tty=False,
                             pid=720)
    assert own.windows == {6291468}
    assert OwnProcess.current(proc=proc.root, environ={"WINDOWID": "junk"}, tty=False,
                              pid=720).windows == frozenset()


def test_own_is_by_pid_window_or_holodesks_window_class() -> None:
    own = OwnProcess(pids=frozenset({720}), windows=frozenset({0x600001}))
    assert own.owns(Target(window=5, pid=720))
    assert own.owns(Target(window=0x600001, pid=9))
    assert own.owns(Target(window=5, wm_instance="holodesk", wm_class="holodesk", pid=9))
    assert not own.owns(Target(window=5, wm_class="XTerm", pid=9))
    assert not own.owns(Target(window=5, wm_class="", pid=None))


def test_the_program_in_front_of_a_terminal_is_the_shells_foreground_job(
        proc: FakeProc) -> None:
    proc.add(700, "xterm", 1)
    # bash leads its own session on the pty (tty 34816); vim is the foreground group.
    proc.add(710, "bash", 700, session=710, tty=34816, tpgid=730)
    proc.add(730, "vim", 710, session=710, tty=34816, tpgid=730)
    assert child_pids(700, proc.root) == [710]
    assert foreground_program([710], proc.root) == "vim"
    # At the prompt, the shell itself is in front.
    proc.add(800, "xterm", 1)
    proc.add(810, "zsh", 800, session=810, tty=34817, tpgid=810)
    assert foreground_program([810], proc.root) == "zsh"


def test_an_apps_helpers_are_not_what_runs_inside_it(proc: FakeProc) -> None:
    # A browser started from a terminal: its children share that tty but lead no session.
    proc.add(700, "firefox", 1, session=300, tty=34816, tpgid=300)
    proc.add(710, "Socket Process", 700, session=300, tty=34816, tpgid=300)
    assert foreground_program([710], proc.root) == ""


def test_children_are_found_by_parent_where_the_kernel_keeps_no_list(proc: FakeProc) -> None:
    proc.add(700, "xterm", 1)
    proc.add(710, "bash", 700)
    for children in proc.root.glob("*/task/*/children"):
        children.unlink()
    assert child_pids(700, proc.root) == [710]


def test_a_display_that_cannot_be_opened_is_an_unknown_target_not_an_error() -> None:
    finder = X11TargetFinder(":4987", OwnProcess())
    target = finder.focused()
    assert target.window == 0 and target.kind is TargetKind.UNKNOWN
    assert "cannot be opened" in target.note and "X11 session" in target.note
    assert finder.at(10, 10).kind is TargetKind.UNKNOWN
    # The windows to paint out are unknown, not none: the frame is painted out entirely.
    with pytest.raises(WindowListError, match="cannot be opened"):
        finder.windows()


@pytest.mark.parametrize(("environ", "platform", "finder"), [
    ({"DISPLAY": ":0"}, "linux", X11TargetFinder),
    ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "linux", NoTargetFinder),
    ({"DISPLAY": ":0", "XDG_SESSION_TYPE": "wayland"}, "linux", NoTargetFinder),
    ({}, "linux", NoTargetFinder),
    ({"DISPLAY": ":0"}, "win32", NoTargetFinder),
    ({}, "darwin", NoTargetFinder),
])
def test_each_desktop_gets_its_finder(environ: dict[str, str], platform: str,
                                      finder: type) -> None:
    made = make_target_finder(environ=environ, platform=platform)
    assert isinstance(made, finder)
    if isinstance(made, NoTargetFinder):
        assert made.focused().kind is TargetKind.NO_FINDER
        assert made.focused().note  # the person is told why


def test_under_wayland_the_person_is_told_to_use_an_x11_session() -> None:
    made = make_target_finder(environ={"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"},
                              platform="linux")
    assert "Wayland" in made.focused().label() and "X11 session" in made.focused().label()


@pytest.mark.parametrize(("display", "local"), [
    (":0", True), (":1.0", True), ("unix:0", True),
    ("/private/tmp/com.apple.launchd.x/org.xquartz:0", True),
    ("localhost:10.0", False),  # ssh -X: the server's pids are another machine's
    ("buildhost:0", False),
])
def test_the_servers_pids_are_trusted_only_on_a_local_display(display: str, local: bool) -> None:
    assert _local_display(display) is local
