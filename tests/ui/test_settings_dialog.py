"""The settings dialog, offscreen: load, save, validation, the keyring, Test connection."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from keyring.backends import fail
from pytestqt.qtbot import QtBot

from app import paths
from app.secrets import KeyringStore
from app.settings import Settings, load_settings, save_settings
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home, isolate_home
from tests.support.keyring_backend import DIR_ENV, FileBackend
from tests.support.memory_secrets import MemoryStore
from ui.settings_dialog import STATE_TITLES, SettingsDialog

KEY = "sk-dialog-test-0123456789abcdef"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    home = isolate_home(monkeypatch, tmp_path)
    monkeypatch.setenv(DIR_ENV, str(home.keyring))
    return home


@pytest.fixture
def store(home: Home) -> KeyringStore:
    return KeyringStore(backend=FileBackend())


@pytest.fixture
def server() -> Iterator[FakeVLLM]:
    with FakeVLLM(ScriptedPolicy(["ok"], repeat_last=True)) as running:
        yield running


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def down_endpoint() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


def make_dialog(qtbot: QtBot, store: object, **kwargs: object) -> SettingsDialog:
    dialog = SettingsDialog(secret_store=store, environ={}, **kwargs)  # type: ignore[arg-type]
    qtbot.addWidget(dialog)
    # The keyring lookup runs in the background: wait so tests see its result.
    qtbot.waitUntil(lambda: not dialog.key_label.text().startswith("Looking"), timeout=10_000)
    return dialog


def write_settings(**values: object) -> None:
    save_settings(Settings.model_validate(values))


def test_fields_load_from_settings(qtbot: QtBot, home: Home, store: KeyringStore) -> None:
    write_settings(
        endpoint=down_endpoint(),
        model="holotron",
        convention="pixels",
        monitor="mouse",
        confirm="always",
        max_steps=12,
        max_seconds=300,
        image_format="png",
        jpeg_quality=75,
        retention_days=7,
        stop_hotkey="ctrl+alt+shift+f12",
        log_screenshots=False,
    )
    settings = load_settings()
    dialog = make_dialog(qtbot, store)
    assert dialog.endpoint_edit.text() == settings.endpoint
    assert dialog.model_combo.currentText() == "holotron"
    assert dialog.convention_combo.currentData() == "pixels"
    assert dialog.monitor_combo.currentText() == "mouse"
    assert dialog.confirm_combo.currentData() == "always"
    assert dialog.max_steps_spin.value() == 12
    assert dialog.max_seconds_spin.value() == 300
    assert dialog.format_combo.currentData() == "png"
    assert dialog.quality_spin.value() == 75
    assert dialog.retention_spin.value() == 7
    assert not dialog.log_screenshots_check.isChecked()
    assert dialog.stop_hotkey_edit is not None
    assert dialog.stop_hotkey_edit.text() == settings.stop_hotkey
    assert dialog.api_key_edit.text() == ""
    # Nothing changed: nothing to save.
    assert dialog.changed_values() == {}


def test_save_round_trips_and_stores_the_key_in_the_keyring_only(
    qtbot: QtBot, home: Home, store: KeyringStore, file_keyring: object
) -> None:
    endpoint = down_endpoint()
    dialog = make_dialog(qtbot, store)
    dialog.endpoint_edit.setText(endpoint)
    dialog.model_combo.setEditText("my-model")
    dialog.convention_combo.setCurrentIndex(dialog.convention_combo.findData("norm1"))
    dialog.monitor_combo.setEditText("1280x800+0+0")
    dialog.confirm_combo.setCurrentIndex(dialog.confirm_combo.findData("never"))
    dialog.max_steps_spin.setValue(99)
    dialog.max_seconds_spin.setValue(1200)
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData("png"))
    dialog.quality_spin.setValue(80)
    dialog.retention_spin.setValue(0)
    assert dialog.log_screenshots_check.isChecked()  # the default
    dialog.log_screenshots_check.setChecked(False)
    assert dialog.stop_hotkey_edit is not None
    dialog.stop_hotkey_edit.setText("ctrl+alt+shift+f11")
    dialog.never_touch_edit.setText("keepassxc,  Bitwarden , gnucash")
    dialog.api_key_edit.setText(f"  {KEY}\n")

    with qtbot.waitSignal(dialog.saved, timeout=10_000) as saved:
        dialog.save()
    assert dialog.result() == SettingsDialog.DialogCode.Accepted
    settings = load_settings()
    assert saved.args[0] == settings
    assert settings.endpoint == endpoint
    assert settings.model == "my-model"
    assert settings.convention.value == "norm1"
    assert settings.monitor == "1280x800+0+0"
    assert settings.confirm.value == "never"
    assert settings.max_steps == 99
    assert settings.max_seconds == 1200
    assert settings.image_format == "png"
    assert settings.jpeg_quality == 80
    assert settings.retention_days == 0
    assert settings.log_screenshots is False
    assert settings.stop_hotkey == "ctrl+alt+shift+f11"
    assert settings.never_touch == ("keepassxc", "Bitwarden", "gnucash")
    # The key went to the keyring, for the new endpoint, stripped; never to the file.
    assert store.get(endpoint) == KEY
    assert KEY in FileBackend.path().read_text()
    toml = paths.settings_path().read_text()
    assert KEY not in toml
    assert "api_key" not in toml
    assert dialog.api_key_edit.text() == ""


def test_unchanged_settings_are_not_written(qtbot: QtBot, home: Home, store: KeyringStore) -> None:
    dialog = make_dialog(qtbot, store)
    dialog.max_steps_spin.setValue(31)
    with qtbot.waitSignal(dialog.saved, timeout=10_000):
        dialog.save()
    toml = paths.settings_path().read_text()
    assert "max_steps = 31" in toml
    assert "endpoint" not in toml  # still the default: not pinned in the file
    assert "never_touch" not in toml


def test_a_bad_value_shows_the_error_and_saves_nothing(
    qtbot: QtBot, home: Home, store: KeyringStore
) -> None:
    dialog = make_dialog(qtbot, store)
    dialog.endpoint_edit.setText("ftp://example.com")
    dialog.max_steps_spin.setValue(50)
    dialog.api_key_edit.setText(KEY)
    dialog.save()
    error = dialog.error_label.text()
    assert "endpoint" in error and "http://" in error
    assert dialog.isVisible() or dialog.result() != SettingsDialog.DialogCode.Accepted
    assert not paths.settings_path().exists()
    assert not FileBackend.path().exists()

    dialog.endpoint_edit.setText(Settings().endpoint)
    dialog.max_steps_spin.setValue(0)
    dialog.save()
    assert "max_steps" in dialog.error_label.text()
    assert not paths.settings_path().exists()


def test_a_bad_key_shows_the_error_and_saves_nothing(
    qtbot: QtBot, home: Home, store: KeyringStore
) -> None:
    dialog = make_dialog(qtbot, store)
    dialog.max_steps_spin.setValue(50)
    dialog.api_key_edit.setText("two words")
    dialog.save()
    assert "API key" in dialog.error_label.text()
    assert not paths.settings_path().exists()


def test_no_keyring_is_explained_and_saving_a_key_fails_cleanly(qtbot: QtBot, home: Home) -> None:
    dialog = make_dialog(qtbot, KeyringStore(backend=fail.Keyring()))
    said = dialog.key_label.text()
    assert "No secure system keyring" in said and "fail" in said  # the backend found
    # What to do, said once (issue 24: the paragraph said it twice), in a window's words.
    assert said.count("gnome-keyring") == 1 and "`" not in said, said
    assert "keyrings.alt" not in dialog.key_label.text()
    dialog.max_steps_spin.setValue(50)
    dialog.api_key_edit.setText(KEY)
    dialog.save()
    qtbot.waitUntil(lambda: "keyring" in dialog.error_label.text(), timeout=10_000)
    assert KEY not in dialog.error_label.text()
    assert not paths.settings_path().exists()  # the key failed first: nothing saved


def test_key_info_names_the_backend(qtbot: QtBot, home: Home, store: KeyringStore) -> None:
    dialog = make_dialog(qtbot, store)
    assert "FileBackend" in dialog.key_label.text()
    assert "No key stored" in dialog.key_label.text()
    store.set(Settings().endpoint, KEY)
    second = make_dialog(qtbot, store)
    assert "A key is stored in" in second.key_label.text()
    assert KEY not in second.key_label.text()


def test_forget_key(qtbot: QtBot, home: Home, store: KeyringStore) -> None:
    store.set(Settings().endpoint, KEY)
    dialog = make_dialog(qtbot, store)
    dialog.forget_key_check.setChecked(True)
    with qtbot.waitSignal(dialog.saved, timeout=10_000):
        dialog.save()
    assert store.get(Settings().endpoint) is None


def test_models_are_filled_from_the_server(qtbot: QtBot, home: Home, server: FakeVLLM) -> None:
    write_settings(endpoint=server.base_url)
    dialog = make_dialog(qtbot, MemoryStore())
    qtbot.waitUntil(lambda: dialog.model_combo.findText("holotron") >= 0, timeout=10_000)
    assert dialog.model_combo.currentText() == ""  # filled, not chosen


def connection_text(qtbot: QtBot, dialog: SettingsDialog) -> str:
    with qtbot.waitSignal(dialog.status_checked, timeout=20_000):
        dialog.test_button.click()
        # The click returns at once: the probe runs in the background.
        assert dialog.status_label.text().startswith("Testing")
    return dialog.status_label.text()


def test_connection_ok(qtbot: QtBot, home: Home, server: FakeVLLM) -> None:
    dialog = make_dialog(qtbot, MemoryStore())
    dialog.endpoint_edit.setText(server.base_url)
    text = connection_text(qtbot, dialog)
    assert text.startswith(STATE_TITLES["ok"])
    assert "holotron" in text


def test_connection_down(qtbot: QtBot, home: Home) -> None:
    dialog = make_dialog(qtbot, MemoryStore())
    dialog.endpoint_edit.setText(down_endpoint())
    text = connection_text(qtbot, dialog)
    assert text.startswith("Server down")
    assert "No model server answers" in text and "Fix:" in text


def test_connection_wrong_model(qtbot: QtBot, home: Home, server: FakeVLLM) -> None:
    dialog = make_dialog(qtbot, MemoryStore())
    dialog.endpoint_edit.setText(server.base_url)
    dialog.model_combo.setEditText("not-served")
    text = connection_text(qtbot, dialog)
    assert text.startswith("Wrong model name")
    assert "'not-served'" in text and "'holotron'" in text
    assert dialog.model_combo.findText("holotron") >= 0


def test_connection_image_limit(qtbot: QtBot, home: Home) -> None:
    with FakeVLLM(ScriptedPolicy(["ok"], repeat_last=True), image_limit=1) as server:
        dialog = make_dialog(qtbot, MemoryStore())
        dialog.endpoint_edit.setText(server.base_url)
        text = connection_text(qtbot, dialog)
    assert text.startswith("Image limit too low")
    assert "--limit-mm-per-prompt" in text


def test_connection_uses_the_typed_key(qtbot: QtBot, home: Home) -> None:
    with FakeVLLM(ScriptedPolicy(["ok"], repeat_last=True), api_key=KEY) as server:
        dialog = make_dialog(qtbot, MemoryStore())
        dialog.endpoint_edit.setText(server.base_url)
        assert connection_text(qtbot, dialog).startswith("API key")
        dialog.api_key_edit.setText(KEY)
        assert connection_text(qtbot, dialog).startswith(STATE_TITLES["ok"])


def test_connection_with_a_bad_url_says_so(qtbot: QtBot, home: Home) -> None:
    dialog = make_dialog(qtbot, MemoryStore())
    dialog.endpoint_edit.setText("localhost:8000")
    dialog.test_button.click()
    assert "endpoint URL" in dialog.status_label.text()


def test_closing_during_a_test_drops_the_result_safely(qtbot: QtBot, home: Home) -> None:
    with FakeVLLM(ScriptedPolicy(["ok"], repeat_last=True)) as server:
        server.delay = 0.5  # the image probe answers late
        dialog = SettingsDialog(secret_store=MemoryStore(), environ={})
        dialog.endpoint_edit.setText(server.base_url)
        dialog.test_button.click()
        server.wait_for_request(timeout=10)
        dialog.reject()
        dialog.deleteLater()
        qtbot.wait(1000)  # the probe finishes after the dialog is gone: nothing may crash
