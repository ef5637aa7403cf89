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
from keyring.backends import chainer, fail, null

from app import paths
from app.secrets import (
    ENV_API_KEY,
    SECURE_BACKENDS,
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
    vouch_for,
)
from tests.support.home import REPO_ROOT, Home, isolate_home
from tests.support.keyring_backend import (
    DIR_ENV,
    OPTION,
    FileBackend,
    LockedBackend,
    PlainFileBackend,
)
from tests.support.memory_secrets import MemoryStore

KEY = "sk-holodesk-test-0123456789abcdef"
ENDPOINT = "http://127.0.0.1:8000/v1"
BACKEND_PATH = "tests.support.keyring_backend.FileBackend"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


vouch_for(LockedBackend)  # it stands for a Secret Service that stays locked


@pytest.fixture
def file_backend(home: Home, monkeypatch: pytest.MonkeyPatch) -> FileBackend:
    monkeypatch.setenv(DIR_ENV, str(home.keyring))
    return FileBackend()


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
        for hint in ("gnome-keyring", "KWallet", "holodesk doctor", ENV_API_KEY):
            assert hint in message
        # The way out is a real keyring or the environment, never a plaintext one.
        assert "keyrings.alt" not in message
        assert KEY not in message
    assert store.backend_name().startswith("unavailable")


def test_locked_keyring_says_to_unlock(home: Home) -> None:
    store = KeyringStore(backend=LockedBackend())
    with pytest.raises(SecretsUnavailable, match=r"unlock it .* and retry") as err:
        store.set(ENDPOINT, KEY)
    assert "KeyringLocked" in str(err.value)
    assert KEY not in str(err.value)


def named(module: str, name: str) -> KeyringBackend:
    """A working in-memory backend whose class carries ``module.name``: the allow-list goes by
    the class's full name, and the real Secret Service or Keychain cannot run here."""
    secrets: dict[tuple[str, str], str] = {}

    def get_password(self: KeyringBackend, service: str, username: str) -> str | None:
        return secrets.get((service, username))

    def set_password(self: KeyringBackend, service: str, username: str, password: str) -> None:
        secrets[(service, username)] = password

    def delete_password(self: KeyringBackend, service: str, username: str) -> None:
        del secrets[(service, username)]

    cls = type(name, (KeyringBackend,), {
        "priority": -10, "__module__": module, "__qualname__": name,
        "get_password": get_password, "set_password": set_password,
        "delete_password": delete_password,
    })
    backend: KeyringBackend = cls()
    return backend


@pytest.mark.parametrize("full_name", sorted(SECURE_BACKENDS))
def test_each_secure_backend_keeps_the_key(full_name: str) -> None:
    module, _, name = full_name.rpartition(".")
    store = KeyringStore(backend=named(module, name))
    exercise(store)
    assert store.backend_name() == full_name


@pytest.mark.parametrize("full_name", [
    "keyrings.alt.file.PlaintextKeyring",
    "keyrings.alt.file.EncryptedKeyring",  # its password sits next to it or is asked on a tty
    "keyrings.alt.Gnome.Keyring",
    "keyring_pass.PasswordStoreBackend",  # a third-party backend nobody here has reviewed
    "keyring.backends.SecretService.KeyringLookalike",
])
def test_a_backend_outside_the_allow_list_is_refused(full_name: str) -> None:
    module, _, name = full_name.rpartition(".")
    backend = named(module, name)
    store = KeyringStore(backend=backend)
    for attempt in (lambda: store.set(ENDPOINT, KEY), lambda: store.get(ENDPOINT)):
        with pytest.raises(SecretsUnavailable) as err:
            attempt()
        assert full_name in str(err.value) and "not a secure keyring" in str(err.value)
        assert "keyrings.alt" not in str(err.value).replace(full_name, "")
    assert backend.get_password(SERVICE, ENDPOINT) is None  # nothing was written through it
    assert store.backend_name().startswith("unavailable")


