"""The HTTP client for Holotron served by vLLM: one call per agent step, streamed, cancellable.

:class:`HolotronClient` sends the conversation with the step schema as vLLM structured output
(``structured_outputs: {"json": schema}``, never the removed ``guided_json``), streams the
answer (so a UI can show it and a stop can cut it short), strips a leading ``<think>`` block,
validates it as a :class:`model.schema.Step`, and retries an invalid answer a couple of times
at a higher temperature. Streamed tool calls (H's native function-calling contract) are put
together by index (model/tool_calls.py) and decoded by the codec like any answer. Every
failure becomes a :mod:`model.errors` error with a plain fix.

Threads: :meth:`HolotronClient.next_step` runs the HTTP exchange in a worker thread and waits
for its events, so :meth:`HolotronClient.cancel` (from any thread) returns control at once; it
also shuts the sockets down, so the worker ends and vLLM sees the disconnect and stops
generating. One ``next_step`` at a time per client.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import re
import socket
import ssl
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

import httpcore2
import httpx2
import openai
from openai.types.chat import ChatCompletion

from model.contracts.base import Codec, ToolCall, invalid
from model.contracts.legacy import LegacyCodec, joined
from model.contracts.legacy import clean_answer as clean_answer  # re-exported
from model.contracts.legacy import parse_step as parse_step  # re-exported
from model.endpoint import DEFAULT_BASE_URL, normalize_base_url, root_url_of
from model.errors import (
    AnswerTooLong,
    AuthFailed,
    BadRequest,
    Cancelled,
    CertificateNotPinned,
    CertificateUntrusted,
    ContextFull,
    ContextTooLong,
    HolotronError,
    InvalidOutput,
    ModelLoading,
    ModelNotFound,
    RequestTimeout,
    ServerError,
    ServerUnreachable,
    TooManyImages,
)
from model.plain_http import PlainHttpRefused, host_address, needs_consent
from model.run_secrets import RunSecrets, Unfinished, forms_of
from model.schema import Step
from model.sdk_adapter import post_chat, stream_chat, wrap_network_backend
from model.stream_chunk import read_chunk
from model.tls import CertificateMismatch, pinned_context
from model.tool_calls import ToolCallAccumulator, calls_text

logger = logging.getLogger(__name__)

NO_KEY = "EMPTY"  # what vLLM's docs send when the server has no --api-key (it ignores the header)
_QUICK_READ = 15.0  # read timeout for /health and /v1/models: they answer at once or never
_TRANSPORT_RETRIES = 1  # a connection or 5xx failure is retried once, after _BACKOFF seconds
_BACKOFF = 0.5
# The most bytes of answer (reasoning and content, UTF-8) read before the client gives up. The
# longest valid step is a type of 10,000 characters (model.schema.MAX_TYPE_CHARS), at worst
# every one a JSON-escaped surrogate pair (12 bytes): 120 KB, and ``max_tokens`` (1024) keeps
# a real answer to a few KiB. Only a server ignoring ``max_tokens`` gets past this.
MAX_ANSWER_BYTES = 256 * 1024
# A 28x28 white PNG (one 28-pixel vision patch): the cheapest image a vision model accepts.
_PROBE_IMAGE_URL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABwAAAAcCAIAAAD9b0jDAAAAKElEQVR42mP8//8/A7UBEwMNwKiho4aOGjpq"
    "6Kiho4aOGjpq6OAzFADRYgM1sivIJAAAAABJRU5ErkJggg=="
)


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class ClientConfig:
    """How to reach the server and how to sample.

    ``model`` None means "whatever the server serves" (the first name of ``/v1/models``).
    ``max_retries`` is how many times an answer that is not a valid step is asked again (at
    ``retry_temperature``). ``request_timeout`` bounds each HTTP attempt from sending to the
    last token; ``max_answer_bytes`` bounds the answer's size (see :data:`MAX_ANSWER_BYTES`).
    ``tls_fingerprint`` pins an ``https`` server's certificate by its SHA-256 fingerprint
    (:mod:`model.tls`): exactly that certificate is accepted, CA and host name aside.
    ``plain_http_ok`` is the person's consent to plain http for this endpoint when it is
    another machine (:mod:`model.plain_http`); without it the client refuses to be made, so
    nothing (no screenshot, no key) leaves unencrypted whichever front end built it.
    """

    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = field(default=None, repr=False)
    model: str | None = None
    connect_timeout: float = 5.0
    request_timeout: float = 120.0
    max_retries: int = 2
    temperature: float = 0.0
    retry_temperature: float = 0.5
    max_tokens: int = 1024
    max_answer_bytes: int = MAX_ANSWER_BYTES
    tls_fingerprint: str | None = None
    plain_http_ok: bool = False


@dataclass(frozen=True)
class ServedModel:
    """One entry of ``GET /v1/models``."""

    name: str
    max_model_len: int | None = None
    root: str | None = None


@dataclass(frozen=True)
class Localized:
    """A localization's answer: the point in 0-1000 of the image sent, and the raw text."""

    x: int
    y: int
    raw: str


