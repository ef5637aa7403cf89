"""A fake Holotron/vLLM server: a real HTTP server on 127.0.0.1 that answers like vLLM does.

It speaks the parts of vLLM's OpenAI-compatible API that holodesk uses (``GET /health``,
``GET /v1/models``, ``POST /v1/chat/completions`` streamed and not), rejects what vLLM rejects
with vLLM's error body (``{"error": {"message", "type", "param", "code"}}``, messages copied from
vLLM's source), and lets a *policy* decide what the "model" answers::

    answer = {"thought": "t", "action": {"action": "answer", "text": "ok"}}
    with FakeVLLM(ScriptedPolicy([answer])) as fake:
        client = HolotronClient(ClientConfig(base_url=fake.base_url))
        ...
        fake.requests[0].images[0].size   # what the client really sent, decoded

Differences from vLLM, on purpose:

* ``guided_json`` in a request is a 400 here. vLLM 0.12+ ignores it with a log warning, which
  silently drops the schema; rejecting it makes a test catch us sending it.
* Loading: vLLM's API server does not listen at all until the model is loaded (the client sees
  "connection refused", tested with :meth:`FakeVLLM.stop`). Deployments behind a proxy or an
  orchestrator answer 503 instead, and vLLM itself answers ``/health`` with 503 when its engine
  is dead. ``loading = True`` models that second case: ``/health`` is 503 and every ``/v1``
  route answers 503 with a body saying the model is loading.
* Prompt tokens are estimated (text characters / 4 + 2,304 per image: a 16:9 screenshot's cost
  for this model), not counted by a tokenizer.

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
import io
import json
import logging
import math
import re
import select
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import urlsplit

import numpy as np
from PIL import Image

logger = logging.getLogger(__name__)

IMAGE_TOKENS = 2304  # a 16:9 frame: 4x2 tiles + thumbnail, 256 tokens each (holotron.md)

Convention = Literal["norm1000", "norm1", "pixels"]


# --------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class SentImage:
    """One image of a request, decoded: what the model would have seen."""

    image: Image.Image
    width: int
    height: int
    mime: str

    @property
    def size(self) -> tuple[int, int]:
        return self.width, self.height


@dataclass
class ChatRequest:
    """One chat completion request as the fake received it, parsed."""

    body: dict[str, Any]
    model: str
    messages: list[dict[str, Any]]
    images: list[SentImage]
    schema: dict[str, Any] | None
    temperature: float | None
    stream: bool
    include_usage: bool
    max_tokens: int | None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def latest_image(self) -> SentImage | None:
        """The last image of the conversation: the current screenshot."""
        return self.images[-1] if self.images else None

    @property
    def text(self) -> str:
        """All text parts of all messages, joined (for assertions and token estimates)."""
        parts: list[str] = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(
                    str(part.get("text", ""))
                    for part in content
                    if isinstance(part, dict) and part.get("type") == "text"
                )
        return "\n".join(parts)

    @property
    def prompt_tokens(self) -> int:
        """The fake's estimate of the prompt size in tokens."""
        return math.ceil(len(self.text) / 4) + IMAGE_TOKENS * len(self.images)


Policy = Callable[[ChatRequest], str]
"""What the model answers: the assistant message content for a request."""


