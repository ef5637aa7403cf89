"""A terminal emulator nobody has heard of: a Tk window that holds a pty and runs a program on it.

Its window class (``Scratchpad`` by default) and its process (``python3``) are on no list of
terminals anywhere: holodesk can know it is a terminal only by what its process holds (the pty
master) and what runs on it (a session on the pty's slave). Keys pressed in the window go to the
program as a terminal sends them (control characters for ctrl+letter, Escape, Return as a
carriage return); what the program prints is shown as plain text.

With ``--detached`` the pty is held, and the program run, by a daemon of its own (forked
twice and in a session of its own, so neither it nor the program is below the window's process)
that copies bytes between the pty and a socket the window holds: the design of an emulator whose
multiplexer server holds the terminals (``wezterm connect`` and ``wezterm-mux-server
--daemonize``, a GUI front end of a detached session). The window's process then holds a socket
only.

Run as ``python -m tests.support.pty_window [--class-name NAME] [--geometry G] [--detached] --
PROGRAM...`` on a test's display (tests/support/terminal.py starts it).
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import socket
import sys
import tkinter as tk

#: What a terminal sends for keys that type no character themselves.
_KEYS = {
    "BackSpace": b"\x7f", "Return": b"\r", "KP_Enter": b"\r", "Tab": b"\t",
    "Escape": b"\x1b", "Up": b"\x1b[A", "Down": b"\x1b[B", "Right": b"\x1b[C",
    "Left": b"\x1b[D", "Home": b"\x1b[H", "End": b"\x1b[F", "Delete": b"\x1b[3~",
}
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--class-name", default="Scratchpad")
    parser.add_argument("--title", default="scratchpad")
    parser.add_argument("--geometry", default="640x400+40+40")
    parser.add_argument("--detached", action="store_true")
    parser.add_argument("program", nargs="+")
    args = parser.parse_args(argv)

    if args.detached:
        master = _detached(args.program)
    else:
        pid, master = pty.fork()
        if pid == 0:  # the program, leading a session on the pty's slave
            os.execvp(args.program[0], args.program)

    root = tk.Tk(className=args.class_name)
    root.title(args.title)
    root.geometry(args.geometry)
    screen = tk.Text(root, font=("Courier", 11), wrap="char")
    screen.pack(fill="both", expand=True)

    def on_output(_fd: int, _mask: int) -> None:
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b""
        if not data:
            root.destroy()  # the program ended
            return
        shown = _ANSI.sub(b"", data).replace(b"\r\n", b"\n").replace(b"\r", b"")
        screen.insert("end", shown.decode("utf-8", "replace"))
        screen.see("end")

    def on_key(event: tk.Event) -> str:  # type: ignore[type-arg]
        data = _KEYS.get(event.keysym)
        if data is None and event.char:
            data = event.char.encode("utf-8")
        if data:
            os.write(master, data)
        return "break"  # the program echoes what it takes, not the widget

    root.tk.createfilehandler(master, tk.READABLE, on_output)  # type: ignore[attr-defined]
    screen.bind("<Key>", on_key)
    screen.focus_set()
    root.mainloop()
    sys.exit(0)


def _detached(program: list[str]) -> int:
    """Start the daemon that holds the pty and runs ``program``; the window's end of the socket
    it copies the pty through."""
    window_end, daemon_end = socket.socketpair()
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            window_end.close()
            _serve(program, daemon_end.detach())
        os._exit(0)
    os.waitpid(middle, 0)  # the daemon is now nobody's child here
    daemon_end.close()
    return window_end.detach()


def _serve(program: list[str], link: int) -> None:
    """The daemon: the program on a pty, its bytes copied to and from ``link`` until either
    ends."""
    pid, master = pty.fork()
    if pid == 0:
        os.close(link)
        os.execvp(program[0], program)
    ends = {master: link, link: master}
    try:
        while True:
            ready, _, _ = select.select(list(ends), [], [])
            for fd in ready:
                data = os.read(fd, 65536)
                if not data:
                    raise OSError("closed")
                os.write(ends[fd], data)
    except OSError:
        pass
    os._exit(0)


if __name__ == "__main__":
    main()
