"""The chat request's JSON bytes, as the openai SDK writes them, without running the
screenshots through the JSON encoder at every step.

A request carries up to three screenshots as base64 data URLs (about 2 MB at 1080p), the same
strings step after step (model/prompt.py keeps each one's URL). Encoding them is most of the
body's cost: 4-5 ms of CPU per step on this project's CI machine. A data URL needs no JSON
escaping (base64 and a media type), so its encoded form is the string between quotes: each is
made once, then spliced into the encoding of the rest. The bytes are the SDK's
(``openai._utils._json.openapi_dumps``: ``ensure_ascii=False``, compact separators, no NaN);
tests/model/test_client_body.py compares them with ``chat.completions.create``'s.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections import OrderedDict
from typing import Any

#: Characters JSON must escape in a string: a URL with none is encoded as itself in quotes.
_ESCAPED = re.compile(r'["\\\x00-\x1f\x7f-\U0010ffff]')
_FRAGMENTS_KEPT = 4  # three images per request, and the next step's new one

_fragments: OrderedDict[str, bytes | None] = OrderedDict()
_lock = threading.Lock()


def dumps(obj: Any) -> bytes:
    """The SDK's encoding of ``obj``: what it would send for it as a request body."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def chat_body(body: dict[str, Any]) -> bytes:
    """``dumps(body)`` for a chat request, its image data URLs spliced in."""
    nonce = secrets.token_hex(8)
    spliced: list[tuple[str, bytes]] = []
    messages = []
    for message in body.get("messages", ()):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            messages.append(message)
            continue
        parts = []
        for part in content:
            url = _data_url(part)
            fragment = _fragment(url) if url is not None else None
            if fragment is None:
                parts.append(part)
                continue
            token = f"holodesk-image-{nonce}-{len(spliced)}"
            spliced.append((json.dumps(token), fragment))
            parts.append({**part, "image_url": {**part["image_url"], "url": token}})
        messages.append({**message, "content": parts})
    if not spliced:
        return dumps(body)
    text = json.dumps({**body, "messages": messages}, ensure_ascii=False,
                      separators=(",", ":"), allow_nan=False)
    out: list[bytes] = []
    rest = text
    for quoted, fragment in spliced:
        before, found, rest = rest.partition(quoted)
        if not found or quoted in rest:  # cannot happen with a fresh nonce; be exact anyway
            return dumps(body)
        out += (before.encode(), fragment)
    out.append(rest.encode())
    return b"".join(out)


def _data_url(part: Any) -> str | None:
    if not isinstance(part, dict) or part.get("type") != "image_url":
        return None
    image = part.get("image_url")
    if not isinstance(image, dict) or set(image) != {"url"}:
        return None
    url = image["url"]
    return url if isinstance(url, str) and url.startswith("data:") else None


def _fragment(url: str) -> bytes | None:
    """``url`` encoded and quoted, when it needs no escaping; None otherwise. Kept for the
    last few URLs (a str caches its hash: looking one up again costs nothing)."""
    with _lock:
        if url in _fragments:
            _fragments.move_to_end(url)
            return _fragments[url]
    fragment = None if _ESCAPED.search(url) else b'"' + url.encode("ascii") + b'"'
    with _lock:
        _fragments[url] = fragment
        while len(_fragments) > _FRAGMENTS_KEPT:
            _fragments.popitem(last=False)
    return fragment
