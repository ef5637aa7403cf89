"""Reading a TOML file's bytes, with the file named in what goes wrong."""

from __future__ import annotations

import tomllib
from typing import Any


def toml_data(raw: bytes, where: str, error: type[Exception]) -> dict[str, Any]:
    """``raw`` parsed as TOML; ``error`` (the caller's own) saying ``where`` and why when it is
    not UTF-8 or not TOML."""
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise error(f"{where}: is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{where}: is not valid TOML ({e})") from None
