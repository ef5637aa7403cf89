"""The start-up files found by mechanism (app/startup_files.py): what a session under this
home reads, read from its environment and its own files, without running anything of the
person's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app import protected, startup_files
from tests.support.home import Home, isolate_home


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    home = isolate_home(monkeypatch, tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    for name in ("XDG_DATA_DIRS", "XDG_CONFIG_DIRS", "ZDOTDIR", "PYTHONUSERBASE"):
        monkeypatch.delenv(name, raising=False)
    return home


def _found(home: Home) -> list[Path]:
    return startup_files.discovered(home.root, os.environ)


def test_what_the_shell_files_source_is_found_a_few_levels_down(home: Home) -> None:
    r = home.root
    (r / ".bashrc").write_text(
        "# . ~/.commented-out\n"
        "alias ll='ls -l'\n"
        "[ -f ~/.bash_env ] && . ~/.bash_env\n"
        "if [ -f \"$HOME/.config/shell/rc\" ]; then source \"$HOME/.config/shell/rc\"; fi\n"
        "for f in ${XDG_CONFIG_HOME:-$HOME/.config}/shell/rc.d/*.sh; do . \"$f\"; done\n"
        "{ . ~/.braced; }\n"
        "echo . ~/.not-sourced\n"
        ". $SOMETHING/else\n"
        ". ~bob/.his\n")
    (r / ".config" / "shell").mkdir(parents=True)
    (r / ".config" / "shell" / "rc").write_text("source ~/.config/shell/deeper.sh\n")
    (r / ".profile").write_text(". .profile.local\n")
    found = _found(home)
    for path in (r / ".bash_env", r / ".config" / "shell" / "rc",
                 r / ".config" / "shell" / "rc.d", r / ".config" / "shell" / "deeper.sh",
                 r / ".profile.local", r / ".braced",
                 r / ".bash_aliases", r / ".bashrc.d"):  # Debian's and Fedora's, always
        assert path in found, path
    for path in (r / ".commented-out", r / ".not-sourced"):
        assert path not in found, path
    assert all(path.is_relative_to(r) for path in found)


def test_the_zdotdir_a_zshenv_sets_is_read(home: Home) -> None:
    (home.root / ".zshenv").write_text(
        'export ZDOTDIR="${XDG_CONFIG_HOME:-$HOME/.config}/zsh"\n')
    zdotdir = home.config / "zsh"
    zdotdir.mkdir(parents=True)
    (zdotdir / ".zshrc").write_text("source $ZDOTDIR/aliases.zsh\n")
    found = _found(home)
    assert {zdotdir / ".zshrc", zdotdir / ".zprofile", zdotdir / ".zlogin",
            zdotdir / "aliases.zsh"} <= set(found)


def test_path_folders_in_the_home_and_no_others(home: Home,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    cargo = home.root / ".cargo" / "bin"
    monkeypatch.setenv("PATH", f"{cargo}:relative/bin::{home.root}:/usr/local/bin:/usr/bin")
    found = _found(home)
    assert cargo in found
    assert home.root not in found and Path("/usr/local/bin") not in found


def test_pythons_user_sites_come_from_names_never_from_running_them(
        home: Home, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The python3 first on PATH leads to python3.42: its user site is protected, and it is
    never run to ask (a program in a folder the person can write)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = tmp_path / "ran"
    real = bin_dir / "python3.42"
    real.write_text(f"#!/bin/sh\ntouch {ran}\n")
    real.chmod(0o755)
    (bin_dir / "python3").symlink_to("python3.42")
    shim = tmp_path / "shims"
    shim.mkdir()
    (home.root / ".local" / "lib" / "python3.7" / "site-packages").mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{bin_dir}:{shim}:/usr/bin:/bin")
    found = _found(home)
    lib = home.root / ".local" / "lib"
    assert lib / "python3.42" / "site-packages" in found
    assert lib / "python3.7" / "site-packages" in found  # it exists: some python3.7 reads it
    import sys

    assert lib / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages" in found
    assert not ran.exists()


def test_user_units_come_from_the_systems_systemd_analyze_else_the_documented_list(
        home: Home, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    units = home.root / "units-by-systemd"
    analyze = tmp_path / "systemd-analyze"
    analyze.write_text(f"#!/bin/sh\necho {units}\necho /usr/lib/systemd/user\n")
    analyze.chmod(0o755)
    startup_files._unit_paths_cache.clear()
    monkeypatch.setattr(startup_files, "find_system_program", lambda name: analyze)
    found = _found(home)
    assert units in found and Path("/usr/lib/systemd/user") not in found
    startup_files._unit_paths_cache.clear()
    monkeypatch.setattr(startup_files, "find_system_program", lambda name: None)
    found = _found(home)
    assert units not in found
    assert {home.config / "systemd" / "user.control", home.config / "systemd" / "user",
            home.data / "systemd" / "user"} <= set(found)
    startup_files._unit_paths_cache.clear()


def test_every_data_folder_of_the_session_under_the_home_gives_its_entries_and_services(
        home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    exports = home.data / "flatpak" / "exports" / "share"
    xdg = home.root / ".local" / "xdg"
    monkeypatch.setenv("XDG_DATA_DIRS", f"{exports}:/usr/share")
    monkeypatch.setenv("XDG_CONFIG_DIRS", f"{xdg}:/etc/xdg")
    found = _found(home)
    for path in (exports / "applications", exports / "dbus-1" / "services",
                 exports / "systemd" / "user", home.data / "dbus-1" / "services",
                 xdg / "autostart"):
        assert path in found, path
    assert Path("/usr/share/applications") not in found


def test_the_set_holds_what_is_found(home: Home) -> None:
    (home.root / ".bashrc").write_text(". ~/.bash_env\n")
    entries = {e.path for e in protected.protected_entries(protected.Settings())}
    assert {home.root / ".bash_env", home.root / ".bash_aliases", home.root / ".xinputrc",
            home.config / "openbox"} <= entries
