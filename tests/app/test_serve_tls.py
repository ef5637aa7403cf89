"""`holodesk serve --tls`: vLLM gets a key and certificate, holodesk prints the fingerprint to
pin, and a client pinning it talks to the server over https (the stand-in `vllm`)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from app.serving import default_tls_files, serve_config
from app.settings import Settings
from model.client import ClientConfig, HolotronClient
from model.serving.launcher import build_command
from model.tls import fingerprint_of_file
from tests.app.test_serve import (  # noqa: F401 - fixtures
    Started,
    free_port,
    run_serve,
    shims,
    started,
)
from tests.support.home import Home, isolate_home

KEY = "sk-serve-tls-key-1234567890"


def test_the_command_carries_the_files_and_the_url_is_https(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_home(monkeypatch, tmp_path)
    cfg = serve_config(Settings(serve_tls=True))
    key, cert = default_tls_files()
    argv = build_command(cfg)
    assert argv[argv.index("--ssl-keyfile") + 1] == str(key)
    assert argv[argv.index("--ssl-certfile") + 1] == str(cert)
    assert cfg.base_url == "https://127.0.0.1:8000/v1"
    own = serve_config(Settings(serve_tls=True, serve_ssl_keyfile="/k.pem",
                                serve_ssl_certfile="/c.pem"))
    assert (own.ssl_keyfile, own.ssl_certfile) == ("/k.pem", "/c.pem")
    assert "--ssl-keyfile" not in build_command(serve_config(Settings()))


def test_make_cert_prints_the_fingerprint_and_how_clients_pin_it(
    home: Home, shims: Path  # noqa: F811
) -> None:
    result = run_serve(home, shims, "--make-cert")
    assert result.returncode == 0, result.stderr
    key = home.data / "holodesk" / "tls" / "server-key.pem"
    cert = home.data / "holodesk" / "tls" / "server-cert.pem"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    fingerprint = fingerprint_of_file(cert)
    assert f"fingerprint: {fingerprint}" in result.stdout
    assert f"holodesk config set tls_fingerprint {fingerprint}" in result.stdout


def test_serve_tls_makes_a_pair_serves_https_and_a_pinned_client_talks_to_it(
    home: Home, shims: Path, tmp_path: Path, started: list[Started]  # noqa: F811
) -> None:
    port = free_port()
    server = Started(home, shims, tmp_path / "run", "--tls", "--port", str(port),
                     HOLODESK_API_KEY=KEY)
    started.append(server)
    server.wait_output("holodesk config set tls_fingerprint")
    out = server.stdout
    assert f"ready at https://127.0.0.1:{port}/v1" in out
    cert = home.data / "holodesk" / "tls" / "server-cert.pem"
    fingerprint = fingerprint_of_file(cert)
    assert f"TLS certificate SHA-256 fingerprint: {fingerprint}" in out
    argv = server.recorded()["argv"]
    assert isinstance(argv, list) and "--ssl-certfile" in argv and str(cert) in argv
    config = ClientConfig(base_url=f"https://127.0.0.1:{port}/v1", api_key=KEY,
                          tls_fingerprint=fingerprint, request_timeout=20)
    with HolotronClient(config) as client:
        client.health()
        assert client.models() == ["holotron"]


def test_print_command_says_where_the_pair_comes_from(home: Home, shims: Path) -> None:  # noqa: F811
    result = run_serve(home, shims, "--tls", "--print-command")
    assert result.returncode == 0, result.stderr
    assert "--ssl-certfile" in result.stdout
    assert "holodesk serve --make-cert" in result.stdout  # not made yet: runs nothing
    assert not (home.data / "holodesk" / "tls").exists()
