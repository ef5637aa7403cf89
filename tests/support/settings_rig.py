"""The Settings dialog over an isolated home and the tests' file keyring, ready to use."""

from __future__ import annotations

from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.secrets import KeyringStore
from tests.support.home import Home, isolate_home
from tests.support.keyring_backend import DIR_ENV, FileBackend, with_file_keyring
from ui.settings_dialog import SettingsDialog


def keyring_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Home:
    """An isolated home whose keyring is the tests' file backend: the dialog's and this
    process's (``KeyringStore()``, which keeps the key of the approved safety settings), as a
    desktop has one keyring."""
    home = isolate_home(monkeypatch, tmp_path)
    monkeypatch.setenv(DIR_ENV, str(home.keyring))
    with_file_keyring(monkeypatch, home.keyring)
    return home


def make_dialog(qtbot: QtBot, **options: Any) -> SettingsDialog:
    """The dialog once it has looked up the key (``options`` go to SettingsDialog)."""
    dialog = SettingsDialog(secret_store=KeyringStore(backend=FileBackend()), environ={},
                            **options)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: not dialog.key_label.text().startswith("Looking"), timeout=10_000)
    return dialog


def save(qtbot: QtBot, dialog: SettingsDialog) -> None:
    with qtbot.waitSignal(dialog.saved, timeout=10_000):
        dialog.save()
