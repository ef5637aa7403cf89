"""Start at login: the XDG autostart entry (``~/.config/autostart/holodesk.desktop``).

The entry file is the one truth: the Settings dialog's "Start at login" shows whether it is
there and enabled, and writes or removes it. Nothing goes into ``settings.toml``, so a person
who removes the entry with their desktop's own "Startup applications" tool sees the box
unchecked next time, and the .deb never touches a person's home (it cannot know whose).

Linux (and other XDG desktops) only: :func:`default_autostart` is None elsewhere, and the
dialog leaves the option out. The entry starts the desktop app with the same program that is
running now (the frozen build's binary, or the ``holodesk`` script of the virtual environment
in a source install) and :data:`AT_LOGIN_OPTION`, which tells the app it was started at login:
automations scheduled "at login" (app/schedule.py) run then, and only then.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app import paths

__all__ = [
    "AT_LOGIN_OPTION",
    "ENTRY_NAME",
    "Autostart",
    "AutostartError",
    "autostart_dir",
    "default_autostart",
    "desktop_exec",
    "entry_text",
    "launch_command",
]

_log = logging.getLogger(__name__)

ENTRY_NAME = "holodesk.desktop"
#: The desktop app's one option: started by the desktop at login (the entry passes it).
AT_LOGIN_OPTION = "--at-login"


class AutostartError(Exception):
    """The entry could not be written or removed; the message says why and what to do."""


def autostart_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/autostart`` (``~/.config/autostart`` when unset or not absolute)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    # The XDG spec: a relative value is invalid and must be ignored.
    if not base or not os.path.isabs(base):
        base = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return Path(base) / "autostart"


def launch_command(
    *, executable: str | None = None, frozen: bool | None = None
) -> list[str]:
    """The argv that starts this holodesk's desktop app.

    The frozen build runs its own binary; a source install the ``holodesk`` script next to its
    Python (a venv's ``bin/``), else ``python -m ui.main``. Absolute paths: a session started
    at login may have a shorter ``PATH`` than a terminal.
    """
    exe = sys.executable if executable is None else executable
    is_frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    if is_frozen:
        return [os.path.abspath(exe)]
    script = Path(exe).parent / ("holodesk.exe" if os.name == "nt" else "holodesk")
    if script.is_file():
        return [str(script.absolute())]
    return [os.path.abspath(exe), "-m", "ui.main"]


# Characters the Desktop Entry spec reserves inside an Exec argument.
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def desktop_exec(argv: Sequence[str]) -> str:
    """``argv`` as a Desktop Entry ``Exec`` value, quoted by the spec's rules.

    Arguments with a reserved character go in double quotes with ``"``, `````, ``$`` and ``\\``
    backslash-escaped; then, because the value is itself a string value of the file, every
    backslash is doubled once more. A ``%`` is doubled: a single one would be a field code.
    """
    if not argv:
        raise ValueError("an Exec line needs a program")
    words = []
    for arg in argv:
        if "\n" in arg or "\r" in arg:
            raise ValueError(f"an Exec argument cannot hold a line break: {arg!r}")
        word = arg.replace("%", "%%")
        if not word or any(c in _RESERVED for c in word):
            inner = "".join("\\" + c if c in '"`$\\' else c for c in word)
            word = f'"{inner}"'
        words.append(word)
    return " ".join(words).replace("\\", "\\\\")


def entry_text(argv: Sequence[str]) -> str:
    """The autostart entry that runs ``argv`` at login."""
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=holodesk\n"
        "Comment=Computer-use assistant (started at login; turn off in holodesk's Settings)\n"
        f"Exec={desktop_exec(argv)}\n"
        "Icon=holodesk\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def _flag(text: str, key: str) -> str | None:
    """The value of ``key`` in the ``[Desktop Entry]`` group, lower-cased; None if absent."""
    group = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            group = line
        elif group == "[Desktop Entry]" and "=" in line:
            name, value = line.split("=", 1)
            if name.strip() == key:
                return value.strip().lower()
    return None


@dataclass(frozen=True)
class Autostart:
    """The autostart entry at ``path`` that would run ``command``."""

    path: Path
    command: tuple[str, ...]

    def enabled(self) -> bool:
        """Whether the desktop will start holodesk at login.

        A present entry can still be off: ``Hidden=true`` (the spec's "deleted") or GNOME's
        ``X-GNOME-Autostart-enabled=false``, which desktops' own startup tools write.
        """
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return False
        except OSError as exc:
            _log.warning("cannot read the autostart entry %s: %s", self.path, exc)
            return False
        return (_flag(text, "Hidden") != "true"
                and _flag(text, "X-GNOME-Autostart-enabled") != "false")

    def says_at_login(self) -> bool:
        """Whether the entry tells the app it was started at login (entries written before
        schedules existed do not: turning Start at login off and on again rewrites it)."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        return AT_LOGIN_OPTION in (_flag(text, "Exec") or "").split()

    def enable(self) -> None:
        """Write the entry (replacing any older one, whose program may have moved)."""
        try:
            # A protected folder: the folder made for it is holodesk's own change too.
            with paths.own_write(self.path):
                # Not paths.ensure_private_dir: ~/.config/autostart is the desktop's, not
                # ours, and a new one gets the usual mode, as the desktop's own tools make it.
                self.path.parent.mkdir(parents=True, exist_ok=True)
                paths.write_atomic(self.path, entry_text(self.command))
        except OSError as exc:
            raise AutostartError(
                f"cannot write the autostart entry {self.path}: {exc.strerror or exc}. "
                f"Check that {self.path.parent} is a folder you can write to."
            ) from exc
        _log.info("start at login: on (%s)", self.path)

    def disable(self) -> None:
        """Remove the entry; nothing to do when it is not there."""
        try:
            with paths.own_write(self.path):  # a protected folder: holodesk's own change
                self.path.unlink(missing_ok=True)
        except OSError as exc:
            raise AutostartError(
                f"cannot remove the autostart entry {self.path}: {exc.strerror or exc}. "
                "Remove the file yourself, or turn holodesk off in your desktop's "
                "startup applications."
            ) from exc
        _log.info("start at login: off (%s removed)", self.path)

    def set(self, on: bool) -> None:
        """:meth:`enable` or :meth:`disable`."""
        if on:
            self.enable()
        else:
            self.disable()


def default_autostart(
    environ: Mapping[str, str] | None = None, *, platform: str | None = None
) -> Autostart | None:
    """This user's entry running this holodesk; None where XDG autostart does not apply."""
    plat = sys.platform if platform is None else platform
    if plat in ("win32", "darwin", "cygwin"):
        return None
    return Autostart(autostart_dir(environ) / ENTRY_NAME, (*launch_command(), AT_LOGIN_OPTION))
