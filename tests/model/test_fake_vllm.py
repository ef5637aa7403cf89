"""The fake vLLM server answers like vLLM over real HTTP (the client tests rely on it)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from PIL import Image

from model.structured import step_output_schema
from tests.support.fake_vllm import (
    ChatRequest,
    ContextWording,
    FakeHTTPError,
    FakeStreamError,
    FakeVLLM,
    GarbagePolicy,
    ScriptedPolicy,
    SeeingPolicy,
    StandInMisuse,
    StructuredOutputs,
    Target,
    data_url,
    find_color,
    image_message,
    iter_sse,
    jpeg_bytes,
    screenshot,
)
from tests.support.fake_vllm_tokens import image_tokens, pieces

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "ok"}}
STEP_SCHEMA = {"json": step_output_schema()}
RED = (220, 30, 30)
BLUE = (30, 60, 220)


@pytest.fixture
def fake() -> Iterator[FakeVLLM]:
    with FakeVLLM(ScriptedPolicy([ANSWER], repeat_last=True)) as server:
        yield server


@pytest.fixture
def http() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=10) as client:
        yield client


def chat_body(messages: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "holotron",
        "messages": messages or [{"role": "user", "content": "hello\n"}],
    }
    body.update(extra)
    return body


def post(
    http: httpx2.Client, fake: FakeVLLM, body: dict[str, Any], **kwargs: Any
) -> httpx2.Response:
    return http.post(f"{fake.base_url}/chat/completions", json=body, **kwargs)


def assert_vllm_error(response: httpx2.Response, status: int, err_type: str) -> str:
    assert response.status_code == status
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == err_type
    assert error["code"] == status
    message = error["message"]
    assert isinstance(message, str)
    return message


# --------------------------------------------------------------------------- endpoints


def test_health_and_loading(fake: FakeVLLM, http: httpx2.Client) -> None:
    assert http.get(f"{fake.root_url}/health").status_code == 200
    fake.loading = True
    assert http.get(f"{fake.root_url}/health").status_code == 503
    message = assert_vllm_error(post(http, fake, chat_body()), 503, "ServiceUnavailableError")
    assert "loading" in message
    assert http.get(f"{fake.base_url}/models").status_code == 503
    fake.loading = False
    assert http.get(f"{fake.root_url}/health").status_code == 200
    assert post(http, fake, chat_body()).status_code == 200


def test_models_in_vllm_format(http: httpx2.Client) -> None:
    with FakeVLLM(GarbagePolicy(), served_model_name="holo", max_model_len=16384) as fake:
        body = http.get(f"{fake.base_url}/models").json()
    assert body["object"] == "list"
    (card,) = body["data"]
    assert card["id"] == "holo"
    assert card["object"] == "model"
    assert card["owned_by"] == "vllm"
    assert card["max_model_len"] == 16384
    assert isinstance(card["created"], int)
    assert card["root"]
    assert card["parent"] is None
    # vLLM lists one permission object per card, never an empty list.
    (permission,) = card["permission"]
    assert permission["object"] == "model_permission"
    assert permission["id"].startswith("modelperm-")
    assert permission["allow_sampling"] is True and permission["organization"] == "*"
    assert set(permission) == {
        "id", "object", "created", "allow_create_engine", "allow_sampling", "allow_logprobs",
        "allow_search_indices", "allow_view", "allow_fine_tuning", "organization", "group",
        "is_blocking",
    }


def test_non_streamed_completion_with_usage(fake: FakeVLLM, http: httpx2.Client) -> None:
    shot = screenshot((800, 450))
    messages = [{"role": "system", "content": "x" * 400}, image_message(shot, "Step 1\n")]
    response = post(http, fake, chat_body(messages, temperature=0.0))
    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "chat.completion"
    assert json.loads(body["choices"][0]["message"]["content"]) == ANSWER
    assert body["choices"][0]["finish_reason"] == "stop"
    usage = body["usage"]
    # 800x450 is 16:9 below 1,048,576 pixels: 2x1 tiles and a thumbnail.
    assert usage["prompt_tokens"] == (400 + 1 + len("Step 1\n") + 3) // 4 + 3 * 256
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert list(usage) == ["prompt_tokens", "total_tokens", "completion_tokens"]


@pytest.mark.parametrize(
    ("size", "tokens"),
    [
        ((1920, 1080), 2304),  # 16:9 above 1,048,576 px: 4x2 + thumbnail
        ((2048, 1152), 2304),
        ((1366, 768), 2304),
        ((1280, 720), 768),  # at or below it: 2x1 + thumbnail
        ((1920, 1200), 1792),  # 16:10: 3x2 + thumbnail
        ((1000, 1000), 1280),  # square: 2x2 + thumbnail
        ((28, 28), 256),  # one tile, no thumbnail
    ],
)
def test_image_tokens_follow_the_tiling(size: tuple[int, int], tokens: int) -> None:
    assert image_tokens(*size) == tokens


def test_prompt_tokens_count_each_image_by_its_size(fake: FakeVLLM, http: httpx2.Client) -> None:
    messages = [image_message(screenshot(size), "x") for size in ((1920, 1080), (1280, 720))]
    usage = post(http, fake, chat_body(messages)).json()["usage"]
    assert usage["prompt_tokens"] == 2304 + 768 + 1  # "x\nx": three characters, one token


def test_streamed_completion_sends_chunks_usage_and_done(
    fake: FakeVLLM, http: httpx2.Client
) -> None:
    body = chat_body(stream=True, stream_options={"include_usage": True})
    with http.stream("POST", f"{fake.base_url}/chat/completions", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        payloads = list(iter_sse(response.iter_lines()))
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert json.loads(text) == ANSWER
    content_chunks = [c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]
    assert len(content_chunks) > 5  # really streamed, a few characters at a time
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == len(content_chunks)  # a token a delta
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    # As vLLM: the end-of-sequence token is an empty delta that carries the reason.
    assert finishes[-1] == "stop" and finishes.count("stop") == 1
    assert chunks[-2]["choices"][0]["delta"] == {"content": ""}
    assert all(len(c["choices"][0]["delta"].get("content", "")) <= 4 for c in chunks[1:-1])
    assert [c["id"] for c in chunks] == [chunks[0]["id"]] * len(chunks)


def test_a_stream_cut_at_max_tokens_ends_on_its_last_piece(
    fake: FakeVLLM, http: httpx2.Client
) -> None:
    body = chat_body(stream=True, max_tokens=5, stream_options={"include_usage": True})
    with http.stream("POST", f"{fake.base_url}/chat/completions", json=body) as response:
        chunks = [json.loads(p) for p in list(iter_sse(response.iter_lines()))[:-1]]
    deltas = [c["choices"][0] for c in chunks if c["choices"]]
    assert deltas[-1]["finish_reason"] == "length"
    assert deltas[-1]["delta"]["content"]  # the reason rides on the last piece of text
    text = "".join(d["delta"].get("content", "") for d in deltas)
    assert text == "".join(pieces(json.dumps(ANSWER, ensure_ascii=False))[:5])
    assert chunks[-1]["usage"]["completion_tokens"] == 5


def test_stream_without_include_usage_has_no_usage_chunk(
    fake: FakeVLLM, http: httpx2.Client
) -> None:
    with http.stream(
        "POST", f"{fake.base_url}/chat/completions", json=chat_body(stream=True)
    ) as response:
        payloads = list(iter_sse(response.iter_lines()))
    assert all("usage" not in json.loads(p) for p in payloads[:-1])


def test_max_tokens_cuts_the_answer(fake: FakeVLLM, http: httpx2.Client) -> None:
    body = post(http, fake, chat_body(max_tokens=3)).json()
    assert body["choices"][0]["finish_reason"] == "length"
    expected = "".join(pieces(json.dumps(ANSWER, ensure_ascii=False))[:3])
    assert body["choices"][0]["message"]["content"] == expected
    assert body["usage"]["completion_tokens"] == 3


# --------------------------------------------------------------------------- what vLLM rejects


def test_unknown_model_is_404(fake: FakeVLLM, http: httpx2.Client) -> None:
    response = post(http, fake, chat_body(model="gpt-4o"))
    message = assert_vllm_error(response, 404, "NotFoundError")
    assert message == "The model `gpt-4o` does not exist. Valid aliases: holotron."
    assert response.json()["error"]["param"] == "model"


def test_too_many_images_is_400(fake: FakeVLLM, http: httpx2.Client) -> None:
    shot = jpeg_bytes(screenshot((320, 180)))
    messages = [image_message(shot, f"Step {i}\n") for i in range(4)]
    response = post(http, fake, chat_body(messages))
    message = assert_vllm_error(response, 400, "BadRequestError")
    assert message.startswith("At most 3 image(s) may be provided in one prompt.")
    assert response.json()["error"]["param"] == "image"
    assert post(http, fake, chat_body(messages[:3])).status_code == 200


def test_guided_json_is_ignored_with_a_warning_and_fails_the_test(http: httpx2.Client) -> None:
    # As vLLM: 200 and unconstrained output (garbage goes out), a warning in the log...
    # ...and the test that sent it fails when the server goes.
    with (
        pytest.raises(StandInMisuse, match="guided_json"),
        FakeVLLM(GarbagePolicy()) as fake,
    ):
        response = post(http, fake, chat_body(guided_json={"type": "object"}))
        assert response.status_code == 200
        assert fake.removed_fields == ["guided_json"]
        assert "NOT be constrained" in fake.warnings[0]


@pytest.mark.parametrize(
    "url",
    [
        "data:image/jpeg;base64,not*base64!",
        "data:image/jpeg;base64," + "QUJD",  # valid base64, not an image
        "https://example.com/shot.jpg",
        "data:text/plain;base64,QUJD",
    ],
)
def test_malformed_image_url_is_400(fake: FakeVLLM, http: httpx2.Client, url: str) -> None:
    messages = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    assert_vllm_error(post(http, fake, chat_body(messages)), 400, "BadRequestError")


def _frames(count: int) -> list[dict[str, Any]]:
    shot = jpeg_bytes(screenshot((1920, 1080)))  # 2,304 tokens each; two: 4,609 with their "\n"
    return [image_message(shot, "") for _ in range(count)]


def test_a_prompt_over_the_window_is_400_in_both_wordings(http: httpx2.Client) -> None:
    with FakeVLLM(GarbagePolicy(), max_model_len=4096) as fake:
        response = post(http, fake, chat_body(_frames(2)))
        message = assert_vllm_error(response, 400, "BadRequestError")
        assert message.startswith(
            "This model's maximum context length is 4096 tokens. However, your prompt contains "
            "4609 input tokens, which exceeds this limit even without any output tokens."
        )
        assert response.json()["error"]["param"] == "input_tokens"
        fake.context_wording = ContextWording.INPUT_LENGTH
        message = assert_vllm_error(post(http, fake, chat_body(_frames(2))), 400, "BadRequestError")
        assert message == "Input length (4609) exceeds model's maximum context length (4096)."


def test_max_tokens_beyond_what_is_left_is_clamped_silently(http: httpx2.Client) -> None:
    # Current vLLM: no error; the answer stops where the window ends.
    with FakeVLLM(GarbagePolicy("word " * 500), max_model_len=2400) as fake:
        body = post(http, fake, chat_body(_frames(1), max_tokens=1000)).json()
    usage = body["usage"]
    assert body["choices"][0]["finish_reason"] == "length"
    assert usage["total_tokens"] == 2400
    assert usage["completion_tokens"] == 2400 - usage["prompt_tokens"]


def test_max_tokens_over_the_whole_window_is_400(fake: FakeVLLM, http: httpx2.Client) -> None:
    response = post(http, fake, chat_body(max_tokens=40000))
    message = assert_vllm_error(response, 400, "BadRequestError")
    assert message.startswith("max_tokens=40000 cannot be greater than max_model_len=32768.")


def test_legacy_vllm_refuses_a_max_tokens_that_does_not_fit(http: httpx2.Client) -> None:
    with FakeVLLM(GarbagePolicy(), max_model_len=4096, legacy=True) as fake:
        message = assert_vllm_error(post(http, fake, chat_body(_frames(2))), 400, "BadRequestError")
        assert message.startswith(
            "This model's maximum context length is 4096 tokens. However, your request has "
            "4609 input tokens."
        )
        message = assert_vllm_error(
            post(http, fake, chat_body(_frames(1), max_tokens=2000)), 400, "BadRequestError"
        )
        assert "'max_tokens' or 'max_completion_tokens' is too large: 2000" in message
        assert "maximum context length is 4096 tokens" in message
        assert message.endswith(" None")  # vLLM 0.12 appends the exception's (absent) cause


def test_api_key_guards_v1_but_not_health(http: httpx2.Client) -> None:
    with FakeVLLM(GarbagePolicy(), api_key="s3cret") as fake:
        assert http.get(f"{fake.root_url}/health").status_code == 200
        missing = http.get(f"{fake.base_url}/models")
        assert missing.status_code == 401
        assert missing.json() == {"error": "Unauthorized"}
        wrong = post(http, fake, chat_body(), headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        right = post(http, fake, chat_body(), headers={"Authorization": "Bearer s3cret"})
        assert right.status_code == 200
        assert "authorization" not in fake.requests[-1].headers  # the fake never keeps the key


def test_policy_errors_become_http_errors(http: httpx2.Client) -> None:
    script = ScriptedPolicy([FakeHTTPError(500, "CUDA out of memory"), ANSWER])
    with FakeVLLM(script) as fake:
        message = assert_vllm_error(post(http, fake, chat_body()), 500, "InternalServerError")
        assert message == "CUDA out of memory"
        assert post(http, fake, chat_body()).status_code == 200
        message = assert_vllm_error(post(http, fake, chat_body()), 500, "InternalServerError")
        assert "exhausted" in message
        assert fake.errors[0] == (500, "CUDA out of memory")


# --------------------------------------------------------------------------- structured outputs


def _stream(http: httpx2.Client, fake: FakeVLLM, body: dict[str, Any]) -> tuple[int, list[Any]]:
    """A streamed request's status and its events (JSON, then the final "[DONE]" as is)."""
    body = {**body, "stream": True}
    with http.stream("POST", f"{fake.base_url}/chat/completions", json=body) as response:
        if response.status_code != 200:
            response.read()
            return response.status_code, [response.json()]
        payloads = list(iter_sse(response.iter_lines()))
    return 200, [p if p == "[DONE]" else json.loads(p) for p in payloads]


