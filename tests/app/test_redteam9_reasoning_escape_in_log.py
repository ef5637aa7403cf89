"""Red team 9: the model's reasoning writes terminal escape sequences into holodesk.log.

H's contracts turn reasoning on (``chat_template_kwargs: {enable_thinking: true}``); the
server's reasoning parser sends it apart from the answer, and nothing binds it to a grammar:
it is free text, any character included, ESC among them. When an answer is not a valid step
(cut at the length limit, or past holodesk's own limits), the client logs "rejected answer:
%.500s" of the answer at debug level (model/client.py ``next_step``), and the answer as it
logs it starts with the reasoning (``_answer_text`` joins ``<think>reasoning</think>`` then
the content). holodesk.log's handler (app/logs.py) masks secrets but passes control
characters through: the escape sequence lands in the file as the model wrote it.

Attack: the hijacked model reasons ``ESC ] 52 ; c ; <base64 of "rm -rf ~\\n"> BEL`` (OSC 52:
kitty, foot, alacritty and wezterm put it on the clipboard), then ``ESC [1A ESC [2K`` (erase
the line), and answers a step too long for the token budget. Whoever runs ``tail -f`` or
``cat`` on holodesk.log (the problem-report instructions point there) gets a command on their
clipboard, ready for the next paste, and lines of the log erased.

Expected: text of the model's written to holodesk.log carries no control characters (escape
them, as app/visible.py does for the terminal).

Fixed: the log's formatter (app/logs.py) shows every control character as a symbol, in the
file and on the console.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.events import Outcome
from model.contracts import codec_for
from model.profiles import HOLOTRON_12B
from tests.support.agent_harness import HarnessFor
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home
from tests.support.leaks import holodesk_log

NANO = HOLOTRON_12B.codec_config()
#: OSC 52 (the clipboard becomes "rm -rf ~\n"), then cursor up and erase line, twice.
HIDDEN = "\x1b]52;c;cm0gLXJmIH4K\x07" + "\x1b[1A\x1b[2K" * 2
ANSWER = json.dumps({"note": None, "thought": "done",
                     "tool_call": {"tool_name": "answer", "content": "finished"}})
#: Longer than the tokens a step may take: cut at the length limit, logged as rejected.
TOO_LONG = ("<think>plan " + HIDDEN + " the next step</think>" + json.dumps(
    {"note": None, "thought": "wait. " * 5000,
     "tool_call": {"tool_name": "wait", "seconds": 0}}))


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def test_redteam9_reasoning_escape_sequences_never_reach_the_log_file(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    log_path = tmp_path / "holodesk.log"
    with FakeVLLM(ScriptedPolicy([TOO_LONG, ANSWER]), reasoning_parser=True) as server, \
            holodesk_log(log_path):
        h = harness_for(server, codec=codec_for(NANO))
        finished = h.run("do it", max_steps=3)
    assert finished.outcome is Outcome.ANSWERED, finished
    log = log_path.read_text(encoding="utf-8")
    assert "rejected answer" in log  # the line that quotes the answer is there...
    assert "\x1b" not in log and "\x07" not in log, [  # ...without the escape sequences
        line for line in log.splitlines() if "\x1b" in line]
