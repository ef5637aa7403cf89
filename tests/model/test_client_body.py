"""The chat request the client sends is the one a hand-written ``chat.completions.create``
call sends, byte for byte and header for header: the client turns a codec's body into
``create``'s arguments (model/sdk_adapter.py ``create_arguments``), and nothing of what reaches
the server may change on the way."""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

import pytest
from PIL import Image

from model.client import ClientConfig, HolotronClient
from model.coords import Convention
from model.prompt import OUTCOME_DONE, PromptConfig, Turn, build_messages
from model.schema import Click, Step, Type
from model.structured import inline_refs, step_output_schema
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "ok"}}

# Per request by design: the SDK counts retries and may name the read timeout.
_VARYING = {"x-stainless-retry-count", "x-stainless-read-timeout"}


class RecordingVLLM(FakeVLLM):
    """The stand-in keeping every chat request's raw body and headers as received."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.raw: list[tuple[bytes, dict[str, str]]] = []

    def _chat(self, h: Any, raw: bytes) -> None:
        self.raw.append((raw, {k.lower(): v for k, v in h.headers.items()}))
        super()._chat(h, raw)  # type: ignore[misc]


def _jpeg() -> bytes:
    out = io.BytesIO()
    Image.effect_noise((64, 48), 60).convert("RGB").save(out, "JPEG", quality=90)
    return out.getvalue()


def _messages(steps: int) -> list[dict[str, Any]]:
    image = _jpeg()
    turns = [
        Turn(i, image if i > steps - 3 else b"", "image/jpeg",
             Step(thought=f"step {i}: the \u00e9l\u00e8ve's \"file\" menu \u2192 open",
                  note="n\u00b0 1\n",
                  action=Click(element="File menu", x=10 * i, y=20) if i % 2
                  else Type(text="caf\u00e9 \u2603 \t<tab>", clear_first=True)),
             OUTCOME_DONE)
        for i in range(1, steps)
    ]
    turns.append(Turn(steps, image, "image/jpeg", None, None))
    return build_messages("open the file \u2603", turns, PromptConfig(
        convention=Convention.NORM1000, sent_width=1920, sent_height=1080,
        today=dt.date(2026, 12, 3)))


def _sdk_create(client: HolotronClient, messages: list[dict[str, Any]], temperature: float
                ) -> None:
    """The request as the SDK's documented ``create`` makes it (the client's former call)."""
    config = client.config
    stream = client._sdk.chat.completions.create(
        model=client.resolve_model(),
        messages=messages,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
        temperature=temperature,
        max_tokens=config.max_tokens,
        extra_body={"structured_outputs": {"json": inline_refs(dict(step_output_schema()))}},
        timeout=client._timeout(config.request_timeout),
    )
    with stream:
        for _chunk in stream:
            pass


@pytest.mark.parametrize("api_key", [None, "sk-local-123"])
@pytest.mark.parametrize("steps", [1, 4, 25])
def test_the_body_and_headers_are_the_sdks_own(api_key: str | None, steps: int) -> None:
    messages = _messages(steps)
    with RecordingVLLM(ScriptedPolicy([ANSWER, ANSWER]), api_key=api_key) as server:
        client = HolotronClient(ClientConfig(base_url=server.base_url, api_key=api_key))
        try:
            client.next_step(messages, step_output_schema())
            _sdk_create(client, messages, client.config.temperature)
        finally:
            client.close()
    (ours, our_headers), (sdk, sdk_headers) = server.raw
    assert ours == sdk
    assert {k: v for k, v in our_headers.items() if k not in _VARYING} == {
        k: v for k, v in sdk_headers.items() if k not in _VARYING}
    if api_key:
        assert our_headers["authorization"] == f"Bearer {api_key}"
    # Every screenshot went, as it was given.
    parts = [part for m in messages if isinstance(m["content"], list) for part in m["content"]]
    images = [part["image_url"]["url"] for part in parts if part.get("type") == "image_url"]
    assert images and all(url.encode() in ours for url in images)
