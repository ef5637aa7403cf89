"""The demo server through holodesk's real client: the protocol a run speaks, on the loopback.

Every answer the demo model gives is also checked against the step grammar vLLM would enforce
(compiled as the stand-in server compiles it): the demo must never answer what Holotron under
structured outputs could not.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from app.demo.look import Status
from app.demo.server import DEMO_MODEL_NAME, DemoServer
from model.client import ClientConfig, HolotronClient
from model.errors import ModelNotFound
from model.structured import step_output_schema
from tests.support.demo_screens import SWATCHES, centre, practice
from tests.support.fake_policies import image_message
from tests.support.fake_vllm_grammar import compile_constraint, read_constraint

D, T = Status.DONE, Status.TODO


@pytest.fixture
def server() -> Iterator[DemoServer]:
    with DemoServer() as running:
        yield running


def test_a_step_through_the_real_client(server: DemoServer) -> None:
    grammar = compile_constraint(read_constraint({"json": step_output_schema()}))
    with HolotronClient(ClientConfig(base_url=server.base_url)) as client:
        client.health()
        assert client.resolve_model() == DEMO_MODEL_NAME
        texts: list[str] = []
        reply = client.next_step([image_message(practice((D, T, T, T)))], step_output_schema(),
                                 on_text=texts.append)
    assert grammar.check(reply.raw) is None, reply.raw
    action = reply.step.action
    assert action.action == "click"
    assert action.element == "Blue in the colour list"
    assert (round(action.x), round(action.y)) == pytest.approx(centre(SWATCHES["Blue"]), abs=3)
    assert reply.attempts == 1
    assert texts and texts[-1] == reply.raw  # streamed, as vLLM streams
    assert server.requests == 1


def test_every_answer_fits_the_grammar(server: DemoServer) -> None:
    grammar = compile_constraint(read_constraint({"json": step_output_schema()}))
    with HolotronClient(ClientConfig(base_url=server.base_url)) as client:
        for statuses in ((T, T, T, T), (Status.ACTIVE, T, T, T), (D, D, D, D)):
            reply = client.next_step([image_message(practice(statuses))], step_output_schema())
            assert grammar.check(reply.raw) is None, reply.raw
        nothing = client.next_step([{"role": "user", "content": "hi"}], step_output_schema())
        assert nothing.step.action.action == "answer"


def test_models_and_probe(server: DemoServer) -> None:
    with HolotronClient(ClientConfig(base_url=server.base_url)) as client:
        (card,) = client.served_models()
        assert card.name == DEMO_MODEL_NAME and card.max_model_len
        client.probe_images(3)  # not streamed: answered as vLLM does


def test_another_model_name_is_a_404(server: DemoServer) -> None:
    config = ClientConfig(base_url=server.base_url, model="holotron", max_retries=0)
    with HolotronClient(config) as client, pytest.raises(ModelNotFound):
        client.next_step([image_message(practice())], step_output_schema())


def _post(url: str, data: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=data,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_bad_request_gets_vllms_error_body(server: DemoServer) -> None:
    url = f"{server.base_url}/chat/completions"
    status, body = _post(url, b"not json")
    assert status == 400
    assert set(body["error"]) == {"message", "type", "param", "code"}
    bad_image = {"model": DEMO_MODEL_NAME, "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}}]}]}
    status, body = _post(url, json.dumps(bad_image).encode())
    assert status == 400
    assert "data: image" in body["error"]["message"]


def test_it_listens_on_the_loopback_only(server: DemoServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
