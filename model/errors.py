"""What can go wrong when talking to Holotron, in plain words, each with what to do about it.

Every failure of :class:`model.client.HolotronClient` is one of these. ``message`` says what
happened, ``fix`` (a :class:`model.problem.Fix`) what the person can do, in words true in every
front end; the command or menu item that does it is the fix's ``setting`` or ``remedy``, which
each front end names its own way. The vLLM flags a fix names are the server's own, the same
whichever front end started it. ``detail`` keeps the server's own words when there are any, for
the log.
"""

from __future__ import annotations

from collections.abc import Sequence

from model.problem import Fix, HolodeskError, Remedy

SERVE_HINT = "start it again"


class HolotronError(HolodeskError):
    """Base class: a failure talking to the model server, with a fix."""

    def __init__(self, message: str, fix: Fix | str, *, detail: str | None = None) -> None:
        super().__init__(message, fix)
        self.detail = detail


class ServerUnreachable(HolotronError):
    """Nothing answers at the endpoint, or the connection broke."""

    def __init__(self, url: str, *, detail: str | None = None, broke: bool = False) -> None:
        self.url = url
        if broke:
            message = (
                f"The connection to the model server at {url} broke before it finished answering."
            )
            fix = Fix(
                "Check that the model server is still running (its console shows why it "
                f"stopped); if it is not, {SERVE_HINT}.",
                remedy=Remedy.START_SERVER,
            )
        else:
            message = f"No model server answers at {url}."
            fix = Fix(
                "Start the model server and check the server address: host, port, and the /v1 "
                "path. A server that was just "
                "started answers only once the model is loaded (minutes).",
                setting="endpoint",
                remedy=Remedy.START_SERVER,
            )
        super().__init__(message, fix, detail=detail)


class ModelLoading(HolotronError):
    """The server is up but the model is not ready yet (HTTP 503)."""

    def __init__(self, url: str, *, detail: str | None = None) -> None:
        self.url = url
        super().__init__(
            f"The model server at {url} is still loading the model.",
            Fix(
                "Wait until `GET /health` answers 200 (loading 25 GB of weights takes a few "
                "minutes), then try again.",
                remedy=Remedy.CHECK_SERVER,
            ),
            detail=detail,
        )


class ModelNotFound(HolotronError):
    """The model name we asked for is not one the server serves."""

    def __init__(self, requested: str, served: Sequence[str], *, detail: str | None = None) -> None:
        self.requested = requested
        self.served = list(served)
        names = ", ".join(f"'{name}'" for name in self.served) if self.served else "none listed"
        super().__init__(
            f"The server does not serve a model named '{requested}' (it serves: {names}).",
            Fix(
                "Leave the model name empty to use the served one, set it to one of the served "
                "names, or start vLLM with `--served-model-name holotron`.",
                setting="model",
            ),
            detail=detail,
        )


class TooManyImages(HolotronError):
    """The request carried more images than the server accepts per prompt."""

    def __init__(
        self, limit: int | None, sent: int | None = None, *, detail: str | None = None
    ) -> None:
        self.limit = limit
        self.sent = sent
        allowed = f"at most {limit} image(s)" if limit is not None else "fewer images"
        sent_part = f"{sent} images were sent but " if sent is not None else ""
        super().__init__(
            f"The server refused the screenshots: {sent_part}it accepts {allowed} per request.",
            Fix(
                'Restart vLLM with `--limit-mm-per-prompt \'{"image": 3, "video": 0}\'` (or '
                "higher), or keep fewer screenshots in history.",
            ),
            detail=detail,
        )


