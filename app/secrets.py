"""The API key: kept in the system keyring, never in settings.toml, the log, or the action log.

Decisions:

* One keyring entry per endpoint: service ``holodesk``, username = the normalized endpoint URL
  (``http://127.0.0.1:8000/v1``). A key meant for one server is therefore never sent to another
  one after the endpoint changes; the price is that a changed endpoint (even ``localhost`` for
  ``127.0.0.1``) needs the key stored again, and ``config show`` says so.
* ``HOLODESK_API_KEY`` overrides the keyring, for CI and headless machines without a Secret
  Service. It is read from the environment on every lookup and never persisted anywhere.
* No key at all is fine: vLLM on loopback usually runs without ``--api-key``. A keyring that
  cannot be read is therefore reported (:attr:`KeyLookup.problem`) rather than raised by
  :func:`lookup_api_key`; storing a key into an unusable keyring raises
  :class:`SecretsUnavailable` with what to do about it.
* Only the secure backends are used, an allow-list (:data:`SECURE_BACKENDS`): the Secret
  Service (GNOME Keyring, KWallet's Secret Service, through secretstorage or libsecret), KWallet
  itself, the macOS Keychain and the Windows Credential Locker. Anything else keyring would pick
  (keyrings.alt's plaintext or "encrypted" files, a third-party backend, the fail backend) is
  refused for reading and storing alike, with :data:`UNAVAILABLE_HELP`: a key that silently
  lands in a plain file breaks the promise that it lives only in the keyring. When keyring
  chains several backends, the first secure one in the chain is used.
* holodesk builds its keyring itself, from that allow-list (:func:`default_backend`): the best
  of them that works here, as keyring would rank them. It never lets the ``keyring`` package
  choose: keyring's own choice reads ``~/.config/python_keyring/keyringrc.cfg`` (a text file:
  ``keyring-path`` goes onto ``sys.path`` and ``default-keyring`` names a module to import),
  ``PYTHON_KEYRING_BACKEND`` and the installed packages' entry points, so a file written by any
  program as the person would import that program's Python into holodesk and decide which
  keyring holds the key of the approved safety settings.
* The test suite's keyrings reach holodesk only by code that runs inside its process: in
  process, :func:`use_keyring_backend` and :func:`vouch_for`; in a holodesk subprocess, the
  Python option ``-X holodesk_test_keyring=tests.MODULE.CLASS`` (:data:`TEST_KEYRING_OPTION`),
  honoured only for a class in the ``tests`` package of the checkout this holodesk runs from.
  Neither is a file or an environment variable: a ``-X`` option exists only on the command
  line that started Python, which a file in the home folder cannot add to the `holodesk`
  command, and an installed holodesk has no ``tests`` package.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import logging
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from model.problem import HolodeskError
from model.run_secrets import MIN_REDACT_LEN, RunSecrets, Unfinished, without_a_start

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

SERVICE = "holodesk"
ENV_API_KEY = "HOLODESK_API_KEY"

_MAX_KEY_LEN = 4096

_SECRET_NAME = re.compile(r"api[_-]?key|token|secret|password|passwd|authorization", re.I)

_log = logging.getLogger(__name__)

UNAVAILABLE_HELP = (
    "No secure system keyring was found to keep the API key; holodesk keeps it only in the "
    "Secret Service (GNOME Keyring or KWallet), the macOS Keychain or the Windows Credential "
    "Locker, never in a plain file. On Linux, install one (`sudo apt-get install gnome-keyring`) "
    "and log in to a desktop session that unlocks it; on a headless machine set "
    f"{ENV_API_KEY} in the environment of each run instead (it is never stored). "
    "`holodesk doctor` checks the keyring."
)

#: What to do when a secure keyring fails (locked): the end of that error's message, which
#: `holodesk doctor` says in its own fix instead.
LOCKED_HELP = (
    "If it is locked, unlock it (your desktop's keyring or password manager) and retry, or set "
    f"{ENV_API_KEY} in the environment of each run."
)

# Fully qualified class names (module.Class) of the backends that keep secrets in the desktop's
# own encrypted store. An allow-list, not a deny-list: a backend nobody here has reviewed may
# write the key anywhere.
SECURE_BACKENDS = frozenset({
    "keyring.backends.SecretService.Keyring",
    "keyring.backends.libsecret.Keyring",
    "keyring.backends.kwallet.DBusKeyring",
    "keyring.backends.kwallet.DBusKeyringKWallet4",
    "keyring.backends.macOS.Keyring",
    "keyring.backends.Windows.WinVaultKeyring",
})
#: ``python -X holodesk_test_keyring=tests.MODULE.CLASS``: the keyring of a holodesk the test
#: suite runs in a subprocess (see the module doc); only a class of the ``tests`` package beside
#: this holodesk's own ``app`` package.
TEST_KEYRING_OPTION = "holodesk_test_keyring"

# Chosen in this process by code running in it (the test suite's keyrings): never from a file.
_chosen: KeyringBackend | None = None
_vouched: frozenset[type] = frozenset()
_system: KeyringBackend | None = None  # the allow-list's best, once found


class SecretsError(HolodeskError):
    """Base class of errors about the API key."""


class SecretsUnavailable(SecretsError):
    """No keyring backend can store or read the key; the message says what to do."""


class InvalidApiKey(SecretsError, ValueError):
    """The key cannot be a valid bearer token (empty, whitespace or control characters)."""


class SecretStore(Protocol):
    """Where API keys are kept, one per endpoint."""

    def get(self, endpoint: str) -> str | None:
        """The key stored for ``endpoint``, or None."""
        ...

    def set(self, endpoint: str, secret: str) -> None:
        """Store (or replace) the key for ``endpoint``."""
        ...

    def delete(self, endpoint: str) -> bool:
        """Forget the key for ``endpoint``; False when there was none."""
        ...

    def backend_name(self) -> str:
        """A human-readable name of where keys go (never raises)."""
        ...


class KeyringStore:
    """A :class:`SecretStore` on the ``keyring`` package (Secret Service, Keychain, ...).

    ``keyring`` is imported on first use: finding the backend talks to D-Bus, which costs
    time and may log noise, and most commands never need the key. ``backend`` injects a
    specific keyring backend (tests); by default :func:`default_backend`, never keyring's own
    choice (see the module doc).
    """

    def __init__(self, backend: KeyringBackend | None = None, service: str = SERVICE) -> None:
        self._backend = backend
        self._service = service

    def _resolve_backend(self) -> KeyringBackend:
        if self._backend is None:
            self._backend = default_backend()
        return self._backend

    def _usable_backend(self) -> KeyringBackend:
        try:
            backend = self._resolve_backend()
        except Exception as exc:  # discovery runs arbitrary backend code (D-Bus, config files)
            raise SecretsUnavailable(f"{UNAVAILABLE_HELP} (keyring: {exc})") from exc
        secure = secure_backend(backend)
        if secure is None:
            raise SecretsUnavailable(f"{UNAVAILABLE_HELP} (keyring backend: {describe(backend)})")
        return secure

    def get(self, endpoint: str) -> str | None:
        backend = self._usable_backend()
        try:
            return backend.get_password(self._service, endpoint)
        except Exception as exc:  # locked collection, D-Bus gone, backend bug: all "unusable"
            raise self._failure("read", backend, exc) from exc

    def set(self, endpoint: str, secret: str) -> None:
        backend = self._usable_backend()
        try:
            backend.set_password(self._service, endpoint, secret)
        except Exception as exc:
            raise self._failure("store", backend, exc) from exc

    def delete(self, endpoint: str) -> bool:
        backend = self._usable_backend()
        # Backends disagree on deleting a missing entry (error or no-op): ask first.
        if self.get(endpoint) is None:
            return False
        try:
            backend.delete_password(self._service, endpoint)
        except Exception as exc:
            raise self._failure("delete", backend, exc) from exc
        return True

    def backend_name(self) -> str:
        try:
            backend = self._resolve_backend()
        except Exception as exc:
            return f"unavailable ({exc})"
        secure = secure_backend(backend)
        if secure is None:
            return f"unavailable ({describe(backend)})"
        return _qualname(secure)

    def _failure(self, verb: str, backend: KeyringBackend, exc: Exception) -> SecretsUnavailable:
        # The backend's own message never contains the secret: keyring passes it only as data.
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return SecretsUnavailable(
            f"could not {verb} the API key with keyring backend {_qualname(backend)} "
            f"({detail}). {LOCKED_HELP}"
        )


def _qualname(backend: object) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def is_secure(backend: object) -> bool:
    """Whether ``backend`` is one holodesk keeps a key in (:data:`SECURE_BACKENDS`), or one
    of a class this process vouched for (:func:`vouch_for`). Nothing the class says about
    itself counts: any module a config file names could say it."""
    return _qualname(backend) in SECURE_BACKENDS or type(backend) in _vouched


def vouch_for(cls: type[KeyringBackend]) -> None:
    """Accept backends of exactly ``cls`` as secure in this process: for the test suite's own
    keyrings, called by the code that made them, never from anything read."""
    global _vouched
    _vouched = _vouched | {cls}


def use_keyring_backend(backend: KeyringBackend | None) -> KeyringBackend | None:
    """Make ``backend`` (vouched for) the keyring of every :class:`KeyringStore` made without
    one in this process, or go back to :func:`default_backend`'s own choice with None; the one
    chosen before. For the test suite: in-process code only."""
    global _chosen
    before, _chosen = _chosen, backend
    if backend is not None:
        vouch_for(type(backend))
    return before


def default_backend() -> KeyringBackend:
    """The keyring holodesk uses: the one this process chose (:func:`use_keyring_backend`,
    or the ``-X`` option of :data:`TEST_KEYRING_OPTION`), else the best of
    :data:`SECURE_BACKENDS` that works here (the highest priority, as keyring ranks them),
    else keyring's fail backend. Never keyring's own discovery: it imports what
    ``keyringrc.cfg``, ``PYTHON_KEYRING_BACKEND`` or an entry point names."""
    global _system
    if _chosen is not None:
        return _chosen
    injected = _test_keyring()
    if injected is not None:
        return injected
    if _system is None:
        _system = _best_secure()
    if _system is not None:
        return _system
    from keyring.backends import fail

    return fail.Keyring()  # type: ignore[no-untyped-call]


def _best_secure() -> KeyringBackend | None:
    """The viable backend of the allow-list with the highest priority; only keyring's own
    modules are imported (their names are in :data:`SECURE_BACKENDS`)."""
    found: list[tuple[float, str, type[KeyringBackend]]] = []
    for name in sorted(SECURE_BACKENDS):
        module_name, _, class_name = name.rpartition(".")
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
            priority = float(cls.priority)  # raises when it cannot work here (no D-Bus...)
        except Exception as exc:  # an import or a check of a platform's keyring failing
            _log.debug("keyring backend %s is not usable here: %s", name, exc)
            continue
        found.append((priority, name, cls))
    if not found:
        return None
    backend: KeyringBackend = max(found, key=lambda f: (f[0], f[1]))[2]()
    return backend


def _test_keyring() -> KeyringBackend | None:
    """The test suite's keyring named by ``-X holodesk_test_keyring=MODULE.CLASS`` (None
    without the option). Only a class of the ``tests`` package of the checkout holding this
    holodesk: an installed holodesk has none, and the option is no file."""
    name = sys._xoptions.get(TEST_KEYRING_OPTION)
    if not isinstance(name, str) or not name:
        return None
    module_name, _, class_name = name.rpartition(".")
    tests = Path(__file__).resolve().parents[1] / "tests"
    spec = importlib.machinery.PathFinder.find_spec("tests")  # found, not run
    origin = Path(spec.origin).resolve() if spec is not None and spec.origin else None
    if not module_name.startswith("tests.") or origin != tests / "__init__.py":
        _log.warning("-X %s=%s is refused: not a class of %s", TEST_KEYRING_OPTION, name, tests)
        return None
    try:
        module = importlib.import_module(module_name)
        where = Path(module.__file__ or "").resolve()
        if tests not in where.parents:
            raise ImportError(f"{module_name} is {where}, outside {tests}")
        cls = getattr(module, class_name)
        backend = cls()
    except Exception as exc:
        _log.warning("-X %s=%s is refused: %s", TEST_KEYRING_OPTION, name, exc)
        return None
    vouch_for(type(backend))
    return backend  # type: ignore[no-any-return]


def secure_backend(backend: KeyringBackend) -> KeyringBackend | None:
    """``backend`` itself when it is secure; for keyring's chainer, the first secure backend it
    chains (the one a write would go to among those allowed); else None."""
    from keyring.backends import chainer

    if isinstance(backend, chainer.ChainerBackend):
        return next((b for b in chainer.ChainerBackend.backends if is_secure(b)), None)
    return backend if is_secure(backend) else None


def describe(backend: object) -> str:
    """The backend's name and why it is not used, for messages (never raises)."""
    from keyring.backends import chainer, fail, null

    name = _qualname(backend)
    if isinstance(backend, fail.Keyring | null.Keyring):
        return f"{name}: no keyring found"
    if isinstance(backend, chainer.ChainerBackend):
        chained = ", ".join(_qualname(b) for b in chainer.ChainerBackend.backends)
        return f"{name} of {chained or 'nothing'}: none of them is a secure keyring"
    return f"{name}: not a secure keyring, refused"


