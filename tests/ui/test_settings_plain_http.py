"""The connection form asks, once per endpoint, before plain http to another machine."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.secrets import KeyringStore
from app.settings import load_settings
from tests.support.home import Home, isolate_home
from tests.support.keyring_backend import DIR_ENV, FileBackend
from ui.settings_dialog import SettingsDialog

REMOTE = "http://10.1.2.3:8000/v1"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    home = isolate_home(monkeypatch, tmp_path)
    monkeypatch.setenv(DIR_ENV, str(home.keyring))
    return home


def make_dialog(qtbot: QtBot) -> SettingsDialog:
    dialog = SettingsDialog(secret_store=KeyringStore(backend=FileBackend()), environ={})
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: not dialog.key_label.text().startswith("Looking"), timeout=10_000)
    return dialog


def save(qtbot: QtBot, dialog: SettingsDialog) -> None:
    with qtbot.waitSignal(dialog.saved, timeout=10_000):
        dialog.save()


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
