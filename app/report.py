"""Report a problem: a support bundle the person reads before saving it, with no secret in it.

One action in each front end (`holodesk report`, the tray's "Report a problem…") gathers, as
text parts of one .zip:

=================  ==========================================================================
``README.txt``     what the bundle holds and what was masked
``version.txt``    holodesk's version, Python, the platform, the desktop session
``doctor.json``    the set-up checks as `holodesk doctor --json` prints them
``settings.txt``   the settings and where each came from (as `holodesk config show`; the
                   API key's place is named, never the key)
``log.txt``        the last :data:`LOG_LINES` lines of the program's log file
``last-run.txt``   the last run and its steps as `holodesk log show last` prints them
``screenshots/``   the last run's screenshots, only when the person asks for them
=================  ==========================================================================

Masking, over every text part (:class:`Masker`): the API key of every endpoint this machine
knows (the settings' endpoint, those of the runs in the log, those agreed to over plain http:
from ``HOLODESK_API_KEY`` or the keyring), the secrets this process masks in its log (text a
run typed as a secret, :func:`app.logs.masked_secrets`), the secrets of a run the caller
passes, all in every form a secret is stored in (:mod:`model.run_secrets`), any
credential of a known shape (:func:`control.policy.mask_credentials`), and the home folder's
path as ``~`` unless the person keeps it. What is stored is masked already (the action log
and the log file mask typed secrets when they are written); this is the second net, for a
line written before a secret was known. Screenshots cannot be masked: the front ends say so
next to the choice.

The bundle is written to a temporary file next to the destination and renamed into place, so
the destination holds a whole report or nothing (a full disk leaves no partial file).

Where the saved file goes is said in the same words by every front end (:func:`send_words`):
attached to a bug report at the project's address when the installed package names one
(:func:`project_address`), else to a bug report for the holodesk project.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import logging
import os
import platform
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from app import paths
from app.doctor import CheckResult, DoctorConfig, doctor_document, run_doctor
from app.export import format_run
from app.logs import LOG_BACKUPS, masked_secrets
from app.secrets import SecretStore, lookup_api_key
from app.settings import Settings, describe_settings
from app.store import ActionLog, RunNotFound, RunRecord, StoreError
from app.version import version
from control.policy import mask_credentials
from model.problem import Fix, HolodeskError
from model.run_secrets import RunSecrets

__all__ = [
    "LOG_LINES",
    "Masker",
    "Report",
    "ReportError",
    "ReportPart",
    "Screenshot",
    "collect_report",
    "default_report_path",
    "project_address",
    "report_doctor",
    "send_words",
]

_log = logging.getLogger(__name__)

#: How much of the program's log goes in: enough for the last few runs at debug level.
LOG_LINES = 400
#: The set-up checks' limits inside a report: it should not keep the person waiting minutes.
DOCTOR_CHECK_TIMEOUT = 10.0
DOCTOR_REQUEST_TIMEOUT = 20.0

#: Runs whose endpoints' keys are looked up to be masked (recent ones; each costs a lookup).
_RUNS_FOR_ENDPOINTS = 50


class ReportError(HolodeskError):
    """The report could not be written; the message says why, the fix what to do."""


@dataclass(frozen=True)
class ReportPart:
    """One text file of the bundle: its name in the .zip, what it is, its (masked) text."""

    name: str
    title: str
    text: str


@dataclass(frozen=True)
class Screenshot:
    """One screenshot of the last run that may go in: its name in the .zip, the file."""

    name: str
    path: Path
    step_no: int


class Masker:
    """Masks secrets (every form of each, :mod:`model.run_secrets`), credential shapes and
    (optionally) the home folder in text."""

    def __init__(self, secrets: RunSecrets, home: str | None = None) -> None:
        self._secrets = secrets
        # "/" or "" as the home would garble every path.
        self._home = home if home and len(home) > 1 else None

    def __call__(self, text: str) -> str:
        text = mask_credentials(self._secrets.mask(text))
        if self._home is not None:
            text = text.replace(self._home, "~")
        return text


@dataclass(frozen=True)
class Report:
    """What a bundle holds: the text parts (masked), and the screenshots it may hold."""

    parts: tuple[ReportPart, ...]
    screenshots: tuple[Screenshot, ...]
    created: dt.datetime

    def part(self, name: str) -> ReportPart:
        """The part called ``name`` (KeyError when there is none)."""
        for part in self.parts:
            if part.name == name:
                return part
        raise KeyError(name)

    def contents(self, *, screenshots: bool) -> list[str]:
        """One line per file that goes in, for the list shown before saving."""
        lines = [f"{p.name}: {p.title} ({_size(len(p.text.encode('utf-8')))})"
                 for p in self.parts]
        if screenshots:
            lines += [f"{s.name}: the screen at step {s.step_no} of the last run, not masked "
                      f"({_size(_file_size(s.path))})" for s in self.screenshots]
        return lines

    def write(self, path: Path, *, screenshots: bool, overwrite: bool = False) -> Path:
        """Write the bundle to ``path`` (a .zip) all at once; returns the path.

        Raises :class:`ReportError` with the reason and a fix; then nothing is left behind.
        """
        path = path.expanduser()
        if path.is_dir():
            raise ReportError(f"{path} is a folder",
                              Fix("give the name of the file to write, ending in .zip"))
        if path.exists() and not overwrite:
            raise ReportError(f"{path} exists already; nothing was written",
                              Fix("choose another name, or remove that file first"))
        folder = path.parent
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
        except OSError as exc:
            raise _write_error(path, exc) from exc
        try:
            with os.fdopen(fd, "wb") as handle:
                with zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as bundle:
                    for part in self.parts:
                        bundle.writestr(_entry(part.name, self.created), part.text)
                    if screenshots:
                        for shot in self.screenshots:
                            _add_file(bundle, shot)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException as exc:
            try:
                os.unlink(tmp)
            except OSError:
                _log.warning("could not remove the unfinished report %s", tmp)
            if isinstance(exc, OSError):
                raise _write_error(path, exc) from exc
            raise
        _log.info("problem report written to %s (screenshots: %s)", path, screenshots)
        return path


#: The Project-URL labels that say where bugs are reported, best first.
_BUG_LABELS = ("issues", "bug tracker", "bugs", "tracker", "source", "repository", "homepage")


def project_address() -> str | None:
    """Where holodesk's bugs are reported, as the installed package names it (its
    ``Project-URL``: an issue tracker first, else the repository or home page); None when it
    names none (a frozen build, or no address in pyproject.toml)."""
    from importlib import metadata

    try:
        meta = metadata.metadata("holodesk")
    except metadata.PackageNotFoundError:
        return None
    urls: dict[str, str] = {}
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if url.strip():
            urls[label.strip().casefold()] = url.strip()
    for label in _BUG_LABELS:
        if label in urls:
            return urls[label]
    home = meta.get_all("Home-page") or []  # a missing key: [] (indexing may raise)
    return next((url for url in home if url and url != "UNKNOWN"), None)


def send_words(address: str | None) -> str:
    """Where a saved report goes, in the words of every front end (each also says where the
    file was saved): ``address`` is the project's (:func:`project_address`; None: none)."""
    where = f"at {address}" if address else "for the holodesk project"
    return f"To report the problem, attach the saved file to a bug report {where}."


