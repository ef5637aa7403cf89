"""CI runs what it claims: with ``CI`` set, a missing X11 tool is an error and a skip a failure.

On a developer's machine a test whose tool is missing skips with the reason (and the apt-get
line). In CI the same skip would turn a broken install into a green run that tested nothing,
so there the session refuses to start without the tools, and any skip that still happens is
reported as a failure. Optional heavy tests are not skipped either: they carry a marker and
are deselected (they never appear in the summary).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass

#: What the X11 tests start or drive, and the Debian package that brings it.
X11_TOOLS = (
    ("Xvfb", "xvfb"),
    ("xdotool", "xdotool"),
    ("xclip", "xclip"),
    ("xwininfo", "x11-utils"),
    ("openbox", "openbox"),
    ("xterm", "xterm"),
)


@dataclass(frozen=True)
class Missing:
    what: str
    package: str


def in_ci(environ: dict[str, str] | None = None) -> bool:
    """Whether this is a CI run (``CI`` set to anything but empty, 0 or false)."""
    value = (environ if environ is not None else os.environ).get("CI", "")
    return value.strip().lower() not in ("", "0", "false", "no")


def missing_x11_tools() -> list[Missing]:
    """The X11 test tools that are not installed (Tk is checked in this interpreter: the target
    app runs on it)."""
    missing = [Missing(tool, package) for tool, package in X11_TOOLS if shutil.which(tool) is None]
    if importlib.util.find_spec("tkinter") is None:
        missing.append(Missing("Tk for this Python (tkinter)", "python3-tk"))
    return missing


def describe(missing: list[Missing]) -> str:
    packages = " ".join(sorted({m.package for m in missing}))
    return (
        f"missing: {', '.join(m.what for m in missing)}; install them with "
        f"`apt-get install {packages}` (scripts/sysdeps.sh does it as root)"
    )
