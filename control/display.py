"""Is there a screen to see and drive? Checked before a run, so the answer is a sentence."""

from __future__ import annotations

import os
import sys

from model.problem import HolodeskError


class NoDisplayError(HolodeskError, RuntimeError):
    """No graphical session is reachable from this process."""


def check_display(environ: dict[str, str] | None = None, platform: str = sys.platform) -> None:
    """Raise :class:`NoDisplayError` with the fix when capture and input cannot work here.

    Only Linux needs a check: on Windows and macOS the session is the desktop itself.
    """
    env = os.environ if environ is None else environ
    if not platform.startswith("linux"):
        return
    if env.get("DISPLAY"):
        return
    if env.get("WAYLAND_DISPLAY"):
        raise NoDisplayError(
            "this is a Wayland session without X11 (DISPLAY is not set): screen capture and "
            "input injection need X11. Log in with an X11 session, or enable Xwayland."
        )
    raise NoDisplayError(
        "no display: DISPLAY is not set, so there is no screen to see or drive. Run holodesk "
        "inside your desktop session (or set DISPLAY, e.g. DISPLAY=:0)."
    )
