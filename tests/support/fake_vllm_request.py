"""What the stand-in server hands a policy (one chat request, parsed), and what it may raise."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from tests.support.fake_vllm_tokens import image_tokens, text_tokens


@dataclass(frozen=True)
class SentImage:
    """One image of a request, decoded: what the model would have seen."""

    image: Image.Image
    width: int
    height: int
    mime: str

    @property
    def size(self) -> tuple[int, int]:
        return self.width, self.height

    @property
    def tokens(self) -> int:
        """What this image costs the prompt (the processor's 512-pixel tiles)."""
        return image_tokens(self.width, self.height)


@dataclass
class ChatRequest:
    """One chat completion request as the stand-in received it, parsed.

    ``structured_outputs`` is the field as sent (None when absent); ``schema`` its JSON schema
    when it has one.
    """

    body: dict[str, Any]
    model: str
    messages: list[dict[str, Any]]
    images: list[SentImage]
    schema: dict[str, Any] | None
    temperature: float | None
    stream: bool
    include_usage: bool
    max_tokens: int | None
    headers: dict[str, str] = field(default_factory=dict)
    structured_outputs: Any = None

    @property
    def latest_image(self) -> SentImage | None:
        """The last image of the conversation: the current screenshot."""
        return self.images[-1] if self.images else None

    @property
    def text(self) -> str:
        """All text parts of all messages, joined (for assertions and token estimates)."""
        parts: list[str] = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(
                    str(part.get("text", ""))
                    for part in content
                    if isinstance(part, dict) and part.get("type") == "text"
                )
        return "\n".join(parts)

    @property
    def prompt_tokens(self) -> int:
        """The stand-in's count of the prompt: text estimated, images by their tiles."""
        return text_tokens(self.text) + sum(image.tokens for image in self.images)


@dataclass(frozen=True)
class ToolCallAnswer:
    """A native function call a policy answers (a request with ``tools``): the stand-in
    streams it as vLLM streams a tool call (tests/support/fake_vllm_tools.py).

    ``arguments`` as a mapping is sent as its JSON; as a string, as it is (a broken answer, for
    the tests of one). ``content`` is text before the call, which only ``tool_choice: "auto"``
    lets a model write; ``reasoning`` goes out as the reasoning parser's text. ``more`` are
    further calls of the same answer (a model calling two tools at once).
    """

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    content: str = ""
    reasoning: str = ""
    more: tuple[ToolCallAnswer, ...] = ()

    @property
    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), ensure_ascii=False)

    @property
    def calls(self) -> tuple[ToolCallAnswer, ...]:
        """This call and the ``more`` ones, in order."""
        return (self, *self.more)


Answer = str | ToolCallAnswer

Policy = Callable[[ChatRequest], Answer]
"""What the model answers: the assistant message content for a request, or a tool call."""


class FakeHTTPError(Exception):
    """Raised by a policy (or put in a script) to make the server answer an HTTP error."""

    def __init__(
        self, status: int, message: str = "Injected failure", err_type: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.err_type = err_type or ("InternalServerError" if status >= 500 else "BadRequestError")


class FakeStreamError(FakeHTTPError):
    """A failure *after* the 200: a streamed answer gets ``partial`` as content, then vLLM's
    ``data: {"error": …}`` event and ``[DONE]`` (as when the engine dies mid-generation). A
    request that is not streamed gets the HTTP error instead, as vLLM answers it.
    """

    def __init__(
        self,
        status: int = 500,
        message: str = "Internal server error",
        err_type: str | None = None,
        *,
        partial: str = "",
    ) -> None:
        super().__init__(status, message, err_type)
        self.partial = partial
