"""Where holodesk meets the openai SDK and its HTTP library: the one module that knows them
beyond their documented surface.

Public paths only, but one: a chat request goes through ``chat.completions.create`` (the
codec's body split into the parameters ``create`` names and ``extra_body`` for vLLM's own
fields, :func:`create_arguments`), and a streamed chunk is read as the plain JSON the server sent
(``to_dict``). Dropping the former shortcut past ``create`` costs 20-60 ms per step at step 20
and 90-370 ms at step 200 on a loaded 2-core machine (bench/sdk_paths.py), on a step that
takes seconds with a real model: docs/vllm-protocol.md, "The SDK path".

The one private hook kept, :func:`wrap_network_backend`: httpx2's transport has no public way
to choose its network backend, and holodesk needs one for two guarantees that are not about
speed: :meth:`model.client.HolotronClient.cancel` shuts the request's sockets down from
another thread (vLLM then stops generating), and unagreed plain http must reach a loopback
peer (model/plain_http.py). tests/model/test_sdk_adapter.py fails on an httpx2/httpcore2
release that moves it, and pyproject.toml pins the major versions.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

import httpcore2
import httpx2
import openai
from openai.resources.chat.completions import Completions
from openai.types.chat import ChatCompletion

#: What ``create`` takes by name; every other field of a body goes in its ``extra_body``.
CREATE_PARAMETERS = frozenset(inspect.signature(Completions.create).parameters) - {
    "self", "extra_headers", "extra_query", "extra_body", "timeout", "stream"}


def create_arguments(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` (a codec's chat request) as keyword arguments of ``create``, less ``stream``.

    The fields ``create`` names go as themselves up to the first it does not name
    (``structured_outputs``, ``chat_template_kwargs``, ...); from there on every field goes in
    ``extra_body``, which the SDK merges last. The JSON sent is ``body``'s: the keys ``create``
    names in its own order, then the rest in the body's (the documented requests,
    tests/fixtures/contracts/, keep their bytes but for H's native tools: ``tool_choice``
    comes before ``top_p``).
    """
    named: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in body.items():
        if key == "stream":
            continue
        if extra or key not in CREATE_PARAMETERS:
            extra[key] = value
        else:
            named[key] = value
    if extra:
        named["extra_body"] = extra
    return named


@contextmanager
def stream_chat(sdk: openai.OpenAI, body: Mapping[str, Any],
                timeout: httpx2.Timeout) -> Iterator[Iterator[dict[str, object]]]:
    """One streamed chat request; yields its chunks as the JSON objects the server sent
    (model/stream_chunk.py reads them). Leaving the ``with`` closes the response."""
    stream = sdk.chat.completions.create(**create_arguments(body), stream=True,
                                         timeout=timeout)
    with stream:
        # Not validated: a chunk of another shape is model/stream_chunk.py's to report.
        yield (chunk.to_dict(warnings=False) for chunk in stream)


def post_chat(sdk: openai.OpenAI, body: Mapping[str, Any],
              timeout: httpx2.Timeout) -> ChatCompletion:
    """One chat request, not streamed."""
    reply = sdk.chat.completions.create(**create_arguments(body), stream=False,
                                        timeout=timeout)
    return cast(ChatCompletion, reply)


def wrap_network_backend(
    transport: httpx2.HTTPTransport,
    wrap: Callable[[httpcore2.NetworkBackend], httpcore2.NetworkBackend],
) -> bool:
    """Replace ``transport``'s network backend by ``wrap(backend)``; False when this httpx2
    keeps it elsewhere (nothing changed then: the caller falls back, see model/client.py).

    Private: the pool's ``_network_backend``. httpcore2's ``ConnectionPool`` takes a
    ``network_backend`` argument, but httpx2's ``HTTPTransport`` builds its pool itself.
    """
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(backend, httpcore2.NetworkBackend):
        return False
    cast(Any, pool)._network_backend = wrap(backend)
    return True
