"""holodesk's own icon (resources/icons/holodesk.svg) for its windows and the desktop.

Found beside the code: in the frozen build under its data folder (``sys._MEIPASS``), in a
source checkout at the repository's ``resources/``. A ``pip install`` of the package carries no
resources, so there the icon theme's ``holodesk`` (installed by the .deb) is asked for, and
failing both the windows keep Qt's default.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtGui import QIcon

__all__ = ["app_icon", "icon_file"]

_RELATIVE = Path("resources") / "icons" / "holodesk.svg"


def icon_file() -> Path | None:
    """The SVG icon's path, or None when it did not travel with the code."""
    roots = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        roots.append(Path(bundle))
    roots.append(Path(__file__).resolve().parent.parent)
    for root in roots:
        if (root / _RELATIVE).is_file():
            return root / _RELATIVE
    return None


def app_icon() -> QIcon:
    """The icon for every window (a null icon when there is none to be had)."""
    path = icon_file()
    if path is not None:
        icon = QIcon(str(path))
        if not icon.isNull():
            return icon
    return QIcon.fromTheme("holodesk")
