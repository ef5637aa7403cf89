"""Where the tripwire keeps what it takes away, and the file operations it does that with.

What the tripwire moves aside (a file, folder, link or fifo that appeared in a protected
place) and the changed copy of a file it puts back are kept for the person to look at, never
beside the file: loaders read whole folders (ssh's ``Include config.d/*``, fish's
``conf.d/*.fish``, Fedora's ``~/.bashrc.d/*``, every ``.desktop`` in an autostart folder),
and a kept copy there would still be read. A :class:`Keeper` with a folder keeps each one
under ``<folder>/<date>-<time>/<its path relative to the home folder>`` (a path outside the
home under ``<date>-<time>/outside-home/<its absolute path>``): nothing loads from there. Each
folder of the way is made and opened without following a link (a link put there would carry
the copy where a loader reads it), and the folder itself, if something else took its name,
is made anew. A Keeper without a folder keeps beside the file as
``<name>.holodesk-changed-<date>-<time>`` (for a caller with no folder of its own).

Every kept file is made 0600 and every kept folder 0700 at its top: nothing in it runs from
``PATH`` any more.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: What a copy kept beside its file is called: ``<name>`` + this + the time.
KEPT_INFIX = ".holodesk-changed-"
#: Under a Keeper's folder: where the copies of paths outside the home folder go.
OUTSIDE_HOME = "outside-home"

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class KeepFailed(OSError):
    """The place to keep a copy could not be made or written (the thing itself is untouched)."""


def open_dir(path: Path) -> int:
    """A descriptor of the folder ``path``, refusing a link in its place."""
    return os.open(path, _DIR_FLAGS)


@contextlib.contextmanager
def parent_dir(path: Path) -> Iterator[int]:
    """The folder holding ``path`` (created private when missing), open without following a
    link the changer may have put in its place."""
    if not os.path.lexists(path.parent):
        os.makedirs(path.parent, mode=0o700, exist_ok=True)
    fd = open_dir(path.parent)
    try:
        yield fd
    finally:
        os.close(fd)


def free_name(dir_fd: int, name: str) -> str:
    """``name`` or ``name-2``, ``name-3``…: one nothing in the folder has."""
    candidate, n = name, 1
    while True:
        try:
            os.stat(candidate, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return candidate
        n += 1
        candidate = f"{name}-{n}"


def chmod_nofollow(dir_fd: int, name: str, mode: int) -> None:
    """Set the mode of the file or folder ``name`` without following a link in its place."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except PermissionError:
        # Made unreadable (mode 000): only a chmod by name can reach it; it is no link (lstat
        # said so just before, and a link in its place would have opened).
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise
        os.chmod(name, mode, dir_fd=dir_fd)
        return
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def make_private(dir_fd: int, name: str) -> None:
    """Owner-only for what was kept: 0600 for a file (nothing to run from PATH any more),
    0700 for a folder; a link or a fifo keeps its own."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        chmod_nofollow(dir_fd, name, 0o700 if stat.S_ISDIR(st.st_mode) else 0o600)


def remove(path: Path) -> None:
    """Remove what is at ``path`` (a folder with all it holds), never following a link."""
    with parent_dir(path) as dfd:
        st = os.stat(path.name, dir_fd=dfd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            # rmtree works through descriptors here: a link inside is removed, not followed.
            shutil.rmtree(path)
        else:
            os.unlink(path.name, dir_fd=dfd)


def _copy_file(src_dfd: int, name: str, dst_dfd: int, dst_name: str) -> None:
    src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                  dir_fd=src_dfd)
    try:
        dst = os.open(dst_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                      | os.O_CLOEXEC, 0o600, dir_fd=dst_dfd)
        try:
            while chunk := os.read(src, 256 * 1024):
                os.write(dst, chunk)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def _carry(src_dfd: int, name: str, dst_dfd: int, dst_name: str) -> None:
    """Copy ``name`` (whatever it is, a folder with all it holds) to ``dst_name``, never
    following a link: for a move between two file systems, where a rename cannot go."""
    st = os.stat(name, dir_fd=src_dfd, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(name, dir_fd=src_dfd), dst_name, dir_fd=dst_dfd)
    elif stat.S_ISREG(st.st_mode):
        _copy_file(src_dfd, name, dst_dfd, dst_name)
    elif stat.S_ISFIFO(st.st_mode):
        os.mkfifo(dst_name, 0o600, dir_fd=dst_dfd)
    elif stat.S_ISDIR(st.st_mode):
        os.mkdir(dst_name, 0o700, dir_fd=dst_dfd)
        inner_src = os.open(name, _DIR_FLAGS, dir_fd=src_dfd)
        try:
            inner_dst = os.open(dst_name, _DIR_FLAGS, dir_fd=dst_dfd)
            try:
                for child in os.listdir(inner_src):
                    _carry(inner_src, child, inner_dst, child)
            finally:
                os.close(inner_dst)
        finally:
            os.close(inner_src)
    # A socket or a device: nothing to copy (its name alone told what it was).


def _subfolder(dir_fd: int, name: str) -> int:
    """The folder ``name`` in ``dir_fd`` (made private when missing), opened without following
    a link; when something else has the name, ``name-2``… instead."""
    candidate, n = name, 1
    while True:
        with contextlib.suppress(FileExistsError):
            os.mkdir(candidate, 0o700, dir_fd=dir_fd)
        try:
            return os.open(candidate, _DIR_FLAGS, dir_fd=dir_fd)
        except OSError as e:
            if e.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
        n += 1
        candidate = f"{name}-{n}"


@dataclass(frozen=True)
class Keeper:
    """Where the copies of one comparison go (see the module doc): ``folder`` (None: beside
    each file), ``home`` (what kept paths are relative to) and ``stamp`` (the time, as
    ``YYYYmmdd-HHMMSS``)."""

    folder: Path | None
    home: Path
    stamp: str

    @contextlib.contextmanager
    def _place(self, path: Path, source_dfd: int) -> Iterator[tuple[int, str, Path]]:
        """Where to keep ``path``: the folder's descriptor, a free name in it, the whole path."""
        if self.folder is None:
            name = free_name(source_dfd, f"{path.name}{KEPT_INFIX}{self.stamp}")
            yield source_dfd, name, path.with_name(name)
            return
        fds: list[int] = []
        try:
            fds.append(self._open_folder())
            where = self.folder
            parts = (path.parent.relative_to(self.home).parts if path.is_relative_to(self.home)
                      else (OUTSIDE_HOME, *path.parent.parts[1:]))
            for part in (self.stamp, *parts):
                fds.append(_subfolder(fds[-1], part))
                where = where / part  # the name it really got, when it differs, is below
            name = free_name(fds[-1], path.name)
            place = fds[-1], name, self._real_path(fds[-1], where) / name
        except OSError as e:
            raise KeepFailed(e.errno, f"{self.folder} cannot hold it: {e.strerror or e}") from e
        try:
            yield place
        finally:
            for fd in reversed(fds):
                os.close(fd)

    @staticmethod
    def _real_path(fd: int, fallback: Path) -> Path:
        """The folder open as ``fd`` by its name now (``name-2`` when that was free)."""
        try:
            return Path(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            return fallback

    def _open_folder(self) -> int:
        """The keep folder, open; made (private) when missing, and made anew when something
        other than a folder took its name (that thing is renamed beside it)."""
        assert self.folder is not None
        with parent_dir(self.folder) as dfd:
            name = self.folder.name
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and not stat.S_ISDIR(st.st_mode):
                aside = free_name(dfd, f"{name}.not-holodesks-{self.stamp}")
                os.rename(name, aside, src_dir_fd=dfd, dst_dir_fd=dfd)
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=dfd)
            return os.open(name, _DIR_FLAGS, dir_fd=dfd)

    def move_aside(self, path: Path) -> Path:
        """Take what is at ``path`` away to where it is kept (never following a link); that
        place."""
        with parent_dir(path) as dfd, self._place(path, dfd) as (kfd, name, kept):
            try:
                os.rename(path.name, name, src_dir_fd=dfd, dst_dir_fd=kfd)
            except OSError as e:
                if e.errno != errno.EXDEV:
                    raise
                try:
                    _carry(dfd, path.name, kfd, name)
                except OSError as e:
                    raise KeepFailed(e.errno, f"{kept} cannot be written: {e.strerror or e}"
                                     ) from e
                remove(path)
            with contextlib.suppress(OSError):  # kept where nothing runs it anyway
                make_private(kfd, name)
            return kept

    def copy(self, path: Path) -> Path:
        """Keep the file at ``path`` where it is kept, leaving ``path`` in place to be
        replaced: a second link to it (whoever still writes to it writes there), else a copy;
        that place."""
        with parent_dir(path) as dfd, self._place(path, dfd) as (kfd, name, kept):
            try:
                os.link(path.name, name, src_dir_fd=dfd, dst_dir_fd=kfd, follow_symlinks=False)
            except OSError:
                try:
                    _copy_file(dfd, path.name, kfd, name)
                except OSError as e:
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=kfd)
                    raise KeepFailed(e.errno, f"{kept} cannot be written: {e.strerror or e}"
                                     ) from e
            with contextlib.suppress(OSError):
                make_private(kfd, name)
            return kept

    def keep_bytes(self, name: str, data: bytes) -> Path:
        """Keep ``data`` (what is no file: the crontab) as ``<name>.holodesk-changed-<time>``
        in the keep folder; that place."""
        assert self.folder is not None
        fd_dir = self._open_folder()
        try:
            safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
            kept = free_name(fd_dir, f"{safe}{KEPT_INFIX}{self.stamp}")
            fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600, dir_fd=fd_dir)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        finally:
            os.close(fd_dir)
        return self.folder / kept
