"""The server probe and poller against the fake vLLM over real HTTP: one test per state."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from app.cli.render import fix_line
from app.status import MIN_CONTEXT, ServerStatus, StatusPoller, probe
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy

KEY = "sk-status-test-0123456789"


def fake(**options: object) -> FakeVLLM:
    return FakeVLLM(ScriptedPolicy(["ok"], repeat_last=True), **options)  # type: ignore[arg-type]


@pytest.fixture
def server() -> Iterator[FakeVLLM]:
    with fake() as running:
        yield running


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_ok_reports_model_and_context(server: FakeVLLM) -> None:
    status = probe(server.base_url, None, "holotron")
    assert status.state == "ok", status
    assert status.ok
    assert status.models == ["holotron"]
    assert status.max_model_len == 32768
    assert status.model == "holotron"
    assert status.fix is None
    # The image probe really sent three images with a one-token budget.
    request = server.requests[-1]
    assert len(request.images) == 3
    assert request.max_tokens == 1


def test_ok_without_model_name_uses_the_served_one(server: FakeVLLM) -> None:
    status = probe(server.base_url, None, None)
    assert status.state == "ok"
    assert status.model == "holotron"


def test_check_images_false_sends_no_chat_request(server: FakeVLLM) -> None:
    status = probe(server.base_url, None, None, check_images=False)
    assert status.state == "ok"
    assert server.requests == []


def test_down() -> None:
    status = probe(f"http://127.0.0.1:{free_port()}/v1", None, None, timeout=2.0)
    assert status.state == "down"
    assert "No model server answers" in status.message
    assert "holodesk serve" in fix_line(status.fix)  # the CLI names its command
    assert status.models == []


def test_loading() -> None:
    with fake(loading=True) as server:
        status = probe(server.base_url, None, None)
    assert status.state == "loading"
    assert "loading" in status.message


def test_wrong_model_lists_the_served_names() -> None:
    with fake(served_model_name="other-model") as server:
        status = probe(server.base_url, None, "holotron")
    assert status.state == "wrong_model"
    assert "'holotron'" in status.message and "'other-model'" in status.message
    assert "--served-model-name" in fix_line(status.fix)
    assert status.models == ["other-model"]


def test_image_limit_names_the_flag() -> None:
    with fake(image_limit=1) as server:
        status = probe(server.base_url, None, None)
    assert status.state == "image_limit"
    assert "at most 1 image" in status.message
    assert "--limit-mm-per-prompt" in fix_line(status.fix)


def test_context_short_names_the_flag_and_sizes() -> None:
    with fake(max_model_len=8192) as server:
        status = probe(server.base_url, None, None)
    assert status.state == "context_short"
    assert status.max_model_len == 8192
    assert "8192" in status.message
    assert str(MIN_CONTEXT) in status.message and "32768" in status.message
    assert "--max-model-len" in fix_line(status.fix)


def test_auth_missing_and_wrong_key_and_right_key() -> None:
    with fake(api_key=KEY) as server:
        missing = probe(server.base_url, None, None)
        wrong = probe(server.base_url, "sk-wrong-key-000000", None)
        right = probe(server.base_url, KEY, None)
    assert missing.state == "auth" and "requires an API key" in missing.message
    assert wrong.state == "auth" and "refused the API key" in wrong.message
    assert KEY not in wrong.describe()
    assert right.state == "ok"


def test_bad_endpoint_is_an_error_not_an_exception() -> None:
    status = probe("not a url", None, None)
    assert status.state in ("error", "down")
    assert status.message


def test_describe_has_message_and_fix() -> None:
    status = ServerStatus("down", "No server.", "start it")
    assert status.describe() == "No server.\nFix: start it"
    assert ServerStatus("ok", "Ready.").describe() == "Ready."


def test_poller_reports_changes_only() -> None:
    server = fake()
    server.start()
    seen: list[ServerStatus] = []
    changed = threading.Event()

    def callback(status: ServerStatus) -> None:
        seen.append(status)
        changed.set()

    poller = StatusPoller(server.base_url, None, None, callback, interval=0.05, timeout=2.0)
    try:
        poller.start()
        assert changed.wait(10)
        assert seen[0].state == "ok"
        changed.clear()
        # Several more polls of an unchanged server report nothing new.
        polls_before = len(server.requests)
        assert not changed.wait(0.5)
        assert len(seen) == 1
        # Later polls skip the image probe while the server stays fine.
        assert len(server.requests) == polls_before
        server.loading = True
        assert changed.wait(10)
        assert seen[-1].state == "loading"
        assert poller.last is not None and poller.last.state == "loading"
    finally:
        poller.stop()
        server.stop()


def test_poller_configure_probes_the_new_server_at_once() -> None:
    seen: list[ServerStatus] = []
    got = threading.Event()

    def callback(status: ServerStatus) -> None:
        seen.append(status)
        got.set()

    down_url = f"http://127.0.0.1:{free_port()}/v1"
    poller = StatusPoller(down_url, None, None, callback, interval=3600, timeout=2.0)
    with fake(max_model_len=8192) as server:
        try:
            poller.start()
            assert got.wait(10)
            assert seen[-1].state == "down"
            got.clear()
            poller.configure(server.base_url, None, None)  # no wait for the hour-long interval
            assert got.wait(10)
            assert seen[-1].state == "context_short"
        finally:
            poller.stop()


def test_poller_survives_a_raising_callback() -> None:
    calls: list[int] = []
    done = threading.Event()

    def probe_fn(*_args: object, **_kwargs: object) -> ServerStatus:
        calls.append(1)
        if len(calls) >= 3:
            done.set()
        return ServerStatus("down" if len(calls) % 2 else "ok", f"call {len(calls)}")

    def callback(_status: ServerStatus) -> None:
        raise RuntimeError("callback bug")

    poller = StatusPoller("http://x/v1", None, None, callback, interval=0.01, probe_fn=probe_fn)
    poller.start()
    try:
        assert done.wait(10)
    finally:
        poller.stop()
