"""holodesk's protected files: what a run's tripwire watches, and what changed between runs.

A run must never change how the person's session starts, what holodesk itself will do next
time, or how the person logs in elsewhere. :func:`protected_entries` lists those paths;
:func:`start_tripwire` watches them through a run (:mod:`control.tripwire`: a change stops the
run and is put back).

* holodesk's own: the whole config folder (settings, automations, and whatever else is kept
  there), the saved steps (``trajectories``), this record of the files and the note of its own
  writes; and, judged by what holodesk never does during a run, the log folder and the action
  log (the database and the run folders may grow; one removed, replaced or made shorter
  trips).
* the shell's and the session's start-up files, the folders that start programs at login or
  put programs first on ``PATH`` (by name here, and as the session finds them:
  :mod:`app.startup_files`), ``~/.ssh`` and ``~/.gnupg``, the crontab, and the
  ``protected_paths`` setting; the person's start-up files and keys first (the memory kept to
  put files back goes to them first).
* holodesk's own model server and the model's files (:func:`server_paths`), by their stamps
  only (too large to keep): a change stops the run, nothing is put back.

What a protected link leads to is protected too (the tripwire follows it). The copies of what
a trip changed are kept in ``data_dir()/kept``, never beside the file.

Between runs nothing watches: a program a run started may change a file after the run ended.
So every run's end records a digest of each protected file as the tripwire left it
(:func:`close_tripwire`: what it compared and put back, never the disk as it is by then; what
changed after its last look is told then), the desktop app's start as they are, in
``data_dir()/protected.json`` (the *manifest*), and the next run (and the next start of the
app) reports what changed since, once: :func:`changed_since_last_run`. holodesk's own writes
between runs (a setting saved, an automation edited) are noted as they happen, with what they
left (:func:`app.paths.own_write`), and a change is not reported where the file is still
exactly that: only other changes are. The action log, the log folder and the model server's
files are left out of the record: holodesk (or the person) writes them between runs too.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app import paths
from app.settings import Settings
from app.startup_files import discovered
from control import tripwire
from control.crontab import find_crontab
from control.tripwire import (
    ChangeKind,
    Guard,
    Node,
    NodeKind,
    Protected,
    Scan,
    Trip,
    Tripwire,
    compare,
    fingerprint,
    scan,
)

log = logging.getLogger(__name__)

MANIFEST_FILE = "protected.json"
MANIFEST_VERSION = 2
#: Under the data folder: where the copies of what a trip changed are kept.
KEPT_DIR = "kept"
CRONTAB = "crontab"

#: In the home folder, read by a shell, the X session or PAM at every start.
HOME_FILES = (
    ".bashrc", ".profile", ".bash_profile", ".bash_login", ".bash_logout",
    ".zshrc", ".zshenv", ".zprofile", ".zlogin",
    ".xprofile", ".xsessionrc", ".xsession", ".xinitrc", ".Xresources", ".Xdefaults",
    ".inputrc",  # readline macros run commands
    ".pam_environment",
    # Other shells a person may log in with: tcsh/csh, ksh/mksh, xonsh.
    ".tcshrc", ".cshrc", ".login", ".logout", ".kshrc", ".mkshrc", ".xonshrc",
)  # fmt: skip
#: In the home folder: programs first on PATH (Debian's ~/.profile puts them there: a `sudo`
#: there would be asked for the password), keys, and what trusts them.
HOME_FOLDERS = (".local/bin", "bin", ".ssh", ".gnupg")
#: Under the XDG config folder: the start-up of fish, nushell, xonsh, elvish and PowerShell,
#: the session's environment
#: (HOLODESK_* and PATH for every program; Plasma's env scripts are sourced by its shell at
#: login, its shutdown scripts run at logout), programs started at login, user services, and
#: the keyring library's config (it names Python to import: app/secrets.py never reads it, other
#: programs do).
CONFIG_FOLDERS = ("fish", "nushell", "xonsh", "elvish", "powershell", "environment.d",
                  "plasma-workspace/env", "plasma-workspace/shutdown", "autostart",
                  "systemd/user", "python_keyring")
#: Under the XDG data folder: desktop entries, which menus and file types start; the keyring
#: library's data folder (keyrings.alt's files).
DATA_FOLDERS = ("applications", "python_keyring")

#: Also read at every start, by name (what is found by mechanism, the PATH folders, what the
#: shell files source, user units and services wherever they are read: app/startup_files.py):
#: im-config's ~/.xinputrc at X login, startx's ~/.xserverrc, zsh's ~/.zlogout.
SESSION_HOME_FILES = (".xinputrc", ".xserverrc", ".zlogout")
#: Under the XDG config folder: window and session managers that run what these hold at
#: login (openbox's autostart and environment, LXDE's lxsession autostart, KDE Plasma's env
#: and shutdown scripts and its older autostart-scripts, i3's, sway's, labwc's and
#: Hyprland's exec lines).
SESSION_CONFIG_FOLDERS = (
    "openbox", "lxsession", "plasma-workspace/env", "plasma-workspace/shutdown",
    "autostart-scripts", "i3", "sway", "labwc", "hypr",
)  # fmt: skip


def manifest_path() -> Path:
    """The record of the protected files between runs."""
    return paths.data_dir() / MANIFEST_FILE


def _xdg(name: str, default: str, home: Path, environ: Mapping[str, str]) -> list[Path]:
    """Where the XDG base folder ``name`` is: the variable's folder, and the default too when
    it differs (a session started without the variable reads the default)."""
    folders = [home / default]
    value = environ.get(name, "")
    if value and os.path.isabs(value) and Path(value) != folders[0]:
        folders.insert(0, Path(value))
    return folders


def startup_paths(home: Path | None = None,
                  environ: Mapping[str, str] | None = None) -> list[Path]:
    """The person's start-up files and folders, keys and PATH folders (not holodesk's own)."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or os.path.expanduser("~")) if home is None else home
    out = [home / name for name in HOME_FILES]
    zdotdir = env.get("ZDOTDIR", "")
    if zdotdir and os.path.isabs(zdotdir) and Path(zdotdir) != home:
        out += [Path(zdotdir) / n for n in (".zshrc", ".zshenv", ".zprofile", ".zlogin")]
    out += [home / name for name in HOME_FOLDERS]
    gnupg = env.get("GNUPGHOME", "")
    if gnupg and os.path.isabs(gnupg):
        out.append(Path(gnupg))
    for config in _xdg("XDG_CONFIG_HOME", ".config", home, env):
        out += [config / name for name in CONFIG_FOLDERS]
    for data in _xdg("XDG_DATA_HOME", ".local/share", home, env):
        out += [data / name for name in DATA_FOLDERS]
    out += [home / name for name in SESSION_HOME_FILES]
    for config in _xdg("XDG_CONFIG_HOME", ".config", home, env):
        out += [config / name for name in SESSION_CONFIG_FOLDERS]
    out += discovered(home, env)
    return list(dict.fromkeys(out))


