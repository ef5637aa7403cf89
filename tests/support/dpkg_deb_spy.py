"""A ``dpkg-deb`` on PATH that notes what it was asked and what the output folder held when it
started, then runs the real one (or fails half-way, having written part of its output).

For tests/install/test_build_deb.py: a .deb being written must never look finished in dist/.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

SCRIPT = """#!/bin/sh
# tests/support/dpkg_deb_spy.py
out=
for arg in "$@"; do out=$arg; done
python3 - "$out" "$@" <<'PY'
import json, os, sys
out = sys.argv[1]
folder = os.path.dirname(out) or "."
with open({record!r}, "w") as f:
    json.dump({{"argv": sys.argv[2:], "folder_at_start": sorted(os.listdir(folder))}}, f)
PY
if [ {fail} = 1 ]; then
    printf 'half a package' > "$out"
    echo "dpkg-deb (spy): failing half-way" >&2
    exit 2
fi
exec {real} "$@"
"""


def install(folder: Path, *, fail: bool = False) -> Path:
    """Write the spy as ``folder/dpkg-deb`` (put ``folder`` first on PATH); the file it writes
    its notes to."""
    real = shutil.which("dpkg-deb")
    assert real is not None, "dpkg-deb is needed (Debian or Ubuntu)"
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / "dpkg-deb.json"
    spy = folder / "dpkg-deb"
    spy.write_text(SCRIPT.format(record=str(record), real=real, fail=int(fail)), encoding="utf-8")
    spy.chmod(0o755)
    return record


def notes(record: Path) -> dict[str, list[str]]:
    """What the spy noted: ``argv`` and ``folder_at_start``."""
    data: dict[str, list[str]] = json.loads(record.read_text(encoding="utf-8"))
    return data
