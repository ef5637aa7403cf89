"""Install holodesk's dependencies into the running (virtual) environment, from pyproject.toml.

``install_deps.py run`` installs the runtime dependencies only; ``install_deps.py dev`` adds the
``dev`` extra (tests and linters). Then holodesk itself, editable. Each pip run goes through
scripts/heartbeat.py: pip is silent for tens of seconds while it unpacks PySide6, and the person
watching is told it is still at work.

Why not just ``pip install -e '.[dev]'``: on Linux pynput declares ``evdev``, which is only for
its uinput backend (root, no X server). holodesk drives X11 through pynput's xorg backend
(python-xlib), and evdev has no binary wheel: pip would compile it, which needs gcc and the
Python headers on a machine that otherwise needs neither. So pynput goes in without its
dependencies here, and its X11 ones (six, python-xlib) are installed by name. pip has no way to
leave out one dependency of a dependency; a plain ``pip install holodesk`` elsewhere still
works, it just builds evdev.
"""

from __future__ import annotations

import re
import sys
import time
import tomllib
from pathlib import Path

from heartbeat import run  # scripts/heartbeat.py: this script's folder is first on sys.path

ROOT = Path(__file__).resolve().parents[1]
# What pynput needs on X11 besides evdev (its own metadata: six, python-xlib>=0.17).
PYNPUT_X11_DEPS = ["six", "python-xlib>=0.17"]


def requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if match is None:
        raise SystemExit(f"install_deps: cannot read the requirement {requirement!r}")
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def requirements(group: str) -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = list(project["dependencies"])
    if group == "dev":
        wanted += project["optional-dependencies"]["dev"]
    elif group != "run":
        raise SystemExit(f"install_deps: unknown group {group!r} (run or dev)")
    return wanted


def pip(step: str, what: str, *args: str) -> None:
    print(step, flush=True)
    started = time.monotonic()
    # No --quiet: pip's "Collecting…/Downloading…" lines are the progress a person waits on.
    command = [sys.executable, "-m", "pip", "install", "--progress-bar", "on", *args]
    if run(command, what) != 0:
        raise SystemExit(
            f"install_deps: `{' '.join(command[2:])}` failed (pip's message is above). "
            "Check the network, then run the same make command again: it resumes."
        )
    print(f"  done in {time.monotonic() - started:.0f} s", flush=True)


def main(argv: list[str]) -> int:
    group = argv[1] if len(argv) > 1 else "run"
    wanted = requirements(group)
    pynput = [r for r in wanted if requirement_name(r) == "pynput"]
    others = [r for r in wanted if requirement_name(r) != "pynput"]
    linux = sys.platform.startswith("linux")
    what = "runtime dependencies" if group == "run" else "runtime and developer dependencies"
    first = f"[1/2] Installing holodesk's {what} (PySide6 alone is about 100 MB)…"
    if linux and pynput:
        pip(first, f"installing the {what} (pip)", *others, *PYNPUT_X11_DEPS)
        # One pip run for both: neither needs the resolver, and each run costs pip's start-up.
        pip("[2/2] Installing pynput for X11 (without evdev, which only its uinput backend "
            "uses) and holodesk itself (editable: this clone is the program)…",
            "installing pynput and holodesk (pip)", "--no-deps", *pynput, "-e", str(ROOT))
    else:
        pip(first, f"installing the {what} (pip)", *wanted)
        pip("[2/2] Installing holodesk itself (editable: this clone is the program)…",
            "installing holodesk (pip)", "--no-deps", "-e", str(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