@dataclass(frozen=True)
class ReasoningProbe:
    """What a small thinking request came back as: the reasoning the server sent apart, the
    content, and why it stopped (``length``: cut at the probe's budget)."""

    reasoning: str
    content: str
    finish_reason: str | None


# A point is about 20 tokens of JSON: room for it, not for an essay.
_LOCALIZE_TOKENS = 64


@dataclass(frozen=True)
class StepReply:
    """A validated step and what it cost.

    ``raw`` is the accepted answer as the model wrote it; ``raw_attempts`` holds every answer of
    this call, rejected ones first. Token counts and timing are those of the accepted attempt;
    ``elapsed`` covers the whole call, retries included.
    """

    step: Step
    raw: str
    attempts: int
    prompt_tokens: int | None
    completion_tokens: int | None
    elapsed: float
    time_to_first_token: float | None
    raw_attempts: tuple[str, ...] = ()
    model: str = ""
    finish_reason: str | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    """Reasoning tokens of the accepted attempt: the server's figure, or, when it sends none,
    the number of reasoning deltas streamed (``reasoning_estimated``); None: not known
    (see :func:`reasoning_count`)."""
    reasoning_estimated: bool = False

    @property
    def ttft(self) -> float | None:
        """Short name of :attr:`time_to_first_token`."""
        return self.time_to_first_token


# --------------------------------------------------------------------------- pure helpers


def reasoning_count(reported: int | None, deltas: int) -> tuple[int | None, bool]:
    """A step's reasoning tokens and whether the figure is holodesk's estimate.

    vLLM run with a reasoning parser reports ``completion_tokens_details.reasoning_tokens`` in
    its last usage chunk from the release that counts them; older releases send nothing
    (docs/vllm-protocol.md, "Reasoning tokens"). Then the count is the reasoning deltas
    streamed: vLLM streams about one delta per generated token, so it is close but not exact
    (a delta may hold several tokens, and the ``<think>`` markers are not streamed). No figure
    and no reasoning delta: not known (None); the reasoning may have landed in the content of
    a server without a parser.
    """
    if reported is not None:
        return reported, False
    if deltas:
        return deltas, True
    return None, False


# --------------------------------------------------------------------------- cancellable sockets


class _SocketRegistry:
    """Every socket the client has open, so cancel() can shut them down from another thread.

    Closing a socket does not wake a thread blocked reading it; ``shutdown`` does, everywhere.
    """

    def __init__(self) -> None:
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._lock = threading.Lock()

    def add(self, stream: httpcore2.NetworkStream) -> None:
        sock = stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            with self._lock:
                self._sockets.add(sock)

    def abort_all(self) -> int:
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            # socket.socket.shutdown even for an SSLSocket: its own shutdown() also resets the
            # TLS object another thread may be using; the plain one only cuts the connection.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
        return len(sockets)