def test_a_plain_file_backend_writes_nothing(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DIR_ENV, str(home.keyring))
    with pytest.raises(SecretsUnavailable):
        store_api_key(ENDPOINT, KEY, KeyringStore(backend=PlainFileBackend()))
    assert not (home.keyring / "keyring.json").exists()
    found = lookup_api_key(ENDPOINT, KeyringStore(backend=PlainFileBackend()), environ={})
    assert found.key is None and found.problem is not None


def test_a_chain_uses_its_first_secure_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = named("keyrings.alt.file", "PlaintextKeyring")
    secure = named("keyring.backends.SecretService", "Keyring")
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [plain, secure])
    store = KeyringStore(backend=chainer.ChainerBackend())
    store.set(ENDPOINT, KEY)
    assert secure.get_password(SERVICE, ENDPOINT) == KEY
    assert plain.get_password(SERVICE, ENDPOINT) is None
    assert store.backend_name() == "keyring.backends.SecretService.Keyring"

    monkeypatch.setattr(chainer.ChainerBackend, "backends", [plain])
    store = KeyringStore(backend=chainer.ChainerBackend())
    with pytest.raises(SecretsUnavailable, match="none of them is a secure keyring"):
        store.set(ENDPOINT, KEY)
    assert plain.get_password(SERVICE, ENDPOINT) is None


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
    assert found.problem is not None and ENV_API_KEY in found.problem
    assert "keyrings.alt" not in found.problem
    assert "keyring unreadable" in found.describe()
    # The environment still works without any keyring: the CI and headless path.
    found = lookup_api_key(ENDPOINT, KeyringStore(backend=fail.Keyring()), {ENV_API_KEY: KEY})
    assert (found.key, found.source) == (KEY, "env")


# --- through keyring's own backend selection, in a subprocess -------------------------------


def run_python(code: str, home: Home, stdin: str = "") -> str:
    env = home.env()
    done = subprocess.run(
        [sys.executable, "-X", OPTION, "-c", code],
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


def test_subprocess_selects_the_file_backend_via_the_test_option(home: Home) -> None:
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


@pytest.mark.parametrize("chosen", ["none", "environment", "config-file"])
def test_subprocess_without_a_secure_keyring_explains(home: Home, chosen: str) -> None:
    """No secure keyring here (no D-Bus session): nothing chooses one for holodesk, neither
    ``PYTHON_KEYRING_BACKEND`` nor keyring's config file naming a plain file backend."""
    env = home.env()
    if chosen == "environment":
        env["PYTHON_KEYRING_BACKEND"] = "tests.support.keyring_backend.FileBackend"
    elif chosen == "config-file":
        folder = home.config / "python_keyring"
        folder.mkdir(parents=True)
        (folder / "keyringrc.cfg").write_text(
            "[backend]\ndefault-keyring = tests.support.keyring_backend.FileBackend\n"
            f"keyring-path = {REPO_ROOT}\n", encoding="utf-8")
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
    assert not (home.keyring / "keyring.json").exists()


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


def test_the_test_option_names_only_a_class_of_this_checkouts_tests(
        home: Home, tmp_path: Path) -> None:
    """The -X option is the test suite's, for its own package: a ``tests`` package found
    elsewhere first on the path (another project's, or one a program wrote) is not loaded."""
    other = tmp_path / "other" / "tests" / "support"
    other.mkdir(parents=True)
    for folder in (other.parent, other):
        (folder / "__init__.py").write_text("", encoding="utf-8")
    (other / "keyring_backend.py").write_text(
        "import pathlib\npathlib.Path(__file__).with_name('ran').write_text('yes')\n"
        "from tests.support.keyring_backend_real import *\n", encoding="utf-8")
    env = home.env()
    env["PYTHONPATH"] = f"{tmp_path / 'other'}:{env['PYTHONPATH']}"
    done = subprocess.run(
        [sys.executable, "-X", OPTION, "-c",
         "from app.secrets import KeyringStore; print(KeyringStore().backend_name())"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("unavailable"), done.stdout
    assert not (other / "ran").exists()
