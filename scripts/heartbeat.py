"""No silent wait: the long steps of `make run` and `make package` say they are still at work.

pip unpacking PySide6, apt running its triggers, PyInstaller analysing, dpkg-deb compressing:
each can print nothing for tens of seconds, and a person watching cannot tell a busy step from
a hung one. :func:`run` runs a command with its output passed through as it comes and, when
nothing was shown for :data:`EVERY` seconds, prints one line naming what it waits for, how long
so far and the command's last words, shown or hidden (so the line says *which* part of the step
is slow: the package being downloaded, pip's "Installing collected packages").

Three ways in:

- imported: ``run(argv, "installing the runtime dependencies (pip)")`` (scripts/install_deps.py;
  packaging/build_deb.py puts this folder on its path), and ``with still("copying the bundle"):``
  for silent work in the same process;
- from a shell script: ``python3 scripts/heartbeat.py [--only REGEX] WHAT -- COMMAND...``
  (scripts/install.sh, scripts/sysdeps.sh); ``--only`` shows just the lines that match (apt's
  ``Unpacking``/``Setting up``), and the lines it hides do not count as progress;
- ``python3 scripts/heartbeat.py --stamp FILE`` copies its input to its output and writes when
  each piece of it arrived to FILE: scripts/fresh-check.sh measures the longest silence of
  `make run` with it, so the claim above is checked on a fresh machine.

Standard library only: it runs with the system ``python3`` before holodesk's environment exists.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO

#: Seconds without output before the step says it is still at work (the promise is 5; a
#: loaded machine may run this process a second late).
EVERY = 3.0
#: How much of the command's last line a heartbeat quotes.
QUOTE = 70
#: Something to add to a heartbeat line, asked each time (a file's size so far, a count).
Detail = Callable[[], str]

_LINE_END = re.compile(rb"[\r\n]")


def _last_words(shown: bytes) -> str:
    """The last non-empty line of what was shown, shortened (progress bars end in \\r)."""
    for piece in reversed(_LINE_END.split(shown)):
        text = piece.decode("utf-8", "replace").strip()
        if text:
            return text if len(text) <= QUOTE else text[: QUOTE - 1] + "…"
    return ""


def heartbeat_line(what: str, seconds: float, last: str, detail: str = "") -> str:
    """``    … still WHAT: 12 s so far; DETAIL; last: …`` (detail: a count, a size; if any)."""
    parts = [f"{seconds:.0f} s so far"]
    if detail:
        parts.append(detail)
    if last:
        parts.append(f"last: {last}")
    return f"    … still {what}: {'; '.join(parts)}"


class _Shower:
    """Writes what is shown and remembers when, and whether a line is open."""

    def __init__(self, out: BinaryIO, only: re.Pattern[bytes] | None) -> None:
        self.out = out
        self.only = only
        self.pending = b""  # an unfinished line, held back while filtering
        self.at_line_start = True
        self.last_shown = time.monotonic()
        self.tail = b""  # the end of the command's output, shown or not: the heartbeat quotes it

    def write(self, data: bytes) -> None:
        self.tail = (self.tail + data)[-4096:]
        if self.only is not None:
            self.pending += data
            *lines, self.pending = re.split(rb"(?<=\n)", self.pending)
            data = b"".join(line for line in lines if self.only.search(line))
        if not data:
            return
        self.out.write(data)
        self.out.flush()
        self.last_shown = time.monotonic()
        self.at_line_start = data.endswith((b"\n", b"\r"))

    def say(self, line: str) -> None:
        prefix = b"" if self.at_line_start else b"\n"
        self.out.write(prefix + line.encode("utf-8") + b"\n")
        self.out.flush()
        self.last_shown = time.monotonic()
        self.at_line_start = True


def run(argv: Sequence[str], what: str, *, only: str | None = None, every: float = EVERY,
        out: BinaryIO | None = None, cwd: str | os.PathLike[str] | None = None) -> int:
    """Run ``argv`` with its output (stdout and stderr, in order) passed through; after
    ``every`` seconds with nothing shown, a heartbeat line. Returns the exit status."""
    shower = _Shower(out if out is not None else sys.stdout.buffer,
                     re.compile(only.encode()) if only else None)
    started = time.monotonic()
    process = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               cwd=cwd)
    assert process.stdout is not None
    chunks: queue.Queue[bytes] = queue.Queue()
    reader = threading.Thread(target=_pump, args=(process.stdout.fileno(), chunks), daemon=True)
    reader.start()
    try:
        while True:
            wait = max(0.05, shower.last_shown + every - time.monotonic())
            try:
                chunk = chunks.get(timeout=wait)
            except queue.Empty:
                shower.say(heartbeat_line(what, time.monotonic() - started,
                                          _last_words(shower.tail)))
                continue
            if not chunk:
                break
            shower.write(chunk)
        if shower.pending and shower.only is not None and shower.only.search(shower.pending):
            shower.write(b"\n")
        return process.wait()
    except KeyboardInterrupt:
        # The command got the same Ctrl+C (one process group): let it end as it does.
        process.wait()
        return 130


@contextlib.contextmanager
def still(what: str, *, every: float = EVERY, detail: Detail | None = None,
          out: BinaryIO | None = None) -> Iterator[None]:
    """For work done in this process that prints nothing (copying a tree, a loop of quick
    commands): a heartbeat line every ``every`` seconds until the block ends."""
    sink = out if out is not None else sys.stdout.buffer
    started = time.monotonic()
    done = threading.Event()

    def beat() -> None:
        while not done.wait(every):
            line = heartbeat_line(what, time.monotonic() - started, "", detail() if detail else "")
            sink.write(line.encode("utf-8") + b"\n")
            sink.flush()

    beater = threading.Thread(target=beat, daemon=True)
    beater.start()
    try:
        yield
    finally:
        done.set()
        beater.join()


def _pump(fd: int, chunks: queue.Queue[bytes]) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        chunks.put(data)
        if not data:
            return


def stamp(into: str, source: BinaryIO, out: BinaryIO) -> None:
    """Copy ``source`` to ``out`` as it comes; for each piece, ``<unix time>\\t<last words>``
    into the file ``into``."""
    with open(into, "a", encoding="utf-8") as times:
        while True:
            data = os.read(source.fileno(), 65536)
            if not data:
                return
            out.write(data)
            out.flush()
            times.write(f"{time.time():.3f}\t{_last_words(data)}\n")
            times.flush()


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["--stamp"] and len(argv) == 2:
        stamp(argv[1], sys.stdin.buffer, sys.stdout.buffer)
        return 0
    parser = argparse.ArgumentParser(
        prog="heartbeat.py", description=__doc__.split("\n")[0] if __doc__ else None,
        usage="heartbeat.py [--only REGEX] [--every S] WHAT -- COMMAND... | --stamp FILE")
    parser.add_argument("--only", help="show only the lines this regular expression finds")
    parser.add_argument("--every", type=float, default=EVERY,
                        help=f"seconds of silence before a heartbeat (default {EVERY:g})")
    parser.add_argument("what", help="what the command does, for the heartbeat line")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no COMMAND after --")
    try:
        return run(command, args.what, only=args.only, every=args.every)
    except FileNotFoundError as exc:
        print(f"heartbeat.py: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
