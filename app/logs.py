"""Logging set-up: the program's log file, the console, and masking of the API key."""

from __future__ import annotations

import logging
import platform
import sys

from app import paths
from app.secrets import RedactingFilter
from app.version import version

#: Attached to every handler we install; :func:`mask` adds secrets to it.
_REDACTOR = RedactingFilter()


def setup_logging(verbose: bool = False) -> None:
    """Warnings (or info with ``verbose``) to stderr, everything to the log file."""
    root = logging.getLogger()
    if root.handlers:
        return
    root.setLevel(logging.DEBUG)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.INFO if verbose else logging.WARNING)
    console.setFormatter(logging.Formatter("holodesk: %(levelname)s: %(message)s"))
    console.addFilter(_REDACTOR)
    root.addHandler(console)
    try:
        paths.ensure_private_dir(paths.log_dir())
        fh = logging.FileHandler(paths.log_path(), encoding="utf-8")
    except OSError as e:
        logging.getLogger(__name__).warning("cannot write the log file: %s", e)
        return
    fh.setLevel(logging.DEBUG)
    fh.setFormatter(
        logging.Formatter("%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s")
    )
    fh.addFilter(_REDACTOR)
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
