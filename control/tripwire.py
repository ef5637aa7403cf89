"""The tripwire: files that must not change while a run drives the desktop.

A :class:`Tripwire` takes a snapshot of a protected set of paths (files and folders, folders
down to :attr:`Limits.max_depth` and :attr:`Limits.max_files`), watches them with inotify while
it is open, and compares them with the snapshot whenever anything there moves (and whenever
:meth:`Tripwire.check` is called: a run calls it after each action, so nothing depends on an
event arriving). A difference is a *trip*: what changed is put back as it was, the changed copy
(or what appeared) kept in the keep folder, never beside it where a loader reading the whole
folder would still find it (:mod:`control.keeping`), and the ``on_trip`` callback hears of it
with every change, typed.

What a protected link leads to (the path itself, or a link inside a protected folder) is
protected as the link is, within :attr:`Limits.max_followed`. The folders above each protected
path, up to the home folder, are recorded: a link put in place of one is moved aside. A folder
grown past :attr:`Limits.max_files` during a run trips on everything new in it.

Three kinds of protection (:class:`Guard`):

* ``WHOLE``: any difference trips, and the snapshot is put back. Regular files keep their
  content in memory (up to :attr:`Limits.file_bytes` each and :attr:`Limits.total_bytes` in
  all, given to the entries in their order; beyond that a SHA-256, or for a file larger than
  :attr:`Limits.file_bytes` whose stamp is settled, its stamp: either tells a change but
  cannot undo it), symbolic links their target; sockets, fifos and devices their kind (one
  appearing is moved aside: a shell sourcing a fifo waits for whoever writes the commands to
  it). A file written less than :data:`SETTLED_NS` before a look is compared by content, not
  by its stamp (a rewrite within the same tick of the file clock keeps it).
* ``GROWING``: for files the program itself adds to (a log, a database): they may grow and new
  files may appear, but a file removed, replaced by another or made shorter trips. Nothing of
  them is kept in memory, so nothing is put back.
* ``IDENTITY``: for large trees of programs (a virtual environment, a model's files): any
  difference trips, judged by each file's kind, mode, inode, size and times (the change time
  no program can set back), never by its content, which is never read. Nothing is put back
  (the trip says so). Bounded by :attr:`Limits.identity_files` and
  :attr:`Limits.identity_depth`, not watched (their many folders would use up inotify's
  watches): compared by :meth:`Tripwire.check`, at most a twentieth of the time once a
  comparison takes :data:`IDENTITY_SLOW_S` or more, and always by ``check(everything=True)``.

**The program's own writes** are not changes: code that writes a protected path does it inside
:func:`own_write` (process-wide: every open tripwire honours it). While one is held, nothing is
judged; when it ends, the snapshot of exactly those paths is taken again from disk (and the
``.<name>.*`` temporary files beside them it held), then everything else is compared as
usual. :meth:`Tripwire.verified` gives what the snapshot holds, for a record between runs.

Events are only a wake-up: the comparison with the snapshot decides. Where inotify cannot be
used, only :meth:`Tripwire.check` compares (the log says so once, and :attr:`Tripwire.problems`
tells the person). Other things to protect that are no files (a crontab, read through a
command) are :class:`Extra` sources, compared by :meth:`Tripwire.check` only.

Nothing here knows which paths a program protects: the program passes them in.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import hashlib
import logging
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from control.inotify import CHANGES, IN_DONT_FOLLOW, IN_ONLYDIR, Inotify, InotifyEvent
from control.keeping import KEPT_INFIX as KEPT_INFIX  # what a copy kept beside its file is called
from control.keeping import Keeper, KeepFailed, chmod_nofollow, parent_dir, remove

log = logging.getLogger(__name__)

#: The stop latch's source when a trip stops a run.
STOP_SOURCE = "tripwire"
#: How much older than a look a file's change time must be for its stamp to tell any later
#: write (the clock that stamps files ticks in steps of a few milliseconds; a second spares
#: a clock set a little apart, as a network file system's).
SETTLED_NS = 1_000_000_000
#: An IDENTITY path whose comparison takes this much processor time is compared at most a
#: twentieth of the time (and always at ``check(everything=True)``).
IDENTITY_SLOW_S = 0.05


class Guard(StrEnum):
    """How a protected path is judged."""

    WHOLE = "whole"  # any change trips; the snapshot is put back
    GROWING = "growing"  # may grow and gain files; removed, replaced or shortened trips
    IDENTITY = "identity"  # any change trips, judged by stamps only; nothing put back


class NodeKind(StrEnum):
    """What is at a path."""

    FILE = "file"
    FOLDER = "folder"
    LINK = "link"
    SPECIAL = "special file"  # a fifo, a socket or a device: nothing to keep, but not nothing


class ChangeKind(StrEnum):
    """How a protected path changed (the words the person reads)."""

    CREATED = "created"
    MODIFIED = "modified"
    DELETED = "deleted"
    REPLACED = "replaced"
    MODE_CHANGED = "mode changed"
    TYPE_CHANGED = "type changed"
    SHORTENED = "made shorter"


@dataclass(frozen=True)
class Protected:
    """One protected path (a file or a folder, existing or not) and how it is judged."""

    path: Path
    guard: Guard = Guard.WHOLE
    #: Protected because a protected link leads there (the tripwire found it).
    followed: bool = False


@dataclass(frozen=True)
class Limits:
    """How much of the protected set is looked at and kept."""

    max_depth: int = 8  # folders below a protected folder
    max_files: int = 20_000  # entries under one protected folder
    identity_depth: int = 32  # the same for an IDENTITY folder (a virtual environment)
    identity_files: int = 400_000
    file_bytes: int = 1024 * 1024  # a file's content kept for putting it back
    total_bytes: int = 64 * 1024 * 1024  # all the content kept
    max_followed: int = 256  # paths protected because a protected link leads there


@dataclass(frozen=True)
class Node:
    """What is at a path: its kind, permission bits, identity and content.

    ``digest`` is the SHA-256 of a file's content ("" when it could not be read, for
    ``GROWING`` files, whose content is never read, and for a settled file larger than
    :attr:`Limits.file_bytes`, whose unchanged stamp tells it is unwritten); ``data`` the
    content itself when it is kept for putting it back; ``target`` a link's target.
    """

    kind: NodeKind
    mode: int = 0
    size: int = 0
    ino: int = 0
    dev: int = 0
    stamp: tuple[int, int] = (0, 0)  # mtime_ns, ctime_ns: unchanged means unwritten
    #: The stamp was older than the look by :data:`SETTLED_NS`: any write after the look
    #: changes it (a write within the same tick of the clock as the one before the look
    #: would not, so a file written just before is compared by its content).
    settled: bool = False
    digest: str = ""
    target: str = ""
    data: bytes | None = field(default=None, repr=False, compare=False)

    def same_file(self, other: Node) -> bool:
        """The same inode, untouched since: no need to read it again."""
        return (self.ino, self.dev, self.size, self.stamp) == (
            other.ino, other.dev, other.size, other.stamp) and self.ino != 0


@dataclass(frozen=True)
class Change:
    """One change: the path (or the name of an :class:`Extra`), how it changed, where the changed
    copy was kept (None: nothing to keep, or not kept), and whether it was put back (else why
    not)."""

    path: str
    kind: ChangeKind
    kept: Path | None = None
    restored: bool = False
    why_not: str = ""
    #: What else the person must know (no copy could be kept, and why).
    note: str = ""

    def describe(self) -> str:
        """In words: "/home/a/.bashrc modified, restored; the changed copy is kept as …"."""
        text = f"{self.path} {self.kind.value}"
        if self.kind is ChangeKind.CREATED and self.kept is not None:
            return f"{text}, moved aside to {self.kept}"
        if self.restored:
            text += ", restored"
        elif self.why_not:
            text += f", not restored ({self.why_not})"
        if self.kept is not None:
            text += f"; the changed copy is kept as {self.kept}"
        if self.note:
            text += f"; {self.note}"
        return text


@dataclass(frozen=True)
class Trip:
    """What one comparison found changed (and did about it)."""

    changes: tuple[Change, ...]

    def describe(self) -> str:
        return "; ".join(c.describe() for c in self.changes)


class Extra(Protocol):
    """Something protected that is no file of ours to watch (the crontab): read it, write it."""

    @property
    def name(self) -> str:
        """In words, e.g. "your crontab"; also the kept copy's name."""
        ...

    def read(self) -> bytes | None:
        """The content, None when there is none; raises OSError when it cannot be read."""
        ...

    def write(self, data: bytes | None) -> None:
        """Put ``data`` back (None: remove it); raises OSError on failure."""
        ...


