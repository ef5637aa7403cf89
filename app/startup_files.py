"""The person's start-up files found by mechanism: where the session, the shells and the
programs they start look for code, as those programs themselves define it, under the home.

:mod:`app.protected` lists the fixed names (``~/.bashrc``, ``~/.config/autostart``...). What
a session really reads depends on its environment and on the files themselves, so this adds:

* every folder on ``PATH`` that lies in the home (``~/.cargo/bin``, ``~/go/bin``, a pyenv's
  shims): a ``sudo`` there is run, and handed the password, instead of the system's;
* every folder of user units that systemd reads under the home (``systemd-analyze --user
  unit-paths``, the system's own program; without it, the same list as systemd documents it);
* the D-Bus session service folders and the ``applications`` folder of every data folder
  (``$XDG_DATA_HOME``, ``$XDG_DATA_DIRS``) under the home, and the ``autostart`` folder of
  every config folder (``$XDG_CONFIG_DIRS``) under it: flatpak puts its exports there;
* Python's user site folder (its ``.pth`` files run at every ``python3`` start) for this
  Python, for the ``python3`` on ``PATH`` and the system's, and every one that exists;
* the files the shell start-up files ``source`` (or ``.``) by a literal path, as far as a
  simple reading of them tells, and the ``ZDOTDIR`` a ``.zshenv`` sets.

Nothing here runs a program the person can change: the versions of Python come from the names
of the files, the unit folders from the system's ``systemd-analyze`` (root's folders only).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from control.system_programs import find_system_program

log = logging.getLogger(__name__)

#: The shell start-up files whose ``source`` lines are read (under the home; the zsh ones in
#: ZDOTDIR too).
SHELL_FILES = (
    ".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_logout", ".bash_aliases",
    ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
    ".xprofile", ".xsessionrc", ".xsession", ".xinitrc",
)  # fmt: skip
#: What zsh reads in ZDOTDIR.
ZSH_FILES = (".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout")
#: Where a system-wide zsh start-up may set ZDOTDIR for everyone (Debian's, then zsh's).
SYSTEM_ZSHENV = (Path("/etc/zsh/zshenv"), Path("/etc/zshenv"))
#: How much of the shell files is read: files, bytes of each, levels of ``source``.
MAX_SOURCED_FILES = 64
MAX_FILE_BYTES = 256 * 1024
MAX_SOURCE_DEPTH = 4
#: How long the system's systemd-analyze may take.
SYSTEMD_TIMEOUT_S = 5.0

_SEPARATORS = re.compile(r"&&|\|\||[;&|\n]")
_KEYWORDS = ("then", "do", "else", "elif", "!", "command", "builtin", "{", "(")
_PYTHON_NAME = re.compile(r"python(\d+)\.(\d+)t?$")
_ZDOTDIR = re.compile(r"^\s*(?:export\s+)?ZDOTDIR=(\S+)", re.MULTILINE)
_GLOB = re.compile(r"[*?\[]")

# systemd-analyze's answer for an environment: it does not change while holodesk runs.
_unit_paths_cache: dict[tuple[str, ...], list[Path]] = {}


def discovered(home: Path, environ: Mapping[str, str]) -> list[Path]:
    """Every start-up file and folder found by mechanism under ``home`` (see the module doc),
    each once, in a stable order. Never raises: what cannot be read is left out."""
    data = _xdg_homes("XDG_DATA_HOME", ".local/share", home, environ)
    data_dirs = [d for d in _dirs(environ, "XDG_DATA_DIRS") if _inside(d, home)]
    config_dirs = [d for d in _dirs(environ, "XDG_CONFIG_DIRS") if _inside(d, home)]
    found: list[Path] = []
    found += path_folders(home, environ)
    found += unit_folders(home, environ)
    found += [d / "dbus-1" / "services" for d in (*data, *data_dirs)]
    found += [d / "applications" for d in (*data, *data_dirs)]
    found += [d / "autostart" for d in config_dirs]
    found += python_user_sites(home, environ)
    found += sourced_files(home, environ)
    return [p for p in dict.fromkeys(found) if _inside(p, home)]


def _inside(path: Path, home: Path) -> bool:
    """Under the home folder, and not the home folder itself."""
    return path != home and home in path.parents


def _xdg_homes(name: str, default: str, home: Path, environ: Mapping[str, str]) -> list[Path]:
    folders = [home / default]
    value = environ.get(name, "")
    if value and os.path.isabs(value) and Path(value) != folders[0]:
        folders.insert(0, Path(value))
    return folders


def _dirs(environ: Mapping[str, str], name: str) -> list[Path]:
    return [Path(os.path.normpath(p)) for p in environ.get(name, "").split(":")
            if p and os.path.isabs(p)]


# -- PATH ---------------------------------------------------------------------------------


def path_folders(home: Path, environ: Mapping[str, str]) -> list[Path]:
    """The folders on ``PATH`` inside the home folder (the person can write them)."""
    return [p for p in _dirs(environ, "PATH") if _inside(p, home)]


# -- systemd ------------------------------------------------------------------------------


def unit_folders(home: Path, environ: Mapping[str, str]) -> list[Path]:
    """The folders of user units systemd reads under the home: as systemd documents them
    (systemd.unit(5), "User Unit Search Path"), and as the system's ``systemd-analyze --user
    unit-paths`` says for this environment when it is installed."""
    config = _xdg_homes("XDG_CONFIG_HOME", ".config", home, environ)
    data = _xdg_homes("XDG_DATA_HOME", ".local/share", home, environ)
    documented = [c / "systemd" / name for c in config for name in ("user.control", "user")]
    documented += [d / "systemd" / "user" for d in
                   (*_dirs(environ, "XDG_CONFIG_DIRS"), *data, *_dirs(environ, "XDG_DATA_DIRS"))]
    said = _systemd_unit_paths(environ)
    return [p for p in dict.fromkeys([*documented, *said]) if _inside(p, home)]


def _systemd_unit_paths(environ: Mapping[str, str]) -> list[Path]:
    names = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
             "XDG_RUNTIME_DIR", "SYSTEMD_UNIT_PATH")
    key = tuple(environ.get(n, "") for n in names)
    if key in _unit_paths_cache:
        return _unit_paths_cache[key]
    program = find_system_program("systemd-analyze")
    folders: list[Path] = []
    if program is not None:
        env = {n: v for n, v in zip(names, key, strict=True) if v}
        env["PATH"] = "/usr/bin:/bin"
        try:
            done = subprocess.run([str(program), "--user", "unit-paths"], env=env,
                                  capture_output=True, text=True, timeout=SYSTEMD_TIMEOUT_S,
                                  check=False)
            if done.returncode == 0:
                folders = [Path(line) for line in done.stdout.splitlines()
                           if os.path.isabs(line)]
            else:
                log.info("systemd-analyze --user unit-paths failed: %s", done.stderr.strip())
        except (OSError, subprocess.SubprocessError) as e:
            log.info("systemd-analyze --user unit-paths could not run: %s", e)
    _unit_paths_cache[key] = folders
    return folders


# -- Python -------------------------------------------------------------------------------


def python_user_sites(home: Path, environ: Mapping[str, str]) -> list[Path]:
    """Python's user site folders: ``<user base>/lib/pythonX.Y/site-packages`` for this
    Python, for the ``python3`` on ``PATH`` and the system's (their versions read from the
    names their links lead to, never by running them), and every one that exists."""
    if not sys.platform.startswith("linux"):
        return []
    base = environ.get("PYTHONUSERBASE", "")
    user_base = Path(base) if base and os.path.isabs(base) else home / ".local"
    versions = {f"{sys.version_info[0]}.{sys.version_info[1]}"}
    for python in (shutil.which("python3", path=environ.get("PATH", "")),
                   "/usr/bin/python3"):
        version = _version_by_name(python)
        if version:
            versions.add(version)
    lib = user_base / "lib"
    out = [lib / f"python{v}" / "site-packages" for v in sorted(versions)]
    with contextlib.suppress(OSError):
        out += sorted(p / "site-packages" for p in lib.iterdir()
                      if _PYTHON_NAME.match(p.name) and (p / "site-packages").is_dir())
    return list(dict.fromkeys(out))


def _version_by_name(program: str | None) -> str:
    """"3.12" for a ``python3`` that leads to ``python3.12``; "" when the name does not say."""
    if not program:
        return ""
    match = _PYTHON_NAME.search(os.path.basename(os.path.realpath(program)))
    return f"{match[1]}.{match[2]}" if match else ""


# -- what the shell files source ----------------------------------------------------------


def sourced_files(home: Path, environ: Mapping[str, str]) -> list[Path]:
    """What the shell start-up files ``source`` by a literal path (``. ~/.bash_aliases``,
    ``source "$HOME/.config/shell/env"``; a glob: its folder), as far as a simple reading
    tells, a few levels down; ``~/.bash_aliases`` and ``~/.bashrc.d`` always (Debian's and
    Fedora's default ``.bashrc`` read them); and zsh's files in the ZDOTDIR a ``.zshenv``
    sets."""
    zdotdirs = _zdotdirs(home, environ)
    found: list[Path] = [home / ".bash_aliases", home / ".bashrc.d"]
    found += [z / name for z in zdotdirs for name in ZSH_FILES]
    todo = [(home / name, 0) for name in SHELL_FILES]
    todo += [(z / name, 0) for z in zdotdirs for name in ZSH_FILES]
    read: set[Path] = set()
    while todo and len(read) < MAX_SOURCED_FILES:
        path, depth = todo.pop(0)
        if path in read:
            continue
        read.add(path)
        for sourced in _sources(_read(path), home, environ, zdotdirs):
            found.append(sourced)
            if depth + 1 < MAX_SOURCE_DEPTH:
                todo.append((sourced, depth + 1))
    return list(dict.fromkeys(found))


def _zdotdirs(home: Path, environ: Mapping[str, str]) -> list[Path]:
    """Where zsh reads its start-up files besides the home: ``$ZDOTDIR`` and what ``ZDOTDIR=``
    in ``~/.zshenv`` (or the system's zshenv) sets."""
    out: list[Path] = []
    if environ.get("ZDOTDIR", "") and os.path.isabs(environ["ZDOTDIR"]):
        out.append(Path(environ["ZDOTDIR"]))
    for zshenv in (*SYSTEM_ZSHENV, home / ".zshenv"):
        for value in _ZDOTDIR.findall(_read(zshenv)):
            path = _expand(value, home, environ, [])
            if path is not None:
                out.append(path)
    return [p for p in dict.fromkeys(out) if p != home]


def _read(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _sources(text: str, home: Path, environ: Mapping[str, str],
             zdotdirs: list[Path]) -> Iterator[Path]:
    """The paths ``text`` sources: commands ``.`` and ``source`` where a command starts (a
    line, or after ``;``, ``&&``, ``||``, ``then``, ``do``...), and the folders a ``for``
    loops over by a glob; comments left out."""
    for line in text.splitlines():
        line = _no_comment(line)
        for segment in _SEPARATORS.split(line):
            words = segment.split()
            while words and words[0] in _KEYWORDS:
                words = words[1:]
            if len(words) >= 2 and words[0] in (".", "source"):
                path = _expand(words[1], home, environ, zdotdirs)
                if path is not None:
                    yield path
            elif len(words) >= 4 and words[0] == "for" and words[2] == "in":
                # for rc in ~/.bashrc.d/*: a start-up file loops over a folder to source it.
                for word in words[3:]:
                    if _GLOB.search(word) and (path := _expand(word, home, environ,
                                                              zdotdirs)) is not None:
                        yield path


def _no_comment(line: str) -> str:
    """``line`` up to a ``#`` that starts a word (quotes are not followed: a rare ``#``
    inside one only hides what follows it)."""
    for index, char in enumerate(line):
        if char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index]
    return line


def _expand(word: str, home: Path, environ: Mapping[str, str],
            zdotdirs: Iterable[Path]) -> Path | None:
    """The path ``word`` names, with ``~``, ``$HOME``, ``$ZDOTDIR`` and the XDG variables
    (with or without a ``:-default``) expanded; a glob gives its folder. None when it names
    something else (another variable, a command's output)."""
    word = word.strip("'\"")
    config = environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    zdotdir = next(iter(zdotdirs), None)
    values = {"HOME": str(home), "XDG_CONFIG_HOME": config,
              "XDG_DATA_HOME": environ.get("XDG_DATA_HOME") or str(home / ".local/share"),
              "ZDOTDIR": str(zdotdir) if zdotdir is not None else ""}

    def variable(match: re.Match[str]) -> str:
        name, default = match["name"] or match["plain"], match["default"]
        value = values.get(name, "\0")
        if value == "\0":
            return value
        if not value and default is not None:
            return default
        return value

    pattern = (r"\$\{(?P<name>[A-Za-z_]+)(?::-(?P<default>[^}]*))?\}"
               r"|\$(?P<plain>[A-Za-z_]+)")
    for _ in range(3):  # a default may hold a variable: ${ZDOTDIR:-$HOME}
        word = re.sub(pattern, variable, word)
    if "\0" in word or "$" in word or "`" in word or not word:
        return None
    if word == "~" or word.startswith("~/"):
        word = str(home) + word[1:]
    elif word.startswith("~"):
        return None  # another user's home
    if _GLOB.search(word):
        word = os.path.dirname(_GLOB.split(word, maxsplit=1)[0]) or "."
    path = Path(word) if os.path.isabs(word) else home / word
    return Path(os.path.normpath(path))
