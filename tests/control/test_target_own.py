"""control/target_x11.py without a display: what counts as holodesk's own, read from a /proc
tree written by the test (tests/support/fake_proc.py); which finder a desktop gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from control.procfs import process_name
from control.target import NoTargetFinder, Target, TargetKind, WindowListError
from control.target_x11 import (
    OwnProcess,
    X11TargetFinder,
    _local_display,
    make_target_finder,
    terminal_ancestors,
)
from tests.support.fake_proc import FakeProc


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
    proc.add(700, "xterm", 600, master=True)
    proc.add(710, "bash", 700)
    proc.add(720, "holodesk", 710)
    own = OwnProcess.current(proc=proc.root, environ={}, tty=True, pid=720)
    assert own.pids == {720, 710, 700}
    assert terminal_ancestors(720, proc.root) == (710, 700)


def test_without_a_terminal_only_this_process_is_own(proc: FakeProc) -> None:
    desktop_session(proc)
    proc.add(700, "xterm", 600, master=True)
    proc.add(710, "bash", 700)
    proc.add(720, "holodesk", 710)
    # Started from a launcher (no tty): the parents are not where the person typed.
    assert OwnProcess.current(proc=proc.root, environ={}, tty=False, pid=720).pids == {720}


def test_a_terminal_whose_name_the_kernel_cuts_is_still_named(proc: FakeProc) -> None:
    desktop_session(proc)
    proc.add(700, "gnome-terminal-server", 500, argv0="/usr/libexec/gnome-terminal-server",
             master=True)
    proc.add(710, "bash", 700)
    proc.add(720, "python3", 710)
    assert process_name(700, proc.root) == "gnome-terminal-server"
    assert OwnProcess.current(proc=proc.root, environ={}, tty=True, pid=720).pids == {
        720, 710, 700}


def test_the_terminal_above_holodesk_is_known_by_its_pty_not_its_name(proc: FakeProc) -> None:
    # An emulator nobody has heard of: the walk stops at the process holding the pty master,
    # and goes no further (the launcher above it is not the terminal).
    desktop_session(proc)
    proc.add(650, "launcher", 600)
    proc.add(700, "zutty", 650, master=True)
    proc.add(710, "python3", 700)
    proc.add(720, "holodesk", 710)
    assert OwnProcess.current(proc=proc.root, environ={}, tty=True, pid=720).pids == {
        720, 710, 700}
    # Named like a terminal but holding no pty: not where holodesk runs, the walk goes on.
    proc.add(800, "xterm", 650)
    proc.add(810, "bash", 800)
    proc.add(820, "holodesk", 810)
    assert {800, 650} <= OwnProcess.current(proc=proc.root, environ={}, tty=True,
                                            pid=820).pids


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
    proc.add(650, "tmux: server", 500, master=True)
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