# -- holodesk's own writes ------------------------------------------------------------------

_active_lock = threading.Lock()
_active: list[Tripwire] = []


@contextlib.contextmanager
def own_write(*paths: Path | str) -> Iterator[None]:
    """Inside, this process writes ``paths`` (files or folders, and temporary files beside them
    named ``.<name>.*``): no open tripwire takes that for a change. Their snapshot is taken
    again when the block ends; changes anywhere else are judged as usual then."""
    targets = tuple(Path(os.path.abspath(p)) for p in paths)
    with _active_lock:
        wires = list(_active)
    for wire in wires:
        wire._hold()
    try:
        yield
    finally:
        for wire in wires:
            wire._release(targets)


# -- looking at the files -------------------------------------------------------------------


@dataclass
class _Budget:
    """How many bytes of content may still be kept in memory."""

    left: int


def _read_node(path: Path, st: os.stat_result, guard: Guard, limits: Limits,
               budget: _Budget | None, seen: Node | None, known: Node | None,
               looked: int) -> Node:
    """The node of the regular file ``path`` (lstat ``st``, taken at ``looked``); its content
    read unless ``seen`` (the last look) is the same inode, settled and untouched since (then
    its digest is reused), or it is a settled file too large to keep whose ``known`` node (the
    snapshot's) has no digest either (its stamp tells a change)."""
    node = Node(NodeKind.FILE, stat.S_IMODE(st.st_mode), st.st_size, st.st_ino, st.st_dev,
                (st.st_mtime_ns, st.st_ctime_ns),
                settled=st.st_ctime_ns < looked - SETTLED_NS)
    if guard is not Guard.WHOLE:
        return node
    big = st.st_size > limits.file_bytes
    need_digest = not big or not node.settled or bool(known is not None and known.digest)
    if seen is not None and seen.kind is NodeKind.FILE and seen.settled and (
            seen.same_file(node)) and (seen.digest or not need_digest) and (
            seen.data is not None or budget is None or big):
        return replace(node, digest=seen.digest, data=seen.data)
    if not need_digest:
        return node
    keep = (budget is not None and not big and st.st_size <= budget.left)
    digest = hashlib.sha256()
    chunks: list[bytes] = []
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return node  # unreadable: only its identity can be compared
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return node  # swapped under us: the next look sees what it is now
        while True:
            chunk = os.read(fd, 256 * 1024)
            if not chunk:
                break
            digest.update(chunk)
            if keep:
                chunks.append(chunk)
    except OSError:
        return node
    finally:
        os.close(fd)
    data = b"".join(chunks) if keep else None
    if data is not None and budget is not None:
        if len(data) > budget.left:
            data = None
        else:
            budget.left -= len(data)
    return replace(node, digest=digest.hexdigest(), data=data)


