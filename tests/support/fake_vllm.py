"""A stand-in Holotron/vLLM server: a real HTTP server on 127.0.0.1 as strict as vLLM.

It speaks the parts of vLLM's OpenAI-compatible API that holodesk uses (``GET /health``,
``GET /v1/models``, ``POST /v1/chat/completions`` streamed and not), refuses what vLLM refuses
with vLLM's error body (``{"error": {"message", "type", "param", "code"}}``, messages as vLLM
words them) and lets a *policy* (tests/support/fake_policies.py) decide what the "model"
answers::

    answer = {"thought": "t", "action": {"action": "answer", "text": "ok"}}
    with FakeVLLM(ScriptedPolicy([answer])) as fake:
        client = HolotronClient(ClientConfig(base_url=fake.base_url))
        ...
        fake.requests[0].images[0].size   # what the client really sent, decoded

What it holds a request to, as vLLM does (the behaviour of vLLM 0.34; ``legacy=True`` gives
vLLM 0.12's where they differ; docs/vllm-protocol.md has the sources):

* **Structured outputs.** ``structured_outputs`` is compiled with llguidance as vLLM's guidance
  backend compiles it (tests/support/fake_vllm_grammar.py); what cannot compile is vLLM's
  ``"Grammar error: …"`` 400 (inside the stream after a 200 for a streamed request, as vLLM 0.34
  does; a 400 before streaming with ``legacy``). Every answer a policy gives is then checked
  against that grammar: an answer a grammar-bound model could not have written is refused with
  a 500 and kept in :attr:`FakeVLLM.grammar_violations` (``__exit__`` raises on any), so a
  test cannot pass on output the real server would never produce. ``structured_outputs=
  StructuredOutputs.IGNORED`` is a server that ignores the field (an old or foreign server),
  for the tests of garbage output. The removed ``guided_*`` fields are ignored with a warning,
  as vLLM ignores them (the output is then unconstrained); :attr:`FakeVLLM.removed_fields` keeps
  every one seen, and ``__exit__`` raises on any: holodesk must never send them.
* **Streaming.** A role chunk, then one delta per token-sized piece, ``finish_reason`` on the
  chunk with the last output (for ``stop`` an empty delta: the end-of-sequence token), a usage
  chunk with ``choices: []`` when asked for, ``data: [DONE]``. With ``reasoning_parser`` a
  leading ``<think>…</think>`` of the answer streams as ``reasoning`` deltas (and
  ``reasoning_content`` with ``legacy``), the rest as content, and usage carries
  ``completion_tokens_details: {"reasoning_tokens": N}`` (not with ``legacy``: 0.12 sends no
  such field). A :class:`FakeStreamError` in a
  script fails the stream after the 200 with ``data: {"error": …}``.
* **Tool calls.** A request with ``tools`` is held to vLLM's tool validators and wording
  (``tool_choice: "auto"`` only with ``tool_parser``, the server's ``--tool-call-parser``), a
  required tool choice's answer to its grammar (a JSON list of calls, no content), and a
  policy's :class:`ToolCallAnswer` (or a scripted step, said as the call of the request's
  tools) streams as vLLM streams a call, ``finish_reason: "tool_calls"`` (also when cut by the
  budget mid-arguments, as vLLM reports it): tests/support/fake_vllm_tools.py.
* **The context window.** Prompt tokens are counted with the model's image tiling (512-pixel
  tiles, up to 12 plus a thumbnail, 256 tokens each) and text estimated at four characters a
  token. A prompt over the window is a 400 (``context_wording`` picks vLLM's wording); a
  ``max_tokens`` that does not fit what is left is silently clamped, so a long history shows up
  as an answer cut short with ``finish_reason: "length"``; with ``legacy`` it is vLLM 0.12's
  400 instead.

Where it is stricter than vLLM, on purpose (each a mistake worth a failing test):

* the grammar rules in :data:`tests.support.fake_vllm_grammar.STRICTER_THAN_VLLM` (unknown keys
  inside ``structured_outputs``, llguidance alone deciding what compiles);
* only base64 ``data:`` image URLs are accepted (holodesk never sends a remote URL);
* ``__exit__`` fails the test on a ``guided_*`` field or a grammar violation.

Loading: vLLM's API server does not listen at all until the model is loaded (the client sees
"connection refused", tested with :meth:`FakeVLLM.stop`). Deployments behind a proxy or an
orchestrator answer 503 instead, and vLLM itself answers ``/health`` with 503 when its engine is
dead. ``loading = True`` models that second case.

Load (for ``holodesk bench``): ``delay_per_active`` and ``chunk_delay_per_active`` make the
answer slower the more chat requests are in flight, like a GPU sharing its batch: the first
token comes after ``delay + delay_per_active * active`` seconds (``active`` counted when the
request arrives, itself included) and each streamed chunk after ``stream_chunk_delay +
chunk_delay_per_active * active`` (counted as it goes). ``served_prompt_tokens`` and
``served_completion_tokens`` add up the usage of every answer sent in full; ``max_active`` is
the most requests seen in flight at once. ``keep_requests = False`` keeps only the counts (a
long bench would otherwise hold every decoded image), and ``decode_images = False`` reads only
each image's header (size and type), which is all the limit and token checks need.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import enum
import io
import json
import logging
import re
import select
import socket
import ssl
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from PIL import Image

from tests.support.fake_policies import (
    Convention,
    Found,
    GarbagePolicy,
    ScriptedPolicy,
    ScriptExhausted,
    ScriptItem,
    SeeingPolicy,
    Target,
    data_url,
    find_color,
    image_message,
    jpeg_bytes,
    screenshot,
    to_convention,
)
from tests.support.fake_vllm_contract import (
    H_NATIVE_TOOLS,
    H_STRUCTURED,
    h_native_problem,
    h_structured_problem,
)
from tests.support.fake_vllm_dialect import in_request_contract
from tests.support.fake_vllm_grammar import (
    Constraint,
    ConstraintError,
    Grammar,
    Violation,
    compile_constraint,
    read_constraint,
    schema_of,
)
from tests.support.fake_vllm_request import (
    Answer,
    ChatRequest,
    FakeHTTPError,
    FakeStreamError,
    Policy,
    SentImage,
    ToolCallAnswer,
)
from tests.support.fake_vllm_tokens import image_tokens, pieces
from tests.support.fake_vllm_tools import (
    REQUIRED,
    StreamedCall,
    ToolRequestError,
    as_tool_call,
    check_request,
    check_served,
    required_schema,
    required_text,
)

__all__ = [
    "IMAGE_TOKENS",
    "ChatRequest",
    "ContextWording",
    "Convention",
    "FakeHTTPError",
    "FakeStreamError",
    "FakeVLLM",
    "Found",
    "GarbagePolicy",
    "Policy",
    "ScriptExhausted",
    "ScriptItem",
    "ScriptedPolicy",
    "SeeingPolicy",
    "SentImage",
    "StructuredOutputs",
    "Target",
    "ToolCallAnswer",
    "data_url",
    "find_color",
    "image_message",
    "iter_sse",
    "jpeg_bytes",
    "screenshot",
    "to_convention",
]

logger = logging.getLogger(__name__)

#: A 16:9 frame above 1,048,576 pixels: 4x2 tiles + thumbnail, 256 tokens each.
IMAGE_TOKENS = image_tokens(1920, 1080)

#: The top-level request fields vLLM 0.12 removed; vLLM ignores them with a warning.
REMOVED_FIELDS = frozenset(
    {
        "guided_json",
        "guided_regex",
        "guided_choice",
        "guided_grammar",
        "guided_decoding_backend",
        "guided_whitespace_pattern",
    }
)


class StructuredOutputs(enum.Enum):
    """Whether the server applies ``structured_outputs``."""

    ENFORCED = "enforced"  # compiled, every answer checked against it (vLLM 0.12 and later)
    IGNORED = "ignored"  # a server that does not know the field: answers go out as they are


class ContextWording(enum.Enum):
    """Which of vLLM's messages a prompt over the window gets (both are in current releases)."""

    PROMPT_CONTAINS = "prompt_contains"  # "This model's maximum context length is M tokens. …"
    INPUT_LENGTH = "input_length"  # "Input length (N) exceeds model's maximum context length (M)."


