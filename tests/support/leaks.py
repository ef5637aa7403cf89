"""Where the tests look for a secret that must not be there: every string of a request body,
and ``holodesk.log`` written by holodesk's own handler (its masking included)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.logs import log_file_handler


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys too."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


@contextmanager
def holodesk_log(path: Path) -> Iterator[None]:
    """While inside, the root logger writes everything (debug level) to ``path`` through
    holodesk.log's own handler, masking as holodesk installs it (app/logs.py)."""
    root = logging.getLogger()
    handler = log_file_handler(path)
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        handler.close()
