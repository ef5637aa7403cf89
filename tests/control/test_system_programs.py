"""The system programs holodesk runs for its checks (control/system_programs.py): taken from
root's own folders only, never from PATH nor from a folder anyone else can change."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from control.crontab import find_crontab
from control.system_programs import (
    SYSTEM_FOLDERS,
    find_system_program,
    only_root_can_change,
    why_others_can_change,
)


def _program(folder: Path, name: str = "crontab") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_a_program_on_path_in_the_persons_folder_is_never_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = _program(tmp_path / "home" / ".cargo" / "bin")
    monkeypatch.setenv("PATH", f"{planted.parent}:/usr/bin:/bin")
    found = find_crontab()
    assert found is None or Path(found.program).parent in SYSTEM_FOLDERS
    assert find_system_program("crontab", [planted.parent]) is None


def test_the_systems_own_programs_are_found() -> None:
    env = shutil.which("env", path="/usr/bin:/bin")
    if env is None or os.stat(env).st_uid != 0:
        pytest.skip("no env program of root's")
    assert only_root_can_change(Path(env)), why_others_can_change(Path(env))
    assert find_system_program("env") is not None


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user's needs root")
def test_what_another_user_owns_or_others_can_write_is_refused_with_the_reason(
        tmp_path: Path) -> None:
    """The file first, then each folder from the nearest up: the reason names the first
    thing someone other than root can change."""
    program = _program(tmp_path / "bin")
    os.chown(program, 65534, 65534)
    assert why_others_can_change(program) == f"{program} belongs to user 65534, not root"
    os.chown(program, 0, 0)
    program.chmod(0o775)
    assert why_others_can_change(program) == f"{program} can be written by others than root"
    program.chmod(0o755)
    os.chown(program.parent, 65534, 0)
    assert why_others_can_change(program) == (
        f"{program.parent} belongs to user 65534, not root")
    os.chown(program.parent, 0, 0)
    # tmp_path lies under /tmp, which anyone may write (sticky or not: the program is refused).
    why = why_others_can_change(program)
    assert why.endswith("can be written by others than root") and "/tmp" in why, why
    link = tmp_path / "env"
    link.symlink_to("/usr/bin/env")
    assert why_others_can_change(link).endswith("can be written by others than root")
    program.chmod(0o644)
    assert why_others_can_change(program) == f"{program} is no executable file"