def default_report_path(folder: Path, now: dt.datetime | None = None) -> Path:
    """``folder/holodesk-report-YYYYMMDD-HHMMSS.zip`` (local time)."""
    now = now or dt.datetime.now()
    return folder / f"holodesk-report-{now:%Y%m%d-%H%M%S}.zip"


#: Runs the set-up checks for a report (tests pass their own results).
DoctorFn = Callable[[Settings], Sequence[CheckResult]]


def report_doctor(settings: Settings) -> list[CheckResult]:
    """The set-up checks, as `holodesk doctor` runs them, with shorter limits."""
    config = DoctorConfig(settings=settings, check_timeout=DOCTOR_CHECK_TIMEOUT,
                          request_timeout=DOCTOR_REQUEST_TIMEOUT)
    return run_doctor(config)


def collect_report(
    settings: Settings,
    *,
    say: Callable[[Fix], str],
    doctor: DoctorFn = report_doctor,
    db_path: Path | None = None,
    log_path: Path | None = None,
    store: SecretStore | None = None,
    environ: Mapping[str, str] | None = None,
    hide_home: bool = True,
    settings_error: str | None = None,
    secrets: RunSecrets | None = None,
) -> Report:
    """Gather the bundle's parts and mask them (see the module doc). Blocks: the set-up checks
    may take up to a minute, the keyring may ask to be unlocked; the GUI calls it off its
    thread. ``say`` words the doctor's fixes in the calling front end's terms.
    ``settings_error``: why the settings file could not be read (``settings`` are then the
    defaults), said at the top of the settings part: a broken file is worth reporting too.
    ``secrets``: a run's secrets, masked too (the process's own log masks are always)."""
    env = os.environ if environ is None else environ
    db = paths.db_path() if db_path is None else db_path
    run, steps_text, shots, endpoints = _last_run(db)
    endpoints |= {settings.endpoint, *settings.plain_http_ok}
    known = set(masked_secrets()) | (set(secrets.values()) if secrets is not None else set())
    for endpoint in sorted(endpoints):
        key = lookup_api_key(endpoint, store, env).key
        if key:
            known.add(key)
    # This process masks only what it saw; a secret parameter typed by an earlier run (the
    # app's, another terminal's) is masked from the keyring's copy.
    known |= _secret_parameter_values(store)
    home = str(Path.home()) if hide_home else None
    mask = Masker(RunSecrets.masking(known), home)
    results = doctor(settings)
    doc = json.dumps(doctor_document(results, settings.endpoint, say=say), indent=2,
                     ensure_ascii=False)
    log_file = paths.log_path() if log_path is None else log_path
    parts = [
        ReportPart("version.txt", "holodesk's version, Python and the platform",
                   _version_text(env)),
        ReportPart("doctor.json", "the set-up checks and what each found", doc),
        ReportPart("settings.txt", "the settings and where each came from (no API key)",
                   _settings_text(settings, store, env, settings_error)),
        ReportPart("log.txt", f"the last {LOG_LINES} lines of holodesk's log file",
                   _log_tail(log_file, LOG_LINES)),
        ReportPart("last-run.txt",
                   "the last run and its steps" if run else "the last run (there is none)",
                   steps_text),
    ]
    parts = [replace(p, text=mask(p.text)) for p in parts]
    created = dt.datetime.now()
    readme = ReportPart("README.txt", "what this report holds",
                        _readme(parts, hide_home, created))
    return Report((readme, *parts), tuple(shots), created)


