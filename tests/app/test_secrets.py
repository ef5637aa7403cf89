"""The API key: keyring storage per endpoint, clear failures, the env override, redaction."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail, null
from keyring.errors import KeyringLocked
from keyrings.alt.file import PlaintextKeyring

from app import paths
from app.secrets import (
    ENV_API_KEY,
    SERVICE,
    InvalidApiKey,
    KeyringStore,
    RedactingFilter,
    SecretStore,
    SecretsUnavailable,
    api_key,
    lookup_api_key,
    redact,
    scrub_settings,
    store_api_key,
    validate_api_key,
)
from tests.support.home import REPO_ROOT, Home, isolate_home
from tests.support.keyring_backend import DIR_ENV, FileBackend
from tests.support.memory_secrets import MemoryStore

KEY = "sk-holodesk-test-0123456789abcdef"
ENDPOINT = "http://127.0.0.1:8000/v1"
BACKEND_PATH = "tests.support.keyring_backend.FileBackend"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def file_backend(home: Home, monkeypatch: pytest.MonkeyPatch) -> FileBackend:
    monkeypatch.setenv(DIR_ENV, str(home.keyring))
    return FileBackend()


class LockedBackend(KeyringBackend):
    """A keyring whose collection stays locked (the person dismissed the unlock prompt)."""

    priority = -10  # type: ignore[assignment]  # never auto-selected

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("Failed to unlock the collection!")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked("Failed to unlock the collection!")

    def delete_password(self, service: str, username: str) -> None:
        raise KeyringLocked("Failed to unlock the collection!")


def exercise(store: SecretStore) -> None:
    assert store.get(ENDPOINT) is None
    store.set(ENDPOINT, KEY)
    assert store.get(ENDPOINT) == KEY
    assert store.get("http://other:8000/v1") is None  # one key per endpoint
    store.set(ENDPOINT, KEY + "2")
    assert store.get(ENDPOINT) == KEY + "2"
    assert store.delete(ENDPOINT) is True
    assert store.delete(ENDPOINT) is False
    assert store.get(ENDPOINT) is None


def test_memory_store() -> None:
    store = MemoryStore()
    exercise(store)
    assert "memory" in store.backend_name()


def test_keyring_store_on_the_file_backend(file_backend: FileBackend, home: Home) -> None:
    store = KeyringStore(backend=file_backend)
    exercise(store)
    store.set(ENDPOINT, KEY)
    data = json.loads((home.keyring / "keyring.json").read_text(encoding="utf-8"))
    assert data == {SERVICE: {ENDPOINT: KEY}}
    assert store.backend_name() == BACKEND_PATH
    assert store.is_plaintext() is False


def test_file_backend_is_not_viable_unless_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    # Importing it registers the class with keyring: it must not get auto-selected anywhere.
    monkeypatch.delenv(DIR_ENV, raising=False)
    assert FileBackend.viable is False
    monkeypatch.setenv(DIR_ENV, "/nonexistent")
    assert FileBackend.viable is True


@pytest.mark.parametrize("backend", [fail.Keyring(), null.Keyring()], ids=["fail", "null"])
def test_no_keyring_raises_a_helpful_error(backend: KeyringBackend) -> None:
    store = KeyringStore(backend=backend)
    for attempt in (
        lambda: store.get(ENDPOINT),
        lambda: store.set(ENDPOINT, KEY),
        lambda: store.delete(ENDPOINT),
    ):
        with pytest.raises(SecretsUnavailable) as err:
            attempt()
        message = str(err.value)
        for hint in ("gnome-keyring", "KWallet", "pip install keyrings.alt", ENV_API_KEY):
            assert hint in message
        assert KEY not in message
    assert store.backend_name().startswith("unavailable")


def test_locked_keyring_says_to_unlock(home: Home) -> None:
    store = KeyringStore(backend=LockedBackend())
    with pytest.raises(SecretsUnavailable, match="unlock it and retry") as err:
        store.set(ENDPOINT, KEY)
    assert "KeyringLocked" in str(err.value)
    assert KEY not in str(err.value)


def test_plaintext_backend_is_flagged(home: Home) -> None:
    store = KeyringStore(backend=PlaintextKeyring())
    assert store.is_plaintext() is True
    assert "plaintext file, not recommended" in store.backend_name()


def test_validate_api_key() -> None:
    assert validate_api_key(f"  {KEY}\n") == KEY
    for bad in ("", "   \n", "sk abc", "sk-\x1b[31m", "sk-a\tb"):
        with pytest.raises(InvalidApiKey):
            validate_api_key(bad)
    with pytest.raises(InvalidApiKey, match="longer"):
        validate_api_key("k" * 5000)


def test_store_api_key_validates_first() -> None:
    store = MemoryStore()
    assert store_api_key(ENDPOINT, KEY + "\n", store) == store.backend_name()
    assert store.get(ENDPOINT) == KEY
    with pytest.raises(InvalidApiKey):
        store_api_key(ENDPOINT, "two words", store)
    assert store.get(ENDPOINT) == KEY


# --- lookup and the environment override ---------------------------------------------------


def test_environment_overrides_the_keyring_and_is_not_persisted() -> None:
    store = MemoryStore({ENDPOINT: "sk-from-the-keyring"})
    found = lookup_api_key(ENDPOINT, store, environ={ENV_API_KEY: f" {KEY} "})
    assert (found.key, found.source) == (KEY, "env")
    assert store.get(ENDPOINT) == "sk-from-the-keyring"
    assert ENV_API_KEY in found.describe()
    assert KEY not in repr(found) and KEY not in found.describe()


def test_lookup_from_the_keyring_and_none() -> None:
    store = MemoryStore({ENDPOINT: KEY})
    found = lookup_api_key(ENDPOINT, store, environ={})
    assert (found.key, found.source, found.problem) == (KEY, "keyring", None)
    assert KEY not in repr(found)
    missing = lookup_api_key("http://other:8000/v1", store, environ={ENV_API_KEY: ""})
    assert (missing.key, missing.source) == (None, "none")


def test_api_key_shorthand() -> None:
    store = MemoryStore({ENDPOINT: KEY})
    assert api_key(ENDPOINT, store, environ={}) == KEY
    assert api_key("http://other:8000/v1", store, environ={}) is None
    assert api_key(ENDPOINT, KeyringStore(backend=fail.Keyring()), environ={}) is None


def test_lookup_with_no_keyring_reports_instead_of_raising() -> None:
    found = lookup_api_key(ENDPOINT, KeyringStore(backend=fail.Keyring()), environ={})
    assert (found.key, found.source) == (None, "none")
    assert found.problem is not None and "keyrings.alt" in found.problem
    assert "keyring unreadable" in found.describe()
    # The environment still works without any keyring: the CI and headless path.
    found = lookup_api_key(ENDPOINT, KeyringStore(backend=fail.Keyring()), {ENV_API_KEY: KEY})
    assert (found.key, found.source) == (KEY, "env")


# --- through keyring's own backend selection, in a subprocess -------------------------------


def run_python(code: str, home: Home, stdin: str = "", backend: str = BACKEND_PATH) -> str:
    env = home.env()
    env["PYTHON_KEYRING_BACKEND"] = backend
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_subprocess_selects_the_file_backend_via_the_environment(home: Home) -> None:
    out = run_python(
        "from app.secrets import KeyringStore\n"
        "s = KeyringStore()\n"
        f"s.set({ENDPOINT!r}, {KEY!r})\n"
        "print(s.backend_name())\n",
        home,
    )
    assert out.strip() == BACKEND_PATH
    data = json.loads((home.keyring / "keyring.json").read_text(encoding="utf-8"))
    assert data[SERVICE][ENDPOINT] == KEY
    # And a second process reads it back through the same selection.
    out = run_python(
        "from app.secrets import lookup_api_key\n"
        f"found = lookup_api_key({ENDPOINT!r})\n"
        "print(found.source, found.key == " + repr(KEY) + ")\n",
        home,
    )
    assert out.split() == ["keyring", "True"]


def test_config_set_api_key_from_stdin_in_a_subprocess(home: Home) -> None:
    run_python(
        "from app.settings import set_value\n"
        "set_value('max_steps', '12')\n"
        "set_value('api_key', '-')\n",
        home,
        stdin=KEY + "\n",
    )
    data = json.loads((home.keyring / "keyring.json").read_text(encoding="utf-8"))
    assert data[SERVICE][ENDPOINT] == KEY
    settings_text = (home.config / "holodesk" / "settings.toml").read_text(encoding="utf-8")
    assert "max_steps = 12" in settings_text
    assert KEY not in settings_text


def test_subprocess_with_the_fail_backend_explains(home: Home) -> None:
    env = home.env()
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from app.settings import set_value; set_value('api_key', 'sk-x-123456')",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "SettingsError" in done.stderr and "gnome-keyring" in done.stderr
    assert "sk-x-123456" not in done.stderr


# --- keeping the key out of logs and snapshots -------------------------------------------------


def test_redact() -> None:
    assert redact(f"Bearer {KEY} rejected", [KEY]) == "Bearer *** rejected"
    assert redact("short abc", ["abc"]) == "short abc"  # too short to be a key: left alone


def test_redacting_filter_masks_messages_and_tracebacks() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter([KEY]))
    logger = logging.getLogger("holodesk.test.redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("header was %s", f"Bearer {KEY}")
        try:
            raise ValueError(f"Illegal header value b'Bearer {KEY}\\n'")
        except ValueError:
            logger.exception("request failed")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert KEY not in text
    assert text.count("***") >= 2
    assert "Illegal header value" in text


def test_scrub_settings_drops_secret_looking_keys() -> None:
    snapshot = {"endpoint": ENDPOINT, "api_key": KEY, "Auth_Token": "x", "max_steps": 3}
    assert scrub_settings(snapshot) == {"endpoint": ENDPOINT, "max_steps": 3}


def test_nothing_is_written_to_holodesk_folders_by_secret_operations(
    file_backend: FileBackend, home: Home
) -> None:
    store = KeyringStore(backend=file_backend)
    store_api_key(ENDPOINT, KEY, store)
    lookup_api_key(ENDPOINT, store, environ={})
    for folder in (paths.config_dir(), paths.data_dir(), paths.log_dir()):
        assert not folder.exists()
