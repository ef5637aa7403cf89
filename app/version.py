"""holodesk's version: one place, the package metadata (pyproject.toml's ``version``).

Everything that shows a version (``holodesk --version``, the log's first line at start,
``doctor --json``, the desktop app's About) asks :func:`version`, so a release changes one line.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata

DISTRIBUTION = "holodesk"
UNKNOWN = "unknown (not installed: run `pip install -e .` in the clone)"


@cache
def version() -> str:
    """The installed distribution's version; :data:`UNKNOWN` when holodesk runs from a source
    tree that was never installed (its metadata is what makes it a release)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN
