"""Build dist/holodesk_<version>_amd64.deb: a frozen holodesk in /opt/holodesk (`make package`).

Steps, each printed as it starts:

1. a build environment (build/package/venv) with holodesk's runtime dependencies only, plus
   PyInstaller (packaging/requirements-build.txt); the developer tools never go in, above all
   keyrings.alt, whose plain-file "keyring" would otherwise ship in the bundle;
2. PyInstaller with packaging/holodesk.spec: a onedir bundle, the same `ui.main:main` as the
   `holodesk` console script (CLI and desktop app in one binary);
3. the package tree: /opt/holodesk, the /usr/bin/holodesk symlink, the desktop entry, the
   icons under /usr/share/icons/hicolor, the AppStream metadata, the maintainer scripts;
4. ``Depends``: ldd over every ELF file of the bundle finds the system libraries it loads,
   ``dpkg -S`` names their packages; the libraries loaded by name at run time (ldd cannot see
   them) are listed in ``DLOPENED`` below;
5. dpkg-deb (zstd, see :data:`COMPRESSION`), into ``dist/…deb.part``, renamed when whole: a
   .deb in dist/ is always a finished one.

Every step is printed as it starts, a step silent for a few seconds says it is still at work
(scripts/heartbeat.py), and the total time is printed at the end.

The build must run on the oldest distribution the package supports (Debian 12): the bundle
needs a glibc at least as new as the build's, which ``Depends: libc6 (>= …)`` states.
Options: ``--skip-freeze`` reuses the last bundle (build/package/dist/holodesk) to rebuild the
package alone; ``--require-validators`` (`make package-check`) makes a missing validator of the
desktop entry or the AppStream file an error instead of a warning.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import heartbeat  # noqa: E402  (scripts/heartbeat.py: no silent step)

BUILD = ROOT / "build" / "package"
VENV = BUILD / "venv"
BUNDLE = BUILD / "dist" / "holodesk"
STAGE = BUILD / "root"
DIST = ROOT / "dist"
PREFIX = "/opt/holodesk"
ICON_SIZES = (16, 32, 48, 64, 128, 256)

#: Packages for libraries loaded by name at run time, which ldd cannot see: Qt loads
#: libdbus-1 with dlopen; mss finds libX11/libXrandr/libXfixes and the xcb libraries through
#: ctypes; control/clipboard.py runs xclip (or xsel) to save and restore the clipboard around a
#: paste of text the keyboard cannot type; Qt draws no text without one font.
DLOPENED = (
    "libdbus-1-3",
    "libx11-6", "libxfixes3", "libxrandr2",
    "libxcb1", "libxcb-randr0", "libxcb-render0", "libxcb-shm0", "libxcb-xfixes0",
    "libegl1", "libgl1",
    "xclip | xsel",
    "fonts-dejavu-core | fonts-freefont-ttf | fonts-liberation2",
)
#: Not needed to run: `holodesk serve --install` makes vLLM's environment from the system
#: python3 (and says to install python3-venv where it is missing).
RECOMMENDS = ("python3-venv", "ca-certificates")
#: A keyring daemon keeps the API key. A desktop that has one (GNOME, KDE) already runs it; on a
#: machine without one, recommending it pulled a desktop's keyring stack in (gnome-keyring:
#: systemd, GTK, dconf; 169 packages, 578 MB with their recommends) for a key that
#: HOLODESK_API_KEY gives as well, and that a local model server does not need at all.
SUGGESTS = ("gnome-keyring | kwalletmanager | keepassxc",)
#: Packages the bundle's own copies make unnecessary, or that every system has (Essential).
NOT_DEPENDED = {"libc6", "libgcc-s1", "libstdc++6", "libc-bin", "zlib1g", "libcrypt1"}


def say(text: str) -> None:
    print(f"==> {text}", flush=True)


def run(argv: Sequence[str], what: str, *, cwd: Path | None = None) -> None:
    """``argv`` with its output shown as it comes and a heartbeat while it is silent."""
    status = heartbeat.run(argv, what, cwd=cwd)
    if status != 0:
        raise fail(f"{what} failed (`{' '.join(map(str, argv))}` exited with {status}; "
                   "its output is above)")


def shown(path: Path) -> Path:
    """``path`` as printed: from the repository's root when it is inside it."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def fail(text: str) -> SystemExit:
    return SystemExit(f"make package: {text}")


# ------------------------------------------------------------------------------ freeze


def ensure_venv(python: str) -> Path:
    """The build environment: holodesk (not editable) and PyInstaller; its Python's path."""
    py = VENV / "bin" / "python"
    shared = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_config_var('Py_ENABLE_SHARED'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    if shared != "1":
        raise fail(f"{python} was built without a shared libpython, which PyInstaller needs. "
                   "Use Debian's python3 (PYTHON=/usr/bin/python3) or rebuild yours with "
                   "--enable-shared (pyenv: PYTHON_CONFIGURE_OPTS=--enable-shared).")
    marker = VENV / "holodesk-build-python"
    if py.exists() and (not marker.exists() or marker.read_text() != python):
        say(f"the build environment was made from another Python: making it anew from {python}")
        shutil.rmtree(VENV)
    if not py.exists():
        say(f"build environment {shown(VENV)} (from {python})")
        # The pip venv brings is enough (scripts/install.sh says why no upgrade).
        run([python, "-m", "venv", str(VENV)], "creating the build environment")
        marker.write_text(python)
    say("installing holodesk's runtime dependencies and PyInstaller into it")
    # Not editable: the bundle must hold the package as pip installs it, with its metadata
    # (the version comes from there). No --quiet: pip's lines are the progress.
    run([str(py), "-m", "pip", "install", "--upgrade", str(ROOT),
         "-r", str(ROOT / "packaging" / "requirements-build.txt")],
        "installing into the build environment (pip)")
    leaked = subprocess.run([str(py), "-c", "import keyrings.alt"], capture_output=True)
    if leaked.returncode == 0:
        raise fail(f"keyrings.alt is installed in {VENV}: its plain-file backend must never "
                   "ship. Remove the folder and run make package again.")
    return py


def freeze(py: Path) -> None:
    say("freezing with PyInstaller (a minute or two)")
    started = time.monotonic()
    run([str(py), "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(BUNDLE.parent), "--workpath", str(BUILD / "work"),
         str(ROOT / "packaging" / "holodesk.spec")], "freezing (PyInstaller)", cwd=ROOT)
    say(f"frozen in {time.monotonic() - started:.0f} s: {shown(BUNDLE)}")


#: Modules that must never be in the bundle: plain-file "keyrings" (the API key would be stored
#: unencrypted) and the developer tools.
FORBIDDEN_MODULES = ("keyrings", "pytest", "_pytest", "hypothesis", "mypy", "tests")


def check_contents() -> None:
    """Refuse a bundle holding a :data:`FORBIDDEN_MODULES` module (read from PyInstaller's table
    of the frozen modules, whatever the spec's excludes say)."""
    toc = (BUILD / "work" / "holodesk" / "PYZ-00.toc").read_text(encoding="utf-8")
    names = set(re.findall(r"\(\s*'([\w.]+)'", toc))
    bad = sorted(n for n in names if n.split(".")[0] in FORBIDDEN_MODULES)
    if bad:
        raise fail(f"the bundle holds modules that must never ship: {', '.join(bad[:10])}. "
                   f"Remove them from {VENV} (or add them to the spec's excludes).")


def strip_interpreter(bundle: Path) -> None:
    """Strip debug symbols from libpython and its extension modules (a self-built Python
    carries them: 23 MB of libpython's 27). Only these: the wheels' libraries are stripped
    already, and stripping one auditwheel patched breaks it."""
    internal = bundle / "_internal"
    targets = sorted([*internal.glob("libpython3*.so*"),
                      *internal.glob("python3*/lib-dynload/*.so")])
    targets = [t for t in targets if t.is_file() and not t.is_symlink()]
    if targets and shutil.which("strip"):
        say(f"stripping the interpreter ({len(targets)} files)")
        run(["strip", "--strip-unneeded", *map(str, targets)], "stripping the interpreter")


def version_of(py: Path) -> str:
    """The version holodesk's metadata says (the one place it is written: pyproject.toml)."""
    out = subprocess.run(
        [str(py), "-c", "import importlib.metadata as m; print(m.version('holodesk'))"],
        capture_output=True, text=True, check=True,
    )
    return out.stdout.strip()


# ------------------------------------------------------------------------------ depends


def elf_files(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    found.append(path)
    return found


_LDD_LINE = re.compile(r"^\s*(\S+)\s*=>\s*(\S+)?")
_NEEDED = re.compile(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]")


def needed(elf: Path) -> set[str]:
    """The libraries ``elf`` links to directly (its DT_NEEDED entries)."""
    out = subprocess.run(["readelf", "-d", str(elf)], capture_output=True, text=True)
    return set(_NEEDED.findall(out.stdout))


def system_libraries(bundle: Path) -> set[Path]:
    """Every library outside the bundle that a file of the bundle links to directly.

    Direct links only (as dpkg-shlibdeps does): a library's own dependencies come with its
    package. ldd resolves the names the way the loader will.
    """
    inside = {p.name for p in bundle.rglob("*")}
    # The bundle's libraries resolve into the bundle, as the bootloader arranges at run time.
    lib_path = os.pathsep.join(sorted({str(p.parent) for p in bundle.rglob("*.so*")}))
    env = {**os.environ, "LD_LIBRARY_PATH": lib_path}
    found: set[Path] = set()
    missing: set[str] = set()
    elves = elf_files(bundle)
    done: list[Path] = []
    with heartbeat.still("finding the system libraries (ldd)",
                         detail=lambda: f"{len(done)} of {len(elves)} files"):
        for elf in elves:
            direct = needed(elf)
            out = subprocess.run(["ldd", str(elf)], capture_output=True, text=True, env=env)
            for line in out.stdout.splitlines():
                match = _LDD_LINE.match(line)
                if not match or match.group(1) not in direct:
                    continue
                name, target = match.group(1), match.group(2)
                if target in (None, "not") or "not found" in line:
                    if name not in inside:
                        missing.add(f"{name} (needed by {elf.relative_to(bundle)})")
                    continue
                resolved = Path(target)
                if bundle not in resolved.parents:
                    found.add(resolved)
            done.append(elf)
    if missing:
        raise fail("libraries neither in the bundle nor on this machine: "
                   + ", ".join(sorted(missing))
                   + ". Install them here (scripts/sysdeps.sh lists Qt's) and build again.")
    return found


def package_of(library: Path) -> str:
    """The Debian package that owns ``library`` (merged /usr: either spelling)."""
    real = library.resolve()
    candidates = [library, real]
    for path in (library, real):
        text = str(path)
        if text.startswith("/usr/"):
            candidates.append(Path(text[4:]))
        else:
            candidates.append(Path("/usr" + text))
    for candidate in candidates:
        out = subprocess.run(["dpkg", "-S", str(candidate)], capture_output=True, text=True)
        if out.returncode == 0:
            return out.stdout.split(":", 1)[0].strip()
    raise fail(f"no Debian package owns {library}; the bundle cannot depend on it. "
               "Install the library from a Debian package and build again.")


def glibc_version() -> str:
    return platform.libc_ver()[1] or os.confstr("CS_GNU_LIBC_VERSION").split()[-1]


def depends(bundle: Path) -> list[str]:
    libraries = system_libraries(bundle)
    with heartbeat.still("naming the libraries' packages (dpkg -S)"):
        packages = {package_of(lib) for lib in libraries}
    packages -= NOT_DEPENDED
    listed = sorted(packages) + [p for p in DLOPENED if p not in packages]
    return [f"libc6 (>= {glibc_version()})", *listed]


# ------------------------------------------------------------------------------ the tree


POSTRM = """#!/bin/sh
# holodesk keeps nothing of a person's in /opt: settings, automations and the action log live
# in each user's home, so an upgrade keeps them and a removal leaves them. A purge cannot
# delete other users' files; it says where they are.
set -e
if [ "$1" = "purge" ]; then
    cat <<'EOF'
holodesk is removed. Each user's own holodesk files are left in place; to delete them, each
user runs:
    rm -rf ~/.config/holodesk ~/.local/share/holodesk ~/.local/state/holodesk \\
        ~/.config/autostart/holodesk.desktop
(settings; the action log, screenshots and automations; logs; start at login). The API key
is in the desktop keyring under "holodesk" (Passwords and Keys, or KWallet).
EOF
fi
exit 0
"""


def check_metainfo(version: str) -> Path:
    metainfo = ROOT / "packaging" / "linux" / "io.github.holodesk.metainfo.xml"
    if f'<release version="{version}"' not in metainfo.read_text(encoding="utf-8"):
        raise fail(f"{shown(metainfo)} has no <release version=\"{version}\">: "
                   "add one (with its date) for this version.")
    return metainfo


#: The validators of the desktop entry and the AppStream file, and the package that brings each.
VALIDATORS = (("desktop-file-validate", "desktop-file-utils"), ("appstreamcli", "appstream"))


def missing_validators() -> list[tuple[str, str]]:
    return [(tool, package) for tool, package in VALIDATORS if shutil.which(tool) is None]


def check_validators(required: bool) -> None:
    """Before anything is built: a missing validator is an error when ``required`` (`make
    package-check`), else a warning that says what is left unchecked and how to check it."""
    missing = missing_validators()
    if not missing:
        return
    tools = " and ".join(tool for tool, _ in missing)
    line = f"sudo apt-get install {' '.join(package for _, package in missing)}"
    if required:
        raise fail(f"{tools} missing: the desktop entry and the AppStream file cannot be "
                   f"validated. Install with: {line}")
    print(f"WARNING: {tools} missing: the package is built with its desktop entry and "
          f"AppStream file unvalidated (make package-check refuses that). Install with: {line}",
          flush=True)


def validate_metadata(metainfo: Path) -> None:
    """The desktop entry and the AppStream file, checked by their tools (desktop-file-utils,
    appstream): a broken one is silently ignored by software centres. A tool that is missing
    was reported by :func:`check_validators` before the build."""
    checks = [("desktop-file-validate", ROOT / "packaging" / "linux" / "holodesk.desktop", []),
              ("appstreamcli", metainfo, ["validate", "--no-net"])]
    for tool, path, args in checks:
        if shutil.which(tool) is None:
            continue
        say(f"validating {path.name} ({tool})")
        done = subprocess.run([tool, *args, str(path)], capture_output=True, text=True)
        if done.returncode != 0:
            raise fail(f"{tool} finds {shown(path)} invalid:\n"
                       f"{done.stdout}{done.stderr}")


def copy(src: Path, dest: Path, mode: int = 0o644) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    dest.chmod(mode)


def stage(version: str, deps: Sequence[str], metainfo: Path) -> Path:
    """The package's file tree under build/package/root."""
    say(f"the package's tree: {shown(STAGE)}")
    with heartbeat.still("copying the bundle into the package's tree",
                         detail=lambda: f"{_megabytes(STAGE)} copied"):
        return _stage(version, deps, metainfo)


def _stage(version: str, deps: Sequence[str], metainfo: Path) -> Path:
    if STAGE.exists():
        shutil.rmtree(STAGE)
    opt = STAGE / PREFIX.lstrip("/")
    shutil.copytree(BUNDLE, opt, symlinks=True)
    for path in opt.rglob("*"):
        if path.is_file() and not path.is_symlink():
            # Files as a package ships them: root-owned (dpkg-deb --root-owner-group),
            # readable by all, executables executable, nothing group- or world-writable.
            path.chmod(0o755 if os.access(path, os.X_OK) else 0o644)
    (STAGE / "usr" / "bin").mkdir(parents=True)
    # A symlink: the bootloader finds _internal/ beside the real binary (/proc/self/exe).
    (STAGE / "usr" / "bin" / "holodesk").symlink_to(f"{PREFIX}/holodesk")
    share = STAGE / "usr" / "share"
    copy(ROOT / "packaging" / "linux" / "holodesk.desktop",
         share / "applications" / "holodesk.desktop")
    icons = ROOT / "resources" / "icons"
    for size in ICON_SIZES:
        name = f"{size}x{size}"
        copy(icons / "hicolor" / name / "apps" / "holodesk.png",
             share / "icons" / "hicolor" / name / "apps" / "holodesk.png")
    copy(icons / "holodesk.svg", share / "icons" / "hicolor" / "scalable" / "apps" /
         "holodesk.svg")
    copy(metainfo, share / "metainfo" / metainfo.name)
    doc = share / "doc" / "holodesk"
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        "Upstream-Name: holodesk\n\nFiles: *\nLicense: Apache-2.0\n"
        " On Debian systems the full text is in /usr/share/common-licenses/Apache-2.0.\n"
        " /opt/holodesk/_internal bundles Python, Qt (PySide6, LGPL-3.0) and the Python\n"
        " packages holodesk depends on, each under its own licence (their metadata is in\n"
        " /opt/holodesk/_internal/*.dist-info).\n"
    )
    debian = STAGE / "DEBIAN"
    debian.mkdir()
    size_kb = sum(p.lstat().st_size for p in STAGE.rglob("*") if not p.is_dir()) // 1024
    (debian / "control").write_text(
        "Package: holodesk\n"
        f"Version: {version}\n"
        "Architecture: amd64\n"
        "Maintainer: holodesk maintainers <holodesk@users.noreply.github.com>\n"
        f"Installed-Size: {size_kb}\n"
        f"Depends: {', '.join(deps)}\n"
        f"Recommends: {', '.join(RECOMMENDS)}\n"
        f"Suggests: {', '.join(SUGGESTS)}\n"
        "Section: utils\n"
        "Priority: optional\n"
        "Description: computer-use assistant that asks before risky steps\n"
        " Type a task; holodesk looks at the screen and works the mouse and keyboard\n"
        " until it is done, driven by Holotron-12B served by vLLM on your own GPU.\n"
        " Risky actions wait for confirmation, every action is logged, and a global\n"
        " hotkey stops a run at once. Needs an X11 session.\n"
    )
    postrm = debian / "postrm"
    postrm.write_text(POSTRM)
    postrm.chmod(0o755)
    return STAGE


def _megabytes(folder: Path) -> str:
    """What ``folder`` holds so far, for a heartbeat (it may change while this counts)."""
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            total += path.lstat().st_size
    return f"{total / 1e6:.0f} MB"


#: dpkg-deb's compression: zstd at level 9 takes 2 s where dpkg's default xz took 1.5 to 6
#: minutes on two shared cores, for a file 11 MB larger (68 MB against 57; level 3 saves one more
#: second for 6 MB more). dpkg reads zstd since 1.21.18: Debian 12 has 1.21.22, Ubuntu 24.04
#: 1.22.6 (Ubuntu's own packages are zstd). packaging/README.md has every option measured.
COMPRESSION = ("-Zzstd", "-z9")


def build_deb(version: str) -> Path:
    """dpkg-deb into ``dist/<name>.part``, renamed when whole: a .deb in dist/ is a finished
    one, never one being written (a failed build leaves no part behind)."""
    DIST.mkdir(exist_ok=True)
    out = DIST / f"holodesk_{version}_amd64.deb"
    part = out.with_name(out.name + ".part")
    say(f"dpkg-deb ({' '.join(COMPRESSION)}): {shown(out)}")
    try:
        # dpkg-deb compresses into a file of its own and writes the package at the end: the
        # heartbeat can only say how long so far.
        run(["dpkg-deb", "--root-owner-group", *COMPRESSION, "--build", str(STAGE), str(part)],
            "compressing the package (dpkg-deb)")
        part.replace(out)
    finally:
        part.unlink(missing_ok=True)
    return out


def minutes(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60} min {whole % 60:02d} s" if whole >= 60 else f"{whole} s"


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable,
                        help="the Python to freeze (needs a shared libpython)")
    parser.add_argument("--skip-freeze", action="store_true",
                        help="reuse build/package/dist/holodesk")
    parser.add_argument("--require-validators", action="store_true",
                        help="a missing desktop-file-validate or appstreamcli is an error")
    args = parser.parse_args(list(argv) if argv is not None else None)
    started = time.monotonic()
    if not sys.platform.startswith("linux") or shutil.which("dpkg-deb") is None:
        raise fail("the .deb is built on Debian or Ubuntu (dpkg-deb); see packaging/README.md "
                   "for Windows and macOS")
    check_validators(args.require_validators)
    py = ensure_venv(args.python) if not args.skip_freeze else VENV / "bin" / "python"
    if not args.skip_freeze:
        freeze(py)
        check_contents()
        strip_interpreter(BUNDLE)
    if not (BUNDLE / "holodesk").is_file():
        raise fail(f"no bundle at {BUNDLE}: run without --skip-freeze")
    version = version_of(py)
    metainfo = check_metainfo(version)
    validate_metadata(metainfo)
    say("finding the system libraries the bundle needs (ldd, dpkg -S)")
    deps = depends(BUNDLE)
    print("    Depends:", ", ".join(deps))
    stage(version, deps, metainfo)
    out = build_deb(version)
    installed = sum(p.lstat().st_size for p in STAGE.rglob("*") if not p.is_dir())
    say(f"done in {minutes(time.monotonic() - started)}: {shown(out)} "
        f"({out.stat().st_size / 1e6:.0f} MB, {installed / 1e6:.0f} MB installed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