def test_a_valid_answer_passes_the_grammar(fake: FakeVLLM, http: httpx2.Client) -> None:
    response = post(http, fake, chat_body(structured_outputs=STEP_SCHEMA))
    assert response.status_code == 200
    assert fake.requests[0].schema == step_output_schema()
    assert not fake.grammar_violations


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"action": {"action": "answer", "text": "ok"}, "thought": "t"}, "keys out of order"),
        ({"thought": "t", "action": {"text": "ok", "action": "answer"}}, "tag not first"),
        ({"thought": "t", "action": {"action": "click", "x": 1, "y": 2}}, "no element"),
        ({"thought": "t", "action": {"action": "wait", "seconds": 99}}, "out of range"),
        ("<think>hmm</think>" + json.dumps(ANSWER), "text before the JSON"),
        (json.dumps(ANSWER) + " Done!", "text after the JSON"),
        ("Sure! I will click it.", "not JSON"),
    ],
)
def test_an_answer_the_grammar_forbids_never_reaches_the_client(
    http: httpx2.Client, answer: Any, why: str
) -> None:
    with (
        pytest.raises(StandInMisuse, match="grammar would never allow"),
        FakeVLLM(ScriptedPolicy([answer])) as fake,
    ):
        body = chat_body(structured_outputs=STEP_SCHEMA)
        message = assert_vllm_error(post(http, fake, body), 500, "InternalServerError")
        assert "grammar would never allow" in message, why
        assert len(fake.grammar_violations) == 1


