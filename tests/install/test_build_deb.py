"""packaging/build_deb.py (`make package`), the parts that need no freeze: the package is never
half-written under its own name, a missing validator is an error where it must be, and the
package asks for no desktop keyring stack. `make package-check` runs the whole build and the
package on a fresh Debian 12 (packaging/README.md)."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from tests.support import dpkg_deb_spy
from tests.support.build_scripts import BUILD_DEB, load
from tests.support.home import REPO_ROOT

#: The version the package carries (pyproject.toml's).
VERSION: str = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
    "project"]["version"]

#: Keyring daemons, and what they bring: not to be pulled in by a plain `apt install`.
KEYRING_STACK = ("gnome-keyring", "kwalletmanager", "keepassxc", "kwalletd", "seahorse")


@pytest.fixture
def build_deb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """build_deb.py with its folders under ``tmp_path`` and a tiny bundle to package."""
    module = load(BUILD_DEB)
    bundle = tmp_path / "bundle" / "holodesk"
    (bundle / "_internal").mkdir(parents=True)
    (bundle / "holodesk").write_text("#!/bin/sh\n", encoding="utf-8")
    (bundle / "holodesk").chmod(0o755)
    monkeypatch.setattr(module, "BUNDLE", bundle)
    monkeypatch.setattr(module, "STAGE", tmp_path / "root")
    monkeypatch.setattr(module, "DIST", tmp_path / "dist")
    return module


def control_fields(stage: Path) -> dict[str, str]:
    text = (stage / "DEBIAN" / "control").read_text(encoding="utf-8")
    return dict(line.split(": ", 1) for line in text.splitlines() if not line.startswith(" "))


def staged(build_deb: ModuleType) -> Path:
    return build_deb.stage(VERSION, ["libc6 (>= 2.36)"], build_deb.check_metainfo(VERSION))


def test_the_package_recommends_no_keyring_daemon_and_suggests_one(build_deb: ModuleType) -> None:
    fields = control_fields(staged(build_deb))
    for field in ("Depends", "Recommends"):
        assert not [k for k in KEYRING_STACK if k in fields.get(field, "")], fields[field]
    assert "gnome-keyring" in fields["Suggests"] and "kwalletmanager" in fields["Suggests"]
    assert "python3-venv" in fields["Recommends"]  # `holodesk serve --install` still works


def test_the_deb_is_written_under_a_temporary_name_and_renamed_whole(
    build_deb: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged(build_deb)
    record = dpkg_deb_spy.install(tmp_path / "spy")
    monkeypatch.setenv("PATH", f"{tmp_path / 'spy'}:{Path(shutil.which('dpkg-deb') or '').parent}"
                               ":/usr/bin:/bin")
    version = VERSION

    out = build_deb.build_deb(version)

    noted = dpkg_deb_spy.notes(record)
    written = Path(noted["argv"][-1])
    assert written.name == f"holodesk_{version}_amd64.deb.part"
    assert written.parent == tmp_path / "dist"
    # While dpkg-deb wrote, nothing in dist/ looked like a finished package.
    assert not [n for n in noted["folder_at_start"] if n.endswith(".deb")]
    assert sorted(p.name for p in (tmp_path / "dist").iterdir()) == [out.name]
    assert out.name == f"holodesk_{version}_amd64.deb"
    fields = subprocess.run(["dpkg-deb", "-f", str(out), "Package", "Version"],
                            capture_output=True, text=True, check=True).stdout
    assert fields == f"Package: holodesk\nVersion: {version}\n"
    members = subprocess.run(["ar", "t", str(out)], capture_output=True, text=True,
                             check=True).stdout.split()
    assert "data.tar.zst" in members  # the compression packaging/README.md chose


def test_a_failed_dpkg_deb_leaves_nothing_in_dist(
    build_deb: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged(build_deb)
    dpkg_deb_spy.install(tmp_path / "spy", fail=True)
    monkeypatch.setenv("PATH", f"{tmp_path / 'spy'}:/usr/bin:/bin")

    with pytest.raises(SystemExit, match="compressing the package"):
        build_deb.build_deb(VERSION)
    assert list((tmp_path / "dist").iterdir()) == []


def test_a_missing_validator_stops_package_check_before_anything_is_built(
    build_deb: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    only_dpkg = tmp_path / "bin"
    only_dpkg.mkdir()
    (only_dpkg / "dpkg-deb").symlink_to(shutil.which("dpkg-deb") or "/usr/bin/dpkg-deb")
    monkeypatch.setenv("PATH", str(only_dpkg))
    venv = tmp_path / "venv"
    monkeypatch.setattr(build_deb, "VENV", venv)

    with pytest.raises(SystemExit) as stopped:
        build_deb.main(["--require-validators"])
    message = str(stopped.value)
    assert "desktop-file-validate and appstreamcli missing" in message
    assert "sudo apt-get install desktop-file-utils appstream" in message
    assert not venv.exists()  # refused before the build environment was made

    # `make package` alone builds on, and says what it leaves unchecked and how to check it.
    build_deb.check_validators(required=False)
    warned = capsys.readouterr().out
    assert warned.startswith("WARNING: desktop-file-validate and appstreamcli missing")
    assert "make package-check refuses that" in warned
    assert "sudo apt-get install desktop-file-utils appstream" in warned


def test_present_validators_are_run_and_a_broken_desktop_entry_fails(
    build_deb: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("desktop-file-validate", "appstreamcli"):  # stand-ins: one finds an error
        verdict = "echo 'holodesk.desktop: error: bad key' >&2; exit 1" \
            if tool == "desktop-file-validate" else "exit 0"
        (tools / tool).write_text(f"#!/bin/sh\n{verdict}\n", encoding="utf-8")
        (tools / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:/usr/bin:/bin")

    build_deb.check_validators(required=True)  # both there: no complaint
    metainfo = build_deb.check_metainfo(VERSION)
    with pytest.raises(SystemExit, match="bad key"):
        build_deb.validate_metadata(metainfo)