class FakeHTTPError(Exception):
    """Raised by a policy (or put in a script) to make the server answer an HTTP error."""

    def __init__(
        self, status: int, message: str = "Injected failure", err_type: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.err_type = err_type or ("InternalServerError" if status >= 500 else "BadRequestError")


class _BadRequest(Exception):
    def __init__(self, status: int, message: str, err_type: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.err_type = err_type
        self.param = param


class _Abort(Exception):
    """The handler must stop without answering (server stopping, or the client went away)."""


# --------------------------------------------------------------------------- policies


class ScriptExhausted(RuntimeError):
    """A ScriptedPolicy was asked for more replies than it holds."""


ScriptItem = str | Mapping[str, Any] | FakeHTTPError


class ScriptedPolicy:
    """Replies from a list, in order: strings as they are, dicts as JSON, errors raised.

    When the script is exhausted it raises :class:`ScriptExhausted` (the server then answers 500)
    unless ``repeat_last`` is set: a test that gets more requests than it scripted has a bug
    worth seeing, so repeating silently is opt-in.
    """

    def __init__(
        self, replies: Sequence[ScriptItem], *, repeat_last: bool = False, think: str | None = None
    ) -> None:
        if not replies:
            raise ValueError("a script needs at least one reply")
        self._replies = list(replies)
        self._repeat_last = repeat_last
        self._think = think
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> str:
        with self._lock:
            index = self.calls
            self.calls += 1
        if index >= len(self._replies):
            if not self._repeat_last:
                raise ScriptExhausted(
                    f"ScriptedPolicy exhausted after {len(self._replies)} replies"
                )
            index = len(self._replies) - 1
        item = self._replies[index]
        if isinstance(item, FakeHTTPError):
            raise item
        text = item if isinstance(item, str) else json.dumps(dict(item), ensure_ascii=False)
        return _with_think(text, self._think)


class GarbagePolicy:
    """Always answers text that is not JSON (a model ignoring the schema)."""

    def __init__(self, text: str = "Sure! I will click the Save button for you.") -> None:
        self.text = text
        self.calls = 0

    def __call__(self, request: ChatRequest) -> str:
        self.calls += 1
        return self.text


@dataclass(frozen=True)
class Target:
    """Something SeeingPolicy looks for by colour and acts on.

    ``action`` is the pointing action at the target's centre; ``type_text``, when set, is typed
    in the next step (click the field, then type). ``tolerance`` is the largest per-channel
    difference still counted as the colour (JPEG shifts colours, most at edges).
    """

    element: str
    color: tuple[int, int, int]
    action: Literal["click", "double_click", "move"] = "click"
    button: Literal["left", "right", "middle"] = "left"
    type_text: str | None = None
    press_enter: bool = False
    tolerance: int = 48
    min_pixels: int = 30


@dataclass(frozen=True)
class Found:
    """Where a target's colour is in an image: centroid (pixel centres) and pixel count."""

    x: float
    y: float
    pixels: int


def find_color(
    image: Image.Image, color: tuple[int, int, int], tolerance: int = 48, min_pixels: int = 30
) -> Found | None:
    """The centroid of the pixels within ``tolerance`` of ``color``, or None when too few match."""
    pixels = np.asarray(image.convert("RGB"), dtype=np.int16)
    diff = np.abs(pixels - np.array(color, dtype=np.int16))
    mask = np.all(diff <= tolerance, axis=2)
    count = int(mask.sum())
    if count < min_pixels:
        return None
    ys, xs = np.nonzero(mask)
    # +0.5: pixel i covers [i, i+1), so its centre is i + 0.5
    return Found(float(xs.mean()) + 0.5, float(ys.mean()) + 0.5, count)


def to_convention(
    x: float, y: float, width: int, height: int, convention: Convention
) -> tuple[float, float]:
    """A pixel position of an image of ``width`` x ``height`` in a coordinate convention."""
    if convention == "norm1000":
        return float(round(x / width * 1000)), float(round(y / height * 1000))
    if convention == "norm1":
        return round(x / width, 4), round(y / height, 4)
    return float(round(x)), float(round(y))


class SeeingPolicy:
    """A model that really looks: finds each target by colour in the latest screenshot.

    The plan is the targets in order: a pointing action at each target's centre (in
    ``convention``, relative to the size of the image that was sent), followed by a ``type``
    step when the target has ``type_text``; when the plan is done it answers ``then`` (by
    default an ``answer``). A target whose colour is not visible gets ``on_missing`` (ask_user
    or answer with a failure text) and the plan does not advance, so it can go on once the
    target shows up.

    The plan advances by one step per request: retries and re-asks consume steps. ``think``
    prefixes a ``<think>…</think>`` block, as a reasoning model does.
    """

    def __init__(
        self,
        targets: Sequence[Target],
        convention: Convention = "norm1000",
        *,
        then: Mapping[str, Any] | None = None,
        on_missing: Literal["ask_user", "answer"] = "ask_user",
        think: bool = False,
    ) -> None:
        self.targets = list(targets)
        self.convention: Convention = convention
        self.then = dict(then) if then is not None else {"action": "answer", "text": "All done."}
        self.on_missing = on_missing
        self.think = think
        self.plan: list[tuple[Literal["point", "type"], Target]] = []
        for target in self.targets:
            self.plan.append(("point", target))
            if target.type_text is not None:
                self.plan.append(("type", target))
        self.position = 0
        self.missing: list[str] = []
        self._lock = threading.Lock()

    @property
    def done(self) -> bool:
        return self.position >= len(self.plan)

    def reset(self) -> None:
        with self._lock:
            self.position = 0
            self.missing.clear()

    def __call__(self, request: ChatRequest) -> str:
        with self._lock:
            step = self._next(request)
        text = json.dumps(step, ensure_ascii=False)
        return _with_think(
            text,
            "I look at the screenshot and find the target by its colour." if self.think else None,
        )

    def _next(self, request: ChatRequest) -> dict[str, Any]:
        if self.done:
            return {"note": "", "thought": "Every target is handled.", "action": dict(self.then)}
        kind, target = self.plan[self.position]
        if kind == "type":
            self.position += 1
            assert target.type_text is not None
            action: dict[str, Any] = {"action": "type", "text": target.type_text}
            if target.press_enter:
                action["press_enter"] = True
            return {
                "note": "",
                "thought": f"The {target.element} has focus; type the text.",
                "action": action,
            }
        shot = request.latest_image
        found = (
            find_color(shot.image, target.color, target.tolerance, target.min_pixels)
            if shot
            else None
        )
        if shot is None or found is None:
            self.missing.append(target.element)
            words = f"I cannot see the {target.element} on the screen."
            miss: dict[str, Any] = (
                {"action": "ask_user", "question": f"{words} Where is it?"}
                if self.on_missing == "ask_user"
                else {"action": "answer", "text": f"Failed: {words}"}
            )
            return {"note": "", "thought": words, "action": miss}
        self.position += 1
        x, y = to_convention(found.x, found.y, shot.width, shot.height, self.convention)
        pointed: dict[str, Any] = {
            "action": target.action,
            "element": target.element,
            "x": x,
            "y": y,
        }
        if target.action == "click" and target.button != "left":
            pointed["button"] = target.button
        return {
            "note": "",
            "thought": f"The {target.element} is visible; {target.action} it.",
            "action": pointed,
        }


def _with_think(text: str, think: str | None) -> str:
    return f"<think>{think}</think>\n{text}" if think else text


# --------------------------------------------------------------------------- images for tests


def jpeg_bytes(image: Image.Image, quality: int = 90) -> bytes:
    """Encode an image as JPEG (4:2:0 chroma, the harsher case for colour matching)."""
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def data_url(data: bytes, mime: str = "image/jpeg") -> str:
    """A ``data:`` URL as the client sends images."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def screenshot(
    size: tuple[int, int] = (1536, 864),
    rects: Sequence[tuple[tuple[int, int, int, int], tuple[int, int, int]]] = (),
    background: tuple[int, int, int] = (236, 236, 236),
) -> Image.Image:
    """A synthetic screenshot: a plain background with filled rectangles ``((l, t, r, b), rgb)``."""
    image = Image.new("RGB", size, background)
    pixels = np.array(image)
    for (left, top, right, bottom), color in rects:
        pixels[top:bottom, left:right] = color
    return Image.fromarray(pixels)


def image_message(image: Image.Image | bytes, text: str = "Step 1\n") -> dict[str, Any]:
    """One user message holding one screenshot and a text part, in OpenAI chat format."""
    data = image if isinstance(image, bytes) else jpeg_bytes(image)
    return {
        "role": "user",
        "content": [
            {"type": "image_url", "image_url": {"url": data_url(data)}},
            {"type": "text", "text": text},
        ],
    }


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


class FakeVLLM:
    """A real HTTP server on 127.0.0.1 answering like vLLM serving Holotron (see module doc).

    Use as a context manager or with :meth:`start` / :meth:`stop`. ``delay`` (seconds before a
    chat response starts) and ``stream_chunk_delay`` (between streamed chunks) simulate
    generation time; ``loading`` can be flipped at any time; :meth:`kill` simulates the server
    dying mid-run.
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
    ) -> None:
        self.policy = policy
        self.served_model_name = served_model_name
        self.image_limit = image_limit
        self.max_model_len = max_model_len
        self.api_key = api_key
        self.loading = loading
        self.delay = 0.0
        self.stream_chunk_delay = 0.0
        self.chunk_chars = 4  # characters per streamed chunk: about one token
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
        self.received = threading.Event()  # set on every chat request received (tests wait on it)

    # ------------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        return self._port

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

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

    def __exit__(self, *exc: object) -> None:
        self.stop()

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
            body = {
                "error": {
                    "message": err.message,
                    "type": err.err_type,
                    "param": err.param,
                    "code": err.status,
                }
            }
            with contextlib.suppress(OSError):
                self._send_json(h, err.status, body)
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
        return {
            "object": "list",
            "data": [
                {
                    "id": self.served_model_name,
                    "object": "model",
                    "created": self._created,
                    "owned_by": "vllm",
                    "root": "Hcompany/Holotron-12B",
                    "parent": None,
                    "max_model_len": self.max_model_len,
                    "permission": [],
                }
            ],
        }

    # ------------------------------------------------------------------ chat

    def _chat(self, h: _Handler, raw: bytes) -> None:
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise _BadRequest(400, f"JSON decode error: {exc}", "BadRequestError") from exc
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise _BadRequest(400, "Field required: messages", "BadRequestError", "messages")
        request = self._parse(body, h)
        with self._changed:
            self.chat_requests += 1
            if self.keep_requests:
                self.requests.append(request)
            self._changed.notify_all()
        self.received.set()

        if request.model != self.served_model_name:
            raise _BadRequest(
                404, f"The model `{request.model}` does not exist.", "NotFoundError", "model"
            )
        if "guided_json" in body:
            raise _BadRequest(
                400,
                "guided_json was removed in vLLM 0.12 (and is ignored there): send "
                "structured_outputs={'json': schema} instead.",
                "BadRequestError",
                "guided_json",
            )
        if len(request.images) > self.image_limit:
            raise _BadRequest(
                400,
                f"At most {self.image_limit} image(s) may be provided in one prompt.",
                "BadRequestError",
            )
        tokens = request.prompt_tokens
        if tokens >= self.max_model_len:
            raise _BadRequest(
                400,
                f"This model's maximum context length is {self.max_model_len} tokens. "
                f"However, your request has {tokens} input tokens. "
                "Please reduce the length of the input messages.",
                "BadRequestError",
                "input_tokens",
            )
        max_tokens = request.max_tokens
        if max_tokens is not None and tokens + max_tokens > self.max_model_len:
            raise _BadRequest(
                400,
                f"'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. This model's "
                f"maximum context length is {self.max_model_len} tokens and your request has "
                f"{tokens} input tokens ({max_tokens} > {self.max_model_len} - {tokens}).",
                "BadRequestError",
                "max_tokens",
            )

        with self._lock:
            self.active += 1
            active = self.active
            self.max_active = max(self.max_active, active)
        try:
            self._answer(h, request, tokens, max_tokens, active)
        finally:
            with self._lock:
                self.active -= 1

    def _answer(
        self, h: _Handler, request: ChatRequest, tokens: int, max_tokens: int | None, active: int
    ) -> None:
        delay = self.delay + self.delay_per_active * active
        if delay > 0:
            self._wait(h, delay)
        try:
            with self._policy_lock:
                content = self.policy(request)
        except FakeHTTPError as err:
            raise _BadRequest(err.status, err.message, err.err_type) from err
        except Exception as exc:
            logger.exception("fake vllm policy failed")
            raise _BadRequest(500, f"{type(exc).__name__}: {exc}", "InternalServerError") from exc

        finish_reason = "stop"
        completion_tokens = math.ceil(len(content) / 4)
        if max_tokens is not None and completion_tokens > max_tokens:
            content = content[: max_tokens * 4]
            completion_tokens = max_tokens
            finish_reason = "length"
        usage = {
            "prompt_tokens": tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": tokens + completion_tokens,
        }
        if request.stream:
            self._send_stream(h, request, content, finish_reason, usage)
        else:
            self._send_json(h, 200, self._completion_body(request, content, finish_reason, usage))
        with self._changed:
            self.served += 1
            self.served_prompt_tokens += tokens
            self.served_completion_tokens += completion_tokens
            self._changed.notify_all()

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
        schema = structured.get("json") if isinstance(structured, dict) else None
        options = body.get("stream_options")
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
        temperature = body.get("temperature")
        return ChatRequest(
            body=body,
            model=str(body.get("model", "")),
            messages=body["messages"],
            images=images,
            schema=schema if isinstance(schema, dict) else None,
            temperature=float(temperature) if temperature is not None else None,
            stream=bool(body.get("stream", False)),
            include_usage=bool(isinstance(options, dict) and options.get("include_usage")),
            max_tokens=int(max_tokens) if max_tokens is not None else None,
            headers={k.lower(): v for k, v in h.headers.items() if k.lower() != "authorization"},
        )

    def _completion_body(
        self, request: ChatRequest, content: str, finish_reason: str, usage: dict[str, int]
    ) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": content,
                        "reasoning_content": None,
                        "tool_calls": [],
                    },
                    "logprobs": None,
                    "finish_reason": finish_reason,
                    "stop_reason": None,
                }
            ],
            "usage": usage,
            "prompt_logprobs": None,
        }

    def _send_stream(
        self,
        h: _Handler,
        request: ChatRequest,
        content: str,
        finish_reason: str,
        usage: dict[str, int],
    ) -> None:
        chunk_id = f"chatcmpl-{uuid.uuid4().hex}"
        created = int(time.time())

        def chunk(
            choices: list[dict[str, Any]], extra: dict[str, Any] | None = None
        ) -> dict[str, Any]:
            body: dict[str, Any] = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": request.model,
                "choices": choices,
            }
            body.update(extra or {})
            return body

        def delta(d: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
            return [{"index": 0, "delta": d, "logprobs": None, "finish_reason": finish}]

        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream; charset=utf-8")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        self._write_event(h, chunk(delta({"role": "assistant", "content": ""})))
        step = max(1, self.chunk_chars)
        for start in range(0, len(content), step):
            chunk_delay = self.stream_chunk_delay + self.chunk_delay_per_active * self.active
            if chunk_delay > 0:
                self._wait(h, chunk_delay)
            self._write_event(h, chunk(delta({"content": content[start : start + step]})))
        self._write_event(h, chunk(delta({"content": ""}, finish_reason)))
        if request.include_usage:
            self._write_event(h, chunk([], {"usage": usage}))
        self._write_chunk(h, b"data: [DONE]\n\n")
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()

    def _write_event(self, h: _Handler, data: dict[str, Any]) -> None:
        self._write_chunk(h, f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode())

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
