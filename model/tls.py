"""TLS for a model server on another machine: a self-signed pair, its fingerprint, pinning.

One GPU server often serves several desktops. ``holodesk serve --tls`` gives vLLM a key and
certificate (``--ssl-keyfile`` / ``--ssl-certfile``); without a certificate authority the
clients trust it by its SHA-256 fingerprint, which ``holodesk serve`` prints and each client
pins (the ``tls_fingerprint`` setting). A pinned connection skips the CA chain and the host
name (a self-signed certificate has neither) and accepts exactly that certificate: a
different one ends the connection before a byte of the request is sent.

The pair is made with the ``cryptography`` package when it is installed (it is on Linux: the
keyring's Secret Service backend needs it), else with the ``openssl`` command.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
import os
import re
import shutil
import socket
import ssl
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.problem import Fix, HolodeskError

__all__ = [
    "CertificateMismatch",
    "CertificateUnavailable",
    "PinnedContext",
    "ServerCertificate",
    "fingerprint_of_der",
    "fingerprint_of_file",
    "make_self_signed",
    "normalize_fingerprint",
    "pinned_context",
]

#: How long a made certificate is valid: about two years, the longest clients commonly accept.
VALID_DAYS = 825
_HEX = re.compile(r"^[0-9A-F]{64}$")
_PEM_BLOCK = re.compile(
    r"-----BEGIN CERTIFICATE-----\s+[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----"
)


class CertificateUnavailable(HolodeskError):
    """No certificate could be made here (neither ``cryptography`` nor ``openssl``)."""


class CertificateMismatch(ssl.SSLCertVerificationError):
    """The server's certificate is not the pinned one. An ``ssl`` error, so HTTP libraries
    treat it as the failed connection it is; :attr:`seen` and :attr:`pinned` are fingerprints."""

    def __init__(self, seen: str, pinned: str) -> None:
        super().__init__(f"the server's certificate has the SHA-256 fingerprint {seen}, "
                         f"not the pinned {pinned}")
        self.seen = seen
        self.pinned = pinned


@dataclass(frozen=True)
class ServerCertificate:
    """A key and certificate on disk, and the certificate's fingerprint."""

    keyfile: Path
    certfile: Path
    fingerprint: str


def _colons(digest: bytes) -> str:
    return ":".join(f"{b:02X}" for b in digest)


def fingerprint_of_der(der: bytes) -> str:
    """The SHA-256 fingerprint of a DER certificate, as ``openssl x509 -fingerprint`` writes
    it: upper-case hex pairs joined by colons."""
    return _colons(hashlib.sha256(der).digest())


def fingerprint_of_file(certfile: Path) -> str:
    """The SHA-256 fingerprint of the (first) certificate in a PEM file."""
    text = certfile.read_text(encoding="ascii", errors="replace")
    first = _PEM_BLOCK.search(text)  # a chain file: the server's own certificate comes first
    if first is None:
        raise ValueError(f"{certfile} holds no PEM certificate")
    return fingerprint_of_der(ssl.PEM_cert_to_DER_cert(first.group()))


def normalize_fingerprint(value: str) -> str:
    """``value`` (hex, with or without colons or spaces, any case, an optional ``sha256:``
    prefix as some tools write) in the canonical form; ValueError if it is not SHA-256."""
    text = value.strip()
    if text.lower().startswith(("sha256:", "sha256=", "sha-256:")):
        text = text.split(":", 1)[1] if ":" in text[:8] else text.split("=", 1)[1]
    hex_only = re.sub(r"[\s:]", "", text).upper()
    if not _HEX.match(hex_only):
        raise ValueError("must be a SHA-256 fingerprint: 64 hex digits, colons allowed "
                         "(as `holodesk serve --tls` prints it)")
    return _colons(bytes.fromhex(hex_only))


class PinnedContext(ssl.SSLContext):
    """A client context that accepts exactly one certificate, checked once the handshake is
    done (Python's ``ssl`` has no verify callback). Works wherever a library calls
    ``wrap_socket`` (httpx, urllib)."""

    pin: str

    def wrap_socket(self, sock: socket.socket, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        wrapped = super().wrap_socket(sock, *args, **kwargs)
        if not kwargs.get("do_handshake_on_connect", True):
            wrapped.do_handshake()
        der = wrapped.getpeercert(binary_form=True)
        seen = fingerprint_of_der(der) if der else "(none)"
        if seen != self.pin:
            wrapped.close()
            raise CertificateMismatch(seen, self.pin)
        return wrapped


def pinned_context(fingerprint: str) -> PinnedContext:
    """A client context accepting only the certificate with this SHA-256 fingerprint."""
    context = PinnedContext(ssl.PROTOCOL_TLS_CLIENT)
    # The pin replaces the CA chain and the host name: a self-signed certificate has no CA,
    # and clients reach one server under many names (an IP, a LAN name).
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.pin = normalize_fingerprint(fingerprint)
    return context


def make_self_signed(
    folder: Path, hosts: Sequence[str] = (), *, name: str = "server"
) -> ServerCertificate:
    """Make a self-signed key and certificate in ``folder`` (``NAME-key.pem`` readable by the
    owner only, ``NAME-cert.pem``); replaces an existing pair. ``hosts`` are the names and
    addresses the certificate lists (loopback and this machine's name are always in).

    Raises :class:`CertificateUnavailable` when neither ``cryptography`` nor ``openssl`` is
    available.
    """
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    keyfile, certfile = folder / f"{name}-key.pem", folder / f"{name}-cert.pem"
    names = _subject_names(hosts)
    try:
        import cryptography  # noqa: F401
    except ImportError:
        _make_with_openssl(keyfile, certfile, names)
    else:
        _make_with_cryptography(keyfile, certfile, names)
    os.chmod(keyfile, 0o600)
    return ServerCertificate(keyfile, certfile, fingerprint_of_file(certfile))


def _subject_names(hosts: Sequence[str]) -> list[str]:
    names = ["localhost", "127.0.0.1", "::1", socket.gethostname(), *hosts]
    wild = {"", "0.0.0.0", "::"}
    return list(dict.fromkeys(n for n in names if n not in wild))


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _make_with_cryptography(keyfile: Path, certfile: Path, names: Sequence[str]) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "holodesk model server")])
    alt: list[x509.GeneralName] = [
        x509.IPAddress(ipaddress.ip_address(n)) if _is_ip(n) else x509.DNSName(n) for n in names
    ]
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    # Created private from the start: never a moment with the key readable by others.
    fd = os.open(keyfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(key_pem)
    certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _make_with_openssl(keyfile: Path, certfile: Path, names: Sequence[str]) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise CertificateUnavailable(
            "cannot make a TLS certificate: neither the Python package `cryptography` nor "
            "the `openssl` command is installed",
            Fix("install one of them (`pip install cryptography`, or the openssl package of "
                "your system), or give your own key and certificate files"),
        )
    alt = ",".join(f"IP:{n}" if _is_ip(n) else f"DNS:{n}" for n in names)
    command = [
        exe, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", str(keyfile), "-out", str(certfile),
        "-days", str(VALID_DAYS), "-subj", "/CN=holodesk model server",
        "-addext", f"subjectAltName={alt}",
    ]  # fmt: skip
    old = os.umask(0o077)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    finally:
        os.umask(old)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise CertificateUnavailable(
            f"openssl could not make the certificate (exit {done.returncode}"
            + (f": {said[-1]}" if said else "") + ")",
            Fix("install the `cryptography` package (`pip install cryptography`), or give "
                "your own key and certificate files"),
        )
