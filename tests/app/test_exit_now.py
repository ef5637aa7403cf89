"""app/cli/main.py ``exit_now``: the process ends with the code, without the interpreter's
teardown, and what holodesk still had to say (its log, its printed lines) arrives whole."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.home import REPO_ROOT

_SCRIPT = textwrap.dedent("""
    import logging, logging.handlers, sys
    from app.cli.main import exit_now

    # Writes only when closed: a log line lost unless the handlers are shut down.
    target = logging.FileHandler(sys.argv[1])
    logging.getLogger().addHandler(logging.handlers.MemoryHandler(10_000, target=target))
    logging.getLogger().setLevel(logging.INFO)
    logging.getLogger("holodesk").info("the run ended")
    sys.stdout.write("no newline, still buffered")
    # The interpreter's teardown would run this; exit_now skips it.
    import atexit
    atexit.register(lambda: sys.stderr.write("teardown ran"))
    exit_now(3)
""")


def test_the_log_and_the_output_arrive_and_no_teardown_runs(tmp_path: Path) -> None:
    log = tmp_path / "holodesk.log"
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(log)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "no newline, still buffered"
    assert "teardown ran" not in done.stderr
    assert log.read_text(encoding="utf-8") == "the run ended\n"
