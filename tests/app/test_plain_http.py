"""Plain http beyond this machine needs the person's consent, once per endpoint."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from app.cli.exitcodes import EXIT_REFUSED
from app.cli.render import render
from app.settings import load_settings, set_value
from model.plain_http import PlainHttpRefused, check_plain_http, is_loopback_url, needs_consent
from tests.support.e2e import run_holodesk
from tests.support.home import Home

REMOTE = "http://10.1.2.3:8000/v1"


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8000/v1", "http://127.8.9.10/v1", "http://localhost:8000/v1",
     "http://[::1]:8000/v1", "http://[::ffff:127.0.0.1]:8000/v1", "http://LOCALHOST./v1"],
)
def test_loopback_never_asks(url: str) -> None:
    assert is_loopback_url(url)
    assert not needs_consent(url)
    check_plain_http(url, ())


@pytest.mark.parametrize(
    "url",
    [REMOTE, "http://gpu.lan:8000/v1", "http://192.168.1.20/v1", "http://[fe80::1]:8000/v1",
     "http://0.0.0.0:8000/v1", "http://127.0.0.1.evil.example/v1"],
)
def test_plain_http_to_another_machine_needs_consent(url: str) -> None:
    assert needs_consent(url)
    with pytest.raises(PlainHttpRefused) as refused:
        check_plain_http(url, ("http://other:1/v1",))
    assert "unencrypted" in refused.value.message
    fix = refused.value.fix
    assert fix is not None and fix.setting == "plain_http_ok"
    # The command keeps the consents already given and adds this one.
    value = shlex.quote(f"http://other:1/v1,{url}")
    assert f"holodesk config set plain_http_ok {value}" in render(refused.value)


def test_https_and_an_agreed_endpoint_go_ahead() -> None:
    check_plain_http("https://10.1.2.3:8000/v1", ())
    check_plain_http(REMOTE, ("http://gpu.lan:8000/v1", REMOTE))


def test_the_setting_takes_endpoints_as_the_endpoint_setting_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file_keyring: object
) -> None:
    path = tmp_path / "settings.toml"
    set_value("plain_http_ok", "http://10.1.2.3:8000, http://gpu.lan:8000/v1/", path=path)
    settings = load_settings(path, environ={})
    assert settings.plain_http_ok == (REMOTE, "http://gpu.lan:8000/v1")
    check_plain_http(REMOTE, settings.plain_http_ok)
    set_value("plain_http_ok", "", path=path)
    assert load_settings(path, environ={}).plain_http_ok == ()


def test_holodesk_run_refuses_until_the_person_agrees(home: Home) -> None:
    refused = run_holodesk(home, "run", "open the mail", "--endpoint", REMOTE)
    assert refused.returncode == EXIT_REFUSED
    assert "run refused: " in refused.stderr
    assert "plain http" in refused.stderr and "Nothing was sent" in refused.stderr
    command = f"holodesk config set plain_http_ok {REMOTE}"
    assert command in refused.stderr  # the exact command, to paste
    agreed = run_holodesk(home, "config", "set", "plain_http_ok", REMOTE)
    assert agreed.returncode == 0, str(agreed)
    again = run_holodesk(home, "run", "open the mail", "--endpoint", REMOTE)
    assert "plain http" not in again.stderr  # past the consent (it fails later: no display)


def test_a_calibration_asks_for_the_same_consent() -> None:
    from app.calibrate import CalibrationUnavailable, open_calibrator
    from app.settings import Settings
    from control.stop import StopLatch

    with pytest.raises(CalibrationUnavailable) as refused, open_calibrator(
        Settings(endpoint=REMOTE), StopLatch()
    ):
        pass
    assert refused.value.fix is not None and refused.value.fix.setting == "plain_http_ok"


@pytest.mark.parametrize("url", [REMOTE, "http://134744072:8000/v1", "http://gpu:8000/v1"])
def test_no_client_is_made_for_unagreed_plain_http_whoever_builds_it(url: str) -> None:
    """The floor under every front end (a run, the app's status, doctor, bench, calibrate):
    the model client itself refuses, before any connection."""
    from model.client import ClientConfig, HolotronClient

    with pytest.raises(PlainHttpRefused):
        HolotronClient(ClientConfig(base_url=url, api_key="hk-secret-key"))
    HolotronClient(ClientConfig(base_url=url, api_key="hk-secret-key", plain_http_ok=True)).close()
    HolotronClient(ClientConfig(base_url=url.replace("http:", "https:"))).close()


@pytest.mark.parametrize(("host", "address"), [
    ("134744072", "8.8.8.8"), ("0x8080808", "8.8.8.8"), ("010.0.0.1", "8.0.0.1"),
    ("10.1", "10.0.0.1"), ("2130706433", "127.0.0.1"), ("::ffff:127.0.0.1", "127.0.0.1"),
])
def test_a_host_is_read_as_the_c_library_reads_it(host: str, address: str) -> None:
    from model.plain_http import host_address

    assert str(host_address(host)) == address


def test_the_status_probe_reports_unagreed_plain_http_and_sends_nothing() -> None:
    from app.status import probe

    status = probe(REMOTE, "hk-secret-key", None, timeout=0.5)
    assert status.state == "error" and "unencrypted" in status.message
    assert status.fix is not None and status.fix.setting == "plain_http_ok"
