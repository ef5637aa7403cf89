"""A keyring backend that keeps secrets in a JSON file, for tests that run holodesk in a subprocess.

Select it in the child's environment::

    PYTHON_KEYRING_BACKEND=tests.support.keyring_backend.FileBackend
    HOLODESK_TEST_KEYRING_DIR=/some/tmp/dir      # keyring.json goes here

(the repository root must be importable, e.g. on PYTHONPATH). Without the directory variable the
backend declares itself not viable, so merely importing this module never makes keyring pick it
up: keyring registers every backend class it sees and auto-selects by priority.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.compat import properties
from keyring.errors import PasswordDeleteError

DIR_ENV = "HOLODESK_TEST_KEYRING_DIR"
FILE_NAME = "keyring.json"


class FileBackend(KeyringBackend):
    """Secrets in ``$HOLODESK_TEST_KEYRING_DIR/keyring.json`` as {service: {username: secret}}."""

    # app.secrets keeps keys only in secure keyrings (an allow-list); this mark lets the tests'
    # own backend through, which keyring selects only when a test points it here.
    holodesk_test_backend = True

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
    """The same JSON file without the test mark: what keyrings.alt's plaintext backend is to
    holodesk, a backend outside the allow-list that would write the key to a plain file."""

    holodesk_test_backend = False