class StandInMisuse(AssertionError):
    """A test let through what the real server would have caught (see the module doc)."""


class _BadRequest(Exception):
    def __init__(self, status: int, message: str, err_type: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.err_type = err_type
        self.param = param


class _Abort(Exception):
    """The handler must stop without answering (server stopping, or the client went away)."""


@dataclass(frozen=True)
class _Answer:
    """What goes out for one request: reasoning and content, cut to the token budget."""

    reasoning: list[str]  # token-sized pieces
    content: list[str]
    finish_reason: str
    prompt_tokens: int
    #: Whether usage says how many tokens were reasoning: current vLLM does when it runs a
    #: reasoning parser (0 when the model did not reason); 0.12 never does.
    counts_reasoning: bool = False

    @property
    def completion_tokens(self) -> int:
        return len(self.reasoning) + len(self.content)

    def usage(self) -> dict[str, Any]:
        # vLLM's key order: prompt, total, completion, then the details it has.
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "completion_tokens": self.completion_tokens,
        }
        if self.counts_reasoning:
            # The reasoning parser counts the tokens between <think> and </think>, the
            # markers left out (docs/vllm-protocol.md, "Reasoning tokens").
            usage["completion_tokens_details"] = {"reasoning_tokens": len(self.reasoning)}
        return usage


_THINK = re.compile(r"\A\s*<think>(?P<reasoning>.*?)</think>\s*", re.DOTALL)


# --------------------------------------------------------------------------- the server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # handlers may sleep for a long simulated latency; never wait on them
    # socketserver's default backlog of 5 drops connections when a bench opens 100 at once (the
    # client then retries after a second or more); uvicorn, in front of vLLM, listens with 2048.
    request_queue_size = 1024

    def __init__(self, address: tuple[str, int], fake: FakeVLLM) -> None:
        self.fake = fake
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client refusing the certificate (the https tests) is no server error.
        if isinstance(sys.exc_info()[1], ssl.SSLError):
            logger.debug("fake vllm: TLS handshake failed", exc_info=True)
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streaming, like uvicorn
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.fake._untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("fake vllm: " + format, *args)

    def do_GET(self) -> None:
        self.server.fake._dispatch(self, "GET")

    def do_POST(self) -> None:
        self.server.fake._dispatch(self, "POST")


_DATA_URL = re.compile(r"data:(?P<mime>image/[\w.+-]+);base64,(?P<data>.*)", re.DOTALL)


_DATA_URL = re.compile(r"data:(?P<mime>image/[\w.+-]+);base64,(?P<data>.*)", re.DOTALL)


