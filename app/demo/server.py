"""The demo model behind the HTTP protocol holodesk's client speaks (vLLM's OpenAI API).

A real server on 127.0.0.1 and a port chosen by the system, so a demo run goes through the
real client: ``GET /health``, ``GET /v1/models`` and ``POST /v1/chat/completions`` streamed as
vLLM streams (a role chunk, the answer in pieces, ``finish_reason`` on the last one, a usage
chunk, ``data: [DONE]``; docs/vllm-protocol.md). Errors have vLLM's body. It listens on the
loopback only and needs no key: nothing else can reach it, and it sees only what the demo run
sends it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from app.demo import model as demo_model

log = logging.getLogger(__name__)

#: The name the demo server serves; the demo run asks for it.
DEMO_MODEL_NAME = "holodesk-demo"
_WINDOW = 32768  # max_model_len it reports: as `holodesk serve`'s
_PIECE = 16  # characters per streamed piece
_IMAGE_TOKENS = 1000  # what an image counts as in the reported usage


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, demo: DemoServer) -> None:
        self.demo = demo
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The client drops its kept-alive connections when a run ends or is stopped: no error.
        log.debug("demo server: a connection ended", exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("demo server: " + format, *args)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        if path == "/health":
            self._send(200, b"", "application/json")
        elif path == "/v1/models":
            self._json(200, self.server.demo.models_body())
        else:
            self._json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if urlsplit(self.path).path.rstrip("/") != "/v1/chat/completions":
            self._json(404, {"detail": "Not Found"})
            return
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("the request body is not a JSON object")
            if body.get("model") != DEMO_MODEL_NAME:
                self._error(404, f"The model `{body.get('model')}` does not exist.",
                            "NotFoundError")
                return
            messages = body.get("messages")
            if not isinstance(messages, list):
                raise ValueError("messages must be a list")
            tools = demo_model.requested_tools(body)
            if tools is not None:
                call = demo_model.as_tool_call(self.server.demo.answer(messages), tools)
                self._answer_call(body, messages, *call)
                return
            vocabulary = demo_model.requested_vocabulary(body)
            step = demo_model.in_contract(self.server.demo.answer(messages), vocabulary)
        except ValueError as e:
            self._error(400, str(e), "BadRequestError")
            return
        text = json.dumps(step, ensure_ascii=False)
        usage = _usage(messages, text)
        if body.get("stream"):
            self._stream(text, usage if (body.get("stream_options") or {}).get("include_usage")
                         else None)
        else:
            self._json(200, self._completion(text, usage))

    # -- answers --------------------------------------------------------------------------

    def _answer_call(self, body: dict[str, Any], messages: list[Any], name: str,
                     arguments: str) -> None:
        """One native tool call, as vLLM answers a required tool choice: no content, the call
        (docs/vllm-protocol.md, "Tool calls")."""
        ident = f"chatcmpl-tool-{uuid.uuid4().hex}"
        usage = _usage(messages, arguments)
        if not body.get("stream"):
            call = {"id": ident, "type": "function",
                    "function": {"name": name, "arguments": arguments}}
            answer = self._completion("", usage)
            answer["choices"][0]["message"] = {"role": "assistant", "content": None,
                                               "tool_calls": [call]}
            answer["choices"][0]["finish_reason"] = "tool_calls"
            self._json(200, answer)
            return
        deltas: list[dict[str, Any]] = [{"tool_calls": [{
            "index": 0, "id": ident, "type": "function",
            "function": {"name": name, "arguments": ""}}]}]
        deltas += [{"tool_calls": [{"index": 0, "function": {
            "arguments": arguments[start:start + _PIECE]}}]}
            for start in range(0, len(arguments), _PIECE)]
        self._stream_deltas(deltas, "tool_calls",
                            usage if (body.get("stream_options") or {}).get("include_usage")
                            else None)

    def _completion(self, text: str, usage: dict[str, int]) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion",
            "created": int(time.time()), "model": DEMO_MODEL_NAME,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": usage,
        }

    def _stream(self, text: str, usage: dict[str, int] | None) -> None:
        deltas = [{"content": text[start:start + _PIECE]}
                  for start in range(0, len(text), _PIECE)]
        self._stream_deltas(deltas, "stop", usage, end={"content": ""})

    def _stream_deltas(self, deltas: list[dict[str, Any]], finish: str,
                       usage: dict[str, int] | None,
                       end: dict[str, Any] | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        ident = f"chatcmpl-{uuid.uuid4().hex}"
        created = int(time.time())

        def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
            return {"id": ident, "object": "chat.completion.chunk", "created": created,
                    "model": DEMO_MODEL_NAME,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}

        self._event(chunk({"role": "assistant", "content": ""}))
        for delta in deltas:
            self._event(chunk(delta))
        self._event(chunk(end or {}, finish))
        if usage is not None:
            self._event({"id": ident, "object": "chat.completion.chunk", "created": created,
                         "model": DEMO_MODEL_NAME, "choices": [], "usage": usage})
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")

    def _event(self, payload: dict[str, Any]) -> None:
        self._write_chunk(f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode())

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _error(self, status: int, message: str, kind: str) -> None:
        self._json(status, {"error": {"message": message, "type": kind, "param": None,
                                      "code": status}})

    def _json(self, status: int, body: dict[str, Any]) -> None:
        self._send(status, json.dumps(body).encode(), "application/json")

    def _send(self, status: int, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _usage(messages: list[Any], text: str) -> dict[str, int]:
    """Token counts as a rough model would have them: four characters a token, and
    :data:`_IMAGE_TOKENS` an image (the demo model has no tokenizer; the counts only let
    `holodesk eval` compare two contracts' prompt sizes)."""
    chars = images = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            if isinstance(part, str):
                chars += len(part)
            elif isinstance(part, dict) and part.get("type") == "image_url":
                images += 1
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                chars += len(part["text"])
    prompt = chars // 4 + images * _IMAGE_TOKENS
    completion = max(1, len(text) // 4)
    return {"prompt_tokens": prompt, "total_tokens": prompt + completion,
            "completion_tokens": completion}


class DemoServer:
    """The demo model served on the loopback; a context manager (``with DemoServer() as s``)."""

    def __init__(self) -> None:
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.requests = 0  # chat requests answered
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the demo server is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> DemoServer:
        if self._server is None:
            self._server = _Server(self)
            self._thread = threading.Thread(target=self._server.serve_forever,
                                            kwargs={"poll_interval": 0.1},
                                            name="demo-server", daemon=True)
            self._thread.start()
            log.info("demo model serving at %s", self.base_url)
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def models_body(self) -> dict[str, Any]:
        return {"object": "list", "data": [{
            "id": DEMO_MODEL_NAME, "object": "model", "created": int(time.time()),
            "owned_by": "holodesk", "root": DEMO_MODEL_NAME, "parent": None,
            "max_model_len": _WINDOW, "permission": [],
        }]}

    def answer(self, messages: list[Any]) -> dict[str, Any]:
        step = demo_model.answer(messages)
        with self._lock:
            self.requests += 1
        log.info("demo model: %s", step["action"].get("action"))
        return step
