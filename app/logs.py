"""Logging set-up: the program's log file, the console, and masking of the API key.

The log file (``paths.log_path()``, ``~/.local/state/holodesk/holodesk.log`` on Linux) rotates:
at :data:`LOG_MAX_BYTES` it moves to ``holodesk.log.1`` (the older ones to ``.2`` ... up to
:data:`LOG_BACKUPS`), so it never fills the disk however long the tray app runs. Several
holodesk processes may share the file (the app and a `holodesk run`); one that rotates leaves
the others writing to the moved file until they next start, which loses no line.
"""

from __future__ import annotations

import logging
import logging.handlers
import platform
import sys
from pathlib import Path

from app import paths
from app.secrets import RedactingFilter
from app.version import version
from app.visible import without_controls
from control.tripwire import own_write
from model.run_secrets import RunSecrets

#: Attached to every handler we install; :func:`mask` adds secrets to it, :func:`watch` runs.
_REDACTOR = RedactingFilter()

#: The log file's size before it rotates, and how many older files are kept: 20 MB in all,
#: days of a busy app at debug level, a few lines per step.
LOG_MAX_BYTES = 5 * 1024 * 1024
LOG_BACKUPS = 3


class _PlainFormatter(logging.Formatter):
    """Every line as plain text: control characters (an escape sequence in a model's words,
    a server's error text) shown as symbols, so that reading the log with ``cat`` or ``tail``
    can neither run a terminal escape nor erase or forge a line's look. Line breaks stay
    (tracebacks)."""

    def format(self, record: logging.LogRecord) -> str:
        return without_controls(super().format(record))


class _RotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Rotates as its parent does, as holodesk's own write: a run's tripwire protects the log
    folder (a log file removed, replaced or made shorter trips it), and rotating does all
    three."""

    def doRollover(self) -> None:
        base = Path(self.baseFilename)
        names = [base, *(base.with_name(f"{base.name}.{n}")
                         for n in range(1, self.backupCount + 1))]
        with own_write(*names):
            super().doRollover()


def log_file_handler(
    path: Path, max_bytes: int = LOG_MAX_BYTES, backups: int = LOG_BACKUPS
) -> logging.Handler:
    """The handler of the program's log file at ``path``: rotating, secrets masked."""
    handler = _RotatingFileHandler(
        path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
    )
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(
        _PlainFormatter("%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s")
    )
    handler.addFilter(_REDACTOR)
    return handler


def setup_logging(verbose: bool = False) -> None:
    """Warnings (or info with ``verbose``) to stderr, everything to the log file."""
    root = logging.getLogger()
    if root.handlers:
        return
    root.setLevel(logging.DEBUG)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.INFO if verbose else logging.WARNING)
    console.setFormatter(_PlainFormatter("holodesk: %(levelname)s: %(message)s"))
    console.addFilter(_REDACTOR)
    root.addHandler(console)
    try:
        paths.ensure_private_dir(paths.log_dir())
        fh = log_file_handler(paths.log_path())
    except OSError as e:
        logging.getLogger(__name__).warning("cannot write the log file: %s", e)
        return
    root.addHandler(fh)
    # Which release wrote what follows: a bug report's log says it without asking.
    logging.getLogger("holodesk").info(
        "holodesk %s starting (Python %s, %s)", version(), platform.python_version(),
        platform.platform(terse=True))
    # HTTP internals are noise in our log, and at debug level they may echo request bodies.
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "PIL"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def mask(secret: str | None) -> None:
    """Never let ``secret`` reach a log line, even quoted inside an exception."""
    if secret:
        _REDACTOR.add(secret)


def watch(secrets: RunSecrets) -> None:
    """Mask a run's secrets in every log line from now on, in every form, including those the
    run learns later (text it types as a secret)."""
    _REDACTOR.watch(secrets)


def settle(secrets: RunSecrets) -> None:
    """The run of ``secrets`` is over: its secrets stay masked for the rest of the process
    (as plain secrets, no longer followed)."""
    _REDACTOR.settle(secrets)


def masked_secrets() -> frozenset[str]:
    """The secrets this process masks in its log (the API key in use, text typed as a secret):
    a problem report masks them in everything it gathers too."""
    return _REDACTOR.secrets()
