"""The demo model answers in the contract it is asked in (issue 22, `holodesk eval --compare`).

Through holodesk's real client with each profile's codec: the same screenshot gets the same
planned action whether the run speaks holodesk's own dialect, H's structured contract or H's
native tool calls, and H's answer fits the grammar vLLM would enforce for it.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from typing import Any

import pytest

from app.demo.look import Status
from app.demo.server import DemoServer
from model.client import ClientConfig, HolotronClient
from model.contracts import Codec, codec_for
from model.contracts.h_native import function_tools
from model.contracts.h_structured import step_schema
from model.coords import Convention
from model.profiles import profile_by_key
from model.prompt import PromptConfig
from model.schema import Click
from tests.support.demo_screens import SWATCHES, centre, practice
from tests.support.fake_policies import image_message
from tests.support.fake_vllm_grammar import compile_constraint, read_constraint
from tests.support.fake_vllm_request import ToolCallAnswer
from tests.support.fake_vllm_tools import required_schema, required_text

D, T = Status.DONE, Status.TODO


def _messages(codec: Codec) -> list[dict[str, Any]]:
    image = practice((D, T, T, T))
    config = PromptConfig(Convention.NORM1000, image.width, image.height, datetime.date.today())
    return [{"role": "system", "content": codec.system_prompt(config)}, image_message(image)]


@pytest.fixture
def server() -> Iterator[DemoServer]:
    with DemoServer() as running:
        yield running


@pytest.mark.parametrize("key", ["legacy", "holotron-12b", "holo3.1-9b", "holo3.1-9b-tools"])
def test_each_contract_gets_the_same_planned_click(server: DemoServer, key: str) -> None:
    codec = codec_for(profile_by_key(key).codec_config())
    with HolotronClient(ClientConfig(base_url=server.base_url), codec=codec) as client:
        client.resolve_model()
        messages = _messages(codec)
        reply = client.next_step(messages, codec.output_schema())
    action = reply.step.action
    assert isinstance(action, Click)
    assert action.element == "Blue in the colour list"
    assert (round(action.x), round(action.y)) == pytest.approx(centre(SWATCHES["Blue"]), abs=3)
    if key.endswith("-tools"):
        # The native call, held to the grammar vLLM's required tool choice enforces.
        assert reply.finish_reason == "tool_calls"
        name, arguments = reply.raw.split("(", 1)
        call = ToolCallAnswer(name, json.loads(arguments[:-1]))
        schema = required_schema(function_tools(profile_by_key(key).vocabulary))
        tool_constraint = read_constraint({"json": schema})
        assert tool_constraint is not None
        assert compile_constraint(tool_constraint).check(required_text(call)) is None
        assert name == "click"
        return
    said = json.loads(reply.raw)
    if key == "legacy":
        assert set(said) == {"note", "thought", "action"}
    else:
        vocabulary = profile_by_key(key).vocabulary
        constraint = read_constraint({"json": step_schema(vocabulary)})
        assert constraint is not None
        grammar = compile_constraint(constraint)
        assert grammar.check(reply.raw) is None, reply.raw
        assert said["tool_call"]["tool_name"] == (
            "click_desktop" if key == "holotron-12b" else "click")


def test_tools_of_no_h_contract_are_refused(server: DemoServer) -> None:
    import urllib.error
    import urllib.request

    body = {"model": "holodesk-demo", "messages": [image_message(practice())],
            "tools": [{"type": "function", "function": {"name": "click"}}],
            "tool_choice": "required"}
    request = urllib.request.Request(f"{server.base_url}/chat/completions",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 400
    assert "calls only the tools of H's native contract" in err.value.read().decode()


def test_usage_counts_the_prompt(server: DemoServer) -> None:
    """The prompt is counted (roughly), so eval can compare two contracts' prompt sizes."""
    codec = codec_for(profile_by_key("holotron-12b").codec_config())
    with HolotronClient(ClientConfig(base_url=server.base_url), codec=codec) as client:
        client.resolve_model()
        messages = _messages(codec)
        reply = client.next_step(messages, codec.output_schema())
    assert reply.prompt_tokens is not None and reply.prompt_tokens > 1000
    assert reply.completion_tokens is not None and reply.completion_tokens > 0