class ContextTooLong(HolotronError):
    """The prompt (plus the answer budget) does not fit the server's context window.

    ``answer_tokens`` is set when the prompt itself fits but the answer budget does not: an
    older vLLM refuses such a request, a current one clamps the budget (see
    :class:`ContextFull`).
    """

    def __init__(
        self,
        max_model_len: int | None,
        prompt_tokens: int | None = None,
        *,
        answer_tokens: int | None = None,
        detail: str | None = None,
    ) -> None:
        self.max_model_len = max_model_len
        self.prompt_tokens = prompt_tokens
        self.answer_tokens = answer_tokens
        window = f"{max_model_len} tokens" if max_model_len is not None else "its context window"
        if answer_tokens is not None and prompt_tokens is not None:
            message = (
                f"The conversation ({prompt_tokens} tokens) leaves no room in the server's "
                f"context window ({window}) for an answer of up to {answer_tokens} tokens."
            )
        elif answer_tokens is not None:
            message = (
                f"The answer budget ({answer_tokens} tokens) is larger than the server's whole "
                f"context window ({window})."
            )
        else:
            size = f" ({prompt_tokens} tokens)" if prompt_tokens is not None else ""
            message = f"The request{size} is too long for the server: it accepts at most {window}."
        super().__init__(
            message,
            Fix(
                "Restart vLLM with a larger `--max-model-len` (32768 is the recommended value), "
                "or keep fewer screenshots and past steps in history."
            ),
            detail=detail,
        )


class ContextFull(ContextTooLong):
    """The answer was cut short because the conversation filled the context window.

    Current vLLM clamps the answer budget to what is left of the window without an error, so
    a long history shows up as an answer that stops (``finish_reason: "length"``) well before
    the budget the client asked for. Asking again cannot help: the history only grows.
    """

    def __init__(
        self,
        max_model_len: int | None,
        prompt_tokens: int | None,
        answer_tokens: int | None,
        *,
        detail: str | None = None,
    ) -> None:
        self.max_model_len = max_model_len
        self.prompt_tokens = prompt_tokens
        self.answer_tokens = answer_tokens
        window = f" ({max_model_len} tokens)" if max_model_len is not None else ""
        used = f" of {prompt_tokens} tokens" if prompt_tokens is not None else ""
        left = (
            f"only {answer_tokens} token(s) were left for the answer, which was cut off"
            if answer_tokens is not None
            else "the answer was cut off"
        )
        # Past ContextTooLong's wording, straight to the base: the window is full, not exceeded.
        HolotronError.__init__(
            self,
            f"The conversation{used} has filled the model's context window{window}: {left}.",
            Fix(
                "Start a new run (it begins with an empty history), or restart vLLM with a larger "
                "`--max-model-len` (32768 is the recommended value), or keep fewer screenshots "
                "and past steps in history."
            ),
            detail=detail,
        )


class ServerError(HolotronError):
    """The server failed while handling the request (HTTP 5xx)."""

    def __init__(self, status: int | None, *, detail: str | None = None) -> None:
        self.status = status
        code = f" (HTTP {status})" if status is not None else ""
        super().__init__(
            f"The model server failed while answering{code}.",
            Fix(
                "Look at the vLLM console for the error; if it ran out of GPU memory, lower "
                "vLLM's `--max-model-len` or `--gpu-memory-utilization`, then restart it.",
                remedy=Remedy.START_SERVER,
            ),
            detail=detail,
        )


class RequestTimeout(HolotronError):
    """The server took longer than the configured time to answer."""

    def __init__(self, seconds: float, url: str, *, detail: str | None = None) -> None:
        self.seconds = seconds
        self.url = url
        super().__init__(
            f"The model server at {url} did not answer within {seconds:g} seconds.",
            Fix(
                "Check that the GPU is not busy with other work; raise the request timeout if "
                "the server is just slow.",
                setting="request_timeout",
            ),
            detail=detail,
        )


class InvalidOutput(HolotronError):
    """The model answered, but not with a valid step, even after retries."""

    # ``reason`` (not ``problem``): the root's ``problem`` is the message and fix together.
    def __init__(self, raw: str, reason: str, attempts: Sequence[str] = ()) -> None:
        self.raw = raw
        self.reason = reason
        self.attempts = list(attempts) if attempts else [raw]
        super().__init__(
            f"The model's answer is not a valid step ({reason}) after "
            f"{len(self.attempts)} attempt(s).",
            Fix(
                "Make sure the server supports structured outputs (vLLM 0.12 or newer) and that "
                "it serves Holotron; the raw answer is in the run log.",
                remedy=Remedy.SHOW_LOG,
            ),
            detail=raw,
        )