def validate_api_key(key: str) -> str:
    """Return the key without surrounding whitespace, or raise :class:`InvalidApiKey`.

    A pasted key often ends with a newline; inside a key, whitespace or control characters
    would make an invalid HTTP header, and HTTP libraries echo invalid header values in their
    error messages, which would put the key in logs.
    """
    cleaned = key.strip()
    if not cleaned:
        raise InvalidApiKey("the API key is empty")
    if len(cleaned) > _MAX_KEY_LEN:
        raise InvalidApiKey(f"the API key is longer than {_MAX_KEY_LEN} characters")
    if any(ch.isspace() or not ch.isprintable() for ch in cleaned):
        raise InvalidApiKey("the API key contains whitespace or control characters")
    return cleaned


@dataclass(frozen=True)
class KeyLookup:
    """The outcome of looking up the key for an endpoint; its repr never shows the key."""

    key: str | None = field(repr=False)
    source: Literal["env", "keyring", "none"]
    backend: str
    problem: str | None = None

    def describe(self) -> str:
        """Where the key comes from, for ``config show`` and error messages (no key shown)."""
        if self.source == "env":
            return f"from ${ENV_API_KEY} (environment, not persisted)"
        if self.source == "keyring":
            return f"stored in the keyring ({self.backend})"
        if self.problem:
            return f"none (keyring unreadable: {self.problem})"
        return (
            f"none stored (keyring: {self.backend}); store one with `holodesk config set api_key -`"
        )


