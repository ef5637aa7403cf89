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
from collections.abc import Iterable
from urllib.parse import urlsplit

from model.problem import Fix, HolodeskError

__all__ = ["PlainHttpRefused", "check_plain_http", "is_loopback_url", "needs_consent"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost",
                             "ip6-loopback"})


class PlainHttpRefused(HolodeskError):
    """A run would send the screen and the key unencrypted to another machine, unagreed."""


def is_loopback_url(url: str) -> bool:
    """Whether ``url``'s host is this machine's loopback (127.0.0.0/8, ::1, localhost)."""
    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return False
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


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
    raise PlainHttpRefused(
        f"{endpoint} is another machine reached over plain http: your screenshots (and the "
        "API key, if one is set) would cross the network unencrypted, readable by anyone on "
        "the way. Nothing was sent.",
        Fix(
            "Serve with TLS (`holodesk serve --tls` on the server) and use its https:// "
            "address with the fingerprint it prints; or, on a network you trust, agree once "
            "to plain http for this endpoint.",
            setting="plain_http_ok",
            value=",".join([*agreed, endpoint]),
        ),
    )
