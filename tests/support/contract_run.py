"""A fixed three-step run for the contract conformance tests (tests/model/test_contracts_*.py).

Three steps done (a click, a secret typed, a chord), the fourth the current one: with three
screenshots kept, the first becomes a placeholder. The screenshots are tiny PNGs written here
byte by byte, so the request bytes are the same on every machine.
"""

from __future__ import annotations

import datetime as dt
import struct
import zlib
from typing import Any

from model.coords import Convention
from model.prompt import OUTCOME_DONE, PromptConfig, Turn, failed_outcome
from model.schema import Click, Hotkey, Step, Type

TASK = "Log in to the example site and open the \u00e9l\u00e8ve's report"
TODAY = dt.date(2026, 12, 3)
SENT = (1280, 720)


def png(shade: int, width: int = 8, height: int = 6) -> bytes:
    """A ``width`` x ``height`` grey PNG, the same bytes everywhere (zlib level 9)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    rows = b"".join(b"\x00" + bytes([shade]) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def prompt_config() -> PromptConfig:
    return PromptConfig(convention=Convention.NORM1000, sent_width=SENT[0],
                        sent_height=SENT[1], today=TODAY)


def turns() -> list[Turn]:
    """The run's turns: three done (the second typed a secret), the fourth current."""
    return [
        Turn(1, png(10), "image/png",
             Step(note="", thought="Open the login form.",
                  action=Click(element="Log in link", x=932, y=88)), OUTCOME_DONE),
        Turn(2, png(20), "image/png",
             Step(note="The form asks for a password.", thought="Type the password.",
                  action=Type(text="hunter2!", press_enter=True)), OUTCOME_DONE, secret=True),
        Turn(3, png(30), "image/png",
             Step(note="", thought="Open the reports with the shortcut.",
                  action=Hotkey(keys=["ctrl", "r"])), failed_outcome("the key was not sent")),
        Turn(4, png(40), "image/png", None, None),
    ]


def answer_step() -> dict[str, Any]:
    """What the stand-in answers in today's dialect."""
    return {"note": "", "thought": "done", "action": {"action": "answer", "text": "ok"}}


def sent_bytes(messages: list[dict[str, Any]], answer: Any, codec: Any = None,
               **fake: Any) -> tuple[bytes, Any]:
    """The bytes of the one chat request the client sends for ``messages`` (with ``codec``,
    None for the client's default) to a stand-in answering ``answer``, and the step decoded."""
    from model.client import ClientConfig, HolotronClient
    from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy

    class Recording(FakeVLLM):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.raw: list[bytes] = []

        def _chat(self, h: Any, raw: bytes) -> None:
            self.raw.append(raw)
            super()._chat(h, raw)  # type: ignore[misc]

    with Recording(ScriptedPolicy([answer]), **fake) as server, \
            HolotronClient(ClientConfig(base_url=server.base_url), codec) as client:
        reply = client.next_step(messages)
    return server.raw[0], reply.step
