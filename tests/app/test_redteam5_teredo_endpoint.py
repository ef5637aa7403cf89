"""Red team 5, issue 21 (fixed; each test failed before the fix):
a Teredo address taken for "your network" without a keyring.

docs/safety.md, Safety settings, Without a keyring: "An ``endpoint`` on this machine or your
network (loopback, a private or link-local address, ...) applies as written ...; one on the
internet needs a keyring or ``--endpoint``."

``app.approval.local_endpoint`` reads "private" from Python's ``ipaddress.is_private``, which
counts all of 2001::/23 (IETF protocol assignments) as private. Inside it is 2001::/32, Teredo:
an address there is a host on the internet (its IPv4 server and, obfuscated, its public IPv4
client address are written into it), reached through the Teredo relays that announce 2001::/32
on the IPv6 internet, or through a local Teredo client (miredo). A hijacked model with an
editor writes ``endpoint = "https://[2001:0:...]:8000/v1"`` into settings.toml on a machine
without a keyring: it applies without a question, and every screenshot of the next run goes to
that internet host (over https: a certificate for an IP address is to be had from a public CA).
The control: an IPv4 internet address written the same way does not apply.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from app.settings import load_settings
from tests.support.hand_edits import edit_settings_by_hand
from tests.support.home import Home, isolate_home

TEREDO = ipaddress.ip_network("2001::/32")


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


def test_control_an_internet_address_does_not_apply_without_a_keyring(home: Home) -> None:
    endpoint = "https://8.8.8.8:8000/v1"
    edit_settings_by_hand(endpoint=endpoint)
    assert load_settings().endpoint != endpoint


def test_a_teredo_address_is_not_your_network(home: Home) -> None:
    host = "2001:0:4136:e378:8000:63bf:3fff:fdd2"  # Teredo: server 65.54.227.120
    assert ipaddress.ip_address(host) in TEREDO, "the premise: a Teredo address"
    endpoint = f"https://[{host}]:8000/v1"
    edit_settings_by_hand(endpoint=endpoint)
    assert load_settings().endpoint != endpoint, (
        "a Teredo address (an internet host) written by another program applies without a "
        "keyring as if it were on the person's network")