# --- the parts ---------------------------------------------------------------------------


def _secret_parameter_values(store: SecretStore | None) -> set[str]:
    """Every value the keyring holds for an automation's secret parameter (none when the
    automations file cannot be read: the report is still made)."""
    from app.automations import AutomationError, load_automations
    from app.parameter_values import stored_secrets

    try:
        automations = load_automations()
    except AutomationError:
        return set()
    values: set[str] = set()
    for automation in automations:
        try:
            values |= set(stored_secrets(automation, store).values())
        except Exception:  # a keyring that cannot be read must not cost the report
            _log.warning("could not read the secret parameters of %r", automation.name)
    return values


def _version_text(env: Mapping[str, str]) -> str:
    session = env.get("XDG_SESSION_TYPE") or (
        "wayland" if env.get("WAYLAND_DISPLAY") else "x11" if env.get("DISPLAY") else "none")
    lines = [
        f"holodesk {version()}",
        f"python {platform.python_version()} ({sys.executable})",
        f"platform {platform.platform()}",
        f"frozen build: {'yes' if getattr(sys, 'frozen', False) else 'no'}",
        f"session type: {session}",
        f"desktop: {env.get('XDG_CURRENT_DESKTOP') or '(not set)'}",
        f"DISPLAY: {env.get('DISPLAY') or '(not set)'}",
        f"WAYLAND_DISPLAY: {env.get('WAYLAND_DISPLAY') or '(not set)'}",
        f"locale: {env.get('LC_ALL') or env.get('LANG') or '(not set)'}",
    ]
    return "\n".join(lines) + "\n"


def _settings_text(settings: Settings, store: SecretStore | None, env: Mapping[str, str],
                   error: str | None) -> str:
    text = describe_settings(settings, store=store, environ=env) + "\n"
    if error is None:
        return text
    return (f"THE SETTINGS COULD NOT BE READ: {error}\n"
            f"The defaults below were used for the set-up checks instead.\n\n{text}")


