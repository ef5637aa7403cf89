"""A hostile model server: it answers every request with an error that echoes the request's
``Authorization`` header, as a misconfigured proxy or a malicious server may.

``mode`` picks the shape: ``status`` answers with that HTTP status and a vLLM-like error body
(``{"error": {"message": ...}}``); ``stream`` answers a chat request 200 and then an error
event inside the stream, as vLLM reports failures after the 200. ``GET /v1/models`` answers
normally in ``stream`` mode so the client gets as far as the chat request.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class HostileServer:
    """Use as a context manager; ``base_url`` is where a client points."""

    def __init__(self, *, status: int = 400, stream: bool = False) -> None:
        self.status = status
        self.stream = stream
        self.seen_authorization: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hostile = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _echo(self) -> str:
                auth = self.headers.get("Authorization", "")
                hostile.seen_authorization.append(auth)
                # A request without the header (GET /health) gets the last one seen: a
                # hostile server keeps what it was sent.
                auth = auth or next((a for a in reversed(hostile.seen_authorization) if a), "")
                return f"invalid request headers: Authorization: {auth!r} (raw {auth})"

            def do_GET(self) -> None:
                echo = self._echo()
                if hostile.stream and self.path.rstrip("/").endswith("/models"):
                    models = {"object": "list", "data": [{"id": "holotron", "object": "model"}]}
                    self._send(200, json.dumps(models).encode())
                    return
                body = {"error": {"message": echo, "type": "BadRequestError", "code": 400}}
                self._send(hostile.status, json.dumps(body).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                echo = self._echo()
                error = {"error": {"message": echo, "type": "BadRequestError",
                                   "code": hostile.status}}
                if not hostile.stream:
                    self._send(hostile.status, json.dumps(error).encode())
                    return
                payload = f"data: {json.dumps(error)}\n\ndata: [DONE]\n\n".encode()
                self._send(200, payload, "text/event-stream")

        return Handler
