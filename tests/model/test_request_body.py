"""The chat body with its screenshots spliced in is, byte for byte, the plain encoding of the
same request (tests/model/test_client_body.py checks that one against the SDK's ``create``)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from model import request_body
from model.request_body import chat_body, dumps

PNG = "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 40).decode()
JPEG = "data:image/jpeg;base64," + base64.b64encode(b"\xff\xd8" * 999).decode()


def _image(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def _body(*content: Any) -> dict[str, Any]:
    return {"model": "m", "stream": True,
            "messages": [{"role": "system", "content": "sys \u2603 \"q\""},
                         {"role": "user", "content": list(content)}],
            "max_tokens": 10, "structured_outputs": {"json": {"type": "object"}}}


@pytest.mark.parametrize("content", [
    [_image(PNG)],
    [{"type": "text", "text": "caf\u00e9\n"}, _image(PNG), {"type": "text", "text": "\t\"x\"\n"},
     _image(JPEG), _image(PNG)],
    # Not spliced, still exact: escapes, a non-data URL, extra keys, a non-string.
    [_image('data:image/png;base64,AA"\\\n\u00e9'), _image("https://example.com/a.png"),
     {"type": "image_url", "image_url": {"url": PNG, "detail": "high"}},
     {"type": "image_url", "image_url": {"url": 7}}, "plain", None],
    # Text that looks like a splice token is text.
    [{"type": "text", "text": "holodesk-image-0123456789abcdef-0"}, _image(JPEG)],
    [],
])
def test_the_spliced_body_is_the_plain_encoding(content: list[Any]) -> None:
    body = _body(*content)
    assert chat_body(body) == dumps(body)
    assert chat_body(body) == dumps(body)  # from the kept fragments too


def test_the_screenshots_are_not_run_through_the_encoder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    body = _body(_image(PNG), _image(JPEG))
    chat_body(body)
    encoded: list[int] = []
    real = request_body.json.dumps

    def watched(obj: Any, **kw: Any) -> str:
        encoded.append(len(real(obj, **kw)))
        return real(obj, **kw)

    monkeypatch.setattr(request_body.json, "dumps", watched)
    assert chat_body(body) == dumps(body)
    spliced = encoded[:-1]  # the last is the check's own full encoding
    assert spliced and max(spliced) < len(PNG) // 4