def test_a_server_that_ignores_structured_outputs_lets_anything_out(http: httpx2.Client) -> None:
    with FakeVLLM(GarbagePolicy(), structured_outputs=StructuredOutputs.IGNORED) as fake:
        response = post(http, fake, chat_body(structured_outputs={"json": {"type": "strin"}}))
        assert response.status_code == 200
        assert response.json()["choices"][0]["message"]["content"] == GarbagePolicy().text


@pytest.mark.parametrize(
    ("schema", "error"),
    [
        ({"type": "strin"}, "Grammar error: Invalid type: strin"),
        ({"$ref": "#/$defs/Nope"}, "Grammar error: Pointer '/$defs/Nope' does not exist"),
        ({"type": "integer", "minimum": 5, "maximum": 1}, "Grammar error: Unsatisfiable schema"),
    ],
)
def test_a_schema_the_grammar_engine_refuses_is_vllms_400(
    fake: FakeVLLM, http: httpx2.Client, schema: dict[str, Any], error: str
) -> None:
    body = chat_body(structured_outputs={"json": schema})
    assert assert_vllm_error(post(http, fake, body), 400, "BadRequestError").startswith(error)
    # Streamed, current vLLM has already answered 200 when the engine compiles the grammar.
    status, events = _stream(http, fake, body)
    assert status == 200
    assert events[0]["error"]["message"].startswith(error)
    assert events[0]["error"]["code"] == 400
    assert events[1:] == ["[DONE]"]