def _log_tail(path: Path, count: int) -> str:
    """The last ``count`` lines of the log, reaching into the rotated files when needed."""
    lines: list[str] = []
    rotated = [path.with_name(f"{path.name}.{n}") for n in range(1, LOG_BACKUPS + 1)]
    for candidate in (path, *rotated):
        try:
            text = candidate.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            continue
        except OSError as exc:
            lines.insert(0, f"({candidate} could not be read: {exc})")
            break
        lines = text.splitlines()[-(count - len(lines)):] + lines
        if len(lines) >= count:
            break
    if not lines:
        return f"(no log file at {path})\n"
    return "\n".join(lines[-count:]) + "\n"


def _last_run(db: Path) -> tuple[RunRecord | None, str, list[Screenshot], set[str]]:
    """The last run as text, its screenshots, and the endpoints of recent runs."""
    if not db.exists():
        return None, "no runs yet: the action log is empty\n", [], set()
    try:
        # Reading only: a report never marks another process's run as interrupted.
        with ActionLog.open(db, mark_interrupted=False) as log:
            endpoints = {r.endpoint for r in log.list_runs(_RUNS_FOR_ENDPOINTS) if r.endpoint}
            try:
                run = log.get_run("last")
            except RunNotFound:
                return None, "no runs yet: the action log is empty\n", [], endpoints
            steps = log.steps(run.id)
    except StoreError as exc:
        return None, f"the action log could not be read: {exc}\n", [], set()
    shots = []
    for step in steps:
        source = step.screenshot_path or step.thumbnail_path
        if source:
            image = Path(source)
            shots.append(Screenshot(f"screenshots/{image.name}", image, step.step_no))
    return run, format_run(run, steps) + "\n", shots, endpoints


def _readme(parts: Sequence[ReportPart], hide_home: bool, created: dt.datetime) -> str:
    listing = "\n".join(f"  {p.name}: {p.title}" for p in parts)
    home = ("The home folder's path is written as ~.\n" if hide_home else "")
    return (
        f"A holodesk problem report, made {created:%Y-%m-%d %H:%M:%S} "
        f"by holodesk {version()}.\n\n"
        f"{listing}\n"
        "  screenshots/: the last run's screenshots, only when chosen\n\n"
        "Masked as *** in every text: the API key of each known endpoint, text typed as a "
        "secret, and anything shaped like an API key or token.\n"
        f"{home}"
        "Screenshots are not masked: whatever was on the screen is in them.\n"
    )


# --- writing -------------------------------------------------------------------------------


def _entry(name: str, created: dt.datetime) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=created.timetuple()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o600 << 16
    return info


def _add_file(bundle: zipfile.ZipFile, shot: Screenshot) -> None:
    try:
        data = shot.path.read_bytes()
    except OSError as exc:  # deleted since it was listed (retention, Delete in the log)
        _log.warning("report: screenshot %s left out (%s)", shot.path, exc)
        return
    info = zipfile.ZipInfo(shot.name, date_time=dt.datetime.now().timetuple()[:6])
    info.compress_type = zipfile.ZIP_STORED  # JPEG and PNG are compressed already
    info.external_attr = 0o600 << 16
    bundle.writestr(info, data)


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_DENIED = {errno.EACCES, errno.EPERM, errno.EROFS}


def _write_error(path: Path, exc: OSError) -> ReportError:
    reason = exc.strerror or str(exc)
    if exc.errno in _FULL:
        return ReportError(f"the report could not be written to {path}: {reason} (the disk "
                           "is full or the file too large); nothing was written",
                           Fix("free some space, or save it on another disk; without the "
                               "screenshots it is much smaller"))
    if exc.errno in _DENIED:
        return ReportError(f"the report could not be written to {path}: {reason}; nothing "
                           "was written", Fix("choose a folder you can write to, such as "
                                              "your home folder"))
    if exc.errno == errno.ENOENT:
        return ReportError(f"the folder {path.parent} does not exist; nothing was written",
                           Fix("choose an existing folder, or create it first"))
    return ReportError(f"the report could not be written to {path}: {reason}; nothing was "
                       "written", Fix("choose another place to save it"))


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.0f} KB"
    return f"{count / 1024 / 1024:.1f} MB"
