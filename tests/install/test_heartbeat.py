"""scripts/heartbeat.py: the long steps of `make run` and `make package` never wait silently.

A command that prints nothing for a while gets a line naming what it waits for, how long so
far and its last words; work inside the process gets the same from ``still``; ``--stamp``
times a stream (fresh-check measures `make run`'s longest silence with it). The commands here
wait on a file the test creates, never on a clock; the heartbeat's interval is made short.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.support.build_scripts import HEARTBEAT, heartbeat_argv, load
from tests.support.gui import poll

#: A heartbeat line: what, the seconds so far, then what else it says.
BEAT = re.compile(r"    … still (?P<what>.+?): (?P<seconds>\d+) s so far(?:; (?P<rest>.*))?")


def waiter(flag: Path, before: list[str], after: list[str], status: int = 0) -> list[str]:
    """A command that prints ``before``, waits until ``flag`` exists, prints ``after``."""
    code = (
        "import os, sys, time\n"
        f"for line in {before!r}: print(line, flush=True)\n"
        f"while not os.path.exists({str(flag)!r}): time.sleep(0.02)\n"
        f"for line in {after!r}: print(line, flush=True)\n"
        f"sys.exit({status})\n"
    )
    return [sys.executable, "-c", code]


def run_until_a_heartbeat(tmp_path: Path, *args: str) -> tuple[int, str]:
    """Run heartbeat.py with ``args`` (ending in a :func:`waiter` for ``tmp_path/go``); once a
    heartbeat line is out, let the command finish. Its status and all it printed."""
    flag, out = tmp_path / "go", tmp_path / "out"
    with out.open("wb") as sink:
        proc = subprocess.Popen(heartbeat_argv(*args), stdout=sink, stderr=subprocess.STDOUT)
        try:
            poll(lambda: "… still" in out.read_text(encoding="utf-8"), 60, "a heartbeat line",
                 alive=lambda: None if proc.poll() is None else "heartbeat.py ended")
        finally:
            flag.touch()
            status = proc.wait(timeout=60)
    return status, out.read_text(encoding="utf-8")


def test_a_silent_command_is_told_still_at_work_with_what_and_its_last_words(
    tmp_path: Path,
) -> None:
    command = waiter(tmp_path / "go", before=["Installing collected packages: a, b"],
                     after=["Successfully installed a b"], status=3)
    status, text = run_until_a_heartbeat(
        tmp_path, "--every", "0.2", "installing the runtime dependencies (pip)", "--", *command)

    assert status == 3  # the command's own
    lines = text.splitlines()
    assert lines[0] == "Installing collected packages: a, b"
    assert lines[-1] == "Successfully installed a b"
    beats = [BEAT.fullmatch(line) for line in lines[1:-1]]
    assert beats and all(beats), text
    first = beats[0]
    assert first is not None
    assert first["what"] == "installing the runtime dependencies (pip)"
    assert first["rest"] == "last: Installing collected packages: a, b"


def test_only_shows_the_matching_lines_and_quotes_the_hidden_ones(tmp_path: Path) -> None:
    command = waiter(tmp_path / "go",
                     before=["Unpacking libfoo1 ...", "Get:2 http://deb.debian.org libbar2"],
                     after=["Setting up libfoo1 ...", "debconf: delaying package configuration"])
    status, text = run_until_a_heartbeat(
        tmp_path, "--only", "^(Unpacking|Setting up)", "--every", "0.2",
        "installing system packages (apt-get)", "--", *command)

    assert status == 0
    lines = text.splitlines()
    assert [line for line in lines if not BEAT.fullmatch(line)] == [
        "Unpacking libfoo1 ...", "Setting up libfoo1 ..."]
    beat = BEAT.fullmatch(lines[1])
    assert beat is not None, text
    # The line the person did not see names the part that is slow.
    assert beat["rest"] == "last: Get:2 http://deb.debian.org libbar2"


def test_a_command_that_cannot_start_is_said_and_fails(tmp_path: Path) -> None:
    done = subprocess.run(heartbeat_argv("waiting", "--", str(tmp_path / "no-such-program")),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 127
    assert "cannot run" in done.stderr and "no-such-program" in done.stderr


def test_work_in_this_process_is_told_until_the_block_ends() -> None:
    heartbeat = load(HEARTBEAT)
    sink = io.BytesIO()
    with heartbeat.still("copying the bundle", every=0.05, detail=lambda: "12 MB copied",
                         out=sink):
        poll(lambda: b"still copying" in sink.getvalue(), 60, "a heartbeat line")
    lines = sink.getvalue().decode("utf-8").splitlines()
    beat = BEAT.fullmatch(lines[0])
    assert beat is not None, lines
    assert beat["what"] == "copying the bundle" and beat["rest"] == "12 MB copied"


def stamped(stamps: Path, count: int) -> Callable[[], bool]:
    return lambda: stamps.exists() and len(stamps.read_text(encoding="utf-8").splitlines()) == count


def test_stamp_passes_the_stream_through_and_times_each_piece(tmp_path: Path) -> None:
    stamps = tmp_path / "times"
    proc = subprocess.Popen(heartbeat_argv("--stamp", str(stamps)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for count, piece in enumerate([b"Creating .venv\n", b" 40% \r", b"done\n"], start=1):
            proc.stdin.write(piece)
            proc.stdin.flush()
            # One piece at a time, each stamped before the next is sent.
            poll(stamped(stamps, count), 60, f"stamp {count}")
    finally:
        proc.stdin.close()
    assert proc.stdout.read() == b"Creating .venv\n 40% \rdone\n"
    assert proc.wait(timeout=60) == 0
    rows = [line.split("\t") for line in stamps.read_text(encoding="utf-8").splitlines()]
    assert [words for _, words in rows] == ["Creating .venv", "40%", "done"]
    times = [float(t) for t, _ in rows]
    assert times == sorted(times)