def test_legacy_vllm_refuses_a_bad_schema_before_streaming(http: httpx2.Client) -> None:
    with FakeVLLM(GarbagePolicy(), legacy=True) as fake:
        status, (body,) = _stream(http, fake, chat_body(structured_outputs={"json": {"type": 5}}))
    assert status == 400
    assert body["error"]["message"].startswith("Grammar error: type must be a string")


@pytest.mark.parametrize(
    ("structured", "error"),
    [
        ({"json": {"type": "object"}, "strict": True}, "unknown key(s) ['strict']"),
        ({"json_schema": {"type": "object"}}, "unknown key(s) ['json_schema']"),
        ({}, "You must use one kind of structured outputs constraint but none are specified"),
        ({"json": {"type": "object"}, "regex": "a+"}, "You can only use one kind"),
        ("a string", "Input should be a dictionary"),
    ],
)
def test_malformed_structured_outputs_are_400(
    fake: FakeVLLM, http: httpx2.Client, structured: Any, error: str
) -> None:
    response = post(http, fake, chat_body(structured_outputs=structured))
    assert error in assert_vllm_error(response, 400, "BadRequestError")
    # Refused before any generation: streamed too.
    assert _stream(http, fake, chat_body(structured_outputs=structured))[0] == 400


def test_regex_and_choice_constraints_are_held_too(http: httpx2.Client) -> None:
    with FakeVLLM(ScriptedPolicy(["yes", "maybe"])) as fake:
        body = chat_body(structured_outputs={"choice": ["yes", "no"]})
        assert post(http, fake, body).json()["choices"][0]["message"]["content"] == "yes"
        assert post(http, fake, body).status_code == 500
        assert fake.grammar_violations[0].answer == "maybe"
        fake.grammar_violations.clear()  # provoked on purpose


