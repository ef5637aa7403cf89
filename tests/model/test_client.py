"""HolotronClient against the fake vLLM server over real HTTP: steps, retries, errors, cancel."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from app.cli.render import fix_line
from model.client import (
    MAX_ANSWER_BYTES,
    ClientConfig,
    HolotronClient,
    StepReply,
    clean_answer,
    normalize_base_url,
    parse_step,
    reasoning_count,
    root_url_of,
)
from model.errors import (
    AnswerTooLong,
    AuthFailed,
    BadRequest,
    Cancelled,
    ContextFull,
    ContextTooLong,
    HolotronError,
    InvalidOutput,
    ModelLoading,
    ModelNotFound,
    RequestTimeout,
    ServerError,
    ServerUnreachable,
    TooManyImages,
)
from model.problem import Remedy
from model.schema import Answer, Click, Step, Type
from model.structured import step_output_schema
from tests.support.fake_vllm import (
    ContextWording,
    FakeHTTPError,
    FakeStreamError,
    FakeVLLM,
    GarbagePolicy,
    ScriptedPolicy,
    SeeingPolicy,
    StructuredOutputs,
    Target,
    image_message,
    jpeg_bytes,
    screenshot,
)
from tests.support.fake_vllm_tokens import pieces

ANSWER = {"note": "", "thought": "The task is done.", "action": {"action": "answer", "text": "ok"}}
CLICK = {
    "thought": "Save it.",
    "action": {"action": "click", "element": "Save button", "x": 932, "y": 880},
}
SCHEMA = step_output_schema()


def _schema_with_refs() -> dict[str, Any]:
    """The step schema with its action variants behind ``$ref``s, as a hand-written one may be."""
    schema = step_output_schema()
    variants = schema["properties"]["action"]["anyOf"]
    schema["$defs"] = {f"V{i}": variant for i, variant in enumerate(variants)}
    schema["properties"]["action"] = {"anyOf": [{"$ref": f"#/$defs/V{i}"} for i in
                                                range(len(variants))]}
    return schema
RED = (220, 30, 30)
BLUE = (30, 60, 220)


def messages(images: int = 1) -> list[dict[str, Any]]:
    shot = jpeg_bytes(screenshot((1536, 864)))
    return [{"role": "system", "content": "You are Holotron.\n"}] + [
        image_message(shot, f"Step {i + 1}\n") for i in range(images)
    ]


def client_for(fake: FakeVLLM, **overrides: Any) -> HolotronClient:
    options: dict[str, Any] = {
        "base_url": fake.base_url,
        "model": None,
        "connect_timeout": 2.0,
        "request_timeout": 20.0,
    }
    options.update(overrides)
    return HolotronClient(ClientConfig(**options))


@pytest.fixture
def fake() -> Iterator[FakeVLLM]:
    with FakeVLLM(ScriptedPolicy([ANSWER], repeat_last=True)) as server:
        yield server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# --------------------------------------------------------------------------- pure helpers


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
        ("localhost:8000", "http://localhost:8000/v1"),
        ("  https://gpu.example.com  ", "https://gpu.example.com/v1"),
        ("http://gpu:8000/v1/chat/completions", "http://gpu:8000/v1"),
        ("http://gpu:8000/v1/models", "http://gpu:8000/v1"),
        ("https://proxy.example.com/holotron", "https://proxy.example.com/holotron/v1"),
        ("", "http://127.0.0.1:8000/v1"),
    ],
)
def test_normalize_base_url(typed: str, expected: str) -> None:
    assert normalize_base_url(typed) == expected


def test_root_url() -> None:
    assert root_url_of("http://h:1/v1") == "http://h:1"
    assert root_url_of("http://h:1/p/v1") == "http://h:1/p"


@pytest.mark.parametrize(
    "raw",
    [
        json.dumps(ANSWER),
        "<think>Let me see.\nThe task is done.</think>\n" + json.dumps(ANSWER),
        "  <think></think>" + json.dumps(ANSWER),
        "```json\n" + json.dumps(ANSWER) + "\n```",
    ],
)
def test_clean_answer_tolerates_think_and_fences(raw: str) -> None:
    assert json.loads(clean_answer(raw)) == ANSWER


def test_parse_step_problems_in_words() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_step("Sure, I will click it.")
    with pytest.raises(ValueError, match="action"):
        parse_step(json.dumps({"thought": "x", "action": {"action": "fly"}}))
    with pytest.raises(ValueError, match="<think>"):
        parse_step("<think>still thinking about it")
    with pytest.raises(ValueError, match="cut off at the length limit of 5 tokens"):
        parse_step('{"thought": "x", "act', "length", 5)


def test_config_repr_hides_the_key() -> None:
    assert "s3cret" not in repr(ClientConfig(base_url="x", api_key="s3cret"))


# --------------------------------------------------------------------------- models and health


def test_models_and_resolution(fake: FakeVLLM) -> None:
    client = client_for(fake)
    assert client.models() == ["holotron"]
    assert client.resolve_model() == "holotron"
    served = client.served_models()
    assert served[0].max_model_len == 32768
    assert client_for(fake, model="holotron").resolve_model() == "holotron"


def test_wrong_configured_model_lists_the_served_names(fake: FakeVLLM) -> None:
    with pytest.raises(ModelNotFound) as caught:
        client_for(fake, model="Hcompany/Holotron-12B").resolve_model()
    assert caught.value.served == ["holotron"]
    assert "'holotron'" in caught.value.message


def test_base_url_without_v1_works(fake: FakeVLLM) -> None:
    client = client_for(fake, base_url=fake.root_url + "/")
    assert client.base_url == fake.base_url
    assert client.next_step(messages(), SCHEMA).step.action == Answer(text="ok")


def test_health(fake: FakeVLLM) -> None:
    client = client_for(fake)
    client.health()
    fake.loading = True
    with pytest.raises(ModelLoading):
        client.health()
    with pytest.raises(ModelLoading):
        client.models()


def test_nothing_listening_is_server_unreachable() -> None:
    client = HolotronClient(
        ClientConfig(base_url=f"http://127.0.0.1:{free_port()}", connect_timeout=2.0)
    )
    with pytest.raises(ServerUnreachable) as caught:
        client.health()
    said = fix_line(caught.value.fix)
    assert "holodesk serve" in said and "--endpoint" in said
    with pytest.raises(ServerUnreachable):
        client.next_step(messages(), SCHEMA)


# --------------------------------------------------------------------------- one step


def test_next_step_streams_and_parses(fake: FakeVLLM) -> None:
    fake.policy = ScriptedPolicy([CLICK])
    texts: list[str] = []
    reply = client_for(fake).next_step(messages(), SCHEMA, on_text=texts.append)
    assert isinstance(reply, StepReply)
    assert reply.step.action == Click(element="Save button", x=932, y=880)
    assert reply.attempts == 1
    assert reply.raw == json.dumps(CLICK)
    assert reply.raw_attempts == (reply.raw,)
    assert reply.model == "holotron"
    assert reply.finish_reason == "stop"
    assert reply.prompt_tokens is not None and reply.prompt_tokens > 2304
    assert reply.completion_tokens is not None and reply.completion_tokens > 0
    assert reply.time_to_first_token is not None and 0 < reply.time_to_first_token <= reply.elapsed
    assert reply.ttft == reply.time_to_first_token
    assert texts and texts[-1] == reply.raw
    assert all(reply.raw.startswith(t) for t in texts)  # the whole text so far, growing


def test_request_carries_structured_outputs_not_guided_json(fake: FakeVLLM) -> None:
    client_for(fake, temperature=0.0, max_tokens=512).next_step(messages(2), _schema_with_refs())
    (request,) = fake.requests
    assert not any(key.startswith("guided_") for key in request.body)
    assert set(request.structured_outputs) == {"json"}
    assert request.schema == step_output_schema()  # every $ref inlined, nothing else changed
    assert request.schema is not None
    assert "$ref" not in json.dumps(request.schema)
    assert request.schema["required"] == ["thought", "action"]
    assert "$defs" not in json.dumps(request.schema)
    assert request.stream is True
    assert request.include_usage is True
    assert request.temperature == 0.0
    assert request.max_tokens == 512
    assert request.model == "holotron"
    assert [im.size for im in request.images] == [(1536, 864), (1536, 864)]


def test_an_inlined_schema_is_sent_as_it_is(fake: FakeVLLM) -> None:
    schema = step_output_schema()
    client_for(fake).next_step(messages(), schema)
    assert fake.requests[0].schema == schema


def test_on_text_sees_streaming_progress(fake: FakeVLLM) -> None:
    fake.stream_chunk_delay = 0.01
    fake.chunk_chars = 8
    texts: list[str] = []
    reply = client_for(fake).next_step(messages(), SCHEMA, on_text=texts.append)
    assert len(texts) > 3
    assert texts[-1] == reply.raw


IGNORES_SCHEMA = StructuredOutputs.IGNORED  # an old or foreign server: anything can come back


def test_think_block_is_tolerated() -> None:
    script = ScriptedPolicy([ANSWER], think="The window shows the result.")
    with FakeVLLM(script, structured_outputs=IGNORES_SCHEMA) as fake:
        reply = client_for(fake).next_step(messages(), SCHEMA)
    assert reply.step.action == Answer(text="ok")
    assert reply.raw.startswith("<think>")


def test_invalid_answer_is_retried_hotter_then_accepted() -> None:
    script = ScriptedPolicy(["I will click Save.", '{"thought": "x"}', CLICK])
    with FakeVLLM(script, structured_outputs=IGNORES_SCHEMA) as fake:
        reply = client_for(fake, temperature=0.0, retry_temperature=0.5).next_step(
            messages(), SCHEMA
        )
        assert reply.attempts == 3
        assert reply.raw_attempts == ("I will click Save.", '{"thought": "x"}', json.dumps(CLICK))
        assert [r.temperature for r in fake.requests] == [0.0, 0.5, 0.5]


def test_retries_exhausted_raise_invalid_output_with_every_raw_text() -> None:
    with FakeVLLM(GarbagePolicy("Sure thing!"), structured_outputs=IGNORES_SCHEMA) as fake:
        with pytest.raises(InvalidOutput) as caught:
            client_for(fake, max_retries=2).next_step(messages(), SCHEMA)
        assert len(fake.requests) == 3
    error = caught.value
    assert error.raw == "Sure thing!"
    assert error.attempts == ["Sure thing!"] * 3
    assert "not valid JSON" in error.reason


def test_cut_off_answer_says_so() -> None:
    client_config = {"max_tokens": 5, "max_retries": 0}
    with (
        FakeVLLM(ScriptedPolicy([CLICK], repeat_last=True)) as fake,
        pytest.raises(InvalidOutput) as caught,
    ):
        client_for(fake, **client_config).next_step(messages(), SCHEMA)
    assert "cut off" in caught.value.reason


def test_seeing_policy_end_to_end() -> None:
    shot = screenshot((1536, 864), [((100, 100, 300, 160), RED), ((500, 400, 900, 440), BLUE)])
    policy = SeeingPolicy(
        [Target("red button", RED), Target("text field", BLUE, type_text="héllo wörld 日本")]
    )
    with FakeVLLM(policy) as fake:
        client = client_for(fake)
        actions = [
            client.next_step([*messages()[:1], image_message(shot)], SCHEMA).step.action
            for _ in range(4)
        ]
    first, second, third, last = actions
    assert isinstance(first, Click) and first.element == "red button"
    assert first.x == pytest.approx(130, abs=2)
    assert first.y == pytest.approx(150, abs=2)
    assert isinstance(second, Click) and second.element == "text field"
    assert third == Type(text="héllo wörld 日本")
    assert isinstance(last, Answer)


# --------------------------------------------------------------------------- errors, mapped


def test_too_many_images_names_the_flag(fake: FakeVLLM) -> None:
    with pytest.raises(TooManyImages) as caught:
        client_for(fake).next_step(messages(4), SCHEMA)
    assert caught.value.limit == 3
    assert "--limit-mm-per-prompt" in caught.value.fix.text
    assert len(fake.requests) == 1  # a 4xx is not retried


def test_context_too_long_names_the_flag() -> None:
    with FakeVLLM(GarbagePolicy(), max_model_len=4096) as fake:
        with pytest.raises(ContextTooLong) as caught:
            client_for(fake).next_step(messages(2), SCHEMA)
        assert len(fake.requests) == 1
    assert caught.value.max_model_len == 4096
    assert caught.value.prompt_tokens is not None and caught.value.prompt_tokens > 4096
    assert "--max-model-len" in caught.value.fix.text


def test_the_input_length_wording_is_context_too_long_too() -> None:
    with (
        FakeVLLM(GarbagePolicy(), max_model_len=4096,
                 context_wording=ContextWording.INPUT_LENGTH) as fake,
        pytest.raises(ContextTooLong) as caught,
    ):
        client_for(fake).next_step(messages(2), SCHEMA)
    error = caught.value
    assert error.max_model_len == 4096
    assert error.prompt_tokens is not None and error.prompt_tokens > 4096
    assert f"{error.prompt_tokens} tokens" in error.message and "4096 tokens" in error.message
    assert "--max-model-len" in caught.value.fix.text


def test_a_history_that_fills_the_window_is_context_full_not_retried() -> None:
    # Current vLLM clamps max_tokens to what is left: the answer just stops early.
    with FakeVLLM(ScriptedPolicy([CLICK], repeat_last=True), max_model_len=2330) as fake:
        with pytest.raises(ContextFull) as caught:
            client_for(fake, max_tokens=512).next_step(messages(1), step_output_schema())
        assert len(fake.requests) == 1  # asking again cannot help: the history only grows
    error = caught.value
    assert isinstance(error, ContextTooLong)  # every handler of a too-long context sees it
    assert error.max_model_len == 2330
    assert error.answer_tokens is not None and 0 < error.answer_tokens < 512
    assert "filled the model's context window (2330 tokens)" in error.message
    assert "new run" in error.fix.text and "--max-model-len" in error.fix.text


def test_an_answer_cut_at_our_own_budget_is_still_retried() -> None:
    # Cut at max_tokens, not by the window: a model that rambles; a retry may do better.
    with FakeVLLM(ScriptedPolicy([CLICK], repeat_last=True)) as fake:
        with pytest.raises(InvalidOutput) as caught:
            client_for(fake, max_tokens=5, max_retries=1).next_step(messages(), SCHEMA)
        assert len(fake.requests) == 2
    assert "cut off at the length limit of 5 tokens" in caught.value.reason


def test_legacy_vllm_refusing_the_answer_budget_is_context_too_long() -> None:
    with (
        FakeVLLM(GarbagePolicy(), max_model_len=4096, legacy=True) as fake,
        pytest.raises(ContextTooLong) as caught,
    ):
        client_for(fake, max_tokens=3000).next_step(messages(1), SCHEMA)
    error = caught.value
    assert (error.max_model_len, error.answer_tokens) == (4096, 3000)
    assert error.prompt_tokens is not None and error.prompt_tokens < 4096
    assert "leaves no room" in error.message and "3000 tokens" in error.message


def test_an_answer_budget_over_the_whole_window_is_context_too_long() -> None:
    with (
        FakeVLLM(GarbagePolicy(), max_model_len=2048) as fake,
        pytest.raises(ContextTooLong) as caught,
    ):
        client_for(fake, max_tokens=3000).next_step(messages(0), SCHEMA)
    assert (caught.value.max_model_len, caught.value.answer_tokens) == (2048, 3000)
    assert "larger than the server's whole context window" in caught.value.message


def test_reasoning_deltas_are_shown_as_thinking_and_the_step_still_parses() -> None:
    script = ScriptedPolicy([ANSWER], think="The dialog says saved.")
    with FakeVLLM(script, reasoning_parser=True) as fake:
        texts: list[str] = []
        reply = client_for(fake).next_step(messages(), step_output_schema(), on_text=texts.append)
    assert reply.step.action == Answer(text="ok")
    assert reply.raw == "<think>The dialog says saved.</think>\n" + json.dumps(ANSWER)
    assert texts[-1] == reply.raw
    assert all(reply.raw.startswith(t) for t in texts)  # the thinking streams first


def test_reasoning_tokens_are_the_servers_figure_when_it_sends_one() -> None:
    script = ScriptedPolicy([ANSWER], think="The dialog says saved.")
    with FakeVLLM(script, reasoning_parser=True) as fake:
        reply = client_for(fake).next_step(messages(), step_output_schema())
    # The stand-in's tokens: the thought cut into token-sized pieces, the markers left out.
    assert (reply.reasoning_tokens, reply.reasoning_estimated) == (8, False)
    assert len(pieces("The dialog says saved.")) == 8


def test_without_the_servers_figure_the_reasoning_deltas_are_counted_as_an_estimate() -> None:
    script = ScriptedPolicy([ANSWER], think="The dialog says saved.")
    with FakeVLLM(script, reasoning_parser=True, legacy=True) as fake:
        reply = client_for(fake).next_step(messages(), step_output_schema())
    assert (reply.reasoning_tokens, reply.reasoning_estimated) == (8, True)  # a delta a piece


def test_reasoning_tokens_are_not_known_without_a_reasoning_parser() -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as fake:
        reply = client_for(fake).next_step(messages(), step_output_schema())
    assert (reply.reasoning_tokens, reply.reasoning_estimated) == (None, False)


def test_reasoning_count_prefers_the_server() -> None:
    assert reasoning_count(0, 5) == (0, False)
    assert reasoning_count(None, 5) == (5, True)
    assert reasoning_count(None, 0) == (None, False)


def test_legacy_reasoning_content_is_not_counted_twice() -> None:
    script = ScriptedPolicy([ANSWER], think="hmm")
    with FakeVLLM(script, reasoning_parser=True, legacy=True) as fake:
        reply = client_for(fake).next_step(messages(), step_output_schema())
    assert reply.raw.startswith("<think>hmm</think>")


def test_thinking_cut_off_before_the_answer_says_so() -> None:
    script = ScriptedPolicy([ANSWER], think="Let me think about this at great length. " * 40,
                            repeat_last=True)
    with (
        FakeVLLM(script, reasoning_parser=True) as fake,
        pytest.raises(InvalidOutput) as caught,
    ):
        client_for(fake, max_tokens=50, max_retries=0).next_step(messages(), SCHEMA)
    assert "inside its <think> block" in caught.value.reason


def test_an_error_inside_the_stream_is_mapped_with_the_servers_words() -> None:
    failure = FakeStreamError(500, "Internal server error", partial='{"thought": "Sa')
    with FakeVLLM(ScriptedPolicy([failure, failure])) as fake:
        texts: list[str] = []
        with pytest.raises(ServerError) as caught:
            client_for(fake).next_step(messages(), SCHEMA, on_text=texts.append)
        assert len(fake.requests) == 2  # a 5xx is retried once
    assert caught.value.status == 500
    assert caught.value.detail == "Internal server error"
    assert texts and texts[-1] == '{"thought": "Sa'


def test_pydantics_plain_schema_is_refused_by_the_grammar_engine() -> None:
    # Why the run sends step_output_schema(): llguidance, as vLLM configures it, has no oneOf.
    with FakeVLLM(ScriptedPolicy([ANSWER])) as fake, pytest.raises(BadRequest) as caught:
        client_for(fake).next_step(messages(), Step.model_json_schema())
    assert caught.value.detail is not None and "oneOf" in caught.value.detail


def test_a_schema_vllm_cannot_compile_is_a_bad_request_naming_the_grammar() -> None:
    # Streamed, current vLLM has answered 200 before its engine refuses the grammar.
    with FakeVLLM(ScriptedPolicy([ANSWER])) as fake, pytest.raises(BadRequest) as caught:
        client_for(fake).next_step(messages(), {"type": "object", "properties": {
            "thought": {"type": "strin"}}})
    assert caught.value.detail == "Grammar error: Invalid type: strin"
    assert "vLLM" in caught.value.fix.text


def test_auth(fake: FakeVLLM) -> None:
    fake.api_key = "s3cret-key"
    with pytest.raises(AuthFailed) as caught:
        client_for(fake).models()
    assert caught.value.had_key is False
    with pytest.raises(AuthFailed) as caught:
        client_for(fake, api_key="wrong").next_step(messages(), SCHEMA)
    assert caught.value.had_key is True
    reply = client_for(fake, api_key="s3cret-key").next_step(messages(), SCHEMA)
    assert reply.step.action == Answer(text="ok")


def test_loading_is_model_loading(fake: FakeVLLM) -> None:
    client = client_for(fake, model="holotron")
    client.resolve_model()
    fake.loading = True
    with pytest.raises(ModelLoading) as caught:
        client.next_step(messages(), SCHEMA)
    assert "/health" in caught.value.fix.text


def test_model_vanishing_is_model_not_found(fake: FakeVLLM) -> None:
    client = client_for(fake)
    client.resolve_model()
    fake.served_model_name = "other"
    with pytest.raises(ModelNotFound) as caught:
        client.next_step(messages(), SCHEMA)
    assert caught.value.requested == "holotron"
    assert caught.value.served == ["other"]


def test_server_error_is_retried_once() -> None:
    with FakeVLLM(ScriptedPolicy([FakeHTTPError(500, "boom"), CLICK])) as fake:
        reply = client_for(fake).next_step(messages(), SCHEMA)
        assert reply.attempts == 1  # a transport retry is not a new answer
        assert len(fake.requests) == 2
    with FakeVLLM(
        ScriptedPolicy([FakeHTTPError(500, "boom"), FakeHTTPError(502, "bad gateway")])
    ) as fake:
        with pytest.raises(ServerError) as caught:
            client_for(fake).next_step(messages(), SCHEMA)
        assert caught.value.status == 502
        assert len(fake.requests) == 2


def test_other_4xx_is_bad_request_not_retried() -> None:
    with FakeVLLM(ScriptedPolicy([FakeHTTPError(400, "temperature must be >= 0")])) as fake:
        with pytest.raises(BadRequest) as caught:
            client_for(fake).next_step(messages(), SCHEMA)
        assert len(fake.requests) == 1
    assert caught.value.detail == "temperature must be >= 0"


def test_slow_server_is_request_timeout(fake: FakeVLLM) -> None:
    client = client_for(fake, request_timeout=0.5)
    client.resolve_model()
    fake.delay = 30
    started = time.monotonic()
    with pytest.raises(RequestTimeout):
        client.next_step(messages(), SCHEMA)
    assert time.monotonic() - started < 10


def test_server_dying_mid_answer_is_server_unreachable(fake: FakeVLLM) -> None:
    client = client_for(fake)
    client.resolve_model()
    fake.delay = 30

    def kill_when_asked() -> None:
        fake.wait_for_request()
        fake.kill()

    killer = threading.Thread(target=kill_when_asked)
    killer.start()
    started = time.monotonic()
    with pytest.raises(ServerUnreachable) as caught:
        client.next_step(messages(), SCHEMA)
    killer.join()
    assert time.monotonic() - started < 10
    assert "holodesk serve" in fix_line(caught.value.fix)


def test_errors_have_plain_words() -> None:
    for error in (
        ServerUnreachable("http://x/v1"),
        ModelLoading("http://x"),
        ModelNotFound("a", ["b"]),
        TooManyImages(3, 4),
        ContextTooLong(32768, 40000),
        ServerError(500),
        RequestTimeout(120, "http://x/v1"),
        InvalidOutput("raw", "not valid JSON"),
        AuthFailed("http://x/v1", had_key=False),
        Cancelled(),
        BadRequest(400, detail="nope"),
    ):
        assert isinstance(error, HolotronError)
        assert error.message and error.fix
        assert error.message in str(error) and error.fix.text in str(error)


# --------------------------------------------------------------------------- cancel


def _run_in_thread(
    client: HolotronClient, outcome: dict[str, Any], **kwargs: Any
) -> threading.Thread:
    def run() -> None:
        try:
            outcome["reply"] = client.next_step(messages(), SCHEMA, **kwargs)
        except BaseException as exc:
            outcome["error"] = exc
        outcome["ended"] = time.monotonic()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_cancel_while_waiting_for_the_first_token(fake: FakeVLLM) -> None:
    client = client_for(fake, request_timeout=60)
    client.resolve_model()
    fake.delay = 30
    outcome: dict[str, Any] = {}
    thread = _run_in_thread(client, outcome)
    fake.wait_for_request()
    cancelled_at = time.monotonic()
    client.cancel()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert isinstance(outcome.get("error"), Cancelled)
    assert outcome["ended"] - cancelled_at < 2.0
    # The connection was really cut: the server saw the client go (vLLM then aborts generation).
    deadline = time.monotonic() + 5
    while fake.disconnects == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert fake.disconnects == 1
    # The client still works afterwards.
    fake.delay = 0
    assert client.next_step(messages(), SCHEMA).step.action == Answer(text="ok")


def test_cancel_while_streaming(fake: FakeVLLM) -> None:
    fake.stream_chunk_delay = 0.5
    client = client_for(fake)
    client.resolve_model()
    first_text = threading.Event()
    outcome: dict[str, Any] = {}
    thread = _run_in_thread(client, outcome, on_text=lambda _text: first_text.set())
    assert first_text.wait(timeout=10)
    cancelled_at = time.monotonic()
    client.cancel()
    thread.join(timeout=5)
    assert isinstance(outcome.get("error"), Cancelled)
    assert outcome["ended"] - cancelled_at < 2.0


def test_cancel_during_the_model_lookup(fake: FakeVLLM) -> None:
    # The first step also asks /v1/models; a cancel then must still read as Cancelled.
    client = client_for(fake)
    outcome: dict[str, Any] = {}
    fake.loading = True  # the lookup fails, as a cut connection would, after the cancel below
    original = client.served_models

    def cancel_then_lookup() -> list[Any]:
        client.cancel()
        return original()

    client.served_models = cancel_then_lookup  # type: ignore[method-assign]
    thread = _run_in_thread(client, outcome)
    thread.join(timeout=10)
    assert isinstance(outcome.get("error"), Cancelled)


def test_cancel_with_nothing_in_flight_is_harmless(fake: FakeVLLM) -> None:
    client = client_for(fake)
    client.cancel()
    assert client.next_step(messages(), SCHEMA).step.action == Answer(text="ok")


# --------------------------------------------------------------------------- no secrets in logs


def test_logs_hold_no_key_and_no_image_bytes(
    fake: FakeVLLM, caplog: pytest.LogCaptureFixture
) -> None:
    fake.api_key = "s3cret-key-123"
    caplog.set_level(logging.DEBUG)
    client = client_for(fake, api_key="s3cret-key-123")
    client.next_step(messages(), SCHEMA)
    fake.policy = GarbagePolicy()
    fake.structured_outputs = IGNORES_SCHEMA
    with pytest.raises(InvalidOutput):
        client.next_step(messages(), SCHEMA)
    with pytest.raises(TooManyImages):
        client.next_step(messages(4), SCHEMA)
    text = caplog.text
    assert "s3cret" not in text
    assert "base64" not in text and "/9j/" not in text
    assert "not a valid step" in text  # the log does say what happened


def test_an_answer_past_the_byte_limit_stops_the_stream_and_says_so() -> None:
    # A server that ignores max_tokens (here: a budget nobody would set) and a model that rambles.
    # Two-byte characters: the answer is cut at the limit on a character boundary.
    step = {"thought": "é" * (4 * MAX_ANSWER_BYTES), "action": ANSWER["action"]}
    huge = json.dumps(step, ensure_ascii=False)
    script = ScriptedPolicy([huge])
    with FakeVLLM(script, structured_outputs=IGNORES_SCHEMA, max_model_len=10**7) as fake:
        fake.chunk_chars = 2048
        fake.stream_chunk_delay = 0.002  # still streaming when the client hangs up
        with pytest.raises(AnswerTooLong) as caught:
            client_for(fake, max_tokens=10**6).next_step(messages(), SCHEMA)
        fake.wait_for_disconnect()  # the client closed the stream: vLLM stops generating
        assert len(fake.requests) == 1  # not retried: it would only ramble again
        assert fake.served == 0
    error = caught.value
    assert isinstance(error, InvalidOutput)  # the client's invalid-output error, for the agent
    assert "256 KiB" in error.message and "stopped reading" in error.message
    assert error.fix is not None and "max_tokens" in error.fix.text
    assert error.fix.remedy is Remedy.SHOW_LOG
    # The log keeps the start of the answer, up to the limit and whole characters only.
    assert huge.startswith(error.raw) and 0 < len(error.raw.encode()) <= MAX_ANSWER_BYTES
    assert error.attempts == [error.raw]


def test_an_answer_at_the_byte_limit_is_read_in_full() -> None:
    answer = json.dumps(ANSWER)
    with FakeVLLM(ScriptedPolicy([ANSWER]), structured_outputs=IGNORES_SCHEMA) as fake:
        client = client_for(fake, max_answer_bytes=len(answer.encode()))
        assert client.next_step(messages(), SCHEMA).raw == answer
    with FakeVLLM(ScriptedPolicy([ANSWER]), structured_outputs=IGNORES_SCHEMA) as fake:
        client = client_for(fake, max_answer_bytes=len(answer.encode()) - 1)
        with pytest.raises(AnswerTooLong, match=r"past \d+ bytes"):
            client.next_step(messages(), SCHEMA)
