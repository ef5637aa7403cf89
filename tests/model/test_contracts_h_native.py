"""H's native function-calling contract (Holo3.1): the request of the fixed three-step run,
sent over HTTP to the stand-in holding the contract, and the decoding of the streamed tool
calls (docs/contract.md; the stream itself: tests/model/test_client_tool_calls.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model.contracts import ToolCall, Vocabulary
from model.contracts.h_native import HNativeToolsCodec, function_tools
from model.errors import InvalidOutput
from model.schema import Answer, Click, Step
from model.structured import inline_refs
from tests.support.contract_run import TASK, prompt_config, sent_bytes, turns
from tests.support.fake_vllm_request import ToolCallAnswer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"
FIXTURE = FIXTURES / "h_native_hub_three_steps.json"


def _body() -> dict[str, object]:
    codec = HNativeToolsCodec()
    return codec.body("holo", codec.messages(TASK, turns(), prompt_config()))


def test_three_step_run_is_the_documented_request() -> None:
    assert _body() == json.loads(FIXTURE.read_bytes())


def test_three_step_run_over_http_sends_the_documented_bytes_and_reads_the_call() -> None:
    """Through the real client to the stand-in holding H's native contract: the request is the
    fixture's, and the streamed call becomes the step. The JSON's keys come in the order the
    SDK's ``create`` writes them (``tool_choice`` before ``top_p``; model/sdk_adapter.py), not
    the fixture's: the same request to the server."""
    codec = HNativeToolsCodec()
    answer = ToolCallAnswer("answer", {"content": "ok"})
    raw, step = sent_bytes(codec.messages(TASK, turns(), prompt_config()), answer, codec,
                           served_model_name="holo", contract="h_native_tools")
    assert json.loads(raw) == json.loads(FIXTURE.read_bytes())
    assert step == Step(note="", thought="", action=Answer(text="ok"))


def test_layout_follows_h() -> None:
    body = _body()
    assert body["tool_choice"] == "required"
    assert "structured_outputs" not in body
    assert body["chat_template_kwargs"] == {"enable_thinking": True}
    messages = body["messages"]
    assert isinstance(messages, list)
    assert "<output_format>" not in messages[0]["content"]
    assistants = [m for m in messages if m["role"] == "assistant"]
    results = [m for m in messages if m["role"] == "tool"]
    assert [a["tool_calls"][0]["id"] for a in assistants] == [r["tool_call_id"] for r in results]
    assert [r["content"] for r in results] == ["done", "done",
                                               "error: failed: the key was not sent"]
    assert assistants[1]["content"] == "The form asks for a password."
    assert "hunter2" not in json.dumps(messages)
    assert not any(isinstance(m["content"], str) and "<tool_output" in m["content"]
                   for m in messages)


def test_tools_are_the_vocabularys_without_tool_name() -> None:
    tools = function_tools(Vocabulary.HOLO_NANO)
    assert len(tools) == 14
    click = next(t for t in tools if t["function"]["name"] == "click_desktop")
    assert click["function"]["parameters"]["required"] == ["element", "x", "y"]
    assert "tool_name" not in click["function"]["parameters"]["properties"]
    for tool in tools:
        inline_refs(tool["function"]["parameters"])  # resolvable as sent


def test_decode_reads_the_one_tool_call() -> None:
    codec = HNativeToolsCodec()
    call = ToolCall("c1", "click", '{"element":"OK","x":10,"y":990}')
    assert codec.decode("Order id 8421.", tool_calls=[call]) == Step(
        note="Order id 8421.", thought="Order id 8421.", action=Click(element="OK", x=10, y=990))
    for calls, problem in [((), "calls 0 tools"), ((call, call), "calls 2 tools"),
                           ((ToolCall("c", "fly", "{}"),), "unknown tool 'fly'"),
                           ((ToolCall("c", "click", '{"element":"a","x":1.5,"y":2}'),),
                            "click.x"),
                           ((ToolCall("c", "click", "{x"),), "not valid JSON")]:
        with pytest.raises(InvalidOutput, match=problem):
            codec.decode("", tool_calls=calls)