# --------------------------------------------------------------------------- reasoning, errors


def test_the_reasoning_parser_streams_thinking_apart(http: httpx2.Client) -> None:
    script = ScriptedPolicy([ANSWER], think="The dialog is open.", repeat_last=True)
    with FakeVLLM(script, reasoning_parser=True) as fake:
        body = chat_body(structured_outputs=STEP_SCHEMA, stream_options={"include_usage": True})
        status, events = _stream(http, fake, body)
        whole = post(http, fake, chat_body(structured_outputs=STEP_SCHEMA)).json()
    assert status == 200
    deltas = [e["choices"][0]["delta"] for e in events[:-1] if isinstance(e, dict) and e["choices"]]
    reasoning = "".join(d.get("reasoning", "") for d in deltas)
    content = "".join(d.get("content", "") for d in deltas)
    assert reasoning == "The dialog is open."
    assert json.loads(content) == ANSWER  # the grammar held the content only
    assert all("reasoning_content" not in d for d in deltas)
    message = whole["choices"][0]["message"]
    assert message["reasoning"] == "The dialog is open."
    assert json.loads(message["content"]) == ANSWER


def test_usage_counts_reasoning_tokens_only_where_vllm_does(http: httpx2.Client) -> None:
    # Current vLLM with a reasoning parser: completion_tokens_details.reasoning_tokens, the
    # tokens between the markers; without a parser, or 0.12: no such field.
    script = ScriptedPolicy([ANSWER], think="The dialog is open.", repeat_last=True)
    with FakeVLLM(script, reasoning_parser=True) as fake:
        body = chat_body(stream_options={"include_usage": True})
        _status, events = _stream(http, fake, body)
        whole = post(http, fake, chat_body()).json()
    thought = [e for e in events[:-1] if e["choices"] and "reasoning" in e["choices"][0]["delta"]]
    usage = events[-2]["usage"]
    assert usage["completion_tokens_details"] == {"reasoning_tokens": len(thought)}
    assert whole["usage"]["completion_tokens_details"] == {"reasoning_tokens": len(thought)}
    for options in ({"reasoning_parser": False}, {"reasoning_parser": True, "legacy": True}):
        with FakeVLLM(script, **options) as fake:  # type: ignore[arg-type]
            _status, events = _stream(http, fake, body)
            whole = post(http, fake, chat_body()).json()
        assert "completion_tokens_details" not in events[-2]["usage"]
        assert "completion_tokens_details" not in whole["usage"]