def _node(path: Path, guard: Guard, limits: Limits, budget: _Budget | None,
          seen: Node | None, known: Node | None = None) -> Node | None:
    """What is at ``path`` now (not following a link); None when nothing. ``seen``: its node
    at the last look, ``known``: the snapshot's (see :func:`_read_node`)."""
    looked = time.time_ns()
    try:
        st = os.lstat(path)
    except OSError:
        return None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return _read_node(path, st, guard, limits, budget, seen, known, looked)
    if stat.S_ISDIR(mode):
        return Node(NodeKind.FOLDER, stat.S_IMODE(mode), 0, st.st_ino, st.st_dev)
    if stat.S_ISLNK(mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = ""
        return Node(NodeKind.LINK, 0, st.st_size, st.st_ino, st.st_dev, target=target)
    return Node(NodeKind.SPECIAL, stat.S_IMODE(mode), 0, st.st_ino, st.st_dev,
                target="fifo" if stat.S_ISFIFO(mode) else "")


@dataclass
class _Walk:
    """One look at a protected path: every node under it, and what the bounds cut."""

    nodes: dict[Path, Node] = field(default_factory=dict)
    cut: list[str] = field(default_factory=list)
    unreadable: list[Path] = field(default_factory=list)
    #: What lay past :attr:`Limits.max_files` and was left out.
    beyond: set[Path] = field(default_factory=set)


def _walk(entry: Protected, limits: Limits, budget: _Budget | None, *,
          known: Mapping[Path, Node] | None = None, seen: Mapping[Path, Node] | None = None,
          skip: frozenset[Path] = frozenset(), start: Path | None = None,
          left_out: Set[Path] | None = None) -> _Walk:
    """Look at ``entry`` (or only the part of it at ``start``), down to the limits.

    ``known`` paths (the snapshot's) are always looked at, whatever the count, so a folder that
    grew past :attr:`Limits.max_files` never shows a known file as gone. ``left_out``: what
    the snapshot left out past the count (its :attr:`_Walk.beyond`); with it, a new path past
    the count is not left out but looked at (not into): the folder grew past the bound since,
    and what pushed it there is as new as the rest. ``skip``: paths left out (other protected
    paths inside this one, the copies the tripwire kept).
    """
    known = known or {}
    seen = seen or {}
    out = _Walk()
    top = start if start is not None else entry.path
    base_depth = len(entry.path.parts)
    identity = entry.guard is Guard.IDENTITY
    max_depth = limits.identity_depth if identity else limits.max_depth
    max_files = limits.identity_files if identity else limits.max_files
    count = 0
    pending = [top]
    while pending:
        path = pending.pop()
        if path in skip:
            continue
        node = _node(path, entry.guard, limits, budget, seen.get(path) or known.get(path),
                     known.get(path))
        if node is None:
            continue
        out.nodes[path] = node
        if node.kind is not NodeKind.FOLDER:
            continue
        depth = len(path.parts) - base_depth
        try:
            names = sorted(os.listdir(path))
        except OSError:
            out.unreadable.append(path)
            continue
        for name in names:
            child = path / name
            if child in skip:
                continue
            if child not in known:
                cut = ""
                if depth + 1 > max_depth:
                    cut = (f"{entry.path}: what lies more than {max_depth} folders "
                           "down is not protected")
                elif count >= max_files:
                    if left_out is not None and child not in left_out:
                        new = _node(child, Guard.GROWING, limits, None, None)
                        if new is not None:
                            out.nodes[child] = new
                        continue
                    out.beyond.add(child)
                    cut = (f"{entry.path}: holds more than {max_files} files; those "
                           "beyond are not protected")
                if cut:
                    if cut not in out.cut:
                        out.cut.append(cut)
                    continue
            count += 1
            pending.append(child)
    return out


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: every path looked at (the entries', then those their links
    lead to) and every node under them."""

    roots: tuple[Path, ...]
    nodes: dict[Path, Node]


def scan(entries: Sequence[Protected], limits: Limits = Limits(), *,
         home: Path | None = None, skip: Sequence[Path] = (),
         known: Mapping[Path, Node] | None = None) -> Scan:
    """Every node of ``entries`` now, and of what their links lead to (as a :class:`Tripwire`
    follows them), with digests but no content kept (for a record of them between runs, such
    as holodesk's manifest). ``skip``: paths never looked at; ``known``: the nodes of an
    earlier scan to compare with (a settled file unchanged since is not read again, and a
    large one is read when that scan had its digest)."""
    roots = _distinct(entries)
    home = _home(home)
    left = frozenset(Path(os.path.abspath(p)) for p in skip)
    nodes: dict[Path, Node] = {}
    index = 0
    while index < len(roots):
        entry = roots[index]
        walk = _walk(entry, limits, None, skip=_inner(entry, roots) | left, known=known)
        nodes.update(walk.nodes)
        roots += _linked(entry, walk.nodes, roots, home, limits)
        index += 1
    return Scan(tuple(r.path for r in roots), nodes)


def fingerprint(node: Node | None, limits: Limits = Limits()) -> str:
    """What ``node`` is, as a short text that changes with it: a file's mode and digest (a
    file larger than :attr:`Limits.file_bytes`, or unreadable: its mode, inode, size and
    times), a folder's mode, a link's target; "absent" for None."""
    if node is None:
        return "absent"
    if node.kind is NodeKind.FILE:
        if node.digest and node.size <= limits.file_bytes:
            return f"file:{node.mode:o}:{node.digest}"
        return f"file:{node.mode:o}:{node.ino}:{node.size}:{node.stamp[0]}:{node.stamp[1]}"
    if node.kind is NodeKind.LINK:
        return f"link:{node.target}"
    return f"{node.kind.value}:{node.mode:o}"


def fingerprints(path: Path, limit: int = 2_000) -> dict[Path, str]:
    """The :func:`fingerprint` of what is at ``path`` and under it (never through a link; at
    most ``limit`` paths), for a record of a program's own writes. Logs nothing (it may run
    inside a log handler's rotation)."""
    limits = Limits()
    out: dict[Path, str] = {}
    pending = [Path(os.path.abspath(path))]
    while pending and len(out) < limit:
        here = pending.pop()
        node = _node(here, Guard.WHOLE, limits, None, None)
        out[here] = fingerprint(node, limits)
        if node is not None and node.kind is NodeKind.FOLDER:
            with contextlib.suppress(OSError):
                pending += [here / name for name in sorted(os.listdir(here))]
    return out


def _home(home: Path | None) -> Path:
    return Path(os.path.abspath(home if home is not None else os.path.expanduser("~")))


def _linked(entry: Protected, nodes: Mapping[Path, Node], entries: Sequence[Protected],
            home: Path, limits: Limits) -> list[Protected]:
    """What the links among ``nodes`` lead to, as protected paths of their own (judged as
    ``entry``): stow's ~/.bashrc, a linked ~/.config/fish, pipx's programs in ~/.local/bin are
    read through their link, so the file or folder there is what runs. Only what the person
    can change is followed (under the home folder; or their own, for anyone but root), never
    the home folder itself or above it, nor what a protected path already holds; at most
    :attr:`Limits.max_followed` in all."""
    if entry.guard is Guard.GROWING:
        return []
    out: list[Protected] = []
    followed = sum(1 for e in entries if e.followed)
    for path in sorted(p for p, n in nodes.items() if n.kind is NodeKind.LINK):
        if followed + len(out) >= limits.max_followed:
            log.warning("protected files: more than %d links lead out of the protected "
                        "paths; what %s leads to is not protected", limits.max_followed, path)
            continue
        real = Path(os.path.realpath(path))
        if real == home or real in home.parents or not _persons(real, home):
            continue
        if any(_under(real, e.path) for e in (*entries, *out)):
            continue
        out.append(Protected(real, entry.guard, followed=True))
    return out


def _persons(path: Path, home: Path) -> bool:
    """Whether the person can change ``path``: it is in their home, or (for anyone but root,
    who can change everything) it is theirs."""
    if _under(path, home):
        return True
    if os.getuid() == 0:
        return False
    try:
        return os.lstat(path).st_uid == os.getuid()
    except OSError:
        return False


def compare(before: Mapping[Path, Node],
            after: Mapping[Path, Node]) -> list[tuple[Path, ChangeKind]]:
    """How ``after`` differs from ``before``, as a ``WHOLE`` guard judges, one entry per change
    (what lies inside a created, deleted or retyped folder is part of that change)."""
    found = _differences(before, after)
    return [(p, k) for p, k in found.items() if not _inside_reported(p, found)]


def _differences(before: Mapping[Path, Node],
                 after: Mapping[Path, Node]) -> dict[Path, ChangeKind]:
    out: dict[Path, ChangeKind] = {}
    for path in sorted(set(before) | set(after), key=_depth_key):
        old, new = before.get(path), after.get(path)
        kind = _change(old, new)
        if kind is not None:
            out[path] = kind
    return out


def _change(old: Node | None, new: Node | None) -> ChangeKind | None:
    if old is None and new is None:
        return None
    if old is None:
        return ChangeKind.CREATED
    if new is None:
        # A socket or fifo gone (an agent that ended) frees the name: nothing runs from that.
        return None if old.kind is NodeKind.SPECIAL else ChangeKind.DELETED
    if old.kind is not new.kind:
        return ChangeKind.TYPE_CHANGED
    if old.kind is NodeKind.FILE:
        same = _same_content(old, new)
        if not same and not new.digest and old.mode != new.mode and (
                (old.ino, old.dev, old.size) == (new.ino, new.dev, new.size)):
            return ChangeKind.MODE_CHANGED  # made unreadable: its mode is what is known changed
        if not same:
            replaced = old.ino and new.ino and (old.ino, old.dev) != (new.ino, new.dev)
            return ChangeKind.REPLACED if replaced else ChangeKind.MODIFIED
    if old.kind is NodeKind.LINK and old.target != new.target:
        return ChangeKind.MODIFIED
    if old.kind is not NodeKind.LINK and old.mode != new.mode:
        return ChangeKind.MODE_CHANGED
    return None


def _same_content(old: Node, new: Node) -> bool:
    """Whether two looks at a file saw the same content: by their digests when both have one;
    else by the stamp, which tells a write only when the first look's was settled (or when it
    could not be read: then its identity is all there is)."""
    if old.digest and new.digest:
        return old.digest == new.digest
    return old.same_file(new) and (old.settled or not old.digest)


def _growing_change(old: Node | None, new: Node | None) -> ChangeKind | None:
    """What a ``GROWING`` guard holds against a change: never a new file, nor growth."""
    if old is None:
        return None
    if new is None:
        return ChangeKind.DELETED
    if old.kind is not new.kind:
        return ChangeKind.TYPE_CHANGED
    if old.kind is NodeKind.FILE:
        if (old.ino, old.dev) != (new.ino, new.dev):
            return ChangeKind.REPLACED
        if new.size < old.size:
            return ChangeKind.SHORTENED
    return None


def _inside_reported(path: Path, found: Mapping[Path, ChangeKind]) -> bool:
    """Whether an ancestor's change already says what happened to ``path``."""
    whole = (ChangeKind.CREATED, ChangeKind.DELETED, ChangeKind.TYPE_CHANGED)
    return any(found.get(parent) in whole for parent in path.parents)


def _depth_key(path: Path) -> tuple[int, str]:
    return len(path.parts), str(path)


def _distinct(entries: Sequence[Protected]) -> list[Protected]:
    """``entries`` made absolute, each path once (the first entry for it wins)."""
    out: dict[Path, Protected] = {}
    for entry in entries:
        path = Path(os.path.abspath(entry.path))
        out.setdefault(path, replace(entry, path=path))
    return list(out.values())


def _inner(entry: Protected, roots: Sequence[Protected]) -> frozenset[Path]:
    """The other protected paths inside ``entry``: judged by their own guard, not by its."""
    return frozenset(r.path for r in roots if r.path != entry.path
                     and entry.path in r.path.parents)


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


# -- putting things back --------------------------------------------------------------------


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[tuple[int, str]]:
    """A free temporary name beside ``path`` (with its folder's descriptor) to make the new
    entry under: renamed over ``path`` when the block ends (a rename replaces whatever is
    there, a link included, never what it points to), removed if anything fails."""
    with parent_dir(path) as dfd:
        tmp = f".{path.name}.holodesk-restore-{secrets.token_hex(4)}"
        try:
            yield dfd, tmp
            os.replace(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise


def _put_file(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` at ``path`` all at once."""
    with _replacing(path) as (dfd, tmp):
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600, dir_fd=dfd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)


def _put_link(path: Path, target: str) -> None:
    with _replacing(path) as (dfd, tmp):
        os.symlink(target, tmp, dir_fd=dfd)


def _put_folder(path: Path, mode: int) -> None:
    with parent_dir(path) as dfd:
        os.mkdir(path.name, 0o700, dir_fd=dfd)
        fd = os.open(path.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                     dir_fd=dfd)
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def _put_mode(path: Path, node: Node) -> None:
    with parent_dir(path) as dfd:
        chmod_nofollow(dfd, path.name, node.mode)


def _put_back(path: Path, node: Node, limits: Limits) -> str:
    """Recreate ``node`` at ``path`` (nothing there now); "" or why it cannot be."""
    if node.kind is NodeKind.FOLDER:
        _put_folder(path, node.mode)
    elif node.kind is NodeKind.LINK:
        _put_link(path, node.target)
    elif node.kind is NodeKind.SPECIAL:
        if node.target != "fifo":
            return "a socket or a device cannot be made again; its program makes it anew"
        with _replacing(path) as (dfd, tmp):
            os.mkfifo(tmp, node.mode, dir_fd=dfd)
    elif node.data is None:
        return _not_kept(node, limits)
    else:
        _put_file(path, node.data, node.mode)
    return ""


def _not_kept(node: Node, limits: Limits) -> str:
    if node.size > limits.file_bytes:
        known = "its digest was" if node.digest else "its size and times were"
        return (f"its content ({node.size} bytes) is too large to keep (over "
                f"{limits.file_bytes} bytes a file), so only {known} known")
    if not node.digest:
        return "it could not be read when the run started"
    return (f"the memory budget for what is kept ({limits.total_bytes} bytes in all) was used "
            "by the files before it, so only its digest was known")


def _why(e: OSError) -> str:
    """Why something could not be put back, in words."""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return ("the disk is full: nothing could be written there; free some space and put "
                "it back from a backup (what it held was in holodesk's memory for this run "
                "only)")
    return e.strerror or str(e)


def _take_away(path: Path, keeper: Keeper, kept: list[Path]) -> str:
    """Move what is at ``path`` to where it is kept (added to ``kept``); "" or, when no copy
    could be kept, that it was removed instead and why."""
    try:
        kept.append(keeper.move_aside(path))
        return ""
    except KeepFailed as e:
        why = str(e)
    if os.path.ismount(path):  # never emptied: it may be another machine's files
        raise OSError(errno.EBUSY, f"a mount point cannot be moved aside ({why})")
    remove(path)
    return f"removed: no copy could be kept ({why})"


def _keep_copy(path: Path, keeper: Keeper, kept: list[Path]) -> str:
    """Keep a copy of the file at ``path`` (added to ``kept``) before it is put back; "" or
    why none could be kept (putting it back goes on)."""
    try:
        kept.append(keeper.copy(path))
        return ""
    except OSError as e:
        return f"its changed copy could not be kept ({e.strerror or e})"


# -- the tripwire ---------------------------------------------------------------------------

_EVERY = -1  # "every protected path", in a set of entry indexes


class Tripwire:
    """Watches ``entries`` between :meth:`start` and :meth:`close`; see the module doc.

    ``on_trip`` is called (from the watcher's thread, or from the thread calling
    :meth:`check`) once per comparison that found changes, after they were put back.
    ``keep_dir`` is where the kept copies go (:class:`~control.keeping.Keeper`; without it,
    beside each file, and none of an :class:`Extra` source); it is never looked at itself.
    ``watch`` False never starts inotify (only :meth:`check` compares). The folders above
    each protected path, up to ``home`` (default: the home folder; all of them for a path
    outside it), are recorded too: a link put in place of one of them (everything under it
    would be read through it) is moved aside as a change.
    """

    def __init__(self, entries: Sequence[Protected], on_trip: Callable[[Trip], None], *,
                 extras: Sequence[Extra] = (), limits: Limits = Limits(),
                 keep_dir: Path | None = None, watch: bool = True,
                 now: Callable[[], dt.datetime] = dt.datetime.now,
                 home: Path | None = None) -> None:
        self._entries = _distinct(entries)
        self._home = _home(home)
        #: The folders above the protected paths (up to the home folder), as they were.
        self._above: dict[Path, Node | None] = {}
        self._on_trip = on_trip
        self._extras = list(extras)
        self._limits = limits
        self._keep_dir = keep_dir
        self._want_watch = watch
        self._now = now
        self._lock = threading.RLock()
        self._snapshot: list[dict[Path, Node]] = [{} for _ in self._entries]
        self._seen: list[dict[Path, Node]] = [{} for _ in self._entries]
        #: What each snapshot left out past the count bound (not protected, not new).
        self._beyond: list[set[Path]] = [set() for _ in self._entries]
        #: When each IDENTITY entry's last comparison ended, and the processor time it took
        #: (a busy machine's waits are not the comparison's cost).
        self._took: dict[int, tuple[float, float]] = {}
        #: A followed entry's index: the index of the entry whose link led to it.
        self._origin: dict[int, int] = {}
        #: What the snapshot held where a change could not be put back (path: its nodes
        #: there, by entry), for the record: it is still a change.
        self._unrestored: dict[int, dict[Path, dict[Path, Node]]] = {}
        self._extra_unrestored: dict[int, bytes | None] = {}
        self._extra_snapshot: dict[int, bytes | None] = {}
        self._budget = _Budget(limits.total_bytes)
        self._kept: set[Path] = set()
        self._holds = 0
        self._pending: set[int] = set()
        self._closed = False
        self._started = False
        self._cuts_said: set[str] = set()
        self._notes: list[str] = []
        self._problems: list[str] = []
        self._inotify: Inotify | None = None
        self._watches: dict[Path, int] = {}
        self._watched: dict[int, Path] = {}
        self._wake_r = self._wake_w = -1
        self._thread: threading.Thread | None = None

    # -- life ---------------------------------------------------------------------------

    @property
    def problems(self) -> tuple[str, ...]:
        """What limits the protection (no inotify, a folder that cannot be read, a bound that
        cut): for the person, once."""
        return tuple(self._problems)

    @property
    def watching(self) -> bool:
        """Whether changes wake a comparison (else only :meth:`check` compares)."""
        return self._thread is not None

    @property
    def protected(self) -> tuple[Protected, ...]:
        return tuple(self._entries)

    def start(self) -> None:
        """Take the snapshot and start watching; never raises for a file or inotify problem
        (it becomes one of :attr:`problems`, and :meth:`check` still compares)."""
        with self._lock:
            if self._started:
                return
            self._started = True
            # Known to own_write before the snapshot: a write under way waits for it, and is
            # taken afresh when it ends.
            with _active_lock:
                _active.append(self)
            index = 0
            while index < len(self._entries):
                entry = self._entries[index]
                began = time.thread_time()
                walk = _walk(entry, self._limits, self._budget,
                             skip=_inner(entry, self._entries) | self._not_judged())
                if entry.guard is Guard.IDENTITY:
                    self._took[index] = (time.monotonic(), time.thread_time() - began)
                self._snapshot[index] = walk.nodes
                self._beyond[index] = walk.beyond
                self._seen[index] = {p: replace(n, data=None) for p, n in walk.nodes.items()}
                for more in _linked(entry, walk.nodes, self._entries, self._home,
                                    self._limits):
                    self._origin[len(self._entries)] = index
                    self._entries.append(more)
                    self._snapshot.append({})
                    self._seen.append({})
                    self._beyond.append(set())
                for path in walk.unreadable:
                    self._problem(f"{path} cannot be read: what is in it is not protected")
                for cut in walk.cut:
                    self._problem(cut)
                    self._cuts_said.add(cut)
                index += 1
            self._above = {path: _node(path, Guard.GROWING, self._limits, None, None)
                           for path in self._folders_above()}
            for index, extra in enumerate(self._extras):
                try:
                    self._extra_snapshot[index] = extra.read()
                except OSError as e:
                    self._problem(f"{extra.name} cannot be read ({e}): it is not protected")
            if self._want_watch:
                self._start_watching()
        self._say_notes()

    def _start_watching(self) -> None:
        try:
            self._inotify = Inotify()
        except OSError as e:
            self._problem(f"changes are not watched as they happen ({e}); the protected files "
                          "are compared after each action instead")
            return
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._arm()
        self._thread = threading.Thread(target=self._watch, name="tripwire", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop watching and forget the snapshot; safe to call twice."""
        with _active_lock:
            if self in _active:
                _active.remove(self)
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        with self._lock:
            if self._inotify is not None:
                self._inotify.close()
            for fd in (self._wake_r, self._wake_w):
                if fd >= 0:
                    os.close(fd)
            self._wake_r = self._wake_w = -1
            self._snapshot = [{} for _ in self._entries]
            self._seen = [{} for _ in self._entries]

    def verified(self, roots: Sequence[Path]) -> Scan:
        """What the protected ``roots`` (and the paths their links led to) are known to be:
        the snapshot as compared and put back, holodesk's own writes taken in, and where a
        change could not be put back, what was there before it (it is still one). Nodes
        without content; for a record between runs, taken before :meth:`close`."""
        with self._lock:
            wanted = {Path(os.path.abspath(r)) for r in roots}
            indexes = {i for i, e in enumerate(self._entries) if e.path in wanted}
            grown = True
            while grown:
                more = {i for i, o in self._origin.items() if o in indexes} - indexes
                indexes |= more
                grown = bool(more)
            nodes: dict[Path, Node] = {}
            for index in sorted(indexes):
                part = {p: replace(n, data=None) for p, n in self._snapshot[index].items()}
                for path, before in self._unrestored.get(index, {}).items():
                    part = {p: n for p, n in part.items() if not _under(p, path)}
                    part.update(before)
                nodes.update(part)
            return Scan(tuple(self._entries[i].path for i in sorted(indexes)), nodes)

    def verified_extras(self) -> dict[str, bytes | None]:
        """What each :class:`Extra` source is known to be (by name), as :meth:`verified`."""
        with self._lock:
            known = {**self._extra_snapshot, **self._extra_unrestored}
            return {self._extras[i].name: data for i, data in known.items()}

    @property
    def unrestored(self) -> tuple[str, ...]:
        """The paths (and :class:`Extra` names) whose change could not be put back: said
        when it was found."""
        with self._lock:
            paths = [str(p) for held in self._unrestored.values() for p in held]
            return (*paths, *(self._extras[i].name for i in self._extra_unrestored))

    def __enter__(self) -> Tripwire:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- comparing ----------------------------------------------------------------------

    def check(self, *, everything: bool = False) -> Trip | None:
        """Compare everything (the :class:`Extra` sources too) with the snapshot now; what
        changed was put back and ``on_trip`` heard of it. None when nothing changed (or while
        an own write is under way: it is compared when that ends). A large ``IDENTITY`` path
        compared a moment ago is left for later unless ``everything``."""
        return self._judge({_EVERY}, extras=True, everything=everything)

    def _judge(self, which: set[int], *, extras: bool = False,
               everything: bool = False) -> Trip | None:
        with self._lock:
            if self._closed or not self._started:
                return None
            if self._holds:
                self._pending |= which
                return None
            which |= self._pending
            self._pending = set()
            indexes = (range(len(self._entries)) if _EVERY in which
                       else sorted(i for i in which if i >= 0))
            changes: list[Change] = self._judge_above()
            for _attempt in range(3):
                for index in indexes:
                    if everything or self._due(index):
                        changes += self._compare_entry(index)
                # Folders that appeared get their watches now; what happened in them before
                # that is seen by looking at them once more.
                again = self._arm()
                if not again:
                    break
                indexes = sorted(again)
            if extras:
                changes += self._compare_extras()
        self._say_notes()
        if not changes:
            return None
        trip = Trip(tuple(changes))
        try:
            self._on_trip(trip)
        except Exception:
            log.exception("the tripwire's callback failed")
        return trip

    def _folders_above(self) -> list[Path]:
        """Every folder above a protected path, up to the home folder (excluded), shallowest
        first."""
        out: set[Path] = set()
        for entry in self._entries:
            for folder in entry.path.parents:
                if folder == self._home or folder in self._home.parents or folder == folder.parent:
                    break
                out.add(folder)
        return sorted(out, key=_depth_key)

    def _judge_above(self) -> list[Change]:
        """A link now where a folder above protected paths was (or was not, or another link
        was): moved aside, and what was there put back; the protected paths under it are then
        compared as usual (what they held comes back)."""
        changes: list[Change] = []
        moved: set[Path] = set()
        keeper = self._keeper()
        for path, old in self._above.items():
            if any(p in moved for p in path.parents):
                continue
            new = _node(path, Guard.GROWING, self._limits, None, None)
            if new is None or new.kind is not NodeKind.LINK or (
                    old is not None and old.kind is NodeKind.LINK and old.target == new.target):
                continue
            kind = (ChangeKind.CREATED if old is None else ChangeKind.MODIFIED
                    if old.kind is NodeKind.LINK else ChangeKind.TYPE_CHANGED)
            kept: list[Path] = []
            try:
                note = _take_away(path, keeper, kept)
                moved.add(path)
                why = ("" if old is None or old.kind is NodeKind.FILE
                       else _put_back(path, old, self._limits))
                change = Change(str(path), kind, kept[0] if kept else None, restored=not why,
                                why_not=why, note=note)
            except OSError as e:
                change = Change(str(path), kind, kept[0] if kept else None, why_not=_why(e))
            self._kept.update(kept)
            changes.append(change)
        return changes

    def _due(self, index: int) -> bool:
        """Whether the entry is to be compared now: always, but for a large ``IDENTITY`` one
        compared less than twenty times its comparison's length ago."""
        took = self._took.get(index)
        if took is None:
            return True
        ended, seconds = took
        return seconds < IDENTITY_SLOW_S or time.monotonic() - ended >= 19 * seconds

    def _compare_entry(self, index: int) -> list[Change]:
        entry = self._entries[index]
        snap = self._snapshot[index]
        began = time.thread_time()
        walk = _walk(entry, self._limits, None, known=snap, seen=self._seen[index],
                     skip=_inner(entry, self._entries) | self._not_judged(),
                     left_out=self._beyond[index])
        if entry.guard is Guard.IDENTITY:
            self._took[index] = (time.monotonic(), time.thread_time() - began)
        self._seen[index] = walk.nodes
        for cut in walk.cut:
            if cut not in self._cuts_said:
                self._cuts_said.add(cut)
                self._notes.append(cut)
        if entry.guard is Guard.GROWING:
            return self._judge_growing(index, walk.nodes)
        found = _differences(snap, walk.nodes)
        if not found:
            return []
        if entry.guard is Guard.IDENTITY:
            # What it is now is what the next look compares with: a further change trips again.
            self._snapshot[index] = dict(walk.nodes)
            return [Change(str(p), k, why_not=(
                        "holodesk keeps no copy of what is there (it is too large): look at "
                        "it, or install it anew")) for p, k in found.items()
                    if not _inside_reported(p, found)]
        return self._restore(index, found, walk.nodes)

    def _judge_growing(self, index: int, now: dict[Path, Node]) -> list[Change]:
        snap = self._snapshot[index]
        changes = []
        found: dict[Path, ChangeKind] = {}
        for path in sorted(snap, key=_depth_key):
            kind = _growing_change(snap[path], now.get(path))
            if kind is not None:
                found[path] = kind
        for path, kind in found.items():
            if not _inside_reported(path, found):
                changes.append(Change(str(path), kind, why_not=(
                    "holodesk itself writes there during a run, so it keeps no copy")))
        # What it is now is what the next look compares with: it may grow from here.
        self._snapshot[index] = dict(now)
        return changes

    def _restore(self, index: int, found: dict[Path, ChangeKind],
                 now: Mapping[Path, Node]) -> list[Change]:
        """Put back every difference of ``found`` (shallowest first); the changes reported."""
        snap = self._snapshot[index]
        keeper = self._keeper()
        results: dict[Path, Change] = {}
        moved: set[Path] = set()  # moved aside whole: nothing under them is looked at again
        retake: list[Path] = []
        for path, kind in found.items():
            old, new = snap.get(path), now.get(path)
            if any(p in moved for p in path.parents):
                # What was there went aside with the folder it was in: only what the snapshot
                # held there comes back.
                if old is None:
                    continue
                kind, new = ChangeKind.DELETED, None
            kept: list[Path] = []
            try:
                change = self._undo(path, kind, old, new, keeper, moved, kept)
            except OSError as e:
                change = Change(str(path), kind, kept[0] if kept else None, why_not=_why(e))
            self._kept.update(kept)
            results[path] = change
            if not change.restored:
                retake.append(path)
                held = self._unrestored.setdefault(index, {})
                if not any(_under(path, p) for p in held):
                    held[path] = {p: replace(n, data=None) for p, n in snap.items()
                                  if _under(p, path)}
        # Not put back: it is what it is now; only a further change trips again. Taken only
        # now: what is under it must still be put back from the snapshot as it was (taken
        # during the loop, a changed file under a folder that could not be moved aside would
        # be "put back" with the changer's content).
        for path in retake:
            self._replace_part(index, path)
        # What was put back is looked at afresh next time (new inodes, same content).
        self._seen[index] = {}
        return [c for p, c in results.items() if not _inside_reported(p, found)]

    def _undo(self, path: Path, kind: ChangeKind, old: Node | None, new: Node | None,
              keeper: Keeper, moved: set[Path], kept: list[Path]) -> Change:
        where = str(path)
        if kind is ChangeKind.CREATED:
            note = _take_away(path, keeper, kept)
            moved.add(path)
            return Change(where, kind, kept[0] if kept else None, restored=True, note=note)
        assert old is not None
        if kind is ChangeKind.DELETED:
            why = _put_back(path, old, self._limits)
            return Change(where, kind, restored=not why, why_not=why)
        assert new is not None
        if kind is ChangeKind.MODE_CHANGED:
            _put_mode(path, old)
            return Change(where, kind, restored=True)
        if kind is ChangeKind.TYPE_CHANGED or old.kind is NodeKind.LINK:
            if old.kind is NodeKind.FILE and old.data is None:
                return Change(where, kind, why_not=_not_kept(old, self._limits))
            note = _take_away(path, keeper, kept)
            moved.add(path)
            why = _put_back(path, old, self._limits)
            return Change(where, kind, kept[0] if kept else None, restored=not why,
                          why_not=why, note=note)
        # A file's content changed (in place, or replaced by another file).
        if old.data is None:
            return Change(where, kind, why_not=_not_kept(old, self._limits))
        note = _keep_copy(path, keeper, kept)
        _put_file(path, old.data, old.mode)
        return Change(where, kind, kept[0] if kept else None, restored=True, note=note)

    def _not_judged(self) -> frozenset[Path]:
        """What the tripwire put there itself: the copies it kept (and their folder, never
        loaded by anything: it is also left out of the memory budget)."""
        folder = {self._keep_dir} if self._keep_dir is not None else set()
        return frozenset(self._kept | folder)

    def _keeper(self) -> Keeper:
        """Where the copies of this comparison go (stamped with its time)."""
        return Keeper(self._keep_dir, self._home, self._now().strftime("%Y%m%d-%H%M%S"))

    def _compare_extras(self) -> list[Change]:
        changes = []
        for index, extra in enumerate(self._extras):
            if index not in self._extra_snapshot:
                continue
            try:
                now = extra.read()
            except OSError as e:
                self._notes.append(f"{extra.name} cannot be read now ({e})")
                continue
            old = self._extra_snapshot[index]
            if now == old:
                continue
            kind = (ChangeKind.CREATED if old is None else
                    ChangeKind.DELETED if now is None else ChangeKind.MODIFIED)
            # Put back first: keeping the copy (in a folder a changer can fill or take the
            # name of) must never stand in its way.
            try:
                extra.write(old)
            except OSError as e:
                self._extra_unrestored.setdefault(index, old)
                self._extra_snapshot[index] = now
                changes.append(Change(extra.name, kind, why_not=_why(e)))
                continue
            kept, note = None, ""
            if now is not None and self._keep_dir is not None:
                try:
                    kept = self._keeper().keep_bytes(extra.name, now)
                except OSError as e:
                    note = f"its changed copy could not be kept ({e.strerror or e})"
            changes.append(Change(extra.name, kind, kept, restored=True, note=note))
        return changes

    # -- own writes ---------------------------------------------------------------------

    def _hold(self) -> None:
        with self._lock:
            self._holds += 1

    def _release(self, targets: Sequence[Path]) -> None:
        with self._lock:
            try:
                if not self._closed and self._started:
                    for target in targets:
                        self._refresh(target)
            finally:
                self._holds -= 1
                wake = not self._holds and bool(self._pending)
        if wake:
            self._wake()

    def _refresh(self, target: Path) -> None:
        """Take the snapshot of ``target`` (and what it holds, the folders above it up to its
        protected path, and temporary files named after it) again from disk."""
        for index, entry in enumerate(self._entries):
            if target in entry.path.parents:
                # The whole protected path was written (a folder above it): all of it afresh.
                self._replace_part(index, entry.path)
            elif _under(target, entry.path):
                self._replace_part(index, target)
                for folder in target.parents:
                    if not _under(folder, entry.path):
                        break
                    self._replace_node(index, folder)
                self._forget_temporaries(index, target)

    def _replace_part(self, index: int, start: Path) -> None:
        entry = self._entries[index]
        snap = self._snapshot[index]
        for known in [p for p in snap if _under(p, start)]:
            node = snap.pop(known)
            if node.data is not None:
                self._budget.left += len(node.data)
        walk = _walk(entry, self._limits, self._budget, start=start,
                     skip=_inner(entry, self._entries) | self._not_judged())
        snap.update(walk.nodes)
        beyond = self._beyond[index]
        beyond -= {p for p in beyond if _under(p, start)}
        beyond |= walk.beyond
        seen = self._seen[index]
        for known in [p for p in seen if _under(p, start)]:
            del seen[known]
        seen.update({p: replace(n, data=None) for p, n in walk.nodes.items()})

    def _replace_node(self, index: int, path: Path) -> None:
        node = _node(path, self._entries[index].guard, self._limits, None, None)
        if node is None:
            self._snapshot[index].pop(path, None)
        elif node.kind is NodeKind.FOLDER:
            self._snapshot[index][path] = node

    def _forget_temporaries(self, index: int, target: Path) -> None:
        """The snapshot's temporary files of the write (``.<name>.*`` beside ``target``) taken
        again. One that is there now and was not before is not taken in: holodesk's own
        writers remove theirs before the write ends, so it is another program's, judged."""
        prefix = f".{target.name}."
        for known in [p for p in self._snapshot[index]
                      if p.parent == target.parent and p.name.startswith(prefix)]:
            self._replace_part(index, known)

    # -- watching -----------------------------------------------------------------------

    def _arm(self) -> set[int]:
        """Watch every protected folder, the folder of every protected path and, for a missing
        one, the nearest folder above it that exists; drop the watches no longer needed. The
        indexes of the entries whose new watches came after their last look."""
        ino = self._inotify
        if ino is None or self._closed:
            return set()
        wanted: dict[Path, set[int]] = {}
        for index, entry in enumerate(self._entries):
            anchor = entry.path.parent
            while not os.path.isdir(anchor) and anchor != anchor.parent:
                anchor = anchor.parent
            wanted.setdefault(anchor, set()).add(index)
            for path, node in self._seen[index].items() or self._snapshot[index].items():
                if node.kind is NodeKind.FOLDER and (
                        entry.guard is not Guard.IDENTITY or path == entry.path):
                    wanted.setdefault(path, set()).add(index)
        late: set[int] = set()
        for path in [p for p in self._watches if p not in wanted]:
            with contextlib.suppress(OSError):
                ino.rm_watch(self._watches[path])
            self._watched.pop(self._watches.pop(path), None)
        for path, indexes in wanted.items():
            if path in self._watches:
                continue
            try:
                wd = ino.add_watch(path, CHANGES | IN_ONLYDIR | IN_DONT_FOLLOW)
            except OSError as e:
                if e.errno == errno.ENOSPC:
                    self._problem(f"{path} is not watched: the limit of inotify watches is "
                                  "reached (raise fs.inotify.max_user_watches); it is compared "
                                  "after each action instead")
                elif e.errno not in (errno.ENOENT, errno.ENOTDIR):
                    self._problem(f"{path} is not watched ({e.strerror}); it is compared "
                                  "after each action instead")
                continue
            self._watches[path] = wd
            self._watched[wd] = path
            late |= indexes
        return late if self._thread is not None else set()

    def _watch(self) -> None:
        ino = self._inotify
        assert ino is not None
        while True:
            try:
                events = ino.read(None, wake=self._wake_r)
            except (OSError, ValueError):
                if not self._closed:
                    log.exception("the tripwire stopped watching; it compares after each "
                                  "action only")
                return
            if self._closed:
                return
            with contextlib.suppress(OSError):
                while os.read(self._wake_r, 4096):
                    pass
            self._judge(self._entries_of(events))

    def _entries_of(self, events: Sequence[InotifyEvent]) -> set[int]:
        """The protected entries the events may concern (all of them after a lost event)."""
        which: set[int] = set()
        for event in events:
            if event.overflow:
                return {_EVERY}
            folder = self._watched.get(event.wd)
            if event.ignored:
                with self._lock:
                    if folder is not None and self._watches.get(folder) == event.wd:
                        del self._watches[folder]
                    self._watched.pop(event.wd, None)
            if folder is None:
                continue
            path = folder / event.name if event.name else folder
            for index, entry in enumerate(self._entries):
                if _under(path, entry.path) or path in entry.path.parents:
                    which.add(index)
        return which

    def _wake(self) -> None:
        if self._wake_w >= 0:
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"x")

    # -- telling ------------------------------------------------------------------------

    def _problem(self, text: str) -> None:
        if text not in self._problems:
            self._problems.append(text)
            self._notes.append(text)

    def _say_notes(self) -> None:
        # Never under the lock: a log handler may hold its own lock and wait for ours (a log
        # file's rotation is an own write).
        with self._lock:
            notes, self._notes = self._notes, []
        for note in notes:
            log.warning("protected files: %s", note)
