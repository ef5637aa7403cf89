"""A stand-in ``crontab`` program: crontab(1) for ``-l``, ``-`` and ``-r``, its table a file.

The real one keeps the table in a spool only root reads; the tripwire talks to it through the
command alone, so a program that behaves the same on a test's ``PATH`` is the crontab there::

    spool = install_crontab(tmp_path / "bin")   # then put tmp_path / "bin" first on PATH
"""

from __future__ import annotations

import sys
from pathlib import Path

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