def test_legacy_vllm_mirrors_reasoning_into_reasoning_content(http: httpx2.Client) -> None:
    script = ScriptedPolicy([ANSWER], think="hmm")
    with FakeVLLM(script, reasoning_parser=True, legacy=True) as fake:
        _status, events = _stream(http, fake, chat_body())
    deltas = [e["choices"][0]["delta"] for e in events[:-1] if e["choices"]]
    assert all("reasoning_content" in d for d in deltas)
    assert "".join(d["reasoning_content"] or "" for d in deltas) == "hmm"


def test_an_error_after_the_200_comes_inside_the_stream(http: httpx2.Client) -> None:
    failure = FakeStreamError(500, "Internal server error", partial='{"thought": "I')
    with FakeVLLM(ScriptedPolicy([failure, failure])) as fake:
        status, events = _stream(http, fake, chat_body())
        assert status == 200
        assert events[0]["choices"][0]["delta"]["role"] == "assistant"
        text = "".join(e["choices"][0]["delta"].get("content", "") for e in events[1:-2])
        assert text == '{"thought": "I'
        assert events[-2] == {"error": {"message": "Internal server error",
                                        "type": "InternalServerError", "param": None,
                                        "code": 500}}
        assert events[-1] == "[DONE]"
        # Not streamed: the plain HTTP error.
        assert_vllm_error(post(http, fake, chat_body()), 500, "InternalServerError")


# --------------------------------------------------------------------------- parsing


def test_request_is_recorded_parsed(fake: FakeVLLM, http: httpx2.Client) -> None:
    first = screenshot((640, 360))
    second = screenshot((1536, 864))
    schema = {"type": "object", "properties": {"thought": {"type": "string"}}}
    messages = [
        {"role": "system", "content": "system prompt\n"},
        image_message(first, "Step 1\n"),
        {"role": "assistant", "content": json.dumps(ANSWER)},
        image_message(second, "Step 2\n"),
    ]
    body = chat_body(messages, temperature=0.5, structured_outputs={"json": schema}, max_tokens=100)
    post(http, fake, body)
    (request,) = fake.requests
    assert isinstance(request, ChatRequest)
    assert request.model == "holotron"
    assert [im.size for im in request.images] == [(640, 360), (1536, 864)]
    assert request.latest_image is not None and request.latest_image.size == (1536, 864)
    assert request.images[0].mime == "image/jpeg"
    assert request.schema == schema
    assert request.temperature == 0.5
    assert request.stream is False
    assert request.max_tokens == 100
    assert "Step 2" in request.text and "system prompt" in request.text
    assert request.body["messages"] == messages


