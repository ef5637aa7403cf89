"""Is the model server ready for a run? A probe in plain words, and a background poller.

:func:`probe` asks the server, in order: does anything answer (``GET /health``), is the model
loaded, is the API key accepted and the model name served (``GET /v1/models``), is the context
window long enough for a step, and does it accept the three screenshots a step sends (one tiny
request with three small images and ``max_tokens=1``). The first problem found is the
:class:`ServerStatus`; its ``message`` and ``fix`` come from :mod:`model.errors` where one fits.

:class:`StatusPoller` repeats the probe on a thread and reports changes. No Qt here: a UI
bounces the callback to its own thread (``ui.workers.run_on_main``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from model.client import ClientConfig, HolotronClient
from model.errors import (
    AuthFailed,
    ContextTooLong,
    HolotronError,
    ModelLoading,
    ModelNotFound,
    RequestTimeout,
    ServerUnreachable,
    TooManyImages,
)
from model.plain_http import PlainHttpRefused
from model.problem import Fix, Problem, as_fix, describe

__all__ = [
    "IMAGES_PER_STEP",
    "MIN_CONTEXT",
    "RECOMMENDED_CONTEXT",
    "STATES",
    "ServerStatus",
    "State",
    "StatusPoller",
    "probe",
]

_log = logging.getLogger(__name__)

State = Literal[
    "ok", "down", "loading", "wrong_model", "image_limit", "context_short", "auth", "error"
]
STATES: tuple[State, ...] = (
    "ok", "down", "loading", "wrong_model", "image_limit", "context_short", "auth", "error",
)  # fmt: skip

IMAGES_PER_STEP = 3  # the history a step sends (docs/holotron.md)
# 3 screenshots x 2,304 tokens (a 16:9 frame: 4x2 tiles + thumbnail) + ~4,000 for the system
# prompt, notes, past actions and the answer, rounded up to the next power of two.
MIN_CONTEXT = 16384
RECOMMENDED_CONTEXT = 32768

# The image probe generates one token, but on a busy GPU it waits its turn behind other work:
# give it longer than the instant /health and /v1/models.
_IMAGE_PROBE_FACTOR = 5.0


@dataclass(frozen=True)
class ServerStatus:
    """What the probe found: a ``message`` and, on a problem, a :class:`Fix` (``problem``).

    ``models`` lists the served names (empty when the server was not reached that far);
    ``max_model_len`` is the served model's context window when ``/v1/models`` reports it.
    A fix given as plain words becomes a :class:`Fix`.
    """

    state: State
    message: str
    fix: Fix | None = None
    endpoint: str = ""
    model: str | None = None
    models: list[str] = field(default_factory=list)
    max_model_len: int | None = None

    def __post_init__(self) -> None:
        fix: Fix | str | None = self.fix
        object.__setattr__(self, "fix", as_fix(fix))

    @property
    def ok(self) -> bool:
        """Whether a run can start against this server."""
        return self.state == "ok"

    @property
    def problem(self) -> Problem:
        """The message and the fix, for a front end's renderer."""
        return Problem(self.message, self.fix)

    def describe(self) -> str:
        """The message and, when there is one, the fix: two lines for a dialog or tooltip."""
        return describe(self.message, self.fix)


def probe(
    endpoint: str,
    api_key: str | None,
    model: str | None,
    *,
    timeout: float = 3.0,
    check_images: bool = True,
    tls_fingerprint: str | None = None,
    plain_http_ok: bool = False,
) -> ServerStatus:
    """Probe the server at ``endpoint`` (an OpenAI-compatible base URL); never raises.

    ``model`` None means "whatever the server serves". ``timeout`` bounds connecting and each
    quick request; the image probe (skipped with ``check_images=False``) gets five times that.
    ``tls_fingerprint`` pins an https server's certificate (the ``tls_fingerprint`` setting);
    ``plain_http_ok`` is the person's consent to plain http to another machine (without it
    such an endpoint is not asked anything: the key would cross the network in clear).
    """
    try:
        client = HolotronClient(
            ClientConfig(
                base_url=endpoint,
                api_key=api_key,
                model=model,
                connect_timeout=timeout,
                request_timeout=timeout,
                max_retries=0,
                tls_fingerprint=tls_fingerprint,
                plain_http_ok=plain_http_ok,
            )
        )
    except PlainHttpRefused as exc:
        return ServerStatus("error", exc.message, exc.fix, endpoint=endpoint)
    except Exception as exc:  # a malformed URL, mostly
        return ServerStatus(
            "error",
            f"The endpoint {endpoint!r} cannot be used ({exc}).",
            Fix("Enter the server's base URL, such as http://127.0.0.1:8000/v1.",
                setting="endpoint"),
            endpoint=endpoint,
        )
    with client:
        return _probe(client, endpoint, timeout, check_images)


