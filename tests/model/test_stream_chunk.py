"""The streamed chunks are read as the plain JSON the server sent: the parts holodesk uses,
each checked; a chunk of another shape is the server's error, said as such."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from model.client import ClientConfig, HolotronClient
from model.errors import ServerError
from model.stream_chunk import Chunk, Delta, MalformedChunk, ToolCallPiece, Usage, read_chunk
from model.structured import step_output_schema


def test_the_parts_holodesk_reads() -> None:
    chunk = read_chunk({
        "id": "c", "object": "chat.completion.chunk", "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "{\"th",
                                           "reasoning": "let me", "reasoning_content": "let me"},
                     "finish_reason": None},
                    {"index": 1, "delta": {"content": None}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3,
                  "prompt_tokens_details": {"cached_tokens": 8}},
    })
    assert chunk == Chunk((Delta("let me", "{\"th", None), Delta("", "", "stop")),
                          Usage(12, 3, 8))
    # The deprecated mirror alone still counts, once.
    assert read_chunk({"choices": [{"delta": {"reasoning_content": "hm"}}]}).deltas[0].thought \
        == "hm"
    # A usage-only chunk (include_usage), odd counts dropped, not trusted.
    assert read_chunk({"choices": [], "usage": {"prompt_tokens": True,
                                                "completion_tokens": "3"}}) == Chunk(
        (), Usage(None, None, None))
    assert read_chunk({"choices": None, "usage": None}) == Chunk((), None)


@pytest.mark.parametrize("data", [
    [], "text", {"choices": "oops"}, {"choices": [7]}, {"choices": [{"delta": "x"}]},
    {"choices": [{"delta": {"content": 5}}]}, {"choices": [{"delta": {}, "finish_reason": 1}]},
    {"choices": [], "usage": [1, 2]},
])
def test_another_shape_is_a_malformed_chunk(data: Any) -> None:
    with pytest.raises(MalformedChunk):
        read_chunk(data)


@pytest.fixture
def odd_server() -> Iterator[str]:
    """Answers the models list, then every chat request 200 with a chunk of the wrong shape."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(json.dumps({"object": "list", "data": [
                {"id": "holotron", "object": "model", "max_model_len": 65536}]}).encode(),
                "application/json")

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self._send(b'data: {"choices": "not a list"}\n\ndata: [DONE]\n\n',
                       "text/event-stream")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_a_malformed_chunk_is_the_servers_error_with_what_was_wrong(odd_server: str) -> None:
    client = HolotronClient(ClientConfig(base_url=odd_server, model=None, connect_timeout=2.0,
                                         request_timeout=10.0))
    try:
        with pytest.raises(ServerError) as caught:
            client.next_step([{"role": "user", "content": "hi"}], step_output_schema())
    finally:
        client.close()
    assert "choices are not a list" in str(caught.value.detail)


def test_streamed_tool_call_pieces_are_read_by_index() -> None:
    first = read_chunk({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "chatcmpl-tool-1", "type": "function",
         "function": {"name": "click", "arguments": ""}}]}, "finish_reason": None}]})
    later = read_chunk({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"name": None, "arguments": "{\"x\""}}]},
        "finish_reason": "tool_calls"}]})
    assert first.deltas[0] == Delta("", "", None, (
        ToolCallPiece(0, "chatcmpl-tool-1", "function", "click", ""),))
    assert later.deltas[0] == Delta("", "", "tool_calls", (
        ToolCallPiece(0, None, None, None, "{\"x\""),))


@pytest.mark.parametrize("calls", [
    "x", ["x"], [{"function": {}}], [{"index": "0"}], [{"index": -1}], [{"index": True}],
    [{"index": 0, "function": "click"}], [{"index": 0, "function": {"arguments": {"x": 1}}}],
    [{"index": 0, "id": 7}],
])
def test_tool_calls_of_another_shape_are_a_malformed_chunk(calls: Any) -> None:
    with pytest.raises(MalformedChunk):
        read_chunk({"choices": [{"delta": {"tool_calls": calls}}]})