class FakeVLLM:
    """A real HTTP server on 127.0.0.1 answering like vLLM serving Holotron (see module doc).

    Use as a context manager or with :meth:`start` / :meth:`stop`. ``delay`` (seconds before a
    chat response starts) and ``stream_chunk_delay`` (between streamed chunks) simulate
    generation time; ``loading`` can be flipped at any time; :meth:`kill` simulates the server
    dying mid-run. Tests wait with :meth:`wait_until` and its shorthands, never with sleeps.
    """

    def __init__(
        self,
        policy: Policy,
        *,
        served_model_name: str = "holotron",
        image_limit: int = 3,
        max_model_len: int = 32768,
        api_key: str | None = None,
        loading: bool = False,
        port: int = 0,
        structured_outputs: StructuredOutputs = StructuredOutputs.ENFORCED,
        reasoning_parser: bool = False,
        legacy: bool = False,
        context_wording: ContextWording = ContextWording.PROMPT_CONTAINS,
        ssl_context: ssl.SSLContext | None = None,
        contract: str | None = None,
        root: str = "Hcompany/Holotron-12B",
        vllm_version: str | None = "0.14.1",
        tool_parser: str | None = None,
    ) -> None:
        #: ``--tool-call-parser`` (with ``--enable-auto-tool-choice``): None, the server takes
        #: no ``tool_choice: "auto"`` (tests/support/fake_vllm_tools.py).
        self.tool_parser = tool_parser
        #: What ``GET /version`` says (vLLM's own route); None: the route is missing (404).
        self.vllm_version = vllm_version
        self.policy = policy
        #: The weights ``/v1/models`` says the server loaded (holodesk finds the profile by it).
        self.root = root
        #: ``"h_structured"`` or ``"h_native_tools"``: requests are held to that contract of
        #: H's (fake_vllm_contract.py).
        self.contract = contract
        #: Steps a policy writes in holodesk's dialect are said in the request's contract
        #: (tests/support/fake_vllm_dialect.py); False: the policy's text goes out as it is.
        self.speaks_request_contract = True
        #: A server-side context: the stand-in then speaks https (vLLM's --ssl-certfile).
        self.ssl_context = ssl_context
        self.served_model_name = served_model_name
        self.image_limit = image_limit
        self.max_model_len = max_model_len
        self.api_key = api_key
        self.loading = loading
        self.structured_outputs = structured_outputs
        self.reasoning_parser = reasoning_parser
        self.legacy = legacy
        self.context_wording = context_wording
        self.delay = 0.0
        self.stream_chunk_delay = 0.0
        self.chunk_chars = 4  # the longest token-sized piece of a streamed answer
        # The latency model under load (see the module doc); zero: no load effect.
        self.delay_per_active = 0.0
        self.chunk_delay_per_active = 0.0
        self.keep_requests = True
        self.decode_images = True
        self.chat_requests = 0  # chat requests received, also when keep_requests is False
        self.active = 0  # chat requests being answered right now
        self.max_active = 0
        self.served = 0  # answers sent in full
        self.served_prompt_tokens = 0
        self.served_completion_tokens = 0
        self.requests: list[ChatRequest] = []
        self.errors: list[tuple[int, str]] = []  # every error answered: (status, message)
        self.disconnects = 0  # chat requests whose client went away before the answer ended
        #: Answers a policy gave that the request's grammar would not have allowed.
        self.grammar_violations: list[Violation] = []
        #: Every removed ``guided_*`` field a request carried (vLLM ignores them, unconstrained).
        self.removed_fields: list[str] = []
        #: What vLLM would have logged as a warning (removed fields, ...).
        self.warnings: list[str] = []
        self.killed = False
        self._port = port  # 0: any free port, chosen on start()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        # Notified whenever a count above changes: tests wait on conditions, never on sleeps.
        self._changed = threading.Condition(self._lock)
        self._policy_lock = threading.Lock()
        self._created = int(time.time())
        self._permission_id = f"modelperm-{uuid.uuid4().hex[:16]}"
        self.received = threading.Event()  # set on every chat request received (tests wait on it)

    # ------------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        return self._port

    @property
    def root_url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self._port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def start(self) -> FakeVLLM:
        """Start serving; after a stop or kill, serve again on the same port."""
        if self._server is not None:
            return self
        self._stopping.clear()
        self.killed = False
        self._server = _Server(("127.0.0.1", self._port), self)
        self._port = self._server.server_address[1]
        if self.ssl_context is not None:
            # The handshake happens in the handler's thread, on its first read: a client that
            # never finishes one cannot hold up the accepting thread.
            self._server.socket = self.ssl_context.wrap_socket(
                self._server.socket, server_side=True, do_handshake_on_connect=False
            )
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-vllm-{self._port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: close the listening socket and every open connection."""
        self._shutdown()

    def kill(self) -> None:
        """Die abruptly: the port refuses connections and in-flight requests are cut off."""
        self.killed = True
        self._shutdown()

    def _shutdown(self) -> None:
        self._stopping.set()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        with self._lock:
            connections = list(self._connections)
            self._connections.clear()
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                conn.close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeVLLM:
        return self.start()

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.stop()
        if exc_type is None:
            self.check_client()

    def check_client(self) -> None:
        """Raise :class:`StandInMisuse` when a request carried a removed ``guided_*`` field or a
        policy answered what the grammar forbids. Called on leaving a ``with`` block; a test
        that provokes either on purpose clears the list it checked."""
        if self.removed_fields:
            raise StandInMisuse(
                f"a request carried the removed field(s) {sorted(set(self.removed_fields))}: "
                "vLLM ignores them and the output is then unconstrained; send "
                "structured_outputs={'json': schema}"
            )
        if self.grammar_violations:
            first = self.grammar_violations[0]
            raise StandInMisuse(
                f"{len(self.grammar_violations)} answer(s) the grammar would never allow reached "
                f"the stand-in, first {first.answer[:200]!r}: {first.problem}"
            )

    def wait_until(
        self, condition: Callable[[FakeVLLM], bool], what: str, timeout: float = 30.0
    ) -> None:
        """Block until ``condition(self)`` holds (checked whenever a count changes).

        Raises ``TimeoutError`` naming ``what`` and the counts so far.
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while not condition(self):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"timed out after {timeout:g} s waiting for {what} (received "
                        f"{self.chat_requests}, served {self.served}, disconnects "
                        f"{self.disconnects}, errors {len(self.errors)})"
                    )
                self._changed.wait(remaining)

    def wait_for_request(self, count: int = 1, timeout: float = 10.0) -> ChatRequest:
        """Block until ``count`` chat requests have *arrived*; return the last one.

        Arrived is not answered: the answer may still be on its way. A test that then breaks
        the server and expects the client to have seen the answer wants :meth:`wait_for_served`.
        """
        self.wait_until(
            lambda fake: len(fake.requests) >= count, f"{count} request(s) to arrive", timeout
        )
        return self.requests[count - 1]

    def wait_for_served(self, count: int = 1, timeout: float = 10.0) -> None:
        """Block until ``count`` chat answers have been written in full (the last byte flushed)."""
        self.wait_until(lambda fake: fake.served >= count, f"{count} answer(s) served", timeout)

    def wait_for_disconnect(self, count: int = 1, timeout: float = 10.0) -> None:
        """Block until ``count`` chat requests were abandoned by their client mid-answer."""
        self.wait_until(
            lambda fake: fake.disconnects >= count, f"{count} client disconnect(s)", timeout
        )

    def _record_error(self, status: int, message: str) -> None:
        with self._changed:
            self.errors.append((status, message))
            self._changed.notify_all()

    def _count_disconnect(self) -> None:
        with self._changed:
            self.disconnects += 1
            self._changed.notify_all()

    def _track(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.add(conn)

    def _untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.discard(conn)

    # ------------------------------------------------------------------ dispatch

    def _dispatch(self, h: _Handler, method: str) -> None:
        path = urlsplit(h.path).path.rstrip("/") or "/"
        # Read the body before anything can answer: an unread body would be taken for the
        # next request on this keep-alive connection.
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            # vLLM's API-key middleware guards only the /v1 routes; /health stays open.
            key = self.api_key
            if path.startswith("/v1") and key is not None and not self._authorized(h, key):
                self._send_json(h, 401, {"error": "Unauthorized"})
                self._record_error(401, "Unauthorized")
                return
            if method == "GET" and path == "/health":
                self._send_empty(h, 503 if self.loading else 200)
            elif method == "GET" and path == "/version" and self.vllm_version is not None:
                self._send_json(h, 200, {"version": self.vllm_version})
            elif path.startswith("/v1") and self.loading:
                raise _BadRequest(
                    503,
                    "The model is still loading. Try again once GET /health answers 200.",
                    "ServiceUnavailableError",
                )
            elif method == "GET" and path == "/v1/models":
                self._send_json(h, 200, self._models_body())
            elif method == "POST" and path == "/v1/chat/completions":
                self._chat(h, raw)
            else:
                self._send_json(h, 404, {"detail": "Not Found"})
        except _BadRequest as err:
            self._record_error(err.status, err.message)
            with contextlib.suppress(OSError):
                self._send_json(h, err.status, _error_body(err))
        except _Abort:
            h.close_connection = True
        except OSError:
            # The client hung up while we wrote: it cancelled, or we are being killed.
            self._count_disconnect()
            h.close_connection = True

    @staticmethod
    def _authorized(h: _Handler, key: str) -> bool:
        return h.headers.get("Authorization", "") == f"Bearer {key}"

    def _models_body(self) -> dict[str, Any]:
        permission = {
            "id": self._permission_id,
            "object": "model_permission",
            "created": self._created,
            "allow_create_engine": False,
            "allow_sampling": True,
            "allow_logprobs": True,
            "allow_search_indices": False,
            "allow_view": True,
            "allow_fine_tuning": False,
            "organization": "*",
            "group": None,
            "is_blocking": False,
        }
        return {
            "object": "list",
            "data": [
                {
                    "id": self.served_model_name,
                    "object": "model",
                    "created": self._created,
                    "owned_by": "vllm",
                    "root": self.root,
                    "parent": None,
                    "max_model_len": self.max_model_len,
                    "permission": [permission],
                }
            ],
        }

    # ------------------------------------------------------------------ chat

    def _chat(self, h: _Handler, raw: bytes) -> None:
        body = self._read_body(raw)
        request = self._parse(body, h)
        with self._changed:
            self.chat_requests += 1
            if self.keep_requests:
                self.requests.append(request)
            self._changed.notify_all()
        self.received.set()

        self._note_ignored_fields(body)
        # In the order vLLM checks: the request's validators (tools), the model, the request's
        # own fields, the images while the chat template is rendered, the prompt against the
        # window; then the engine compiles the grammar (for a stream: after the 200, vLLM 0.34).
        self._check_tools(body, served=False)
        if request.model != self.served_model_name:
            message = f"The model `{request.model}` does not exist."
            if not self.legacy:
                message += f" Valid aliases: {self.served_model_name}."
            raise _BadRequest(404, message, "NotFoundError", "model")
        self._check_tools(body, served=True)
        if self.contract == H_NATIVE_TOOLS:
            problem = h_native_problem(body)
            if problem is not None:
                raise _BadRequest(400, f"H contract: {problem}", "BadRequestError")
        if self.contract == H_STRUCTURED:
            problem = h_structured_problem(body)
            if problem is not None:
                raise _BadRequest(400, f"H contract: {problem}", "BadRequestError")
        if request.stream is False and "stream_options" in body:
            raise _BadRequest(
                400,
                self._worded(
                    "Stream options can only be defined when `stream=True`.", "stream_options"
                ),
                "BadRequestError",
                None if self.legacy else "stream_options",
            )
        constraint = self._constraint(body) or self._tool_constraint(body)
        if len(request.images) > self.image_limit:
            raise _BadRequest(
                400,
                self._worded(
                    f"At most {self.image_limit} image(s) may be provided in one prompt."
                    + ("" if self.legacy else " Set `--limit-mm-per-prompt` to increase this "
                       "limit."),
                    "image",
                ),
                "BadRequestError",
                None if self.legacy else "image",
            )
        tokens = request.prompt_tokens
        max_tokens = self._answer_budget(tokens, request.max_tokens)
        grammar: Grammar | None = None
        if constraint is not None and self.structured_outputs is StructuredOutputs.ENFORCED:
            try:
                grammar = compile_constraint(constraint)
            except ConstraintError as exc:
                if request.stream and not self.legacy:
                    self._send_stream_error(h, 400, str(exc), "BadRequestError", opened=False)
                    return
                raise _BadRequest(400, self._worded(str(exc)), "BadRequestError") from exc

        with self._lock:
            self.active += 1
            active = self.active
            self.max_active = max(self.max_active, active)
        try:
            self._answer(h, request, tokens, max_tokens, grammar, active)
        finally:
            with self._lock:
                self.active -= 1

    def _read_body(self, raw: bytes) -> dict[str, Any]:
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise _BadRequest(400, f"JSON decode error: {exc}", "Bad Request") from exc
        if not isinstance(body, dict):
            raise _BadRequest(400, "Input should be a valid dictionary", "Bad Request")
        if not isinstance(body.get("messages"), list):
            raise _BadRequest(
                400,
                "1 validation error:\n  {'type': 'missing', 'loc': 'body.messages', 'msg': "
                "'Field required'}",
                "Bad Request",
                "body.messages",
            )
        temperature = body.get("temperature")
        if temperature is not None and (
            not isinstance(temperature, int | float) or temperature < 0
        ):
            raise _BadRequest(400, "temperature must be >= 0", "BadRequestError", "temperature")
        return body

    def _note_ignored_fields(self, body: dict[str, Any]) -> None:
        removed = sorted(REMOVED_FIELDS & set(body))
        if not removed:
            return
        # vLLM logs this and answers 200, unconstrained: the stand-in does the same and keeps
        # the field, so __exit__ can fail the test that sent it.
        warning = (
            f"Request contains the removed guided-decoding field(s) {removed}, which are "
            "ignored; output will NOT be constrained. Use `structured_outputs` (or "
            "`response_format`) instead."
        )
        logger.warning("fake vllm: %s", warning)
        with self._lock:
            self.removed_fields.extend(removed)
            self.warnings.append(warning)

    def _check_tools(self, body: dict[str, Any], *, served: bool) -> None:
        """vLLM's checks of a request's tools: its validators first, then (``served``) what
        the chat serving refuses (tests/support/fake_vllm_tools.py)."""
        try:
            if served:
                check_served(body, self.tool_parser)
            else:
                check_request(body)
        except ToolRequestError as exc:
            raise _BadRequest(400, exc.message, exc.err_type, exc.param) from exc

    def _tool_constraint(self, body: dict[str, Any]) -> Constraint | None:
        """The grammar of a required tool choice: vLLM constrains such an answer to a JSON list
        of calls of the request's tools (fake_vllm_tools.required_schema)."""
        if not body.get("tools") or body.get("tool_choice") != REQUIRED:
            return None
        try:
            return read_constraint({"json": required_schema(body["tools"])})
        except ToolRequestError as exc:
            raise _BadRequest(400, exc.message, exc.err_type, exc.param) from exc

    def _constraint(self, body: dict[str, Any]) -> Constraint | None:
        if "structured_outputs" not in body or body["structured_outputs"] is None:
            return None
        try:
            return read_constraint(body["structured_outputs"], legacy=self.legacy)
        except ConstraintError as exc:
            raise _BadRequest(
                400, self._worded(str(exc)), "BadRequestError", None
            ) from exc

    def _answer_budget(self, tokens: int, max_tokens: int | None) -> int:
        """What may be generated: vLLM's checks of the prompt and ``max_tokens`` against the
        window, then (vLLM 0.34) a budget that does not fit clamped to what is left."""
        window = self.max_model_len
        if self.legacy:
            if tokens >= window:
                raise _BadRequest(
                    400,
                    self._worded(
                        f"This model's maximum context length is {window} tokens. However, "
                        f"your request has {tokens} input tokens. Please reduce the length of "
                        "the input messages."
                    ),
                    "BadRequestError",
                )
            if max_tokens is not None and tokens + max_tokens > window:
                raise _BadRequest(
                    400,
                    self._worded(
                        f"'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. "
                        f"This model's maximum context length is {window} tokens and your "
                        f"request has {tokens} input tokens ({max_tokens} > {window} - "
                        f"{tokens})."
                    ),
                    "BadRequestError",
                )
            return max_tokens if max_tokens is not None else window - tokens
        if max_tokens is not None and max_tokens > window:
            raise _BadRequest(
                400,
                self._worded(
                    f"max_tokens={max_tokens} cannot be greater than max_model_len={window}. "
                    "Please request fewer output tokens.",
                    "max_tokens",
                    max_tokens,
                ),
                "BadRequestError",
                "max_tokens",
            )
        if tokens > window:
            if self.context_wording is ContextWording.INPUT_LENGTH:
                message = (
                    f"Input length ({tokens}) exceeds model's maximum context length ({window})."
                )
                raise _BadRequest(400, message, "BadRequestError")
            raise _BadRequest(
                400,
                self._worded(
                    f"This model's maximum context length is {window} tokens. However, your "
                    f"prompt contains {tokens} input tokens, which exceeds this limit even "
                    "without any output tokens. Please reduce the length of the input prompt.",
                    "input_tokens",
                    tokens,
                ),
                "BadRequestError",
                "input_tokens",
            )
        left = window - tokens
        if left < 1:
            raise _BadRequest(
                400,
                self._worded("max_tokens must be at least 1, got 0.", "max_tokens", 0),
                "BadRequestError",
                "max_tokens",
            )
        return left if max_tokens is None else min(max_tokens, left)

    def _worded(self, message: str, parameter: str | None = None, value: object = None) -> str:
        """A 400's message as vLLM words it: 0.34 names the parameter (and value) in brackets,
        0.12 appends the exception's cause, which is None."""
        if self.legacy:
            return f"{message} None"
        if parameter is None:
            return message
        shown = f", value={value}" if value is not None else ""
        return f"{message} (parameter={parameter}{shown})"

    def _answer(
        self,
        h: _Handler,
        request: ChatRequest,
        tokens: int,
        max_tokens: int,
        grammar: Grammar | None,
        active: int,
    ) -> None:
        delay = self.delay + self.delay_per_active * active
        if delay > 0:
            self._wait(h, delay)
        try:
            with self._policy_lock:
                said = self.policy(request)
            if self.speaks_request_contract and isinstance(said, str):
                said = in_request_contract(said, request)
        except FakeStreamError as err:
            if not request.stream:
                raise _BadRequest(err.status, err.message, err.err_type) from err
            self._send_stream_error(
                h, err.status, err.message, err.err_type, opened=True, partial=err.partial,
                model=request.model,
            )
            return
        except FakeHTTPError as err:
            raise _BadRequest(err.status, err.message, err.err_type) from err
        except Exception as exc:
            logger.exception("fake vllm policy failed")
            raise _BadRequest(500, f"{type(exc).__name__}: {exc}", "InternalServerError") from exc

        if request.body.get("tools") and request.body.get("tool_choice") != "none":
            self._answer_tools(h, request, said, tokens, max_tokens, grammar)
            return
        if isinstance(said, ToolCallAnswer):
            raise _BadRequest(500, "stand-in server: the policy answered a tool call to a "
                              "request without tools", "InternalServerError")
        text = said
        answer = self._shape(text, tokens, max_tokens, grammar)
        if request.stream:
            self._send_stream(h, request, answer)
        else:
            self._send_json(h, 200, self._completion_body(request, answer))
        with self._changed:
            self.served += 1
            self.served_prompt_tokens += tokens
            self.served_completion_tokens += answer.completion_tokens
            self._changed.notify_all()

    def _shape(
        self, text: str, tokens: int, max_tokens: int, grammar: Grammar | None
    ) -> _Answer:
        """Split off reasoning, hold the content to the grammar, cut both to the budget."""
        reasoning = ""
        content = text
        if self.reasoning_parser:
            think = _THINK.match(text)
            if think is not None:
                reasoning, content = think.group("reasoning"), text[think.end() :]
            elif text.lstrip().startswith("<think>"):
                reasoning, content = text.lstrip()[len("<think>") :], ""
        if grammar is not None:
            violation = grammar.check(content)
            if violation is not None:
                with self._lock:
                    self.grammar_violations.append(violation)
                raise _BadRequest(
                    500,
                    "stand-in server: the policy's answer is one the request's grammar would "
                    f"never allow ({violation.problem}); script what a grammar-bound model can "
                    "write, or start the stand-in with structured_outputs=IGNORED",
                    "InternalServerError",
                )
        reasoning_pieces = pieces(reasoning, self.chunk_chars) if reasoning else []
        content_pieces = pieces(content, self.chunk_chars)
        finish = "stop"
        if len(reasoning_pieces) + len(content_pieces) > max_tokens:
            finish = "length"
            reasoning_pieces = reasoning_pieces[:max_tokens]
            content_pieces = content_pieces[: max_tokens - len(reasoning_pieces)]
        return _Answer(reasoning_pieces, content_pieces, finish, tokens,
                       counts_reasoning=self.reasoning_parser and not self.legacy)

    def _parse(self, body: dict[str, Any], h: _Handler) -> ChatRequest:
        images: list[SentImage] = []
        for message in body["messages"]:
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list):
                continue
            for part in content:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    url = part.get("image_url", {}).get("url", "")
                    images.append(_decode_image(str(url), load=self.decode_images))
        structured = body.get("structured_outputs")
        options = body.get("stream_options")
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
        temperature = body.get("temperature")
        return ChatRequest(
            body=body,
            model=str(body.get("model", "")),
            messages=body["messages"],
            images=images,
            schema=schema_of(structured),
            temperature=float(temperature) if temperature is not None else None,
            stream=bool(body.get("stream", False)),
            include_usage=bool(isinstance(options, dict) and options.get("include_usage")),
            max_tokens=int(max_tokens) if max_tokens is not None else None,
            headers={k.lower(): v for k, v in h.headers.items() if k.lower() != "authorization"},
            structured_outputs=structured,
        )

    # ------------------------------------------------------------------ answers

    def _completion_body(self, request: ChatRequest, answer: _Answer) -> dict[str, Any]:
        reasoning = "".join(answer.reasoning) or None
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(answer.content),
            "reasoning": reasoning,
            "tool_calls": [],
        }
        if self.legacy:
            message["reasoning_content"] = reasoning
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": answer.finish_reason,
                    "stop_reason": None,
                }
            ],
            "usage": answer.usage(),
            "prompt_logprobs": None,
        }

    def _open_stream(self, h: _Handler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream; charset=utf-8")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

    def _close_stream(self, h: _Handler) -> None:
        self._write_chunk(h, b"data: [DONE]\n\n")
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()

    def _send_stream(self, h: _Handler, request: ChatRequest, answer: _Answer) -> None:
        chunk = _Chunks(request.model, legacy=self.legacy)
        self._open_stream(h)
        self._write_event(h, chunk.delta({"role": "assistant", "content": ""}))
        stream = [("reasoning", piece) for piece in answer.reasoning] + [
            ("content", piece) for piece in answer.content
        ]
        for index, (kind, piece) in enumerate(stream):
            chunk_delay = self.stream_chunk_delay + self.chunk_delay_per_active * self.active
            if chunk_delay > 0:
                self._wait(h, chunk_delay)
            last = index == len(stream) - 1 and answer.finish_reason == "length"
            self._write_event(
                h, chunk.delta({kind: piece}, answer.finish_reason if last else None)
            )
        if answer.finish_reason == "stop" or not stream:
            # The end-of-sequence token decodes to nothing: an empty delta carries the reason.
            self._write_event(h, chunk.delta({"content": ""}, answer.finish_reason))
        if request.include_usage:
            self._write_event(h, chunk.usage(answer.usage()))
        self._close_stream(h)

    def _answer_tools(self, h: _Handler, request: ChatRequest, said: Answer, tokens: int,
                      max_tokens: int, grammar: Grammar | None) -> None:
        """A policy's answer to a request with tools, as vLLM sends a tool call (see
        tests/support/fake_vllm_tools.py): held to what the tool choice lets a model write,
        cut to the budget, streamed piece by piece."""
        def misuse(problem: str) -> _BadRequest:
            return _BadRequest(500, f"stand-in server: {problem}", "InternalServerError")

        try:
            call = as_tool_call(said, request.body["tools"])
        except ValueError as exc:
            raise misuse(str(exc)) from exc
        required = request.body.get("tool_choice") == REQUIRED
        if required and not isinstance(said, ToolCallAnswer):
            # A step's note has nowhere to go: the required grammar starts at the list.
            call = dataclasses.replace(call, content="")
        if required and call.content:
            raise misuse("under tool_choice 'required' vLLM constrains the answer to a list "
                         f"of calls, which holds no content ({call.content[:40]!r}); script "
                         "the ToolCallAnswer without content, or use tool_choice 'auto'")
        if call.reasoning and not self.reasoning_parser:
            raise misuse("a tool call's reasoning goes apart only with the server's "
                         "reasoning parser (FakeVLLM(reasoning_parser=True))")
        if grammar is not None:
            violation = grammar.check(required_text(call))
            if violation is not None:
                with self._lock:
                    self.grammar_violations.append(violation)
                raise misuse("the policy's tool call is one the required tool choice's "
                             f"grammar would never allow ({violation.problem})")
        calls = [StreamedCall(index, f"chatcmpl-tool-{uuid.uuid4().hex}", c.name,
                              pieces(c.arguments_text, self.chunk_chars) if c.arguments_text
                              else [])
                 for index, c in enumerate(call.calls)]
        events: list[dict[str, Any]] = [
            {"reasoning": piece} for piece in pieces(call.reasoning, self.chunk_chars)
        ] if call.reasoning else []
        events += [{"content": piece} for piece in pieces(call.content, self.chunk_chars)] \
            if call.content else []
        for streamed in calls:
            events.append(streamed.header())
            events += [streamed.piece(piece) for piece in streamed.pieces]
        cut = len(events) > max_tokens
        events = events[:max_tokens]
        started = any("tool_calls" in event for event in events)
        # vLLM says tool_calls once a call has streamed, cut or not (fake_vllm_tools.py).
        finish = "tool_calls" if started else "length"
        if request.stream:
            chunk = _Chunks(request.model, legacy=self.legacy)
            self._open_stream(h)
            self._write_event(h, chunk.delta({"role": "assistant", "content": ""}))
            for index, event in enumerate(events):
                chunk_delay = self.stream_chunk_delay + self.chunk_delay_per_active * self.active
                if chunk_delay > 0:
                    self._wait(h, chunk_delay)
                last = cut and index == len(events) - 1
                self._write_event(h, chunk.delta(event, finish if last else None))
            if not cut:
                self._write_event(h, chunk.delta({}, finish))
            usage = {"prompt_tokens": tokens, "total_tokens": tokens + len(events),
                     "completion_tokens": len(events)}
            if request.include_usage:
                self._write_event(h, chunk.usage(usage))
            self._close_stream(h)
        else:
            arguments: dict[int, str] = {}
            for event in events:
                for piece in event.get("tool_calls", []):
                    arguments[piece["index"]] = (arguments.get(piece["index"], "")
                                                 + piece["function"]["arguments"])
            message = {"role": "assistant", "content": "".join(
                e.get("content", "") for e in events) or None,
                "reasoning": "".join(e.get("reasoning", "") for e in events) or None,
                "tool_calls": [{"id": c.id, "type": "function", "function": {
                    "name": c.name, "arguments": arguments[c.index]}}
                    for c in calls if c.index in arguments]}
            self._send_json(h, 200, {
                "id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion",
                "created": int(time.time()), "model": request.model,
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": finish, "stop_reason": None}],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens + len(events),
                          "completion_tokens": len(events)}})
        with self._changed:
            self.served += 1
            self.served_prompt_tokens += tokens
            self.served_completion_tokens += len(events)
            self._changed.notify_all()

    def _send_stream_error(
        self,
        h: _Handler,
        status: int,
        message: str,
        err_type: str,
        *,
        opened: bool,
        partial: str = "",
        model: str = "",
    ) -> None:
        """A failure after the 200: ``data: {"error": …}`` then ``[DONE]`` (vLLM 0.34).

        ``opened``: the role chunk and ``partial`` go first, as when the engine fails while it
        generates; otherwise the error is the stream's first event (a grammar refused when the
        engine takes the request).
        """
        self._record_error(status, message)
        self._open_stream(h)
        if opened:
            chunk = _Chunks(model, legacy=self.legacy)
            self._write_event(h, chunk.delta({"role": "assistant", "content": ""}))
            for piece in pieces(partial, self.chunk_chars):
                self._write_event(h, chunk.delta({"content": piece}))
        error = {"message": message, "type": err_type, "param": None, "code": status}
        self._write_event(h, {"error": error})
        self._close_stream(h)

    def _write_event(self, h: _Handler, data: dict[str, Any]) -> None:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        self._write_chunk(h, f"data: {text}\n\n".encode())

    def _write_chunk(self, h: _Handler, payload: bytes) -> None:
        if self._stopping.is_set():
            raise _Abort()
        h.wfile.write(f"{len(payload):X}\r\n".encode() + payload + b"\r\n")
        h.wfile.flush()

    def _wait(self, h: _Handler, seconds: float) -> None:
        """Sleep like a model generating, but notice a client that hangs up, and stop on stop."""
        end = time.monotonic() + seconds
        conn = h.connection
        while True:
            if self._stopping.is_set():
                raise _Abort()
            remaining = end - time.monotonic()
            if remaining <= 0:
                return
            readable, _, _ = select.select([conn], [], [], min(remaining, 0.05))
            if readable:
                try:
                    peek = conn.recv(1, socket.MSG_PEEK)
                except OSError:
                    peek = b""
                if not peek:  # EOF: the client closed its end (vLLM aborts the request here)
                    self._count_disconnect()
                    raise _Abort()
                time.sleep(min(remaining, 0.05))

    # ------------------------------------------------------------------ plain responses

    def _send_json(self, h: _Handler, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()

    def _send_empty(self, h: _Handler, status: int) -> None:
        h.send_response(status)
        h.send_header("Content-Length", "0")
        h.end_headers()
        h.wfile.flush()


class _Chunks:
    """The ``chat.completion.chunk`` events of one stream, shaped as vLLM serialises them."""

    def __init__(self, model: str, *, legacy: bool) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex[:16]}"
        self.created = int(time.time())
        self.model = model
        self.legacy = legacy

    def _base(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }

    def delta(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        if self.legacy:
            # vLLM 0.12 mirrors reasoning into the deprecated field, null on every other delta.
            delta = {**delta, "reasoning_content": delta.get("reasoning")}
        choice: dict[str, Any] = {
            "index": 0,
            "delta": delta,
            "logprobs": None,
            "finish_reason": finish,
        }
        if finish is not None:
            choice["stop_reason"] = None
        if not self.legacy:
            choice["token_ids"] = None
        body = self._base([choice])
        if not self.legacy:
            body["kv_transfer_params"] = None
        return body

    def usage(self, usage: dict[str, Any]) -> dict[str, Any]:
        return {**self._base([]), "usage": usage}


def _error_body(err: _BadRequest) -> dict[str, Any]:
    return {
        "error": {
            "message": err.message,
            "type": err.err_type,
            "param": err.param,
            "code": err.status,
        }
    }


def _decode_image(url: str, *, load: bool = True) -> SentImage:
    match = _DATA_URL.fullmatch(url)
    if match is None:
        shown = url[:40] + ("…" if len(url) > 40 else "")
        raise _BadRequest(
            400,
            f"Invalid image URL {shown!r}: the fake server accepts only base64 data URLs.",
            "BadRequestError",
        )
    try:
        data = base64.b64decode(match["data"], validate=True)
        image = Image.open(io.BytesIO(data))
        if load:
            image.load()
    except (binascii.Error, ValueError, OSError) as exc:
        raise _BadRequest(
            400, f"Failed to load image from data URL: {exc}", "BadRequestError"
        ) from exc
    # Not loaded: the header only (size, type); the pixels decode if a policy looks at them.
    return SentImage(
        image=image.convert("RGB") if load else image,
        width=image.width,
        height=image.height,
        mime=match["mime"],
    )


def iter_sse(lines: Iterator[str]) -> Iterator[str]:
    """The ``data:`` payloads of a server-sent event stream, for raw-HTTP tests."""
    for line in lines:
        if line.startswith("data: "):
            yield line[len("data: ") :]
