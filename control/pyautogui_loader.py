"""pyautogui, imported the one way that survives a Python without tkinter.

pyautogui imports its optional MouseInfo helper app, and mouseinfo calls ``sys.exit()`` when
tkinter is missing (a fresh Debian without python3-tk): the run or the app's worker would die
silently. holodesk never uses MouseInfo, so it is marked absent before pyautogui looks.
"""

from __future__ import annotations

import sys
from typing import Any


def load_pyautogui() -> Any:
    """The pyautogui module (imported lazily: it needs a display at import)."""
    sys.modules.setdefault("mouseinfo", None)  # type: ignore[arg-type]
    import pyautogui

    return pyautogui
