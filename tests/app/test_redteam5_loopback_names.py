"""Red team 5, issue 21 (fixed; each test failed before the fix):
a "loopback" endpoint whose name the network's DNS answers for.

docs/safety.md, Secrets: "Plain ``http://`` to another machine is refused until you agree once
for that endpoint ...; loopback (127.0.0.0/8, ::1, localhost) never asks." And Safety
settings: an ``endpoint`` "on this machine" is a *stricter* value, used without asking even
when the keyring holds the approved record.

What is "this machine" is read from the URL's form (model/plain_http.py ``is_loopback_url``):
the host with its trailing dots stripped, then ``localhost``, ``localhost.localdomain``,
``ip6-localhost``, ``ip6-loopback`` or any name ending in ``.localhost``. The connection,
though, asks the C library, and the C library answers those names from /etc/hosts only when
the file lists them *exactly*: ``localhost.`` (a trailing dot), ``vault.localhost``, and on
many systems ``localhost.localdomain`` or ``ip6-localhost`` are not there, so the resolver
asks the network's DNS. Whoever answers DNS on the path (the same person the plain-http
consent is about: a hostile Wi-Fi, an ARP-spoofing neighbour) names their own machine, and
the screenshots and the API key go there in clear, with no consent asked, no question about
the endpoint, and no TLS.

The attack: a hijacked model edits settings.toml (a person who approved an https endpoint,
keyring present) to ``endpoint = "http://localhost.:PORT/v1"``. It applies as a stricter
value; the client is made without the plain-http consent; the DNS answer (simulated here by
answering ``getaddrinfo`` for the names /etc/hosts does not know, as a DNS server on the path
would) sends the request with ``Authorization: Bearer <key>`` to another machine's address.
"""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path
from typing import Any

import pytest

from app.parts import client_config
from app.settings import load_settings, set_value
from model.client import HolotronClient
from model.errors import HolotronError
from model.plain_http import PlainHttpRefused
from tests.app.test_redteam4_endpoint import _Listener, _this_machines_lan_address
from tests.support.hand_edits import edit_settings_by_hand
from tests.support.home import Home, isolate_home

KEY = "hk-" + "l00pb4ck" * 4


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


def _known_to_the_hosts_file(name: str) -> bool:
    """Whether this machine answers ``name`` itself (/etc/hosts, nss-myhostname...) with a
    loopback address; otherwise the resolver asks the network's DNS."""
    try:
        found = socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return False
    return all(info[4][0].startswith("127.") or info[4][0] == "::1" for info in found)


@pytest.mark.parametrize("name", ["localhost.", "vault.localhost"])
def test_a_loopback_looking_name_answered_by_dns_gets_no_key_in_clear(
        home: Home, file_keyring: Any, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    if _known_to_the_hosts_file(name):
        pytest.skip(f"this machine answers {name} itself")
    lan = _this_machines_lan_address()
    if lan is None:
        pytest.skip("this machine has no network address besides loopback")
    # The person's own choice, approved with holodesk: an https server.
    set_value("endpoint", "https://gpu.example.org:8000/v1")
    monkeypatch.setenv("HOLODESK_API_KEY", KEY)
    with _Listener(lan) as attacker:
        port = attacker.url.rsplit(":", 1)[1].split("/")[0]
        endpoint = f"http://{name}:{port}/v1"
        edit_settings_by_hand(endpoint=endpoint)
        settings = load_settings()
        assert settings.endpoint == endpoint, "the premise: the edit applies as 'this machine'"
        assert not settings.pending

        # A DNS server on the path answers the name /etc/hosts does not know.
        real = socket.getaddrinfo

        def network_dns(host: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(host, str | bytes) and (
                    host.decode() if isinstance(host, bytes) else host) == name:
                return real(lan, *args, **kwargs)
            return real(host, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", network_dns)
        try:
            client = HolotronClient(client_config(settings, KEY))
        except PlainHttpRefused:
            return  # refused: nothing sent
        with client, contextlib.suppress(HolotronError):
            client.served_models()
        leaked = [h for h in attacker.seen if KEY in h]
        assert not leaked, (
            f"{endpoint} was taken for this machine: the API key went in clear to {lan}, "
            "the address the network's DNS gave, with no plain-http consent")