def user_paths(settings: Settings) -> list[Path]:
    """The ``protected_paths`` setting, ``~`` expanded."""
    return [Path(os.path.expanduser(p)) for p in settings.protected_paths]


def _remembered(settings: Settings) -> list[Protected]:
    """What the manifest records: every protected path whose change holodesk never makes
    between runs except through :func:`app.paths.own_write`."""
    from app.trajectory import TRAJECTORIES_DIR

    whole = [paths.config_dir(), paths.data_dir() / TRAJECTORIES_DIR, *startup_paths(),
             *user_paths(settings)]
    return [Protected(p) for p in whole]


def server_paths(settings: Settings) -> list[Path]:
    """holodesk's own model server and the model's code: the environment ``holodesk serve
    --install`` makes (its ``bin/vllm`` is what ``holodesk serve`` and the app's "Start
    server" run), the environment of another ``vllm`` they would run in the home, and the
    served model's folder (the Hugging Face cache's, whose Python files vLLM imports with
    ``--trust-remote-code``; or the local folder ``serve_model`` names)."""
    from app.serving import serve_profile
    from app.vllm_env import managed_envs, managed_vllm
    from model.serving.capacity import hub_cache
    from model.serving.launcher import find_vllm

    home = Path(os.path.expanduser("~"))
    out = [env.root for env in managed_envs()]
    model = os.path.expanduser(settings.serve_model)
    out.append(Path(model) if os.path.isabs(model)
               else hub_cache() / ("models--" + model.replace("/", "--")))
    vllm = find_vllm(None, managed=managed_vllm(serve_profile(settings)))
    if vllm is not None:
        program = Path(os.path.abspath(vllm))
        env = program.parent.parent
        is_env = (env / "pyvenv.cfg").exists() or (env / "conda-meta").is_dir()
        out.append(env if is_env else program)
    return [p for p in dict.fromkeys(out) if p != home and home in p.parents]


def protected_entries(settings: Settings) -> list[Protected]:
    """Everything a run's tripwire watches (see the module doc)."""
    growing = [paths.log_dir(), paths.db_path(), paths.runs_dir()]
    entries = [*_remembered(settings), Protected(manifest_path()),
               Protected(paths.own_writes_path()),
               *(Protected(p, Guard.GROWING) for p in growing),
               *(Protected(p, Guard.IDENTITY) for p in server_paths(settings))]
    # The memory kept for putting files back goes to the entries in their order: the person's
    # start-up files and keys first, whatever fills holodesk's own folders before a run.
    first = set(startup_paths())
    return sorted(entries, key=lambda e: e.path not in first)