def test_scripted_policy_order_and_think() -> None:
    request = ChatRequest({}, "holotron", [], [], None, None, False, False, None)
    policy = ScriptedPolicy(["raw text", {"a": "é"}], think="hmm")
    assert policy(request) == "<think>hmm</think>\nraw text"
    assert policy(request) == '<think>hmm</think>\n{"a": "é"}'
    with pytest.raises(RuntimeError, match="exhausted"):
        policy(request)
    repeating = ScriptedPolicy(["one", "two"], repeat_last=True)
    assert [repeating(request) for _ in range(3)] == ["one", "two", "two"]


def test_garbage_policy_is_not_json() -> None:
    request = ChatRequest({}, "holotron", [], [], None, None, False, False, None)
    with pytest.raises(json.JSONDecodeError):
        json.loads(GarbagePolicy()(request))


# --------------------------------------------------------------------------- seeing policy


def test_find_color_in_jpeg() -> None:
    image = screenshot((1000, 500), [((100, 200, 300, 260), RED)])
    decoded = Image.open(__import__("io").BytesIO(jpeg_bytes(image, quality=75)))
    found = find_color(decoded, RED)
    assert found is not None
    assert found.x == pytest.approx(200, abs=1.5)
    assert found.y == pytest.approx(230, abs=1.5)
    assert find_color(decoded, (0, 200, 0)) is None


@pytest.mark.parametrize(
    ("convention", "expected"),
    [
        ("norm1000", (round(1000 * 700 / 1536), round(1000 * 480 / 864))),
        ("norm1", (700 / 1536, 480 / 864)),
        ("pixels", (700, 480)),
    ],
)
def test_seeing_policy_clicks_the_centre_in_each_convention(
    http: httpx2.Client, convention: Any, expected: tuple[float, float]
) -> None:
    # Red rectangle centred on (700, 480) of a 1536x864 JPEG.
    shot = screenshot((1536, 864), [((600, 450, 800, 510), RED)])
    policy = SeeingPolicy([Target("red button", RED)], convention)
    with FakeVLLM(policy) as fake:
        body = post(http, fake, chat_body([image_message(shot)])).json()
    step = json.loads(body["choices"][0]["message"]["content"])
    action = step["action"]
    assert action["action"] == "click"
    assert action["element"] == "red button"
    tolerance = {"norm1000": 2, "norm1": 0.002, "pixels": 2}[convention]
    assert action["x"] == pytest.approx(expected[0], abs=tolerance)
    assert action["y"] == pytest.approx(expected[1], abs=tolerance)


def test_seeing_policy_is_relative_to_the_sent_size(http: httpx2.Client) -> None:
    # Same layout, sent downscaled: the answer in pixels follows the sent image.
    shot = screenshot((1536, 864), [((600, 450, 800, 510), RED)]).resize((768, 432))
    with FakeVLLM(SeeingPolicy([Target("red button", RED)], "pixels")) as fake:
        body = post(http, fake, chat_body([image_message(shot)])).json()
    action = json.loads(body["choices"][0]["message"]["content"])["action"]
    assert (action["x"], action["y"]) == (pytest.approx(350, abs=2), pytest.approx(240, abs=2))


