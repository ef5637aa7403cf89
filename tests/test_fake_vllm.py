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

from tests.support.fake_vllm import (
    IMAGE_TOKENS,
    ChatRequest,
    FakeHTTPError,
    FakeVLLM,
    GarbagePolicy,
    ScriptedPolicy,
    SeeingPolicy,
    Target,
    data_url,
    find_color,
    image_message,
    iter_sse,
    jpeg_bytes,
    screenshot,
)

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "ok"}}
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
    assert usage["prompt_tokens"] == (400 + 1 + len("Step 1\n") + 3) // 4 + IMAGE_TOKENS
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


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
    assert chunks[-1]["usage"]["completion_tokens"] > 0
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finishes[-1] == "stop"


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
    assert len(body["choices"][0]["message"]["content"]) == 12


# --------------------------------------------------------------------------- what vLLM rejects


def test_unknown_model_is_404(fake: FakeVLLM, http: httpx2.Client) -> None:
    response = post(http, fake, chat_body(model="gpt-4o"))
    assert assert_vllm_error(response, 404, "NotFoundError") == "The model `gpt-4o` does not exist."
    assert response.json()["error"]["param"] == "model"


def test_too_many_images_is_400(fake: FakeVLLM, http: httpx2.Client) -> None:
    shot = jpeg_bytes(screenshot((320, 180)))
    messages = [image_message(shot, f"Step {i}\n") for i in range(4)]
    message = assert_vllm_error(post(http, fake, chat_body(messages)), 400, "BadRequestError")
    assert message == "At most 3 image(s) may be provided in one prompt."
    assert post(http, fake, chat_body(messages[:3])).status_code == 200


def test_guided_json_is_rejected(fake: FakeVLLM, http: httpx2.Client) -> None:
    response = post(http, fake, chat_body(guided_json={"type": "object"}))
    assert "guided_json" in assert_vllm_error(response, 400, "BadRequestError")


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


def test_context_too_long_is_400() -> None:
    with FakeVLLM(GarbagePolicy(), max_model_len=4096) as fake, httpx2.Client(timeout=10) as http:
        shot = jpeg_bytes(screenshot((320, 180)))
        messages = [image_message(shot), image_message(shot)]
        message = assert_vllm_error(post(http, fake, chat_body(messages)), 400, "BadRequestError")
        assert message.startswith(
            "This model's maximum context length is 4096 tokens. However, your request has "
        )
        # The prompt fits, but not with the answer budget: vLLM's other message.
        message = assert_vllm_error(
            post(http, fake, chat_body([image_message(shot)], max_tokens=2000)),
            400,
            "BadRequestError",
        )
        assert "'max_tokens' or 'max_completion_tokens' is too large: 2000" in message
        assert "maximum context length is 4096 tokens" in message


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
    deadline = time.monotonic() + 5
    while fake.disconnects == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert fake.disconnects == 1


def test_image_data_url_helper_round_trips() -> None:
    data = jpeg_bytes(screenshot((64, 32)))
    assert data_url(data).startswith("data:image/jpeg;base64,/9j/")
