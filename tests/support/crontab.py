"""A stand-in ``crontab`` program: crontab(1) for ``-l``, ``-`` and ``-r``, its table a file.

The real one keeps the table in a spool only root reads; the tripwire talks to it through the
command alone, so a program that behaves the same is the crontab there. holodesk takes the
system's ``crontab`` only (never one on ``PATH``), so a test hands it the stand-in by name::

    spool = use_crontab(monkeypatch, tmp_path / "bin")
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_SCRIPT = """\
#!{python}
import os, sys
spool = {spool!r}
user = os.environ.get("USER", "user")
args = sys.argv[1:]
if args == ["-l"]:
    if not os.path.exists(spool):
        sys.stderr.write("no crontab for %s\\n" % user)
        sys.exit(1)
    with open(spool, "rb") as f:
        sys.stdout.buffer.write(f.read())
elif args == ["-"]:
    data = sys.stdin.buffer.read()
    with open(spool, "wb") as f:
        f.write(data)
elif args == ["-r"]:
    if not os.path.exists(spool):
        sys.stderr.write("no crontab for %s\\n" % user)
        sys.exit(1)
    os.remove(spool)
else:
    sys.stderr.write("usage: crontab [-l | -r | -]\\n")
    sys.exit(1)
"""


def install_crontab(bin_dir: Path) -> Path:
    """Write the stand-in as ``bin_dir/crontab``; returns its spool file (absent: no table)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    spool = bin_dir.parent / "crontab-spool"
    program = bin_dir / "crontab"
    program.write_text(_SCRIPT.format(python=sys.executable, spool=str(spool)))
    program.chmod(0o755)
    return spool


def use_crontab(monkeypatch: pytest.MonkeyPatch, bin_dir: Path) -> Path:
    """Install the stand-in in ``bin_dir`` and make it the crontab holodesk's protected files
    use (in place of the system's); returns its spool file."""
    from app import protected
    from control.crontab import Crontab

    spool = install_crontab(bin_dir)
    monkeypatch.setattr(protected, "find_crontab", lambda: Crontab(str(bin_dir / "crontab")))
    return spool