class AnswerTooLong(InvalidOutput):
    """The answer ran past the client's byte limit while streaming; the client stopped reading.

    A server that honours ``max_tokens`` never gets there: one that ignores it (or a model that
    loops in a grammar that allows it) would otherwise stream without end into memory and the
    log. ``raw`` is the answer up to the limit.
    """

    def __init__(self, raw: str, limit: int) -> None:
        size = f"{limit // 1024} KiB" if limit % 1024 == 0 else f"{limit} bytes"
        self.raw = raw
        self.reason = f"it ran past {size}"
        self.attempts = [raw]
        self.limit = limit
        # Past InvalidOutput's wording, straight to the base: one answer too long, no retries.
        HolotronError.__init__(
            self,
            f"The model's answer ran past {size}, far longer than any step; "
            "the client stopped reading it.",
            Fix(
                "Make sure the server honours the answer length limit (max_tokens) and "
                "structured outputs (vLLM 0.12 or newer) and that it serves Holotron; the start "
                "of the answer is in the run log.",
                remedy=Remedy.SHOW_LOG,
            ),
            detail=raw[:200],
        )


class AuthFailed(HolotronError):
    """The server wants an API key we did not send, or refused the one we sent (HTTP 401)."""

    def __init__(self, url: str, *, had_key: bool, detail: str | None = None) -> None:
        self.url = url
        self.had_key = had_key
        if had_key:
            message = f"The model server at {url} refused the API key."
        else:
            message = f"The model server at {url} requires an API key and none is set."
        super().__init__(
            message,
            Fix(
                "Set the same API key the server was started with (its `--api-key`).",
                remedy=Remedy.SET_API_KEY,
            ),
            detail=detail,
        )


class Cancelled(HolotronError):
    """The request was cancelled (stop button, emergency stop, shutdown)."""

    def __init__(self) -> None:
        super().__init__("The request to the model was cancelled.", Fix("Nothing to do."))


class BadRequest(HolotronError):
    """The server refused the request for another reason (HTTP 4xx)."""

    def __init__(self, status: int | None, *, detail: str | None = None) -> None:
        self.status = status
        code = f" (HTTP {status})" if status is not None else ""
        reason = f": {detail}" if detail else ""
        super().__init__(
            f"The model server refused the request{code}{reason}",
            Fix(
                "Check that the server address points at a vLLM OpenAI-compatible server (…/v1) "
                "serving Holotron, and that vLLM is 0.12 or newer.",
                setting="endpoint",
            ),
            detail=detail,
        )


class CertificateNotPinned(HolotronError):
    """The server's TLS certificate is not the pinned one: nothing was sent to it."""

    def __init__(self, url: str, seen: str, pinned: str) -> None:
        self.url = url
        self.seen = seen
        self.pinned = pinned
        super().__init__(
            f"The model server at {url} presented a TLS certificate with the SHA-256 "
            f"fingerprint {seen}, not the pinned {pinned}. Nothing was sent to it.",
            Fix(
                "If the server's certificate was made anew (`holodesk serve --tls` prints its "
                "fingerprint at every start), pin the new fingerprint; if you do not know why "
                "it changed, someone may be between you and the server: do not connect.",
                setting="tls_fingerprint",
            ),
        )


class CertificateUntrusted(HolotronError):
    """The server's TLS certificate is not trusted here (self-signed, unknown CA, wrong name)."""

    def __init__(self, url: str, *, detail: str | None = None) -> None:
        self.url = url
        super().__init__(
            f"The model server at {url} uses a TLS certificate this machine does not trust "
            "(a self-signed one, as `holodesk serve --tls` makes, needs its fingerprint "
            "pinned).",
            Fix(
                "Pin the SHA-256 fingerprint the server printed when it started (compare it "
                "there, not with what this connection shows).",
                setting="tls_fingerprint",
            ),
            detail=detail,
        )
