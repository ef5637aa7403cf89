"""The client reads streamed tool calls (H's native function-calling contract, Holo3.1) over
real HTTP, from the stand-in streaming them as vLLM does (tests/support/fake_vllm_tools.py),
and every way an answer's calls can be wrong is an invalid answer said in words, asked again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from model.client import ClientConfig, HolotronClient
from model.contracts import CodecConfig, ContractKind, HNativeToolsCodec, HStructuredCodec
from model.errors import BadRequest, Cancelled, ContextFull, InvalidOutput, ServerError
from model.schema import Answer, Click, Step, Type
from tests.support.contract_run import TASK, prompt_config, turns
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, StructuredOutputs, ToolCallAnswer

NATIVE = CodecConfig(contract=ContractKind.H_NATIVE_TOOLS)
CLICK = ToolCallAnswer("click", {"element": "OK button", "x": 512, "y": 730},
                       reasoning="The OK button is at the bottom.")


@dataclass(frozen=True)
class _Changed(HNativeToolsCodec):
    """The native codec with some request fields changed: what another client would send."""

    change: dict[str, Any] = field(default_factory=dict)

    def body(self, model: str, messages: list[dict[str, Any]], *,
             schema: Mapping[str, Any] | None = None, retry: bool = False) -> dict[str, Any]:
        return {**super().body(model, messages, schema=schema, retry=retry), **self.change}


def _messages(codec: HNativeToolsCodec) -> list[dict[str, Any]]:
    return codec.messages(TASK, turns(), prompt_config())


def _ask(server: FakeVLLM, codec: HNativeToolsCodec | None = None, **kwargs: Any) -> Any:
    codec = codec or HNativeToolsCodec(NATIVE)
    with HolotronClient(ClientConfig(base_url=server.base_url), codec) as client:
        return client.next_step(_messages(codec), **kwargs)


def test_a_streamed_call_becomes_the_step() -> None:
    seen: list[str] = []
    with FakeVLLM(ScriptedPolicy([CLICK]), contract="h_native_tools",
                  reasoning_parser=True) as server:
        reply = _ask(server, on_text=seen.append)
        [request] = server.requests
    assert reply.step == Step(note="", thought="",
                              action=Click(element="OK button", x=512, y=730))
    assert reply.finish_reason == "tool_calls"
    assert reply.raw == ('<think>The OK button is at the bottom.</think>\n'
                         'click({"element": "OK button", "x": 512, "y": 730})')
    assert seen and seen[-1] == reply.raw  # the live view shows the call too
    assert reply.completion_tokens is not None and reply.completion_tokens > 10
    assert request.body["tool_choice"] == "required"


def test_the_stand_in_streams_a_call_as_vllm_does() -> None:
    """Read as raw server-sent events: the call's first piece has its index, id, type and
    name with empty arguments, the later ones only arguments, the last chunk says
    tool_calls."""
    import urllib.request

    from tests.support.fake_vllm import iter_sse

    codec = HNativeToolsCodec(NATIVE)
    body = codec.body("holotron", _messages(codec))
    with FakeVLLM(ScriptedPolicy([CLICK]), reasoning_parser=True) as server:
        request = urllib.request.Request(f"{server.base_url}/chat/completions",
                                         data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            lines = (line.decode().rstrip("\n") for line in response)
            events = [json.loads(data) for data in iter_sse(lines) if data != "[DONE]"]
    deltas = [e["choices"][0]["delta"] for e in events if e["choices"]]
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    head, *rest = calls
    assert head["index"] == 0 and head["type"] == "function"
    assert head["id"].startswith("chatcmpl-tool-")
    assert head["function"] == {"name": "click", "arguments": ""}
    assert len(rest) > 3 and all(set(c) == {"index", "function"} for c in rest)
    assert json.loads("".join(c["function"]["arguments"] for c in rest)) == CLICK.arguments
    assert not any(d.get("content") for d in deltas)  # required: no content
    assert [e["choices"][0]["finish_reason"] for e in events if e["choices"]][-1] == \
        "tool_calls"
    assert events[-1]["usage"]["completion_tokens"] == len(calls) + sum(
        1 for d in deltas if d.get("reasoning"))


def test_the_stand_in_answers_a_call_unstreamed_too() -> None:
    import urllib.request

    codec = HNativeToolsCodec(NATIVE)
    body = codec.body("holotron", _messages(codec))
    body["stream"] = False
    del body["stream_options"]
    with FakeVLLM(ScriptedPolicy([CLICK]), reasoning_parser=True) as server:
        request = urllib.request.Request(f"{server.base_url}/chat/completions",
                                         data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read())
    [choice] = answer["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] is None
    assert choice["message"]["reasoning"] == CLICK.reasoning
    [call] = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "click"
    assert json.loads(call["function"]["arguments"]) == CLICK.arguments


def test_a_step_dict_is_said_as_the_call_of_the_requests_tools() -> None:
    """The stand-in translates a scripted step (holodesk's dialect or H's) into the native
    call of the tools the request offers; under a required tool choice it has no content."""
    legacy = {"note": "", "thought": "t", "action": {"action": "type", "text": "hello"}}
    h = {"note": None, "thought": "t", "tool_call": {"tool_name": "answer", "content": "ok"}}
    with FakeVLLM(ScriptedPolicy([legacy, h]), contract="h_native_tools") as server:
        first, second = _ask(server), _ask(server)
    assert first.step.action == Type(text="hello")
    assert second.step.action == Answer(text="ok")


def test_content_before_the_call_is_the_note_with_auto_tool_choice() -> None:
    """Only the parser path (tool_choice "auto") lets a model write text before its call."""
    noted = ToolCallAnswer("answer", {"content": "8421"}, content="The order id is 8421.")
    codec = _Changed(NATIVE, change={"tool_choice": "auto"})
    with FakeVLLM(ScriptedPolicy([noted]), tool_parser="qwen3_coder") as server:
        reply = _ask(server, codec)
    assert reply.step.note == "The order id is 8421."
    assert reply.step.action == Answer(text="8421")


def test_content_is_refused_under_a_required_tool_choice() -> None:
    noted = ToolCallAnswer("answer", {"content": "8421"}, content="The order id is 8421.")
    with FakeVLLM(ScriptedPolicy([noted], repeat_last=True)) as server:
        with pytest.raises(ServerError):
            _ask(server)
        assert "holds no content" in server.errors[0][1]


@pytest.mark.parametrize(("bad", "problem"), [
    (ToolCallAnswer("click", '{"element": "OK", "x": 5'), "not valid JSON"),
    (ToolCallAnswer("wait", {"seconds": 1}, more=(CLICK,)), "calls 2 tools, not one"),
    (ToolCallAnswer("fly", {}), "unknown tool 'fly'"),
])
def test_a_bad_call_is_asked_again_then_named(bad: ToolCallAnswer, problem: str) -> None:
    # A server that does not hold the answer to the required grammar lets these through.
    with FakeVLLM(ScriptedPolicy([bad, CLICK]), structured_outputs=StructuredOutputs.IGNORED,
                  reasoning_parser=True) as server:
        reply = _ask(server)
    assert reply.attempts == 2 and isinstance(reply.step.action, Click)
    with FakeVLLM(ScriptedPolicy([bad], repeat_last=True),
                  structured_outputs=StructuredOutputs.IGNORED) as server, \
            pytest.raises(InvalidOutput, match=problem):
        _ask(server)


def test_a_call_cut_by_the_budget_says_so() -> None:
    """vLLM reports finish_reason "tool_calls" for a call cut mid-arguments; the client
    tells it by the whole budget spent."""
    codec = HNativeToolsCodec(CodecConfig(contract=ContractKind.H_NATIVE_TOOLS, max_tokens=5))
    with FakeVLLM(ScriptedPolicy([ToolCallAnswer("click", CLICK.arguments)],
                                 repeat_last=True)) as server:
        with pytest.raises(InvalidOutput) as caught:
            _ask(server, codec)
        finishes = len(server.requests)
    assert "cut off at the length limit of 5 tokens" in caught.value.reason
    assert "not valid JSON" in caught.value.reason
    assert finishes == 3  # asked again like any invalid answer


def test_a_call_cut_by_the_window_is_a_full_context() -> None:
    """vLLM clamps the budget to what is left of the window: a call cut there ends
    "tool_calls" too, before the budget; prompt and answer filling the window tell it."""
    with FakeVLLM(ScriptedPolicy([CLICK]), reasoning_parser=True) as measure:
        _ask(measure)
        prompt = measure.requests[0].prompt_tokens
    with FakeVLLM(ScriptedPolicy([CLICK], repeat_last=True), reasoning_parser=True,
                  max_model_len=prompt + 12) as server, pytest.raises(ContextFull) as caught:
        _ask(server)
    assert caught.value.prompt_tokens == prompt
    assert "click(" in (caught.value.detail or "")  # cut mid-call, reported "tool_calls"
    assert len(server.requests) == 1  # asking again cannot help: the history only grows


def test_the_stand_in_holds_calls_to_the_required_grammar() -> None:
    """Under tool_choice "required" vLLM constrains the arguments to the tool's schema: an
    answer outside it never reaches the client (fake_vllm_tools.required_schema)."""
    off_screen = ToolCallAnswer("click", {"element": "OK", "x": 5000, "y": 1})
    with FakeVLLM(ScriptedPolicy([off_screen], repeat_last=True)) as server:
        with pytest.raises(ServerError):
            _ask(server)
        assert server.grammar_violations
        assert "never allow" in server.errors[0][1]
        server.grammar_violations.clear()  # provoked on purpose (FakeVLLM.check_client)


def test_stop_mid_call_cancels_the_request() -> None:
    with FakeVLLM(ScriptedPolicy([CLICK]), reasoning_parser=True) as server:
        server.stream_chunk_delay = 0.2
        codec = HNativeToolsCodec(NATIVE)
        client = HolotronClient(ClientConfig(base_url=server.base_url), codec)
        client.resolve_model()
        started = threading.Event()
        outcome: dict[str, Any] = {}

        def on_text(text: str) -> None:
            if "click(" in text:
                started.set()

        def run() -> None:
            try:
                outcome["reply"] = client.next_step(_messages(codec), on_text=on_text)
            except BaseException as exc:
                outcome["error"] = exc

        thread = threading.Thread(target=run)
        thread.start()
        assert started.wait(timeout=30)
        client.cancel()
        thread.join(timeout=30)
        server.wait_for_disconnect()
        client.close()
    assert isinstance(outcome.get("error"), Cancelled)


@pytest.mark.parametrize(("change", "words"), [
    ({"tool_choice": "auto"}, '"auto" tool choice requires --enable-auto-tool-choice'),
    ({"tool_choice": "sometimes"}, "Invalid value for `tool_choice`: sometimes!"),
    ({"tools": None}, "When using `tool_choice`, `tools` must be set."),
    ({"structured_outputs": {"json": {"type": "object"}}}, "structured outputs or tools, not "
                                                            "both"),
    ({"tools": [{"type": "function", "function": {"description": "x"}}]}, "Field required"),
])
def test_the_stand_in_refuses_what_vllm_refuses(change: dict[str, Any], words: str) -> None:
    with FakeVLLM(ScriptedPolicy([CLICK])) as server, pytest.raises(BadRequest) as caught:
        _ask(server, _Changed(NATIVE, change=change))
    assert words in str(caught.value.detail)


def test_a_tool_result_must_answer_a_call() -> None:
    codec = HNativeToolsCodec(NATIVE)
    messages = _messages(codec)
    next(m for m in messages if m["role"] == "tool")["tool_call_id"] = "call_99"
    with FakeVLLM(ScriptedPolicy([CLICK])) as server, \
            HolotronClient(ClientConfig(base_url=server.base_url), codec) as client, \
            pytest.raises(BadRequest, match="answers no earlier assistant tool call"):
        client.next_step(messages)


def test_the_native_contract_refuses_the_structured_request() -> None:
    codec = HStructuredCodec()
    with FakeVLLM(ScriptedPolicy([CLICK]), contract="h_native_tools") as server, \
            HolotronClient(ClientConfig(base_url=server.base_url), codec) as client, \
            pytest.raises(BadRequest, match="H contract: no tools"):
        client.next_step(codec.messages(TASK, turns(), prompt_config()))


# --------------------------------------------------------------------------- odd servers


@pytest.fixture
def scripted_stream() -> Iterator[tuple[str, list[list[dict[str, Any]]]]]:
    """A server that streams the tool-call deltas a test puts in its list (one list of deltas
    per request), as a server that breaks the format would."""
    streams: list[list[dict[str, Any]]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(json.dumps({"object": "list", "data": [
                {"id": "holo", "object": "model", "max_model_len": 65536}]}).encode(),
                "application/json")

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            deltas = streams.pop(0) if len(streams) > 1 else streams[0]
            events = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]}
                      for d in deltas]
            events.append({"choices": [{"index": 0, "delta": {},
                                        "finish_reason": "tool_calls"}]})
            body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            self._send(body.encode(), "text/event-stream")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", streams
    finally:
        server.shutdown()
        server.server_close()


def _call(index: int, arguments: str, **head: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if "name" in head:
        function["name"] = head.pop("name")
    return {"tool_calls": [{"index": index, **head, "function": function}]}


@pytest.mark.parametrize(("deltas", "problem"), [
    ([_call(0, '{"content": "ok"}')], "tool call 0 started without a function name"),
    ([_call(1, '{"content": "ok"}', id="c", type="function", name="answer")],
     "skipped an index"),
    ([_call(0, "{", id="c", type="function", name="answer"), _call(0, "}", name="wait")],
     "changed its name"),
])
def test_pieces_that_break_the_format_are_an_invalid_answer(
        scripted_stream: tuple[str, list[list[dict[str, Any]]]],
        deltas: list[dict[str, Any]], problem: str) -> None:
    url, streams = scripted_stream
    good = [_call(0, "", id="c1", type="function", name="answer"),
            _call(0, '{"content":'), _call(0, ' "ok"}')]
    streams.extend([deltas, good])
    with HolotronClient(ClientConfig(base_url=url), HNativeToolsCodec(NATIVE)) as client:
        reply = client.next_step(_messages(HNativeToolsCodec(NATIVE)))
    assert reply.attempts == 2 and reply.step.action == Answer(text="ok")
    streams[:] = [deltas]
    with HolotronClient(ClientConfig(base_url=url), HNativeToolsCodec(NATIVE)) as client, \
            pytest.raises(InvalidOutput, match=problem):
        client.next_step(_messages(HNativeToolsCodec(NATIVE)))
