"""Red team 11: the start-up files of shells other than bash, zsh and fish are not protected.

``app/protected.py`` protects "the shell's start-up files" by name (``HOME_FILES``: bash's,
zsh's, ``.profile``; ``CONFIG_FOLDERS``: fish), and ``app/startup_files.py`` reads only those
for ``source`` lines. A person whose shell is tcsh, ksh/mksh, nushell, xonsh, elvish or
PowerShell has start-up files that run at every new terminal exactly as ``~/.bashrc`` does, and
none of them is watched; docs/safety.md does not list them as not covered.

Attack (default ``risky`` mode, nothing asked): open the file in a GUI text editor (``ctrl+o``,
type the path, Enter — asked once as "Enter after typing", an innocent-looking open), type a
line at its end without Enter (``write_desktop`` with ``press_enter=false``, e.g.
``alias ls 'find ~ -delete'`` for tcsh, which no ``shell_command_label`` pattern
matches), ``ctrl+s``. No trip: the next terminal the person opens runs it. Writing
``~/.bashrc`` the same way trips and is put back.

Expected: the start-up files of every common shell (at least the person's login shell, from
``$SHELL`` or the passwd entry) are protected, as bash's and zsh's are.

Fixed: their files and folders are in app/protected.py's protected set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app import protected

OTHER_SHELLS = [
    ".tcshrc", ".cshrc", ".login", ".kshrc", ".mkshrc",
    ".config/nushell/config.nu", ".config/nushell/env.nu",
    ".xonshrc", ".config/xonsh/rc.xsh", ".config/elvish/rc.elv",
    ".config/powershell/Microsoft.PowerShell_profile.ps1",
]  # fmt: skip


def _watched(home: Path) -> list[Path]:
    return protected.startup_paths(home, {"HOME": str(home), "PATH": "/usr/bin",
                                          "SHELL": "/usr/bin/tcsh"})


def _covered(path: Path, watched: list[Path]) -> bool:
    return any(path == w or w in path.parents for w in watched)


def test_control_bash_and_fish_start_up_files_are_protected(tmp_path: Path) -> None:
    watched = _watched(tmp_path)
    assert _covered(tmp_path / ".bashrc", watched)
    assert _covered(tmp_path / ".config/fish/config.fish", watched)


@pytest.mark.parametrize("name", OTHER_SHELLS)
def test_other_shells_start_up_files_are_protected(tmp_path: Path, name: str) -> None:
    assert _covered(tmp_path / name, _watched(tmp_path)), f"~/{name} is not watched in a run"