class _TrackedStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream, registry: _SocketRegistry) -> None:
        self._inner = inner
        self._registry = registry
        registry.add(inner)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        # TLS wraps the socket into a new object: track that one too.
        return _TrackedStream(
            self._inner.start_tls(ssl_context, server_hostname, timeout), self._registry
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _TrackingBackend(httpcore2.NetworkBackend):
    """Tracks every socket (for cancel) and, for plain http nobody agreed to, lets a connection
    through only to this machine's loopback: a name that looks like loopback (``localhost.``,
    ``x.localhost``) may be answered by the network's DNS, and where the socket really went is
    what counts (model/plain_http.py)."""

    def __init__(self, inner: httpcore2.NetworkBackend, registry: _SocketRegistry,
                 loopback_only: str | None = None) -> None:
        self._inner = inner
        self._registry = registry
        self._loopback_only = loopback_only  # the endpoint, when only loopback may be reached

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        stream = self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        if self._loopback_only is not None and not _reached_loopback(stream):
            stream.close()
            raise PlainHttpRefused(self._loopback_only)
        return _TrackedStream(stream, self._registry)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        return _TrackedStream(
            self._inner.connect_unix_socket(path, timeout, socket_options), self._registry
        )

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _reached_loopback(stream: httpcore2.NetworkStream) -> bool:
    """Whether ``stream``'s socket is connected to a loopback address."""
    sock = stream.get_extra_info("socket")
    if not isinstance(sock, socket.socket):
        return False
    try:
        address = host_address(str(sock.getpeername()[0]).split("%")[0].lower())
    except OSError:
        return False
    return address is not None and address.is_loopback


def _tracking_transport(
    registry: _SocketRegistry, verify: ssl.SSLContext | bool = True,
    loopback_only: str | None = None,
) -> httpx2.HTTPTransport:
    transport = httpx2.HTTPTransport(verify=verify)
    # Without the hook (model/sdk_adapter.py) cancel() still returns at once (the worker
    # thread is abandoned), only the server sees the disconnect later.
    hooked = wrap_network_backend(
        transport, lambda backend: _TrackingBackend(backend, registry, loopback_only))
    if not hooked and loopback_only is not None:
        # Where the socket goes cannot be checked: plain http unagreed only to a literal
        # loopback address, which no DNS answers for.
        if host_address(urlsplit(loopback_only).hostname or "") is None:
            raise PlainHttpRefused(loopback_only)
    elif not hooked:
        logger.debug("httpx2 transport has no network backend hook; cancel will not cut sockets")
    return transport


# --------------------------------------------------------------------------- one request in flight


@dataclass(frozen=True)
class _Text:
    text: str  # the whole answer so far


@dataclass(frozen=True)
class _Done:
    text: str  # reasoning, content and tool calls joined (_answer_text)
    reasoning: str
    content: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    first_token: float | None  # seconds from sending to the first text
    tool_calls: tuple[ToolCall, ...] = ()
    tool_problem: str | None = None  # what is wrong with the streamed tool calls, if anything
    reasoning_tokens: int | None = None
    reasoning_estimated: bool = False


def _answer_text(reasoning: str, content: str, calls: ToolCallAccumulator) -> str:
    """The answer as one text for the live view and the log: reasoning and content joined
    (model.contracts.legacy.joined), then any tool calls, one ``name(arguments)`` a line."""
    said = calls_text(calls.calls())
    if said:
        content = f"{content}\n{said}" if content else said
    return joined(reasoning, content)


@dataclass(frozen=True)
class _Failed:
    error: BaseException


class _CancelSignal:
    pass


_Event = _Text | _Done | _Failed | _CancelSignal


class _Flight:
    """One next_step call: its cancel flag and the event queue of its current attempt."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self.events: queue.SimpleQueue[_Event] | None = None

    def cancel(self) -> None:
        # Flag first, queue second; the attempt sets its queue first and checks the flag
        # second, so one of the two sides always sees the cancel.
        self.cancelled.set()
        events = self.events
        if events is not None:
            events.put(_CancelSignal())


# --------------------------------------------------------------------------- the client


class HolotronClient:
    """Talks to Holotron on a vLLM server (see the module doc)."""

    def __init__(self, config: ClientConfig, codec: Codec | None = None) -> None:
        self.config = config
        #: The contract spoken (model/contracts/); by default holodesk's own dialect, sampled
        #: as ``config`` says.
        self.codec: Codec = codec if codec is not None else LegacyCodec(
            config.temperature, config.retry_temperature, config.max_tokens)
        self.base_url = normalize_base_url(config.base_url)
        self.root_url = root_url_of(self.base_url)
        if not config.plain_http_ok and needs_consent(self.base_url):
            raise PlainHttpRefused(self.base_url)
        self._registry = _SocketRegistry()
        verify: ssl.SSLContext | bool = True
        if config.tls_fingerprint:
            verify = pinned_context(config.tls_fingerprint)
        # Plain http nobody agreed to is allowed to loopback only, and checked per connection.
        plain = urlsplit(self.base_url).scheme.lower() == "http" and not config.plain_http_ok
        self._http = httpx2.Client(
            transport=_tracking_transport(self._registry, verify,
                                          self.base_url if plain else None),
            follow_redirects=False,
        )
        self._sdk = openai.OpenAI(
            # Always an explicit key: with None the SDK would read OPENAI_API_KEY and send the
            # person's OpenAI key to this server.
            api_key=config.api_key or NO_KEY,
            base_url=self.base_url,
            max_retries=0,  # we retry ourselves: only what is worth retrying, and cancellably
            http_client=self._http,
            timeout=self._timeout(config.request_timeout),
        )
        # The SDK fills these from OPENAI_* variables; none belong on a request to vLLM.
        self._sdk.organization = None
        self._sdk.project = None
        self._sdk.admin_api_key = None
        self._model: str | None = None
        self._window: int | None = None  # the served model's max_model_len, once known
        self._entry: ServedModel | None = None
        self._lock = threading.Lock()
        self._flight: _Flight | None = None

    def __enter__(self) -> HolotronClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Cancel what is in flight and release the connections."""
        self.cancel()
        self._http.close()

    def _timeout(self, read: float) -> httpx2.Timeout:
        return httpx2.Timeout(
            read, connect=self.config.connect_timeout, pool=self.config.connect_timeout
        )

    # ------------------------------------------------------------------ server state

    def health(self) -> None:
        """Return when ``GET /health`` answers 200; raise ServerUnreachable, ModelLoading, ..."""
        url = f"{self.root_url}/health"
        try:
            response = self._http.get(
                url, timeout=self._timeout(min(_QUICK_READ, self.config.request_timeout))
            )
        except httpx2.TimeoutException as exc:
            if isinstance(exc, httpx2.ConnectTimeout):
                raise ServerUnreachable(self.base_url, detail=type(exc).__name__) from exc
            raise RequestTimeout(
                min(_QUICK_READ, self.config.request_timeout), self.root_url
            ) from exc
        except httpx2.TransportError as exc:
            tls = self._tls_problem(exc)
            if tls is not None:
                raise tls from exc
            raise ServerUnreachable(self.base_url, detail=f"{type(exc).__name__}: {exc}") from exc
        if response.status_code == 200:
            return
        if response.status_code == 503:
            raise ModelLoading(self.root_url, detail=self._cut(response.text) or None)
        if response.status_code >= 500:
            raise ServerError(response.status_code, detail=self._cut(response.text) or None)
        raise BadRequest(
            response.status_code, detail=f"GET /health answered {response.status_code}"
        )

    def _cut(self, text: str, size: int = 200) -> str:
        """The start of a server's text for an error's detail. A cut can fall inside the API
        key (a hostile server echoes it): its start, no form of the key, is held back as well,
        since :func:`without_key` can only mask the whole key."""
        if len(text) <= size:
            return text
        return RunSecrets(api_key=self.config.api_key).mask_unfinished(text[:size])

    def server_version(self) -> str | None:
        """The vLLM version the server reports (``GET /version``), or None when it says none
        (another server, an older vLLM, a proxy): only ever a hint."""
        try:
            response = self._http.get(f"{self.root_url}/version", timeout=self._timeout(
                min(_QUICK_READ, self.config.request_timeout)))
            version = response.json().get("version") if response.status_code == 200 else None
        except (httpx2.HTTPError, ValueError, AttributeError):
            return None
        return version if isinstance(version, str) else None

    def served_models(self) -> list[ServedModel]:
        """What ``GET /v1/models`` lists."""
        try:
            page = self._sdk.models.list(
                timeout=self._timeout(min(_QUICK_READ, self.config.request_timeout))
            )
        except openai.OpenAIError as exc:
            raise self._map_error(
                exc, timeout=min(_QUICK_READ, self.config.request_timeout)
            ) from exc
        served = []
        for entry in page.data:
            extra = entry.model_extra or {}
            length = extra.get("max_model_len")
            root = extra.get("root")
            served.append(
                ServedModel(
                    name=entry.id,
                    max_model_len=length if isinstance(length, int) else None,
                    root=root if isinstance(root, str) else None,
                )
            )
        return served

    def models(self) -> list[str]:
        """The served model names."""
        return [entry.name for entry in self.served_models()]

    def resolve_model(self) -> str:
        """The model name to send: the configured one once verified, else the served one."""
        if self._model is not None:
            return self._model
        served = self.served_models()
        names = [entry.name for entry in served]
        wanted = self.config.model
        if wanted:
            if wanted not in names:
                raise ModelNotFound(wanted, names)
            self._model = wanted
        else:
            if not names:
                raise ModelNotFound("(any)", names, detail="GET /v1/models listed no model")
            self._model = names[0]
        self._entry = next(e for e in served if e.name == self._model)
        self._window = self._entry.max_model_len
        logger.info("using model %r at %s", self._model, self.base_url)
        return self._model

    def served_entry(self) -> ServedModel | None:
        """What ``/v1/models`` says of the model :meth:`resolve_model` chose (None before)."""
        return self._entry

    def probe_images(self, count: int = 3, *, timeout: float | None = None) -> None:
        """Send ``count`` tiny images with ``max_tokens=1``; return when the server accepts them.

        Tells a server started with too low ``--limit-mm-per-prompt`` apart before a run
        (raises :class:`TooManyImages`), at the cost of one token of generation. Other failures
        raise as for a step (``AuthFailed``, ``ModelNotFound``, ``ContextTooLong``, ...).
        """
        model = self.resolve_model()
        content: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": _PROBE_IMAGE_URL}} for _ in range(count)
        ]
        content.append({"type": "text", "text": "Reply with one word.\n"})
        read = self.config.request_timeout if timeout is None else timeout
        try:
            self._sdk.chat.completions.create(
                model=model,
                messages=cast(Any, [{"role": "user", "content": content}]),
                max_tokens=1,
                temperature=0.0,
                timeout=self._timeout(read),
            )
        except openai.OpenAIError as exc:
            raise self._map_error(exc, timeout=read) from exc

    def probe_reasoning(self, prompt: str, reasoning: dict[str, Any], *,
                        max_tokens: int) -> ReasoningProbe:
        """One small text request with the model's reasoning switched on (``reasoning``: the
        profile's ``chat_template_kwargs`` and ``reasoning_effort`` fields), not streamed: where
        did the thinking land? ``holodesk doctor`` asks it (app/doctor.py). Raises as a step
        does (``AuthFailed``, ``ModelNotFound``, ...)."""
        model = self.resolve_model()
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "temperature": 0.0,
            **reasoning,
        }
        response = self._post_once(body)
        choice = response.choices[0] if response.choices else None
        if choice is None:
            return ReasoningProbe("", "", None)
        extra = choice.message.model_extra or {}
        # vLLM names it ``reasoning`` (0.12 also ``reasoning_content``): docs/vllm-protocol.md.
        thought = extra.get("reasoning") or extra.get("reasoning_content") or ""
        return ReasoningProbe(thought if isinstance(thought, str) else "",
                              choice.message.content or "", choice.finish_reason)

    def _post_once(self, body: dict[str, Any]) -> ChatCompletion:
        """One chat request, not streamed; errors mapped as a step's are."""
        read = self.config.request_timeout
        try:
            return post_chat(self._sdk, body, self._timeout(read))
        except openai.OpenAIError as exc:
            raise self._map_error(exc, timeout=read) from exc

    def localize(self, image_url: str, element: str, *,
                 thinking_switch: str | None = "enable_thinking") -> Localized:
        """Where ``element`` (in words) is in the screenshot ``image_url`` (a data URL): H's
        element localization (docs/contract.md): one turn, temperature 0, thinking off, the
        point as integers 0-1000 of the image. Raises as a step does (``InvalidOutput`` for
        an answer that is not a point); :meth:`cancel` cuts it off."""
        from model.contracts.localization import decode_point, localization_body

        model = self.resolve_model()
        body = localization_body(model, image_url, element, thinking_switch=thinking_switch,
                                 max_tokens=_LOCALIZE_TOKENS)
        response = self._post_once(body)
        choice = response.choices[0] if response.choices else None
        content = (choice.message.content or "") if choice is not None else ""
        x, y = decode_point(content.strip())
        return Localized(x, y, content)

    # ------------------------------------------------------------------ one step

    def cancel(self) -> None:
        """End the request in flight, if any, within milliseconds; safe from any thread.

        ``next_step`` then raises :class:`Cancelled`. A cancel with nothing in flight does
        nothing: callers check their own stop flag before starting a step.
        """
        with self._lock:
            flight = self._flight
        if flight is None:
            return
        flight.cancel()
        cut = self._registry.abort_all()
        logger.info("request cancelled (%d connection(s) cut)", cut)

    def next_step(
        self,
        messages: list[dict[str, Any]],
        schema: Mapping[str, Any] | None = None,
        on_text: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> StepReply:
        """Ask for the next step and return it validated.

        ``messages`` are the codec's (:attr:`codec`, ``messages``); ``schema`` the structured
        output to send, None for the codec's own (an H codec also copies it into the system
        prompt, so give it None).
        ``on_text`` receives the whole answer so far each time more arrives (it restarts from
        empty on a retry); it runs in the calling thread. ``should_stop`` is the caller's stop
        flag: checked once the request is registered, it closes the gap where a stop (whose
        :meth:`cancel` finds nothing in flight yet) would otherwise let a whole request run.
        Raises a :class:`HolotronError`.
        """
        started = time.monotonic()
        flight = _Flight()
        with self._lock:
            if self._flight is not None:
                raise RuntimeError("HolotronClient.next_step is already running in another thread")
            self._flight = flight
        if should_stop is not None and should_stop():
            flight.cancel()
        try:
            model = self.resolve_model()
            codec = self.codec
            raws: list[str] = []
            problem = ""
            for attempt in range(1, self.config.max_retries + 2):
                if flight.cancelled.is_set():
                    raise Cancelled()
                body = codec.body(model, messages, schema=schema, retry=attempt > 1)
                done = self._attempt_with_retries(flight, body, on_text)
                raws.append(done.text)
                finish = self._finish_of(done)
                try:
                    if done.tool_problem is not None:
                        raise invalid(done.text, done.tool_problem, finish, codec.max_tokens)
                    step = codec.decode(done.content, reasoning=done.reasoning,
                                        finish_reason=finish, tool_calls=done.tool_calls)
                except InvalidOutput as exc:
                    full = self._window_full(done, finish)
                    if full is not None:
                        raise full from exc
                    problem = exc.reason
                    logger.warning("answer %d is not a valid step: %s", attempt, problem)
                    # Cut short, it may end inside a secret: the log's filter holds that back.
                    logger.debug("rejected answer: %.500s", Unfinished(done.text))
                    continue
                reply = StepReply(
                    step=step,
                    raw=done.text,
                    attempts=attempt,
                    prompt_tokens=done.prompt_tokens,
                    completion_tokens=done.completion_tokens,
                    elapsed=time.monotonic() - started,
                    time_to_first_token=done.first_token,
                    raw_attempts=tuple(raws),
                    model=model,
                    finish_reason=done.finish_reason,
                    cached_tokens=done.cached_tokens,
                    reasoning_tokens=done.reasoning_tokens,
                    reasoning_estimated=done.reasoning_estimated,
                )
                logger.info(
                    "step %s in %.2fs (attempts %d, prompt %s tokens, answer %s tokens, "
                    "first token %s)",
                    step.action.action,
                    reply.elapsed,
                    attempt,
                    reply.prompt_tokens,
                    reply.completion_tokens,
                    f"{reply.time_to_first_token:.2f}s"
                    if reply.time_to_first_token is not None
                    else "n/a",
                )
                return reply
            raise InvalidOutput(raws[-1], problem, raws)
        except HolotronError as exc:
            # A cancel cuts every socket of the client, so whatever was talking to the server
            # at that moment (the model lookup, a retry) fails with a transport error.
            if flight.cancelled.is_set() and not isinstance(exc, Cancelled):
                raise Cancelled() from exc
            raise
        finally:
            with self._lock:
                if self._flight is flight:
                    self._flight = None

    def _finish_of(self, done: _Done) -> str | None:
        """Why the answer ended, as the contract should hear it.

        vLLM reports ``tool_calls`` for any answer in which a call started to stream, also one
        cut off by the token budget or the window mid-arguments (its chat serving sets the
        reason from "a tool was streamed", not from why generation stopped). A call that used
        the whole budget, or filled the window, was cut: ``length`` then, so the error says so
        (docs/vllm-protocol.md, "Tool calls").
        """
        if done.finish_reason != "tool_calls" or done.completion_tokens is None:
            return done.finish_reason
        if done.completion_tokens >= self.codec.max_tokens:
            return "length"
        window = self._window
        if (window is not None and done.prompt_tokens is not None
                and done.prompt_tokens + done.completion_tokens >= window):
            return "length"
        return done.finish_reason

    def _window_full(self, done: _Done, finish: str | None) -> ContextFull | None:
        """The error for an answer cut short by the end of the context window, if it was.

        Current vLLM clamps ``max_tokens`` to what is left of the window without a word, so an
        answer that stops at the length limit before the budget we asked for hit the window
        (docs/vllm-protocol.md, "The context window").
        Without usage figures it cannot be told from a model that rambles: None then.
        """
        if finish != "length" or done.completion_tokens is None:
            return None
        if done.completion_tokens >= self.codec.max_tokens:
            return None
        logger.warning(
            "the answer stopped after %d of %d tokens: the context window is full",
            done.completion_tokens,
            self.codec.max_tokens,
        )
        window = self._window
        if window is None and done.prompt_tokens is not None:
            window = done.prompt_tokens + done.completion_tokens
        return ContextFull(
            window, done.prompt_tokens, done.completion_tokens, detail=done.text[-200:] or None
        )

    def _attempt_with_retries(
        self,
        flight: _Flight,
        body: dict[str, Any],
        on_text: Callable[[str], None] | None,
    ) -> _Done:
        for transport_try in range(_TRANSPORT_RETRIES + 1):
            try:
                return self._attempt(flight, body, on_text)
            except (ServerUnreachable, ServerError) as exc:
                if transport_try == _TRANSPORT_RETRIES:
                    raise
                logger.warning("model request failed (%s); retrying once", exc.message)
                if flight.cancelled.wait(_BACKOFF):
                    raise Cancelled() from exc
        raise AssertionError("unreachable")

    def _attempt(
        self,
        flight: _Flight,
        body: dict[str, Any],
        on_text: Callable[[str], None] | None,
    ) -> _Done:
        events: queue.SimpleQueue[_Event] = queue.SimpleQueue()
        flight.events = events
        if flight.cancelled.is_set():
            raise Cancelled()
        stop = threading.Event()
        worker = threading.Thread(
            target=self._stream,
            args=(events, stop, body),
            name="holotron-request",
            daemon=True,
        )
        limit = self.config.request_timeout
        deadline = time.monotonic() + limit
        worker.start()
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RequestTimeout(limit, self.base_url)
                try:
                    event = events.get(timeout=remaining)
                except queue.Empty:
                    raise RequestTimeout(limit, self.base_url) from None
                if isinstance(event, _Text):
                    # Deliver only the newest text when the callback fell behind.
                    latest: _Event = event
                    while isinstance(latest, _Text):
                        try:
                            following = events.get_nowait()
                        except queue.Empty:
                            break
                        if not isinstance(following, _Text):
                            events.put(following)  # SimpleQueue has no push-front; order is
                            break  # irrelevant after the text: only one terminal event comes
                        latest = following
                    if on_text is not None and isinstance(latest, _Text):
                        on_text(latest.text)
                    continue
                if isinstance(event, _CancelSignal):
                    raise Cancelled()
                if isinstance(event, _Failed):
                    raise self._map_error(event.error, timeout=limit) from event.error
                return event
        except BaseException:
            stop.set()
            if worker.is_alive():
                self._registry.abort_all()
            raise

    def _stream(
        self,
        events: queue.SimpleQueue[_Event],
        stop: threading.Event,
        body: dict[str, Any],
    ) -> None:
        """Worker thread: one streamed request, reported as events. Never raises."""
        sent = time.monotonic()
        first: float | None = None
        reasoning = ""
        content = ""
        calls = ToolCallAccumulator()
        finish: str | None = None
        prompt_tokens: int | None = None
        completion_tokens: int | None = None
        cached: int | None = None
        reported_reasoning: int | None = None  # the server's figure, when it sends one
        reasoning_deltas = 0
        size = 0  # bytes of answer so far (reasoning, content and tool calls)
        limit = self.config.max_answer_bytes
        try:
            with stream_chat(self._sdk, body,
                             self._timeout(self.config.request_timeout)) as chunks:
                for data in chunks:
                    if stop.is_set():
                        return
                    chunk = read_chunk(data)
                    if chunk.usage is not None:
                        prompt_tokens = chunk.usage.prompt_tokens
                        completion_tokens = chunk.usage.completion_tokens
                        cached = chunk.usage.cached_tokens
                        reported_reasoning = chunk.usage.reasoning_tokens
                    for delta in chunk.deltas:
                        thought, piece = delta.thought, delta.content
                        if thought or piece or delta.tool_calls:
                            if first is None:
                                first = time.monotonic() - sent
                            reasoning += thought
                            reasoning_deltas += 1 if thought else 0
                            content += piece
                            # Tool calls (the native-tools contract) stream as pieces of
                            # their arguments, put together by index (model/tool_calls.py).
                            calls.add(delta.tool_calls)
                            size += len(thought.encode()) + len(piece.encode()) + sum(
                                len((p.name or "").encode()) + len(p.arguments.encode())
                                for p in delta.tool_calls)
                            if size > limit:
                                # Leaving the ``with`` closes the response: the connection
                                # drops and vLLM stops generating.
                                cut = _answer_text(reasoning, content, calls).encode()[:limit]
                                raw = cut.decode(errors="ignore")
                                events.put(_Failed(AnswerTooLong(raw, limit)))
                                return
                            events.put(_Text(_answer_text(reasoning, content, calls)))
                        if delta.finish is not None:
                            finish = delta.finish
            text = _answer_text(reasoning, content, calls)
            thought_tokens, estimated = reasoning_count(reported_reasoning, reasoning_deltas)
            events.put(_Done(text, reasoning, content, finish, prompt_tokens, completion_tokens,
                             cached, first, calls.calls(), calls.problem, thought_tokens,
                             estimated))
        except BaseException as exc:  # reported to the caller's thread, which raises it
            if not stop.is_set():
                events.put(_Failed(exc))

    # ------------------------------------------------------------------ errors

    def _map_error(self, exc: BaseException, *, timeout: float) -> HolotronError:
        """The HolotronError for an SDK or transport failure, the API key masked in its text.

        A proxy or a hostile server may echo the request's headers in its error body, and the
        error's text reaches the screen, the action log and exports: the key must not.
        """
        return without_key(self._mapped(exc, timeout=timeout), self.config.api_key)

    def _mapped(self, exc: BaseException, *, timeout: float) -> HolotronError:
        if isinstance(exc, HolotronError):
            return exc
        if isinstance(exc.__cause__, PlainHttpRefused):  # refused at connect (see above)
            return exc.__cause__
        if isinstance(exc, openai.APITimeoutError):
            if isinstance(exc.__cause__, httpx2.ConnectTimeout):
                return ServerUnreachable(self.base_url, detail="connecting timed out")
            return RequestTimeout(timeout, self.base_url)
        if isinstance(exc, openai.APIStatusError):
            return self._map_status(exc.status_code, _server_message(exc.body) or exc.message)
        tls = self._tls_problem(exc)
        if tls is not None:
            return tls
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__
            broke = not isinstance(cause, httpx2.ConnectError)
            detail = f"{type(cause).__name__}: {cause}" if cause is not None else exc.message
            return ServerUnreachable(self.base_url, detail=detail, broke=broke)
        if isinstance(exc, openai.APIError):
            # An error event inside the stream: vLLM reports failures after the 200 this way.
            body = exc.body
            status = body.get("code") if isinstance(body, Mapping) else None
            message = _server_message(body) or exc.message
            return self._map_status(status if isinstance(status, int) else 500, message)
        if isinstance(exc, httpx2.TimeoutException):
            return RequestTimeout(timeout, self.base_url)
        if isinstance(exc, httpx2.TransportError):
            return ServerUnreachable(
                self.base_url, detail=f"{type(exc).__name__}: {exc}", broke=True
            )
        return ServerError(None, detail=f"{type(exc).__name__}: {exc}")

    def _tls_problem(self, exc: BaseException) -> HolotronError | None:
        """The TLS error behind a failed connection (a pin mismatch, an untrusted
        certificate), however deep the HTTP libraries wrapped it; None for any other."""
        seen: set[int] = set()
        current: BaseException | None = exc
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            if isinstance(current, CertificateMismatch):
                return CertificateNotPinned(self.base_url, current.seen, current.pinned)
            if isinstance(current, ssl.SSLCertVerificationError):
                return CertificateUntrusted(self.base_url, detail=str(current))
            current = current.__cause__ or current.__context__
        return None

    def _context_error(self, lowered: str, message: str) -> ContextTooLong:
        window = _number(_WINDOW, lowered) or self._window
        return ContextTooLong(
            window,
            _number(_PROMPT, lowered),
            answer_tokens=_number(_BUDGET, lowered),
            detail=message,
        )

    def _map_status(self, status: int, message: str) -> HolotronError:
        lowered = message.lower()
        if status in (401, 403):
            return AuthFailed(self.base_url, had_key=bool(self.config.api_key), detail=message)
        if status == 404:
            if "model" in lowered:
                requested = _quoted(message) or self._model or self.config.model or "?"
                served: list[str] = []
                with contextlib.suppress(HolotronError):
                    served = self.models()
                return ModelNotFound(requested, served, detail=message)
            return BadRequest(
                404, detail=f"{message} (no OpenAI-compatible API at {self.base_url})"
            )
        if status == 503:
            return ModelLoading(self.root_url, detail=message)
        if status >= 500:
            return ServerError(status, detail=message)
        if "may be provided in one" in lowered:  # "...in one prompt" (older vLLM: "in one request")
            limit = re.search(r"at most (\d+)", lowered)
            return TooManyImages(int(limit.group(1)) if limit else None, detail=message)
        if _CONTEXT_WORDS.search(lowered):
            return self._context_error(lowered, message)
        return BadRequest(status, detail=message)


def without_key(error: HolotronError, key: str | None) -> HolotronError:
    """``error`` with ``key`` (in every form a secret is printed in, model/run_secrets.py)
    replaced by ``***`` in its message and detail; the same object, changed in place."""
    if not key:
        return error
    forms = sorted(forms_of(key), key=len, reverse=True)

    def clean(text: str) -> str:
        for form in forms:
            text = text.replace(form, "***")
        return text

    error.message = clean(error.message)
    error.args = (error.message,)
    if error.detail is not None:
        error.detail = clean(error.detail)
    return error


# vLLM's ways of saying a request does not fit the window (docs/vllm-protocol.md): "This model's
# maximum context length is M tokens. However, your prompt contains N input tokens, …" (current),
# "… your request has N input tokens" (0.12), "Input length (N) exceeds model's maximum context
# length (M)." and, for the answer budget, "'max_tokens' or 'max_completion_tokens' is too
# large: X. …" (0.12), "max_tokens=X cannot be greater than max_model_len=M" and, for a prompt
# that fills the window exactly, "max_tokens must be at least 1, got 0".
_CONTEXT_WORDS = re.compile(
    r"maximum context length|max_model_len|max_tokens must be at least 1, got 0"
)
_WINDOW = re.compile(r"maximum context length (?:is |\()(\d+)|max_model_len=(\d+)")
_PROMPT = re.compile(
    r"(?:has|contains|requested) (?:at least )?(\d+) (?:input )?tokens|input length \((\d+)\)"
)
_BUDGET = re.compile(r"is too large: (\d+)|max_(?:completion_)?tokens=(\d+) cannot be greater")


def _number(pattern: re.Pattern[str], text: str) -> int | None:
    match = pattern.search(text)
    if match is None:
        return None
    return int(next(group for group in match.groups() if group is not None))


def _server_message(body: object) -> str | None:
    """The server's own words from an error body (vLLM's ``{"error": {...}}`` or a string)."""
    if isinstance(body, str):
        return body or None
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, str):
            return inner
        if isinstance(inner, Mapping):
            message = inner.get("message")
            if isinstance(message, str):
                return message
        detail = body.get("detail")
        if isinstance(detail, str):
            return detail
    return None


def _quoted(message: str) -> str | None:
    match = re.search(r"`([^`]+)`", message)
    return match.group(1) if match else None
