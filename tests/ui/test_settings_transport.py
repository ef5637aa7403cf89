"""The connection form: consent once per endpoint before plain http to another machine, and a
pinned TLS fingerprint for an https server with a self-signed certificate."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.settings import load_settings
from model.tls import ServerCertificate, make_self_signed
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home
from tests.support.settings_rig import keyring_home, make_dialog, save
from ui.settings_dialog import SettingsDialog

REMOTE = "http://10.1.2.3:8000/v1"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return keyring_home(monkeypatch, tmp_path)


def test_the_consent_shows_for_plain_http_to_another_machine_only(
    qtbot: QtBot, home: Home
) -> None:
    dialog = make_dialog(qtbot)
    check = dialog.plain_http_check
    assert check.isHidden()  # the default endpoint is this machine
    dialog.endpoint_edit.setText(REMOTE)
    assert not check.isHidden() and not check.isChecked()
    dialog.endpoint_edit.setText("https://10.1.2.3:8000/v1")
    assert check.isHidden()
    dialog.endpoint_edit.setText("http://localhost:8001/v1")
    assert check.isHidden()


def test_ticking_it_agrees_for_that_endpoint_and_unticking_takes_it_back(
    qtbot: QtBot, home: Home
) -> None:
    dialog = make_dialog(qtbot)
    dialog.endpoint_edit.setText(REMOTE)
    save(qtbot, dialog)
    assert load_settings().plain_http_ok == ()  # not ticked: no consent

    dialog = make_dialog(qtbot)
    assert not dialog.plain_http_check.isHidden()
    dialog.plain_http_check.setChecked(True)
    save(qtbot, dialog)
    assert load_settings().plain_http_ok == (REMOTE,)

    dialog = make_dialog(qtbot)
    assert dialog.plain_http_check.isChecked()  # remembered for this endpoint
    dialog.plain_http_check.setChecked(False)
    save(qtbot, dialog)
    assert load_settings().plain_http_ok == ()


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[FakeVLLM, ServerCertificate]]:
    pair = make_self_signed(tmp_path / "tls")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pair.certfile, pair.keyfile)
    with FakeVLLM(ScriptedPolicy(["ok"], repeat_last=True), ssl_context=context) as server:
        yield server, pair


def connection_text(qtbot: QtBot, dialog: SettingsDialog) -> str:
    with qtbot.waitSignal(dialog.status_checked, timeout=20_000):
        dialog.test_connection()
    return dialog.status_label.text()


def test_test_connection_pins_the_fingerprint_typed(
    qtbot: QtBot, home: Home, tls_server: tuple[FakeVLLM, ServerCertificate]
) -> None:
    server, pair = tls_server
    dialog = make_dialog(qtbot)
    dialog.endpoint_edit.setText(server.base_url)
    assert dialog.plain_http_check.isHidden()  # https: nothing to agree to
    untrusted = connection_text(qtbot, dialog)
    assert "does not trust" in untrusted and "TLS fingerprint" in untrusted
    dialog.tls_fingerprint_edit.setText(":".join(["00"] * 32))
    wrong = connection_text(qtbot, dialog)
    assert "not the pinned" in wrong and "Settings > Model server > TLS fingerprint" in wrong
    dialog.tls_fingerprint_edit.setText(pair.fingerprint)
    assert connection_text(qtbot, dialog).startswith("OK")
    save(qtbot, dialog)
    assert load_settings().tls_fingerprint == pair.fingerprint