def start_tripwire(settings: Settings, on_trip: Callable[[Trip], None], *,
                   watch: bool = True) -> Tripwire:
    """Snapshot the protected set and watch it (``watch`` False: compare at :meth:`check`
    only). Never raises for what it cannot watch: see the tripwire's ``problems``."""
    crontab = find_crontab()
    wire = Tripwire(protected_entries(settings), on_trip,
                    extras=[crontab] if crontab is not None else [],
                    keep_dir=paths.data_dir() / KEPT_DIR, watch=watch)
    wire.start()
    return wire


# -- between runs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Noticed:
    """A protected file that changed since the last run ended."""

    path: str
    kind: ChangeKind

    def describe(self) -> str:
        return (f"{self.path} {self.kind.value} since the last holodesk run ended (if you did "
                "not change it, look at it)")


@dataclass
class _Manifest:
    roots: list[str]
    nodes: dict[Path, Node]
    crontab: str | None  # sha256 of `crontab -l`, "" for none; None: not known


def changed_since_last_run(settings: Settings) -> list[Noticed]:
    """The protected files that changed since the last run ended (or the app last started),
    then the record taken anew: each change is reported once. [] the first time, and when the
    files cannot be looked at (logged; never raises)."""
    try:
        return _changed_since_last_run(settings)
    except Exception:
        log.warning("could not compare the protected files with the last run's record",
                    exc_info=True)
        return []


def changed_message(noticed: Sequence[Noticed]) -> str:
    """All of ``noticed`` in one message (for a notification)."""
    what = "; ".join(f"{n.path} {n.kind.value}" for n in noticed)
    return (f"Protected files changed since the last holodesk run ended: {what}. If you did "
            "not change them, look at them.")


def _changed_since_last_run(settings: Settings) -> list[Noticed]:
    entries = _remembered(settings)
    with _own_writes() as own:
        old = _load()
        found = _scan(entries, old.nodes if old is not None else None)
        now = found.nodes
        crontab = _crontab_digest()
        noticed: list[Noticed] = []
        if old is not None:
            common = [p for p in found.roots if str(p) in old.roots]
            before = _within(old.nodes, common)
            after = _within(now, common)
            noticed = [Noticed(str(p), k) for p, k in compare(before, after)
                       if not _written_by_holodesk(p, now, own)]
            if old.crontab is not None and crontab is not None and old.crontab != crontab:
                kind = (ChangeKind.CREATED if not old.crontab else
                        ChangeKind.DELETED if not crontab else ChangeKind.MODIFIED)
                noticed.append(Noticed(CRONTAB, kind))
        _save(_Manifest([str(p) for p in found.roots], now, crontab))
    for note in noticed:
        log.warning("protected files: %s", note.describe())
    return noticed


def close_tripwire(settings: Settings, wire: Tripwire) -> list[Noticed]:
    """As a run ends: stop ``wire``, record the protected files as the run left them (what the
    tripwire compared and put back, never the disk as it is by then: a change after its last
    look is no baseline), and return what changed since that last look (nothing put it back:
    the run had ended; the next run reports it too). Never raises."""
    try:
        roots = [e.path for e in _remembered(settings)]
        try:
            found = wire.verified(roots)
            extras = wire.verified_extras()
            told = wire.unrestored
        finally:
            wire.close()
        if CRONTAB in extras:
            data = extras[CRONTAB]
            crontab: str | None = "" if data is None else hashlib.sha256(data).hexdigest()
        else:
            crontab = _crontab_digest()
        with _own_writes() as own:
            now = _scan([Protected(p) for p in found.roots], found.nodes)
            changed = [Noticed(str(p), k) for p, k in compare(found.nodes, _within(
                           now.nodes, found.roots))
                       if not _written_by_holodesk(p, now.nodes, own)
                       and not any(str(p) == t or str(p).startswith(f"{t}/") for t in told)]
            now_crontab = _crontab_digest() if CRONTAB in extras else None
            if crontab is not None and now_crontab is not None and crontab != now_crontab:
                changed.append(Noticed(CRONTAB, ChangeKind.MODIFIED))
            _save(_Manifest([str(p) for p in found.roots], found.nodes, crontab))
    except Exception:
        log.warning("could not record the protected files: the next run cannot tell what "
                    "changed since this one", exc_info=True)
        return []
    for note in changed:
        log.warning("protected files: %s changed after the run's last look", note.path)
    return changed


def changed_after_message(noticed: Sequence[Noticed]) -> str:
    """What changed after a run's last look, in one sentence."""
    what = "; ".join(f"{n.path} {n.kind.value}" for n in noticed)
    return (f"protected files changed after the run's last look, while it ended: {what}; "
            "nothing put them back (the run had ended): if you did not change them, look at "
            "them")


