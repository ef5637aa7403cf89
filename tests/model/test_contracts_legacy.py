"""The legacy codec is holodesk's dialect as it was: the same request bytes for a fixed
three-step run as before the codecs existed (tests/fixtures/contracts/legacy_three_steps.json
was captured from the tree before the action model grew), and the same schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model.contracts import LegacyCodec
from model.errors import InvalidOutput
from model.prompt import build_messages
from model.schema import Hotkey, Step
from model.structured import step_output_schema
from tests.support.contract_run import TASK, answer_step, prompt_config, sent_bytes, turns

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "contracts" / "legacy_three_steps.json"


def test_the_default_client_sends_todays_bytes() -> None:
    raw, step = sent_bytes(build_messages(TASK, turns(), prompt_config()), answer_step())
    assert raw == FIXTURE.read_bytes()
    assert step.action.action == "answer"


def test_the_legacy_codec_sends_todays_bytes() -> None:
    codec = LegacyCodec()
    raw, _ = sent_bytes(codec.messages(TASK, turns(), prompt_config()), answer_step(), codec)
    assert raw == FIXTURE.read_bytes()


def test_the_schema_keeps_todays_ten_actions() -> None:
    sent = json.loads(FIXTURE.read_bytes())["structured_outputs"]["json"]
    assert sent == step_output_schema() == LegacyCodec().output_schema()
    tags = {v["properties"]["action"]["const"] for v in sent["properties"]["action"]["anyOf"]}
    assert tags == {"click", "double_click", "move", "drag", "scroll", "type", "hotkey",
                    "wait", "ask_user", "answer"}


def test_retry_samples_hotter() -> None:
    codec = LegacyCodec()
    assert codec.body("m", [])["temperature"] == 0.0
    assert codec.body("m", [], retry=True)["temperature"] == 0.5


def test_decode_reads_a_chord_as_pressed_once_and_refuses_newer_actions() -> None:
    codec = LegacyCodec()
    step = codec.decode('{"thought":"t","action":{"action":"hotkey","keys":["ctrl","s"]}}')
    assert step == Step(thought="t", action=Hotkey(keys=["ctrl", "s"]))
    with pytest.raises(InvalidOutput, match="drag_to"):
        codec.decode('{"thought":"t","action":{"action":"drag_to","element":"a","x":1,"y":2}}')
    with pytest.raises(InvalidOutput, match="repeat"):
        codec.decode('{"thought":"t","action":{"action":"hotkey","keys":["a"],"repeat":2}}')


def test_decode_joins_the_reasoning_as_today() -> None:
    step = LegacyCodec().decode('{"thought":"t","action":{"action":"wait"}}', reasoning="hm")
    assert step.action.action == "wait"