def lookup_api_key(
    endpoint: str,
    store: SecretStore | None = None,
    environ: Mapping[str, str] | None = None,
) -> KeyLookup:
    """Find the key for ``endpoint``: ``HOLODESK_API_KEY`` first, then the keyring.

    Never raises for an unusable keyring: the key is optional, so the caller decides whether a
    missing key matters (e.g. after an HTTP 401) and can show :attr:`KeyLookup.problem`.
    """
    env = os.environ if environ is None else environ
    store = KeyringStore() if store is None else store
    from_env = env.get(ENV_API_KEY, "").strip()
    if from_env:
        return KeyLookup(from_env, "env", store.backend_name())
    try:
        stored = store.get(endpoint)
    except SecretsUnavailable as exc:
        return KeyLookup(None, "none", store.backend_name(), problem=str(exc))
    if stored:
        return KeyLookup(stored, "keyring", store.backend_name())
    return KeyLookup(None, "none", store.backend_name())


def api_key(
    endpoint: str,
    store: SecretStore | None = None,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """The key to send to ``endpoint``, or None (no key: fine for a loopback vLLM).

    Shorthand for :func:`lookup_api_key` for wiring a client; an unreadable keyring is logged
    (without raising) so a later HTTP 401 can be explained from the log.
    """
    found = lookup_api_key(endpoint, store, environ)
    if found.problem:
        _log.info("no API key from the keyring: %s", found.problem)
    return found.key


def store_api_key(endpoint: str, key: str, store: SecretStore | None = None) -> str:
    """Validate and store the key for ``endpoint``; returns the backend name for the message.

    For ``holodesk config set-key``: read the key with :func:`getpass.getpass` or from stdin,
    never from the command line (it would land in the shell history).
    """
    store = KeyringStore() if store is None else store
    store.set(endpoint, validate_api_key(key))
    return store.backend_name()


def delete_api_key(endpoint: str, store: SecretStore | None = None) -> bool:
    """Forget the stored key for ``endpoint``; False when there was none."""
    store = KeyringStore() if store is None else store
    return store.delete(endpoint)


def scrub_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a settings snapshot without keys named like secrets (dropped with a warning).

    Settings never hold the key; this guards the action log and exports against a snapshot
    that was built from something else by mistake.
    """
    clean: dict[str, Any] = {}
    for key, value in settings.items():
        if _SECRET_NAME.search(str(key)):
            _log.warning("dropped %r from a settings snapshot: it looks like a secret", key)
            continue
        clean[str(key)] = value
    return clean


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``***``."""
    for secret in secrets:
        if len(secret) >= MIN_REDACT_LEN and secret in text:
            text = text.replace(secret, "***")
    return text


def redact_unfinished(text: str, secrets: Iterable[str]) -> str:
    """:func:`redact` for text still arriving (a streamed answer so far): also holds back an
    end that may be the start of a secret, since its rest is not there yet to be recognized.
    Once the rest arrives, the whole secret is masked; a look-alike end shows with it."""
    usable = [s for s in secrets if len(s) >= MIN_REDACT_LEN]
    return without_a_start(redact(text, usable), usable)


class RedactingFilter(logging.Filter):
    """A logging filter that masks known secrets in messages and tracebacks.

    Defense in depth: nothing in holodesk logs the key on purpose, but an exception from an
    HTTP library may quote a header. Attach it to the log *handlers* (filters on a logger do
    not apply to records propagated from child loggers).
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._secrets: set[str] = set()
        self._runs: tuple[RunSecrets, ...] = ()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str) -> None:
        """Start masking ``secret`` (ignored when too short to be a real key)."""
        if len(secret) >= MIN_REDACT_LEN:
            # A new set, never a changed one: other threads iterate it (a log record, a
            # problem report) while a run adds what it typed.
            self._secrets = self._secrets | {secret}

    def watch(self, run: RunSecrets) -> None:
        """Mask every form of ``run``'s secrets, those it learns later too (a run's typed
        secrets), for the rest of the process."""
        if all(r is not run for r in self._runs):
            self._runs = (*self._runs, run)

    def settle(self, run: RunSecrets) -> None:
        """``run`` is over and learns nothing more: keep masking its secrets' forms as plain
        secrets, and stop watching it, so the watched runs are only the live ones (every log
        line goes through each; a desktop app makes hundreds of runs, mostly with one key)."""
        if any(r is run for r in self._runs):
            # Added before it is dropped: another thread's record sees one or the other.
            self._secrets = self._secrets | {f for f in run.forms() if len(f) >= MIN_REDACT_LEN}
            self._runs = tuple(r for r in self._runs if r is not run)

    def secrets(self) -> frozenset[str]:
        """The secrets masked so far (the watched runs' in every form)."""
        return frozenset(self._secrets).union(*(r.forms() for r in self._runs))

    def _redact(self, text: str) -> str:
        text = redact(text, self._secrets)
        for run in self._runs:
            text = run.mask(text)
        return text

    def _redact_arg(self, text: str) -> str:
        if not isinstance(text, Unfinished):
            return self._redact(text)
        # It may end inside a secret: that start, no form of it, is held back too.
        text = RunSecrets.masking(self._secrets).mask_unfinished(text)
        for run in self._runs:
            text = run.mask_unfinished(text)
        return text

    def _redacted_args(self, args: Any) -> Any:
        if isinstance(args, tuple):
            return tuple(self._redact_arg(a) if isinstance(a, str) else a for a in args)
        if isinstance(args, Mapping):
            return {k: self._redact_arg(v) if isinstance(v, str) else v
                    for k, v in args.items()}
        return args

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._secrets and not any(self._runs):
            return True
        # Each text argument before the line is formatted: a precision in the format
        # ("%.500s", model/client.py's rejected answer) would cut a secret to a start that is
        # no form of it, and that start would be written.
        record.args = self._redacted_args(record.args)
        message = record.getMessage()
        cleaned = self._redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self._redact(record.stack_info)
        return True
