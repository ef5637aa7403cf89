"""TLS to the model server: a self-signed pair and its fingerprint, pinned by the client, over
a real TLS connection to the stand-in server."""

from __future__ import annotations

import json
import shutil
import ssl
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from model.client import ClientConfig, HolotronClient
from model.errors import CertificateNotPinned, CertificateUntrusted
from model.tls import (
    ServerCertificate,
    fingerprint_of_file,
    make_self_signed,
    normalize_fingerprint,
)
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy

ANSWER = json.dumps({"note": "", "thought": "t", "action": {"action": "answer", "text": "ok"}})
MESSAGES = [{"role": "user", "content": "hello"}]
SCHEMA = {"type": "object"}


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> ServerCertificate:
    return make_self_signed(tmp_path_factory.mktemp("tls"), ["gpu.lan"])


@pytest.fixture
def server(pair: ServerCertificate) -> Iterator[FakeVLLM]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pair.certfile, pair.keyfile)
    with FakeVLLM(ScriptedPolicy([ANSWER], repeat_last=True), ssl_context=context) as fake:
        yield fake


def _client(server: FakeVLLM, pin: str | None) -> HolotronClient:
    return HolotronClient(ClientConfig(base_url=server.base_url, tls_fingerprint=pin,
                                       api_key="sk-tls-test-key-123456", connect_timeout=5,
                                       request_timeout=20, max_retries=0))


def test_the_made_pair_is_private_and_its_fingerprint_is_openssls(
    pair: ServerCertificate,
) -> None:
    assert stat.S_IMODE(pair.keyfile.stat().st_mode) == 0o600
    assert pair.fingerprint == fingerprint_of_file(pair.certfile)
    assert len(pair.fingerprint) == 95 and pair.fingerprint.count(":") == 31
    openssl = shutil.which("openssl")
    if openssl is not None:  # the form people compare against: openssl's own
        import subprocess

        said = subprocess.run([openssl, "x509", "-noout", "-fingerprint", "-sha256", "-in",
                               str(pair.certfile)], capture_output=True, text=True, check=True)
        assert said.stdout.strip().endswith("=" + pair.fingerprint)


def test_fingerprints_are_read_in_the_forms_tools_print() -> None:
    canonical = ":".join(["AB"] * 32)
    assert normalize_fingerprint("ab" * 32) == canonical
    assert normalize_fingerprint(f"SHA256:{canonical.lower()}") == canonical
    assert normalize_fingerprint(f"  {canonical}\n") == canonical
    with pytest.raises(ValueError, match="SHA-256"):
        normalize_fingerprint("AB:CD")


def test_a_pinned_https_server_answers(server: FakeVLLM, pair: ServerCertificate) -> None:
    assert server.base_url.startswith("https://")
    with _client(server, pair.fingerprint.lower().replace(":", "")) as client:
        client.health()
        reply = client.next_step(MESSAGES, SCHEMA)
    assert reply.step.action.action == "answer"
    assert server.chat_requests == 1


def test_a_wrong_pin_fails_before_anything_is_sent(server: FakeVLLM) -> None:
    wrong = ":".join(["00"] * 32)
    with _client(server, wrong) as client, pytest.raises(CertificateNotPinned) as caught:
        client.next_step(MESSAGES, SCHEMA)
    error = caught.value
    assert wrong in error.message and "Nothing was sent" in error.message
    assert error.fix is not None and error.fix.setting == "tls_fingerprint"
    assert server.chat_requests == 0  # not one request reached the server
    with _client(server, wrong) as client, pytest.raises(CertificateNotPinned):
        client.health()


def test_a_self_signed_server_without_a_pin_is_untrusted_with_the_fix(server: FakeVLLM) -> None:
    with _client(server, None) as client, pytest.raises(CertificateUntrusted) as caught:
        client.resolve_model()
    assert caught.value.fix is not None and caught.value.fix.setting == "tls_fingerprint"
    assert server.chat_requests == 0


def test_pinning_needs_the_pinned_context(server: FakeVLLM, pair: ServerCertificate,
                                          tmp_path: Path) -> None:
    # Another certificate with the same names: only the fingerprint tells them apart.
    other = make_self_signed(tmp_path, ["gpu.lan"])
    assert other.fingerprint != pair.fingerprint
    with _client(server, other.fingerprint) as client, pytest.raises(CertificateNotPinned):
        client.resolve_model()
