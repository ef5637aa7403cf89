"""What the About window says: holodesk's version, what it is, where its files live, its licence.

Qt-free, so the desktop app's About and anything else that describes holodesk (a support
bundle, the terminal) say the same thing from the same places.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path

from app import paths
from app.version import DISTRIBUTION, version

#: Said when the package metadata is missing (a source tree never installed); pyproject.toml's
#: ``license``.
LICENCE = "Apache-2.0"
SUMMARY = ("holodesk is a desktop assistant: you describe a task, and a vision model looks at "
           "your screen and works the mouse and keyboard to do it, asking you before risky "
           "steps. The model runs on a server you choose (your own machine or another).")


@dataclass(frozen=True)
class About:
    version: str
    summary: str
    licence: str
    settings_file: Path
    log_file: Path
    data_dir: Path


@cache
def _licence() -> str:
    try:
        meta = metadata.metadata(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return LICENCE
    for field in ("License-Expression", "License"):
        values = meta.get_all(field) or []
        if values and values[0]:
            return str(values[0])
    return LICENCE


def about() -> About:
    """The facts, read now (the paths follow the environment, as everywhere)."""
    return About(
        version=version(),
        summary=SUMMARY,
        licence=_licence(),
        settings_file=paths.settings_path(),
        log_file=paths.log_path(),
        data_dir=paths.data_dir(),
    )
