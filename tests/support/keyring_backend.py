"""A keyring backend that keeps secrets in a JSON file, for tests that run holodesk in a subprocess.

holodesk never lets keyring choose a backend (app/secrets.py): a holodesk subprocess gets this
one only from the Python option on its command line (tests/support/e2e.py ``holodesk_argv``)::

    python -X holodesk_test_keyring=tests.support.keyring_backend.FileBackend .../holodesk ...
    HOLODESK_TEST_KEYRING_DIR=/some/tmp/dir      # in its environment: keyring.json goes here

(the repository root must be importable, e.g. on PYTHONPATH); in this process,
:func:`app.secrets.use_keyring_backend` (the ``file_keyring`` fixture). Without the directory
variable the backend declares itself not viable.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from keyring.backend import KeyringBackend
from keyring.backends import null
from keyring.compat import properties
from keyring.errors import KeyringLocked, PasswordDeleteError

DIR_ENV = "HOLODESK_TEST_KEYRING_DIR"
FILE_NAME = "keyring.json"
#: The Python option that gives a holodesk subprocess this file keyring (app/secrets.py).
OPTION = "holodesk_test_keyring=tests.support.keyring_backend.FileBackend"


class FileBackend(KeyringBackend):
    """Secrets in ``$HOLODESK_TEST_KEYRING_DIR/keyring.json`` as {service: {username: secret}}."""

    # app.secrets keeps keys only in secure keyrings (an allow-list); tests/conftest.py vouches
    # for this class in the test process, and the -X option in a holodesk subprocess.

    @properties.classproperty
    def priority(cls) -> float:
        if not os.environ.get(DIR_ENV):
            raise RuntimeError(f"{DIR_ENV} is not set")
        return 1.0

    def __init__(self, folder: Path | None = None) -> None:
        super().__init__()
        self._folder = folder  # None: the environment's, at each call

    @staticmethod
    def path() -> Path:
        """The JSON file (its directory comes from the environment at call time)."""
        return Path(os.environ[DIR_ENV]) / FILE_NAME

    def _file(self) -> Path:
        return self._folder / FILE_NAME if self._folder is not None else self.path()

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data: dict[str, dict[str, str]] = json.loads(self._file().read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        return data

    def _save(self, data: dict[str, dict[str, str]]) -> None:
        path = self._file()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(service, {}).get(username)

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data.setdefault(service, {})[username] = password
        self._save(data)

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        if username not in data.get(service, {}):
            raise PasswordDeleteError("no such password")
        del data[service][username]
        self._save(data)


class PlainFileBackend(FileBackend):
    """The same JSON file, not vouched for: what keyrings.alt's plaintext backend is to
    holodesk, a backend outside the allow-list that would write the key to a plain file."""


class LockedBackend(KeyringBackend):
    """A keyring whose collection stays locked (the person dismissed the unlock prompt); it
    stands for a Secret Service, so who uses it vouches for it (app/secrets.py ``vouch_for``)."""

    priority = -10  # type: ignore[assignment]  # never auto-selected

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("Failed to unlock the collection!")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked("Failed to unlock the collection!")

    def delete_password(self, service: str, username: str) -> None:
        raise KeyringLocked("Failed to unlock the collection!")


def without_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process has no keyring for the test (keyring's null backend, which holodesk
    refuses), whatever the machine has."""
    import app.secrets

    monkeypatch.setattr(app.secrets, "_chosen", null.Keyring())


def with_file_keyring(monkeypatch: pytest.MonkeyPatch, folder: Path) -> FileBackend:
    """This process's keyring is the file backend in ``folder`` for the test."""
    import app.secrets

    backend = FileBackend(folder)
    monkeypatch.setattr(app.secrets, "_chosen", backend)
    return backend
