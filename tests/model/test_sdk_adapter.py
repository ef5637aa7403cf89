"""model/sdk_adapter.py, the one place holodesk reaches past the SDK's documented surface:
these fail on an openai, httpx2 or httpcore2 release that breaks what it relies on."""

from __future__ import annotations

import inspect
import json

import httpcore2
import httpx2
import openai
import pytest
from openai.resources.chat.completions import Completions

from model.sdk_adapter import (
    CREATE_PARAMETERS,
    create_arguments,
    post_chat,
    stream_chat,
    wrap_network_backend,
)
from model.stream_chunk import read_chunk
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "ok"}}


class _Counting(httpcore2.NetworkBackend):
    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self.inner = inner
        self.connections = 0

    def connect_tcp(self, *args: object, **kwargs: object) -> httpcore2.NetworkStream:
        self.connections += 1
        return self.inner.connect_tcp(*args, **kwargs)  # type: ignore[arg-type]

    def connect_unix_socket(self, *args: object, **kwargs: object) -> httpcore2.NetworkStream:
        return self.inner.connect_unix_socket(*args, **kwargs)  # type: ignore[arg-type]

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def test_the_private_network_backend_is_where_the_adapter_reaches() -> None:
    """httpx2's transport keeps its pool in ``_pool`` and the pool its backend in
    ``_network_backend``: the names the adapter sets (cancel and the loopback check need it)."""
    transport = httpx2.HTTPTransport()
    pool = getattr(transport, "_pool", None)
    assert isinstance(pool, httpcore2.ConnectionPool)
    assert isinstance(getattr(pool, "_network_backend", None), httpcore2.NetworkBackend)
    # What NetworkBackend asks of a subclass (model/client.py's _TrackingBackend implements it).
    assert {"connect_tcp", "connect_unix_socket", "sleep"} <= set(vars(httpcore2.NetworkBackend))
    assert list(inspect.signature(httpcore2.NetworkBackend.connect_tcp).parameters) == [
        "self", "host", "port", "timeout", "local_address", "socket_options"]


def test_every_connection_goes_through_the_wrapped_backend() -> None:
    transport = httpx2.HTTPTransport()
    made: list[_Counting] = []

    def wrap(inner: httpcore2.NetworkBackend) -> httpcore2.NetworkBackend:
        made.append(_Counting(inner))
        return made[0]

    assert wrap_network_backend(transport, wrap)
    with FakeVLLM(ScriptedPolicy([ANSWER])) as fake, httpx2.Client(transport=transport) as http:
        assert http.get(f"{fake.root_url}/health").status_code == 200
    assert made and made[0].connections == 1


def test_a_transport_without_the_hook_is_left_alone() -> None:
    class Elsewhere(httpx2.BaseTransport):
        pass

    assert not wrap_network_backend(Elsewhere(), lambda inner: inner)  # type: ignore[arg-type]


def test_create_names_the_parameters_the_codecs_send() -> None:
    parameters = inspect.signature(Completions.create).parameters
    assert {"extra_body", "timeout", "stream"} <= set(parameters)
    assert {"model", "messages", "max_tokens", "stream_options", "temperature", "top_p",
            "tools", "tool_choice", "reasoning_effort"} <= CREATE_PARAMETERS
    assert "structured_outputs" not in CREATE_PARAMETERS


def test_a_body_becomes_creates_arguments_in_its_order() -> None:
    body = {"model": "m", "stream": True, "messages": [], "max_tokens": 5,
            "structured_outputs": {"json": {}}, "chat_template_kwargs": {"x": 1},
            "reasoning_effort": "low"}
    assert create_arguments(body) == {
        "model": "m", "messages": [], "max_tokens": 5,
        "extra_body": {"structured_outputs": {"json": {}}, "chat_template_kwargs": {"x": 1},
                       "reasoning_effort": "low"}}


@pytest.mark.parametrize("streamed", [True, False])
def test_a_request_through_create_carries_vllms_fields_and_reads_back(streamed: bool) -> None:
    body = {"model": "holotron", "stream": streamed,
            "messages": [{"role": "user", "content": "go"}], "max_tokens": 200,
            "structured_outputs": {"json": {"type": "object"}}}
    with FakeVLLM(ScriptedPolicy([ANSWER])) as fake:
        sdk = openai.OpenAI(api_key="EMPTY", base_url=fake.base_url, max_retries=0)
        timeout = httpx2.Timeout(30.0)
        if streamed:
            with stream_chat(sdk, body, timeout) as chunks:
                text = "".join(delta.content for chunk in chunks
                               for delta in read_chunk(chunk).deltas)
        else:
            text = post_chat(sdk, body, timeout).choices[0].message.content or ""
        sent = fake.wait_for_request()
    assert json.loads(text) == ANSWER
    assert sent.body["structured_outputs"] == {"json": {"type": "object"}}
