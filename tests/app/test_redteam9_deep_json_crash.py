"""Red team 9: an answer nested deeply, or naming its tool with a list, crashes the run in
H's contracts, where the legacy dialect asks again.

Attack: the model answers a step whose JSON nests a few thousand arrays
(``{"note":null,"thought":"x","tool_call":[[[[...]]]]}``, or the same as a native call's
arguments). Both H codecs read the answer with ``json.loads`` and catch only
``JSONDecodeError`` (model/contracts/h_structured.py and h_native.py ``decode``); Python's
parser raises ``RecursionError`` instead, which is no ``InvalidOutput``: the client does not
ask again, and the run ends as "internal error: RecursionError: maximum recursion depth
exceeded ..." (app/agent.py's catch-all), not as an invalid answer in words. The legacy
dialect reads the same answer with pydantic's parser, says "not valid JSON (recursion limit
exceeded ...)" and asks again.

The same with ``"tool_name": ["wait"]`` (or an object): ``decode_tool`` tests ``name not
in tools`` on a dict, and an unhashable name raises ``TypeError`` ("internal error:
TypeError: unhashable type: 'list'"); the legacy dialect's discriminated union names the bad
tag and asks again.

A grammar-bound model cannot nest so or name its tool so (the schema bounds it); a server
that ignores ``structured_outputs`` (a proxy, an old or foreign server: the stand-in's
``StructuredOutputs.IGNORED``) lets it. Expected: an invalid answer, asked again like any
other, in every contract. Low severity: no action runs, the run ends.

Fixed: both H codecs read a parser's RecursionError and a tool name that is not a string as
an invalid answer (model/contracts/h_structured.py, h_native.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.events import Outcome
from model.contracts import codec_for
from model.contracts.legacy import LegacyCodec
from model.profiles import HOLOTRON_12B
from tests.support.agent_harness import HarnessFor
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, StructuredOutputs
from tests.support.home import isolate_home

DEPTH = 1200
NANO_ANSWER = json.dumps({"note": None, "thought": "done",
                          "tool_call": {"tool_name": "answer", "content": "finished"}})
NANO_LIST_NAME = '{"note":null,"thought":"x","tool_call":{"tool_name":["wait"],"seconds":0}}'
NANO_DEEP = ('{"note":null,"thought":"x","tool_call":' + "[" * DEPTH + "]" * DEPTH + "}")
LEGACY_ANSWER = json.dumps({"thought": "done", "action": {"action": "answer", "text": "finished"}})
LEGACY_DEEP = '{"thought":"x","action":' + "[" * DEPTH + "]" * DEPTH + "}"


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def test_control_the_legacy_dialect_asks_again(harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([LEGACY_DEEP, LEGACY_ANSWER]),
                  structured_outputs=StructuredOutputs.IGNORED) as server:
        server.speaks_request_contract = False
        h = harness_for(server, codec=LegacyCodec())
        finished = h.run("do it", max_steps=3)
    assert finished.outcome is Outcome.ANSWERED, finished


@pytest.mark.parametrize("bad", [NANO_DEEP, NANO_LIST_NAME], ids=["deep", "list-name"])
def test_redteam9_a_malformed_h_answer_is_an_invalid_answer(
        harness_for: HarnessFor, bad: str) -> None:
    with FakeVLLM(ScriptedPolicy([bad, NANO_ANSWER]),
                  structured_outputs=StructuredOutputs.IGNORED) as server:
        server.speaks_request_contract = False  # the stand-in's own reading would choke first
        h = harness_for(server, codec=codec_for(HOLOTRON_12B.codec_config()))
        finished = h.run("do it", max_steps=3)
    assert "internal error" not in finished.reason, finished
    assert finished.outcome is Outcome.ANSWERED, finished
