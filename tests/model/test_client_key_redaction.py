"""The API key never shows in an error, even when the server echoes the request's headers."""

from __future__ import annotations

import pytest

from model.client import ClientConfig, HolotronClient
from model.errors import HolotronError
from tests.support.hostile_server import HostileServer

KEY = "sk-very-secret-key-0123456789"
SCHEMA = {"type": "object", "properties": {"thought": {"type": "string"}}}


def _said(error: HolotronError) -> str:
    return " ".join([str(error), error.message, error.detail or "", repr(error.args)])


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422, 500, 503])
def test_an_error_echoing_the_authorization_header_never_shows_the_key(status: int) -> None:
    with HostileServer(status=status) as server, HolotronClient(
        ClientConfig(base_url=server.base_url, api_key=KEY, connect_timeout=2,
                     request_timeout=10)
    ) as client, pytest.raises(HolotronError) as caught:
        client.resolve_model()
    assert server.seen_authorization == [f"Bearer {KEY}"]  # it was sent, and echoed
    said = _said(caught.value)
    assert KEY not in said
    assert "***" in said  # the rest of the server's words are kept


def test_an_error_inside_the_stream_echoing_the_header_never_shows_the_key() -> None:
    messages = [{"role": "user", "content": "hello"}]
    with HostileServer(status=400, stream=True) as server, HolotronClient(
        ClientConfig(base_url=server.base_url, api_key=KEY, connect_timeout=2,
                     request_timeout=10, max_retries=0)
    ) as client, pytest.raises(HolotronError) as caught:
        client.next_step(messages, SCHEMA)
    assert f"Bearer {KEY}" in server.seen_authorization
    said = _said(caught.value)
    assert KEY not in said
    assert "***" in said


@pytest.mark.parametrize("status", [500, 503])
def test_a_health_answer_cut_inside_the_echoed_key_never_shows_its_start(status: int) -> None:
    # Red team 12: the detail keeps the first 200 characters of the body; with a long key the
    # cut falls inside the first echo, and the start left there is no form of the whole key.
    key = "sk-" + "".join(f"{n:03d}" for n in range(100))
    with HostileServer(status=status) as server, HolotronClient(
        ClientConfig(base_url=server.base_url, api_key=key, connect_timeout=2,
                     request_timeout=10)
    ) as client:
        with pytest.raises(HolotronError):
            client.resolve_model()  # sends the key: the server keeps it
        with pytest.raises(HolotronError) as caught:
            client.health()
    assert server.seen_authorization == [f"Bearer {key}", ""]
    said = _said(caught.value)
    assert key[:40] not in said
    assert "Authorization" in said  # the server's own words before the key are kept
