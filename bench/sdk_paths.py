"""Micro-bench: the step request through the SDK's public ``chat.completions.create`` against
the former bypass (the SDK's ``post`` with holodesk's own body bytes and raw chunks).

Both paths send the same request (the codec's body at step N, three 1080p screenshots) to the
stand-in server (tests/support/fake_vllm.py) answering at once, and read the whole streamed
answer. Printed: the median wall time per request of each path and the difference, at steps
20 and 200. What was measured and decided: docs/vllm-protocol.md, "The SDK path".

    .venv/bin/python bench/sdk_paths.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import io
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import openai  # noqa: E402
from openai.types.chat import ChatCompletion  # noqa: E402
from PIL import Image  # noqa: E402

from model.client import ClientConfig, HolotronClient  # noqa: E402
from model.coords import Convention  # noqa: E402
from model.prompt import OUTCOME_DONE, PromptConfig, Turn, build_messages  # noqa: E402
from model.schema import Click, Step  # noqa: E402
from model.sdk_adapter import stream_chat  # noqa: E402
from model.stream_chunk import read_chunk  # noqa: E402
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy  # noqa: E402

ANSWER = {"thought": "I click the File menu to open it and then pick the report.",
          "action": {"action": "click", "element": "File menu", "x": 12, "y": 8}}


def _screenshot() -> bytes:
    out = io.BytesIO()
    Image.effect_noise((1920, 1080), 40).convert("RGB").save(out, "JPEG", quality=80)
    return out.getvalue()


def _messages(steps: int, image: bytes) -> list[dict[str, Any]]:
    turns = [Turn(i, image if i > steps - 3 else b"", "image/jpeg",
                  Step(thought=f"step {i}: I open the File menu to find the report",
                       action=Click(element="File menu", x=10 + i, y=20)), OUTCOME_DONE)
             for i in range(1, steps)]
    turns.append(Turn(steps, image, "image/jpeg", None, None))
    return build_messages("open the quarterly report", turns, PromptConfig(
        convention=Convention.NORM1000, sent_width=1920, sent_height=1080,
        today=dt.date(2026, 12, 4)))


def _bypass(client: HolotronClient, body: dict[str, Any]) -> None:
    """The former path: the body encoded as the SDK would, sent by ``post``, chunks as JSON."""
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    stream = client._sdk.post(
        "/chat/completions", content=content,
        options={"timeout": client._timeout(60.0), "security": {"bearer_auth": True}},
        cast_to=ChatCompletion, stream=True, stream_cls=openai.Stream[object])
    with stream:
        for data in stream:
            read_chunk(data)


def _public(client: HolotronClient, body: dict[str, Any]) -> None:
    """The path the client takes (model/sdk_adapter.py)."""
    with stream_chat(client._sdk, body, client._timeout(60.0)) as chunks:
        for data in chunks:
            read_chunk(data)


def _median_ms(run: Callable[[], None], repeat: int) -> float:
    run()  # warm: connection, caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    image = _screenshot()
    with FakeVLLM(ScriptedPolicy([ANSWER] * 1000)) as fake:
        fake.keep_requests = False
        fake.decode_images = False
        with HolotronClient(ClientConfig(base_url=fake.base_url)) as client:
            model = client.resolve_model()
            for steps in (20, 200):
                body = client.codec.body(model, _messages(steps, image), schema=None,
                                         retry=False)
                old = _median_ms(functools.partial(_bypass, client, body), args.repeat)
                new = _median_ms(functools.partial(_public, client, body), args.repeat)
                print(f"step {steps:3}: bypass {old:6.1f} ms, create() {new:6.1f} ms, "
                      f"difference {new - old:+6.1f} ms per step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
