"""The stand-in held to H's structured-output contract: the H codec's requests pass, and a
request that breaks the contract is refused (tests/support/fake_vllm_contract.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from model.client import ClientConfig, HolotronClient
from model.contracts import (
    CodecConfig,
    HNativeToolsCodec,
    HStructuredCodec,
    LegacyCodec,
    Vocabulary,
)
from model.contracts.base import H_VOCABULARIES
from model.errors import BadRequest
from model.schema import Answer, Step
from tests.support.contract_run import TASK, prompt_config, sent_bytes, turns
from tests.support.fake_vllm_contract import h_native_problem, h_structured_problem

ANSWER = {"note": None, "thought": "done", "tool_call": {"tool_name": "answer", "content": "ok"}}


def _body(vocabulary: Vocabulary = Vocabulary.HUB) -> dict[str, Any]:
    codec = HStructuredCodec(CodecConfig(vocabulary=vocabulary))
    return codec.body("holotron", codec.messages(TASK, turns(), prompt_config()))


@pytest.mark.parametrize("vocabulary", H_VOCABULARIES)
def test_the_h_codec_speaks_the_contract(vocabulary: Vocabulary) -> None:
    assert h_structured_problem(_body(vocabulary)) is None
    codec = HStructuredCodec(CodecConfig(vocabulary=vocabulary))
    _, step = sent_bytes(codec.messages(TASK, turns(), prompt_config()), ANSWER, codec,
                         contract="h_structured")
    assert step == Step(thought="done", action=Answer(text="ok"))


def _no_block(body: dict[str, Any]) -> None:
    body["messages"][0]["content"] = body["messages"][0]["content"].split("\n<output_format>")[0]


def _other_schema(body: dict[str, Any]) -> None:
    body["structured_outputs"]["json"]["required"] = ["tool_call"]


def _thinking_off(body: dict[str, Any]) -> None:
    body["chat_template_kwargs"] = {"enable_thinking": False}


def _tool_role(body: dict[str, Any]) -> None:
    body["messages"][4] = {"role": "tool", "tool_call_id": "c", "content": "done"}


def _wrong_keys(body: dict[str, Any]) -> None:
    body["messages"][3]["content"] = json.dumps(
        {"note": "", "thought": "t", "action": {"action": "click"}})


def _bare_image(body: dict[str, Any]) -> None:
    body["messages"][5]["content"] = body["messages"][5]["content"][1:2]


@pytest.mark.parametrize(("breaks", "problem"), [
    (_no_block, "<output_format> block"),
    (_other_schema, "not the structured_outputs schema"),
    (_thinking_off, "thinking is off"),
    (_tool_role, "tool-role message"),
    (_wrong_keys, "not a parsed step"),
    (_bare_image, "not an <observation> wrapper"),
])
def test_broken_requests_are_named(breaks: Callable[[dict[str, Any]], None],
                                   problem: str) -> None:
    body = copy.deepcopy(_body())
    breaks(body)
    found = h_structured_problem(body)
    assert found is not None and problem in found


def test_the_legacy_dialect_is_refused_by_a_strict_stand_in() -> None:
    from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy

    codec = LegacyCodec()
    with FakeVLLM(ScriptedPolicy([ANSWER]), contract="h_structured") as server, \
            HolotronClient(ClientConfig(base_url=server.base_url)) as client, \
            pytest.raises(BadRequest, match="H contract: "):
        client.next_step(codec.messages(TASK, turns(), prompt_config()))


# --------------------------------------------------------------------------- native tool calls


def _native_body() -> dict[str, Any]:
    codec = HNativeToolsCodec()
    return codec.body("holotron", codec.messages(TASK, turns(), prompt_config()))


def test_the_native_codec_speaks_its_contract() -> None:
    assert h_native_problem(_native_body()) is None
    assert h_native_problem(_body()) == "no tools: the native contract declares its tools as " \
                                        "functions"


def _auto(body: dict[str, Any]) -> None:
    body["tool_choice"] = "auto"


def _unanswered(body: dict[str, Any]) -> None:
    del body["messages"][4]


def _two_calls(body: dict[str, Any]) -> None:
    assistant = body["messages"][3]
    assistant["tool_calls"] = assistant["tool_calls"] * 2


def _result_as_user_text(body: dict[str, Any]) -> None:
    body["messages"][4] = {"role": "user", "content": '<tool_output tool="click">\ndone\n'
                                                      "</tool_output>"}


def _with_block(body: dict[str, Any]) -> None:
    body["messages"][0]["content"] += "\n<output_format>\n</output_format>\n"


@pytest.mark.parametrize(("breaks", "problem"), [
    (_thinking_off, "thinking is off"),
    (_auto, "not 'required'"),
    (_unanswered, "not answered by the next, a tool message"),
    (_two_calls, "exactly one tool call"),
    (_result_as_user_text, "not answered by the next"),
    (_with_block, "<output_format> block"),
    (_bare_image, "not an <observation> wrapper"),
])
def test_broken_native_requests_are_named(breaks: Callable[[dict[str, Any]], None],
                                          problem: str) -> None:
    body = copy.deepcopy(_native_body())
    breaks(body)
    found = h_native_problem(body)
    assert found is not None and problem in found