def record(settings: Settings) -> None:
    """Take the record of the protected files as they are now (where no tripwire verified
    them: a run's end records with :func:`close_tripwire`); never raises."""
    try:
        entries = _remembered(settings)
        with _own_writes():
            found = _scan(entries)
            _save(_Manifest([str(p) for p in found.roots], found.nodes, _crontab_digest()))
    except Exception:
        log.warning("could not record the protected files: the next run cannot tell what "
                    "changed since this one", exc_info=True)


@contextlib.contextmanager
def _own_writes() -> Iterator[dict[Path, str]]:
    """What holodesk's own writes left since the last record (:func:`app.paths.own_write`):
    each path with its :func:`~control.tripwire.fingerprint` then (the last one noted),
    forgotten once the new record is saved. Taken aside first: a write meanwhile is noted for
    the next time. A line that is not such a note (an older holodesk's bare path, or anything
    else) explains nothing."""
    journal = paths.own_writes_path()
    taken = journal.with_name(journal.name + ".taken")
    with tripwire.own_write(journal), contextlib.suppress(FileNotFoundError):
        os.replace(journal, taken)  # protected during a run: holodesk's own change
    try:
        text = taken.read_text(encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        text = ""
    own: dict[Path, str] = {}
    for line in text.splitlines():
        try:
            note = json.loads(line)
            path, what = note["path"], note["is"]
        except (ValueError, TypeError, KeyError):
            continue
        if isinstance(path, str) and isinstance(what, str) and os.path.isabs(path):
            own[Path(path)] = what
    yield own
    taken.unlink(missing_ok=True)


def _written_by_holodesk(path: Path, now: Mapping[Path, Node], own: Mapping[Path, str]) -> bool:
    """Whether holodesk's own writes explain the change at ``path``: what is there now is
    exactly what holodesk's last write there left, and so is everything under it (a folder
    holodesk made for a write it noted counts as explained by that write)."""
    under = [p for p in now if path in p.parents]
    node = now.get(path)
    noted = own.get(path) == fingerprint(node)
    made_for_one = (node is not None and node.kind is NodeKind.FOLDER
                    and any(p in own for p in under))
    if not (noted or made_for_one):
        return False
    return all(own.get(p) == fingerprint(now[p]) for p in under
               if now[p].kind is not NodeKind.FOLDER or p in own)


def _scan(entries: Sequence[Protected], known: Mapping[Path, Node] | None = None) -> Scan:
    """The protected files now, and what their links lead to; the kept copies left out."""
    return scan(entries, skip=[paths.data_dir() / KEPT_DIR], known=known)


def _within(nodes: Mapping[Path, Node], roots: Sequence[Path]) -> dict[Path, Node]:
    return {p: n for p, n in nodes.items()
            if any(p == r or r in p.parents for r in roots)}


def _crontab_digest() -> str | None:
    crontab = find_crontab()
    if crontab is None:
        return None
    try:
        data = crontab.read()
    except OSError as e:
        log.info("the crontab cannot be read: %s", e)
        return None
    return "" if data is None else hashlib.sha256(data).hexdigest()


def _load() -> _Manifest | None:
    path = manifest_path()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        log.warning("the record of the protected files %s cannot be read (%s); it is taken "
                    "anew", path, e)
        return None
    try:
        if raw.get("version") != MANIFEST_VERSION:
            return None
        nodes = {Path(p): _node_from(n) for p, n in raw["nodes"].items()}
        crontab = raw.get("crontab")
        return _Manifest([str(r) for r in raw["roots"]], nodes,
                         crontab if isinstance(crontab, str) else None)
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        log.warning("the record of the protected files %s is damaged (%s); it is taken anew",
                    path, e)
        return None


def _node_from(raw: dict[str, Any]) -> Node:
    return Node(NodeKind(raw["kind"]), int(raw["mode"]), int(raw["size"]), int(raw["ino"]),
                int(raw["dev"]), (int(raw["stamp"][0]), int(raw["stamp"][1])),
                bool(raw.get("settled", False)), str(raw["digest"]), str(raw["target"]))


def _save(manifest: _Manifest) -> None:
    nodes = {}
    for path, node in sorted(manifest.nodes.items()):
        fields = asdict(node)
        fields.pop("data", None)
        fields["kind"] = node.kind.value
        nodes[str(path)] = fields
    data = {"version": MANIFEST_VERSION, "roots": manifest.roots, "crontab": manifest.crontab,
            "nodes": nodes}
    paths.write_atomic(manifest_path(), json.dumps(data, indent=0, sort_keys=True) + "\n")