def _probe(
    client: HolotronClient, endpoint: str, timeout: float, check_images: bool
) -> ServerStatus:
    models: list[str] = []
    max_len: int | None = None
    name: str | None = None
    try:
        client.health()
        served = client.served_models()
        models = [entry.name for entry in served]
        name = client.resolve_model()
        max_len = next((entry.max_model_len for entry in served if entry.name == name), None)
        if max_len is not None and max_len < MIN_CONTEXT:
            return ServerStatus(
                "context_short",
                f"The server's context window is {max_len} tokens: too short for a step, which "
                f"sends {IMAGES_PER_STEP} screenshots (about 2,304 tokens each) plus the task "
                f"and the answer. It needs at least {MIN_CONTEXT} tokens, "
                f"{RECOMMENDED_CONTEXT} recommended.",
                Fix(f"Restart vLLM with `--max-model-len {RECOMMENDED_CONTEXT}`."),
                endpoint=client.base_url,
                model=name,
                models=models,
                max_model_len=max_len,
            )
        if check_images:
            client.probe_images(IMAGES_PER_STEP, timeout=timeout * _IMAGE_PROBE_FACTOR)
    except HolotronError as exc:
        return ServerStatus(
            _state_of(exc),
            exc.message,
            exc.fix,
            endpoint=client.base_url,
            model=name,
            models=models,
            max_model_len=max_len,
        )
    except Exception as exc:  # a bug or an odd server must still give a status, not a crash
        _log.exception("server probe failed unexpectedly")
        return ServerStatus(
            "error",
            f"Checking the model server failed: {type(exc).__name__}: {exc}",
            Fix("See the log file for details."),
            endpoint=client.base_url,
            models=models,
        )
    # The same words with or without the image probe: the poller reports only changes.
    window = f"context {max_len} tokens" if max_len is not None else "context length not reported"
    return ServerStatus(
        "ok",
        f"The model server at {client.base_url} is ready: it serves '{name}' ({window}).",
        endpoint=client.base_url,
        model=name,
        models=models,
        max_model_len=max_len,
    )


def _state_of(exc: HolotronError) -> State:
    if isinstance(exc, ServerUnreachable | RequestTimeout):
        return "down"
    if isinstance(exc, ModelLoading):
        return "loading"
    if isinstance(exc, ModelNotFound):
        return "wrong_model"
    if isinstance(exc, TooManyImages):
        return "image_limit"
    if isinstance(exc, ContextTooLong):
        return "context_short"
    if isinstance(exc, AuthFailed):
        return "auth"
    return "error"


ProbeFn = Callable[..., ServerStatus]


class StatusPoller:
    """Probes the server every ``interval`` seconds on a daemon thread.

    ``callback`` runs on the poller's thread with the first status and then with every status
    that differs from the previous one. The image probe (one generated token) runs only while
    the server was not known to be fine: on the first probe and after any problem; a server
    that stays up is checked with ``/health`` and ``/v1/models`` alone.
    """

    def __init__(
        self,
        endpoint: str,
        api_key: str | None,
        model: str | None,
        callback: Callable[[ServerStatus], None],
        *,
        interval: float = 10.0,
        timeout: float = 3.0,
        probe_fn: ProbeFn = probe,
    ) -> None:
        self._config = (endpoint, api_key, model)
        # The pin and the plain-http consent, passed only when set (custom probe_fns).
        self._extra: dict[str, str | bool] = {}
        self._callback = callback
        self.interval = interval
        self._timeout = timeout
        self._probe = probe_fn
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._last: ServerStatus | None = None
        self._thread: threading.Thread | None = None

    @property
    def last(self) -> ServerStatus | None:
        """The most recent status, or None before the first probe finished."""
        with self._lock:
            return self._last

    def start(self) -> StatusPoller:
        """Start probing (the first probe runs at once); returns self."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="holodesk-status", daemon=True)
            self._thread.start()
        return self

    def configure(self, endpoint: str, api_key: str | None, model: str | None,
                  tls_fingerprint: str | None = None, plain_http_ok: bool = False) -> None:
        """Probe another server (or with another key or model) from now on, at once."""
        with self._lock:
            self._config = (endpoint, api_key, model)
            self._extra = {k: v for k, v in (("tls_fingerprint", tls_fingerprint),
                                             ("plain_http_ok", plain_http_ok)) if v}
            self._last = None  # a new server: report its first status even if it looks the same
        self._wake.set()

    def poll_now(self) -> None:
        """Probe again without waiting for the interval."""
        self._wake.set()

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop polling and wait (up to ``timeout``) for a probe in flight to end."""
        self._stopped.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _loop(self) -> None:
        while not self._stopped.is_set():
            self._wake.clear()
            with self._lock:
                endpoint, api_key, model = self._config
                extra = dict(self._extra)
                previous = self._last
            full = previous is None or not previous.ok
            try:
                status = self._probe(
                    endpoint, api_key, model, timeout=self._timeout, check_images=full, **extra
                )
            except Exception as exc:  # a custom probe_fn: keep polling whatever it does
                _log.exception("status probe raised")
                status = ServerStatus("error", f"Checking the model server failed: {exc}")
            if self._stopped.is_set():
                return
            with self._lock:
                changed = self._config == (endpoint, api_key, model) and status != self._last
                if changed:
                    self._last = status
            if changed:
                try:
                    self._callback(status)
                except Exception:
                    _log.exception("status callback raised")
            self._wake.wait(self.interval)