def test_seeing_policy_plan_click_type_answer(http: httpx2.Client) -> None:
    shot = screenshot((1280, 800), [((100, 100, 260, 150), RED), ((400, 600, 900, 640), BLUE)])
    policy = SeeingPolicy(
        [Target("red button", RED), Target("text field", BLUE, type_text="héllo wörld 日本")],
        then={"action": "answer", "text": "finished"},
        think=True,
    )
    actions = []
    with FakeVLLM(policy) as fake:
        for _ in range(5):
            content = post(http, fake, chat_body([image_message(shot)])).json()["choices"][0][
                "message"
            ]["content"]
            assert content.startswith("<think>")
            actions.append(json.loads(content.split("</think>", 1)[1])["action"])
    assert [a["action"] for a in actions] == ["click", "click", "type", "answer", "answer"]
    assert actions[0]["element"] == "red button"
    assert actions[1]["element"] == "text field"
    assert actions[2]["text"] == "héllo wörld 日本"
    assert actions[3]["text"] == "finished"
    assert policy.done


def test_seeing_policy_missing_target(http: httpx2.Client) -> None:
    blank = screenshot((640, 360))
    with_red = screenshot((640, 360), [((10, 10, 60, 40), RED)])
    asking = SeeingPolicy([Target("red button", RED)])
    with FakeVLLM(asking) as fake:
        first = json.loads(
            post(http, fake, chat_body([image_message(blank)])).json()["choices"][0]["message"][
                "content"
            ]
        )
        assert first["action"]["action"] == "ask_user"
        assert "red button" in first["action"]["question"]
        # The plan did not advance: once the target shows, it is clicked.
        second = json.loads(
            post(http, fake, chat_body([image_message(with_red)])).json()["choices"][0]["message"][
                "content"
            ]
        )
        assert second["action"]["action"] == "click"
    failing = SeeingPolicy([Target("red button", RED)], on_missing="answer")
    with FakeVLLM(failing) as fake:
        step = json.loads(
            post(http, fake, chat_body([image_message(blank)])).json()["choices"][0]["message"][
                "content"
            ]
        )
    assert step["action"]["action"] == "answer"
    assert step["action"]["text"].startswith("Failed")


# --------------------------------------------------------------------------- life and death


def test_kill_drops_in_flight_requests_and_refuses_new_ones(http: httpx2.Client) -> None:
    fake = FakeVLLM(ScriptedPolicy([ANSWER])).start()
    fake.delay = 30
    errors: list[BaseException] = []

    def call() -> None:
        try:
            post(http, fake, chat_body())
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=call)
    started = time.monotonic()
    worker.start()
    fake.wait_for_request()
    fake.kill()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert time.monotonic() - started < 10
    assert errors and isinstance(errors[0], httpx2.TransportError)
    with pytest.raises(httpx2.ConnectError):
        http.get(f"{fake.root_url}/health")
    # It can come back on the same port.
    port = fake.port
    fake.start()
    try:
        assert fake.port == port
        assert http.get(f"{fake.root_url}/health").status_code == 200
    finally:
        fake.stop()


def test_delay_notices_a_client_that_hangs_up(fake: FakeVLLM) -> None:
    fake.delay = 30
    request = json.dumps(chat_body()).encode()
    with socket.create_connection(("127.0.0.1", fake.port)) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(request)}\r\n\r\n".encode()
            + request
        )
        fake.wait_for_request()
    fake.wait_for_disconnect()
    assert fake.disconnects == 1


def test_wait_for_served_means_the_whole_answer_was_written(http: httpx2.Client) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as fake:
        fake.stream_chunk_delay = 0.01
        done = threading.Event()

        def call() -> None:
            with http.stream("POST", f"{fake.base_url}/chat/completions",
                             json=chat_body(stream=True)) as response:
                list(response.iter_lines())
            done.set()

        worker = threading.Thread(target=call)
        worker.start()
        fake.wait_for_request()
        fake.wait_for_served(timeout=30)
        # Served: the last byte is out, so the client finishes without the server's help.
        fake.kill()
        worker.join(timeout=30)
    assert done.is_set()


def test_image_data_url_helper_round_trips() -> None:
    data = jpeg_bytes(screenshot((64, 32)))
    assert data_url(data).startswith("data:image/jpeg;base64,/9j/")
