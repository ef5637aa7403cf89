"""The system's own programs holodesk runs for its safety checks (``crontab``,
``systemd-analyze``): found in the root-owned system folders only, never on ``PATH``.

``PATH`` usually starts with folders the person can write (``~/.local/bin``, ``~/.cargo/bin``,
``~/bin``): a program of the same name put there by a hijacked run would run inside holodesk,
and answer for what it checks (a ``crontab`` that says nothing changed). So a program is taken
only from :data:`SYSTEM_FOLDERS`, and only when it, every link on the way to it and every
folder above them belong to root and nobody else can write them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

#: Where the system's programs are (on a merged /usr, /bin and /sbin are links into /usr).
SYSTEM_FOLDERS = (Path("/usr/bin"), Path("/bin"), Path("/usr/sbin"), Path("/sbin"))
_MAX_LINKS = 40


def find_system_program(name: str, folders: Sequence[Path] = SYSTEM_FOLDERS) -> Path | None:
    """The first ``folders/name`` that :func:`only_root_can_change`; None when there is none."""
    for folder in folders:
        path = folder / name
        if only_root_can_change(path):
            return path
    return None


def only_root_can_change(path: Path) -> bool:
    """Whether ``path`` is an executable file that only root can change: the file, each link
    on the way to it and the folders holding them all root's, none writable by anyone else."""
    return not why_others_can_change(path)


def _others(path: Path, st: os.stat_result) -> str:
    if st.st_uid != 0:
        return f"{path} belongs to user {st.st_uid}, not root"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} can be written by others than root"
    return ""


def why_others_can_change(path: Path) -> str:
    """"" when only root can change ``path`` (see :func:`only_root_can_change`), else why not:
    the first thing on the way (the file, then the folders nearest first) that someone else
    can change."""
    current = Path(os.path.abspath(path))
    for _hop in range(_MAX_LINKS):
        try:
            st = os.lstat(current)
        except OSError as e:
            return f"{current}: {e.strerror}"
        if not stat.S_ISLNK(st.st_mode):
            if not stat.S_ISREG(st.st_mode) or not st.st_mode & stat.S_IXUSR:
                return f"{current} is no executable file"
            if why := _others(current, st):
                return why
        folder = Path(os.path.realpath(current.parent))
        for each in (folder, *folder.parents):
            try:
                if why := _others(each, os.stat(each)):
                    return why
            except OSError as e:
                return f"{each}: {e.strerror}"
        if not stat.S_ISLNK(st.st_mode):
            return ""
        current = Path(os.path.abspath(os.path.join(folder, os.readlink(current))))
    return f"{path}: too many links"
