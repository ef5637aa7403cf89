"""The program's log file rotates (app/logs.py): it never grows past its size, old lines move
to holodesk.log.1 and onwards, and a problem report still finds the last lines."""

from __future__ import annotations

import logging
from pathlib import Path

from app.logs import LOG_BACKUPS, LOG_MAX_BYTES, log_file_handler
from app.report import _log_tail
from tests.support.e2e import run_holodesk
from tests.support.home import Home


def test_a_full_log_file_moves_aside_when_holodesk_starts(home: Home) -> None:
    folder = home.state / "holodesk"
    folder.mkdir(parents=True)
    old = "an old line\n" * (LOG_MAX_BYTES // 12 + 10)
    (folder / "holodesk.log").write_text(old)
    assert run_holodesk(home, "config", "show").returncode == 0
    current = (folder / "holodesk.log").read_text()
    assert "starting" in current and "an old line" not in current
    assert (folder / "holodesk.log.1").read_text() == old
    shown = run_holodesk(home, "config", "show").stdout
    assert f"log file: {folder / 'holodesk.log'}" in shown  # where it is, for the person


def test_the_files_stay_bounded_and_the_oldest_go(tmp_path: Path) -> None:
    path = tmp_path / "holodesk.log"
    handler = log_file_handler(path, max_bytes=2_000, backups=LOG_BACKUPS)
    logger = logging.getLogger("tests.rotation")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        for i in range(1_000):
            logger.warning("line %04d %s", i, "x" * 40)
    finally:
        logger.removeHandler(handler)
        handler.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["holodesk.log"] + [f"holodesk.log.{n}" for n in range(1, LOG_BACKUPS + 1)]
    assert all(p.stat().st_size <= 2_000 for p in tmp_path.iterdir())
    assert "line 0999" in path.read_text()
    # The report's tail reaches into the moved file when the current one is short.
    tail = _log_tail(path, 60).splitlines()
    assert len(tail) == 60 and tail[-1].endswith("line 0999 " + "x" * 40)
    assert "line 0940" in tail[0]
