"""Where holodesk keeps its files, following each platform's conventions (XDG on Linux).

Every function reads the environment when called, never at import time, so a test (or a
person) isolates everything by setting ``HOME`` and the ``XDG_*_HOME`` variables:

=================  ======================================  =====================================
function           Linux default                           holds
=================  ======================================  =====================================
config_dir()       ``$XDG_CONFIG_HOME/holodesk``            ``settings.toml``
data_dir()         ``$XDG_DATA_HOME/holodesk``              ``holodesk.db``, ``runs/<run_id>/``
log_dir()          ``$XDG_STATE_HOME/holodesk``              ``holodesk.log``
runtime_dir()      ``$XDG_RUNTIME_DIR/holodesk``            ``holodesk.lock``
=================  ======================================  =====================================

Nothing here creates a directory; writers call :func:`ensure_private_dir` first. The data
directory holds screenshots of the person's desktop, so every directory is created 0700.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import stat
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import platformdirs

from control import tripwire

APP_NAME = "holodesk"
SETTINGS_FILE = "settings.toml"
DB_FILE = "holodesk.db"
LOG_FILE = "holodesk.log"
LOCK_FILE = "holodesk.lock"
RUNS_DIR = "runs"
OWN_WRITES_FILE = "own-writes.txt"

_log = logging.getLogger(__name__)


def _dirs() -> platformdirs.PlatformDirs:
    # appauthor=False: on Windows the default would nest holodesk\holodesk. opinion=False: the
    # log goes straight into the state directory on Linux (no extra "log" folder); macOS still
    # uses ~/Library/Logs/holodesk.
    return platformdirs.PlatformDirs(APP_NAME, appauthor=False, opinion=False)


def config_dir() -> Path:
    """The directory of ``settings.toml``."""
    return Path(_dirs().user_config_dir)


def settings_path() -> Path:
    """The settings file."""
    return config_dir() / SETTINGS_FILE


def data_dir() -> Path:
    """The directory of the action log database and the per-run screenshot folders."""
    return Path(_dirs().user_data_dir)


def db_path() -> Path:
    """The action log database."""
    return data_dir() / DB_FILE


def runs_dir() -> Path:
    """The parent of the per-run screenshot folders (``runs/<run_id>/step-NNN.jpg``)."""
    return data_dir() / RUNS_DIR


def log_dir() -> Path:
    """The directory of ``holodesk.log`` (under the XDG state directory on Linux)."""
    return Path(_dirs().user_log_dir)


def log_path() -> Path:
    """The log file."""
    return log_dir() / LOG_FILE


def runtime_dir() -> Path:
    """The per-session directory for the lock file.

    On Linux this is ``$XDG_RUNTIME_DIR/holodesk`` when that variable names a private directory;
    otherwise platformdirs falls back (``/run/user/<uid>`` or a private temporary directory)
    and warns. The warning is logged instead, because it would otherwise be printed in the
    middle of CLI output.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = Path(_dirs().user_runtime_dir)
    for warning in caught:
        _log.debug("runtime dir: %s", warning.message)
    return path


def lock_path() -> Path:
    """The single-instance lock file (one run drives the mouse at a time)."""
    return runtime_dir() / LOCK_FILE


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if missing, owner-only (0700) where the OS supports it.

    An existing directory keeps its mode: the person may have chosen a shared location on
    purpose. Returns ``path`` for chaining.
    """
    # makedirs applies the mode (minus umask) to every directory it creates, parents included.
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


_writing = threading.local()


@contextlib.contextmanager
def own_write(*targets: Path) -> Iterator[None]:
    """Inside, holodesk itself writes ``targets`` (files or folders): a run's tripwire does not
    take it for a change (:mod:`control.tripwire`), and the paths are noted in
    :func:`own_writes_path`, so the next run does not report holodesk's own change as one made
    since the last run (:mod:`app.protected`). Every holodesk writer of a protected file uses
    it; :func:`write_atomic` does. Nested, they are noted once, as the outer one ends (saved
    steps write many pictures)."""
    pending: list[Path] | None = getattr(_writing, "targets", None)
    outer = pending is None
    if pending is None:
        pending = _writing.targets = []
    pending.extend(targets)
    try:
        with tripwire.own_write(*targets):
            yield
    finally:
        if outer:
            del _writing.targets
            _note_own_writes(pending)


def own_writes_path() -> Path:
    """What holodesk wrote since the protected files were last recorded (see
    :func:`_note_own_writes`)."""
    return data_dir() / OWN_WRITES_FILE


def _note_own_writes(targets: list[Path]) -> None:
    """Note what holodesk's writes left at ``targets`` (each path under them with what it is
    now: a file's digest, a folder, absent; :func:`control.tripwire.fingerprints`), one JSON
    object a line: a change since the last record is holodesk's own only where the path is
    still exactly that."""
    lines = []
    for target in dict.fromkeys(Path(os.path.abspath(t)) for t in targets):
        for path, what in tripwire.fingerprints(target).items():
            lines.append(json.dumps({"path": os.fsdecode(path), "is": what},
                                    ensure_ascii=False) + "\n")
    try:
        journal = own_writes_path()
        ensure_private_dir(journal.parent)
        # Protected during a run (a line added by another program there trips it); this
        # append is holodesk's own.
        with tripwire.own_write(journal):
            # One append of a few lines: whole even with another holodesk appending too.
            fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                         0o600)
            try:
                os.write(fd, "".join(lines).encode("utf-8", "surrogateescape"))
            finally:
                os.close(fd)
    except OSError as e:
        _log.debug("could not note holodesk's own write of %s: %s", targets, e)


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` all at once: a crash leaves the old file or the new one.

    The folder is created private (0700) if missing.
    """
    write_atomic_bytes(path, text.encode("utf-8"))


def write_atomic_bytes(path: Path, data: bytes, *, private_dir: bool = True) -> None:
    """:func:`write_atomic` for bytes. ``private_dir``: create a missing folder private
    (holodesk's own folders); False for a folder the person chose (an export)."""
    with own_write(path):
        _write_atomic_bytes(path, data, private_dir)


def _write_atomic_bytes(path: Path, data: bytes, private_dir: bool) -> None:
    if private_dir:
        ensure_private_dir(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sys.platform != "win32":
        # The rename is durable only once the directory entry is on disk.
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


#: The most :func:`read_limited` reads by default: far above any file holodesk writes.
READ_LIMIT = 8 * 1024 * 1024


def read_limited(path: Path, limit: int = READ_LIMIT) -> bytes:
    """The bytes of ``path``, a regular file (a link to one is followed) of at most ``limit``
    bytes; OSError otherwise, FileNotFoundError when there is none.

    holodesk's own files are text any program can replace: a link to ``/dev/zero`` or a fifo
    would make a plain read hang or fill the memory. The file is opened without waiting (a
    fifo never blocks the open) and checked to be a regular file before anything is read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if info.st_size > limit:
            raise OSError(errno.EFBIG, f"larger than {limit} bytes", str(path))
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # grew since the check
                raise OSError(errno.EFBIG, f"larger than {limit} bytes", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)
