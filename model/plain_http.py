"""Plain http beyond this machine: said plainly, and only with the person's consent.

A run sends every screenshot (whatever is on the screen: mail, documents, passwords being
typed) and the API key to the model server. Over ``http://`` to another machine, anyone on the
network path can read both, and the key lets them use the server. One GPU server often serves
several desktops, so this is a common set-up; the safe way is TLS (``holodesk serve --tls``,
then an ``https://`` endpoint with its fingerprint pinned). Where the network is the person's
own and trusted, they may agree once per endpoint (the ``plain_http_ok`` setting, or the
checkbox under the endpoint in Settings); loopback never asks: the traffic never leaves the
machine.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from model.errors import HolotronError
from model.problem import Fix

__all__ = [
    "PlainHttpRefused",
    "check_plain_http",
    "host_address",
    "is_loopback_url",
    "is_plain_name",
    "needs_consent",
]

# What the C library's inet_aton reads as an IPv4 address besides four dotted decimals: one to
# four parts, each decimal, octal (leading 0) or hexadecimal (0x). "134744072" is 8.8.8.8.
_NUMERIC_HOST = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}", re.I)

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost",
                             "ip6-loopback"})


class PlainHttpRefused(HolotronError):
    """A run would send the screen and the key unencrypted to another machine, unagreed."""

    def __init__(self, endpoint: str, agreed: Iterable[str] = ()) -> None:
        super().__init__(
            f"{endpoint} is another machine reached over plain http: your screenshots (and the "
            "API key, if one is set) would cross the network unencrypted, readable by anyone "
            "on the way. Nothing was sent.",
            Fix(
                "Serve with TLS (`holodesk serve --tls` on the server) and use its https:// "
                "address with the fingerprint it prints; or, on a network you trust, agree "
                "once to plain http for this endpoint.",
                setting="plain_http_ok",
                value=",".join([*agreed, endpoint]),
            ),
        )
        self.endpoint = endpoint


def host_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``host`` (a URL's host, lower case) is written as, or None for a name.

    A connection reads a host as the C library does, and that reads more than dotted quads as
    an IPv4 address: ``134744072`` and ``0x8080808`` are both 8.8.8.8, with no DNS involved.
    Judging such a host as a name would take an internet address for one on the network."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if not _NUMERIC_HOST.fullmatch(host):
            return None
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None  # a part too large: the resolver asks DNS for it as a name
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_plain_name(host: str) -> bool:
    """Whether ``host`` is a name in words: not an address, nor digits a resolver may take for
    one (the form alone says nothing of where such a host is)."""
    return bool(host) and host_address(host) is None and not _NUMERIC_HOST.fullmatch(host)


def is_loopback_url(url: str) -> bool:
    """Whether ``url``'s host is this machine's loopback (127.0.0.0/8, ::1, localhost)."""
    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return False
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    address = host_address(host)
    return address is not None and address.is_loopback


def needs_consent(endpoint: str) -> bool:
    """Whether talking to ``endpoint`` crosses a network unencrypted (http, not loopback)."""
    try:
        scheme = urlsplit(endpoint).scheme.lower()
    except ValueError:
        return False
    return scheme == "http" and not is_loopback_url(endpoint)


def check_plain_http(endpoint: str, agreed: Iterable[str]) -> None:
    """Raise :class:`PlainHttpRefused` unless ``endpoint`` is https, loopback, or in
    ``agreed`` (the ``plain_http_ok`` setting; both normalized as settings normalize them)."""
    agreed = list(agreed)
    if not needs_consent(endpoint) or endpoint in agreed:
        return
    raise PlainHttpRefused(endpoint, agreed)
