"""Red team 4, issue 21 part 3: the endpoint as a safety key, and the plain-http consent.

The attacker is a hijacked model working a GUI text editor with the person's file rights: it
rewrites settings.toml (tests/support/hand_edits.py). Without a keyring (a minimal machine,
where docs/safety.md says the key comes from ``HOLODESK_API_KEY``) an endpoint "on this
machine or your network" applies as the file has it; what counts as the network is read from
the URL's form. Red team 4 found both holes below; each test failed before its fix
(model/plain_http.py reads a host as the C library does; the model client refuses to be made
for plain http to another machine without the person's consent, whoever builds it).
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from app.approval import local_endpoint
from app.secrets import api_key
from app.settings import load_settings
from app.status import probe
from tests.support.hand_edits import edit_settings_by_hand
from tests.support.home import Home, isolate_home


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


def _addresses(url: str) -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Where a connection to ``url`` goes: the C library's own reading of its host (a number
    is parsed, never looked up in DNS)."""
    parts = urlsplit(url)
    found = socket.getaddrinfo(parts.hostname, parts.port or 80, type=socket.SOCK_STREAM,
                               flags=socket.AI_NUMERICHOST)
    return {ipaddress.ip_address(info[4][0]) for info in found}


@pytest.mark.parametrize("endpoint", [
    "http://134744072:8000/v1",  # 8.8.8.8 as one decimal number
    "http://0x8080808:8000/v1",  # the same in hexadecimal
])
def test_an_internet_address_written_as_one_number_is_not_your_network(
        home: Home, endpoint: str) -> None:
    """settings.toml gets ``endpoint = "http://134744072:8000/v1"``. Without a keyring,
    ``local_endpoint`` takes a host without a dot for a name on the person's network, so the
    endpoint applies as written; but every resolver (glibc's inet_aton, which httpx2 reaches
    through getaddrinfo) reads a dotless number as an IPv4 address: 8.8.8.8, any machine on the
    internet, no DNS involved. docs/safety.md's "a host name counts as your network by its
    form, not by where it resolves" is about names a DNS server answers for; this is no name,
    and no DNS server is needed. A run still refuses plain http there unagreed, but the app's
    server status and `holodesk doctor` send HOLODESK_API_KEY to it in clear at once (the test
    below): the key goes to any machine on the internet."""
    assert all(a.is_global for a in _addresses(endpoint)), "the premise: an internet address"
    edit_settings_by_hand(endpoint=endpoint)
    settings = load_settings()
    applied = _addresses(settings.endpoint) if settings.endpoint == endpoint else set()
    assert not any(a.is_global for a in applied), (
        f"{endpoint} written by another program applies without a question and connects to "
        f"{sorted(map(str, applied))}")


def _this_machines_lan_address() -> str | None:
    """An address of this machine on its network (one that ``local_endpoint`` counts as the
    person's network), IPv4 or IPv6; no packet is sent: a UDP socket's connect only picks the
    route."""
    for family, far in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            try:
                s.connect((far, 9))
            except OSError:
                continue
            address = str(s.getsockname()[0]).split("%")[0]
        shown = f"[{address}]" if family == socket.AF_INET6 else address
        if local_endpoint(f"http://{shown}:8000/v1"):
            return address
    return None


class _Listener:
    """An http server on this machine's network address that notes each Authorization header
    (what someone reading the network sees of a plain-http request)."""

    def __init__(self, host: str) -> None:
        self.seen: list[str] = []
        listener = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                listener.seen.append(self.headers.get("Authorization", ""))
                body = b'{"data": []}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

        v6 = ":" in host
        server_class = type("Server", (ThreadingHTTPServer,), {
            "address_family": socket.AF_INET6 if v6 else socket.AF_INET})
        self._server = server_class((host, 0), Handler)
        self._server.daemon_threads = True
        shown = f"[{host}]" if v6 else host
        self.url = f"http://{shown}:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> _Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def lan_listener() -> Iterator[_Listener]:
    host = _this_machines_lan_address()
    if host is None:
        pytest.skip("this machine has no address on a private network")
    with _Listener(host) as listener:
        yield listener


def test_the_apps_server_status_sends_no_key_over_plain_http_to_an_unagreed_endpoint(
        home: Home, monkeypatch: pytest.MonkeyPatch, lan_listener: _Listener) -> None:
    """A machine without a keyring, the key in HOLODESK_API_KEY (as UNAVAILABLE_HELP tells
    the person to do). An editor writes an http endpoint on the network into settings.toml;
    it applies (no keyring). A run then refuses it (plain_http_ok is empty: check_plain_http),
    but the desktop app's server status (ui/app.py hands ``settings.endpoint`` and
    ``api_key(endpoint)`` to the StatusPoller, which calls ``app.status.probe``) and
    ``holodesk doctor`` talk to it at once with ``Authorization: Bearer <key>``, in clear,
    without that consent. docs/safety.md: "Plain http:// to another machine is refused until
    you agree once for that endpoint"."""
    secret = "hk-" + "s3cr3t" * 4
    monkeypatch.setenv("HOLODESK_API_KEY", secret)
    edit_settings_by_hand(endpoint=lan_listener.url)
    settings = load_settings()
    assert settings.endpoint == lan_listener.url, "the premise: the endpoint applies"
    assert lan_listener.url not in settings.plain_http_ok
    # What ui/app.py's _start_status_poller does with the settings it loaded.
    probe(settings.endpoint, api_key(settings.endpoint), settings.model, timeout=3.0,
          check_images=False)
    leaked = [h for h in lan_listener.seen if secret in h]
    assert not leaked, (
        f"the API key crossed the network in clear to {lan_listener.url}, an endpoint nobody "
        f"agreed to plain http for ({len(leaked)} request(s))")
