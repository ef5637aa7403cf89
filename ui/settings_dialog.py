"""The settings dialog: every setting a person changes often, validated by ``app.settings``.

What it edits: the endpoint (with, for plain http to another machine, the person's consent for
it, and for https the TLS fingerprint to pin), the API key (into the keyring, never the TOML
file; the dialog says
which keyring backend holds it and what to do when there is none), the model name (filled from
the server's ``/v1/models``), the coordinate convention, the monitor, the confirmation mode, the
run limits, the stop hotkey, the screenshot format, the log retention and whether the log keeps
full screenshots, and "Start at login" (the XDG autostart entry of :mod:`app.autostart`, not a
setting in the file). Settings it does not show keep their values in the file.

The model server's part is on the left, the runs' and the desktop's on the right, so the
dialog fits a 1366x768 screen with the keyring's explanation and a long Test connection answer
(which scrolls past :data:`STATUS_LINES` lines); it grows for wrapped text up to the screen's
height (ui/fit.py).

Save validates everything first (:func:`app.settings.validate_values`; an error names the key
and nothing is written), then stores the key and writes the file on a worker thread. Only
values changed in the dialog are written, so a value coming from a ``HOLODESK_*`` variable is
not copied into the file. "Test connection" runs :func:`app.status.probe` in the background.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.autostart import Autostart, default_autostart
from app.secrets import (
    ENV_API_KEY,
    UNAVAILABLE_HELP,
    InvalidApiKey,
    KeyLookup,
    KeyringStore,
    SecretStore,
    delete_api_key,
    lookup_api_key,
    store_api_key,
    validate_api_key,
)
from app.settings import (
    Settings,
    SettingsError,
    load_settings,
    normalize_endpoint,
    set_values,
    validate_values,
)
from app.status import ServerStatus, probe
from control.hotkeys import validate_stop_hotkey
from control.policy import ConfirmMode
from model.coords import Convention
from model.plain_http import needs_consent
from model.problem import Fix
from model.tls import normalize_fingerprint
from ui.colours import Tone, text_style
from ui.fit import KeepFitting, TextPane, fit_placeholder
from ui.hotkey_edit import HotkeyEdit
from ui.problem_view import plain_words, view
from ui.workers import Background

__all__ = ["STATE_TITLES", "STATUS_LINES", "SettingsDialog"]

_log = logging.getLogger(__name__)

#: The headline shown above a probe's message, per state.
STATE_TITLES: dict[str, str] = {
    "ok": "OK: the server is ready",
    "down": "Server down",
    "loading": "Model loading",
    "wrong_model": "Wrong model name",
    "image_limit": "Image limit too low",
    "context_short": "Context too short",
    "auth": "API key refused or missing",
    "error": "Error",
}

#: How many lines of Test connection's answer show before it scrolls.
STATUS_LINES = 10

_MONITORS = (
    ("1", "the first monitor"),
    ("2", "the second monitor"),
    ("0", "all monitors together"),
    ("mouse", "the monitor under the mouse"),
    ("primary", "the primary monitor"),
)


class SettingsDialog(QDialog):
    """Edit and save the settings (see the module doc).

    ``settings_path`` and ``environ`` default to the user's file and ``os.environ``;
    ``secret_store`` to the system keyring. ``monitors`` adds ``(value, description)`` choices
    to the monitor box (e.g. from ``control.capture``). ``probe_fn`` is :func:`app.status.probe`
    or a stand-in with its signature. ``autostart`` is the login entry "Start at login" writes
    (default: this user's, :func:`app.autostart.default_autostart`; none off Linux, and then the
    option is not shown). ``server_only`` shows just the model server's part (the first-run
    guide's Connect to a server elsewhere); the other settings keep their values.
    """

    saved = Signal(object)  # the Settings in effect after Save
    status_checked = Signal(object)  # the ServerStatus of Test connection
    models_loaded = Signal(list)  # the served model names, once fetched
    key_info_loaded = Signal()  # the keyring backend and key presence are shown

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        settings_path: Path | None = None,
        environ: Mapping[str, str] | None = None,
        secret_store: SecretStore | None = None,
        monitors: Sequence[tuple[str, str]] = (),
        probe_fn: Callable[..., ServerStatus] = probe,
        autostart: Autostart | None = None,
        server_only: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("holodesk — connect to a model server" if server_only
                            else "holodesk — settings")
        self._server_only = server_only
        self._path = settings_path
        self._environ = environ
        self._store: SecretStore = secret_store if secret_store is not None else KeyringStore()
        self._probe = probe_fn
        self._autostart = autostart if autostart is not None else default_autostart()
        self._tasks = Background(self)
        self._key_lookup: KeyLookup | None = None
        self._saving = False

        load_error = ""
        try:
            self._loaded = load_settings(settings_path, environ, store=self._store)
        except SettingsError as exc:
            # Show the dialog anyway: it is where the person fixes things. Save reports the
            # file's problem again if it is still there.
            load_error = str(exc)
            self._loaded = Settings()

        self._build(monitors)
        # Texts arrive after the first layout (the keyring's, Test connection's): the dialog
        # grows for them, up to the screen's height (a window does not grow by itself for the
        # lines its wrapped labels take).
        self._fitting = KeepFitting(self)  # kept: its Python side holds what it watches
        self._fill(self._loaded)
        if load_error:
            self._show_error(load_error)
        self._look_up_key()  # then fetches the served models with the key found

    # ------------------------------------------------------------------ layout

    def _build(self, monitors: Sequence[tuple[str, str]]) -> None:
        self.endpoint_edit = QLineEdit()
        self.endpoint_edit.setPlaceholderText("http://127.0.0.1:8000/v1")
        fit_placeholder(self.endpoint_edit)
        # Consent, once per endpoint, to send screenshots and the key unencrypted to another
        # machine (model.plain_http); shown only for such an endpoint.
        self.plain_http_check = QCheckBox("Send unencrypted (plain http) to this server")
        self.plain_http_check.setObjectName("plain_http_ok")
        self.plain_http_check.setToolTip(
            "This endpoint is another machine reached over plain http: your screenshots and "
            "the API key cross the network unencrypted, readable by anyone on the way. Tick "
            "only on a network you trust; better, serve with TLS (holodesk serve --tls) and "
            "use its https:// address."
        )
        self.endpoint_edit.textChanged.connect(self._show_plain_http)
        self.tls_fingerprint_edit = QLineEdit()
        self.tls_fingerprint_edit.setPlaceholderText("empty: trust the system's CAs")
        fit_placeholder(self.tls_fingerprint_edit)
        self.tls_fingerprint_edit.setToolTip(
            "For an https server with a self-signed certificate: the SHA-256 fingerprint "
            "`holodesk serve --tls` prints on the server. Only that certificate is accepted."
        )
        self.api_key_edit = QLineEdit()
        self.api_key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key_edit.setPlaceholderText("leave empty to keep the stored key")
        fit_placeholder(self.api_key_edit)
        self.forget_key_check = QCheckBox("Forget the stored key")
        self.key_label = QLabel("Looking for the keyring…")
        self.key_label.setTextFormat(Qt.TextFormat.PlainText)  # keyring errors are quoted
        self.key_label.setObjectName("key_info")
        self.key_label.setWordWrap(True)
        self.model_combo = QComboBox()
        self.model_combo.setEditable(True)
        self.model_combo.setToolTip("Empty: use the model the server serves")
        line = self.model_combo.lineEdit()
        if line is not None:
            line.setPlaceholderText("(from the server)")
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(self.test_connection)
        # Plain text (the server's words); a long answer (a proxy's error page, vLLM's
        # JSON) scrolls instead of stretching the dialog past the screen.
        self.status_label = TextPane(STATUS_LINES)
        self.status_label.setObjectName("connection_status")

        server = QGroupBox("Model server")
        form = QFormLayout(server)
        form.addRow("Endpoint URL", self.endpoint_edit)
        form.addRow("", self.plain_http_check)
        form.addRow("TLS fingerprint", self.tls_fingerprint_edit)
        key_row = QHBoxLayout()
        key_row.addWidget(self.api_key_edit, 1)
        key_row.addWidget(self.forget_key_check)
        form.addRow("API key", key_row)
        form.addRow("", self.key_label)
        form.addRow("Model", self.model_combo)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addStretch(1)
        form.addRow("", test_row)
        form.addRow("", self.status_label)

        self.convention_combo = QComboBox()
        for conv in Convention:
            self.convention_combo.addItem(conv.value, conv.value)
        self.monitor_combo = QComboBox()
        self.monitor_combo.setEditable(True)
        for value, description in (*_MONITORS, *monitors):
            self.monitor_combo.addItem(value, value)
            self.monitor_combo.setItemData(
                self.monitor_combo.count() - 1, description, Qt.ItemDataRole.ToolTipRole
            )
        self.monitor_combo.setToolTip(
            "a monitor index (1 = first, 0 = all), mouse, primary, or a region WxH+X+Y"
        )
        self.confirm_combo = QComboBox()
        for mode in ConfirmMode:
            self.confirm_combo.addItem(mode.value, mode.value)
        # Wide ranges: app.settings holds the real bounds and names them in its errors.
        self.max_steps_spin = QSpinBox()
        self.max_steps_spin.setRange(0, 1_000_000)
        self.max_seconds_spin = QDoubleSpinBox()
        self.max_seconds_spin.setRange(0, 10_000_000)
        self.max_seconds_spin.setDecimals(0)
        self.max_seconds_spin.setSuffix(" s")
        self.stop_hotkey_edit: HotkeyEdit | None = None
        if "stop_hotkey" in Settings.model_fields:
            self.stop_hotkey_edit = HotkeyEdit(validate_stop_hotkey, optional=False)
            self.stop_hotkey_edit.setPlaceholderText("click here, then press the keys")
            self.stop_hotkey_edit.setToolTip(
                "Click here and press the keys that stop a run at once, e.g. Ctrl+Alt+Shift+Esc; "
                "holodesk never presses them itself"
            )
        self.never_touch_edit = QLineEdit()
        self.never_touch_edit.setToolTip(
            "applications holodesk never acts in and paints out of its screenshots: window "
            "class or program names, separated by commas (e.g. keepassxc, bitwarden)"
        )
        self.format_combo = QComboBox()
        self.format_combo.addItem("jpeg", "jpeg")
        self.format_combo.addItem("png", "png")
        self.quality_spin = QSpinBox()
        self.quality_spin.setRange(0, 100)
        self.retention_spin = QSpinBox()
        self.retention_spin.setRange(0, 1_000_000)
        self.retention_spin.setSuffix(" days")
        self.retention_spin.setSpecialValueText("keep forever")
        self.log_screenshots_check = QCheckBox("Keep full screenshots")
        self.log_screenshots_check.setToolTip(
            "off: the action log keeps a small thumbnail and the text of each step only"
        )

        agent = QGroupBox("Runs")
        form2 = QFormLayout(agent)
        form2.addRow("Coordinates", self.convention_combo)
        form2.addRow("Monitor", self.monitor_combo)
        form2.addRow("Confirm actions", self.confirm_combo)
        form2.addRow("Max steps", self.max_steps_spin)
        form2.addRow("Max time", self.max_seconds_spin)
        if self.stop_hotkey_edit is not None:
            form2.addRow("Stop hotkey", self.stop_hotkey_edit)
        form2.addRow("Never act in", self.never_touch_edit)
        form2.addRow("Screenshot format", self.format_combo)
        form2.addRow("JPEG quality", self.quality_spin)
        form2.addRow("Keep runs for", self.retention_spin)
        form2.addRow("Action log", self.log_screenshots_check)

        self.error_label = QLabel("")
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setObjectName("error")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(text_style(Tone.ERROR))
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)

        self.autostart_check = QCheckBox("Start holodesk at login")
        self.autostart_check.setToolTip(
            "adds holodesk to your desktop's startup applications "
            "(~/.config/autostart/holodesk.desktop)"
        )
        desktop = QGroupBox("Desktop")
        form3 = QFormLayout(desktop)
        form3.addRow("", self.autostart_check)

        layout = QVBoxLayout(self)
        columns = QHBoxLayout()
        columns.addWidget(server, 1, Qt.AlignmentFlag.AlignTop)
        right = QVBoxLayout()
        right.addWidget(agent)
        # In the layout even when hidden: it owns the check box _fill sets.
        right.addWidget(desktop)
        right.addStretch(1)
        columns.addLayout(right)
        layout.addLayout(columns, 1)
        desktop.setVisible(self._autostart is not None and not self._server_only)
        if self._server_only:
            agent.hide()
            self.endpoint_edit.setFocus()
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)

    def _fill(self, settings: Settings) -> None:
        self.endpoint_edit.setText(settings.endpoint)
        self._show_plain_http()
        self.tls_fingerprint_edit.setText(settings.tls_fingerprint or "")
        self.model_combo.setEditText(settings.model or "")
        _select(self.convention_combo, settings.convention.value)
        _select(self.monitor_combo, settings.monitor, editable=True)
        _select(self.confirm_combo, settings.confirm.value)
        self.max_steps_spin.setValue(settings.max_steps)
        self.max_seconds_spin.setValue(settings.max_seconds)
        if self.stop_hotkey_edit is not None:
            self.stop_hotkey_edit.setText(str(getattr(settings, "stop_hotkey", "")))
        self.never_touch_edit.setText(", ".join(settings.never_touch))
        _select(self.format_combo, settings.image_format)
        self.quality_spin.setValue(settings.jpeg_quality)
        self.retention_spin.setValue(int(getattr(settings, "retention_days", 0)))
        self.log_screenshots_check.setChecked(bool(getattr(settings, "log_screenshots", True)))
        self._autostart_was = self._autostart is not None and self._autostart.enabled()
        self.autostart_check.setChecked(self._autostart_was)

    def _endpoint_typed(self) -> str | None:
        try:
            return normalize_endpoint(self.endpoint_edit.text())
        except ValueError:
            return None

    @Slot()
    def _show_plain_http(self) -> None:
        endpoint = self._endpoint_typed()
        asks = endpoint is not None and needs_consent(endpoint)
        self.plain_http_check.setVisible(asks)
        self.plain_http_check.setChecked(asks and endpoint in self._loaded.plain_http_ok)

    def _plain_http_ok(self) -> list[str]:
        agreed = list(self._loaded.plain_http_ok)
        endpoint = self._endpoint_typed()
        if endpoint is None or not needs_consent(endpoint):
            return agreed
        if self.plain_http_check.isChecked() and endpoint not in agreed:
            agreed.append(endpoint)
        elif not self.plain_http_check.isChecked() and endpoint in agreed:
            agreed.remove(endpoint)
        return agreed

    @property
    def settings(self) -> Settings:
        """The settings in effect: as opened, or as saved once :attr:`saved` was emitted."""
        return self._loaded

    # ------------------------------------------------------------------ values

    def values(self) -> dict[str, Any]:
        """What the dialog's fields say, as raw setting values (not validated)."""
        values: dict[str, Any] = {
            "endpoint": self.endpoint_edit.text().strip(),
            "plain_http_ok": self._plain_http_ok(),
            "tls_fingerprint": self.tls_fingerprint_edit.text().strip() or None,
            "model": self.model_combo.currentText().strip() or None,
            "convention": self.convention_combo.currentData(),
            "monitor": self.monitor_combo.currentText().strip(),
            "confirm": self.confirm_combo.currentData(),
            "max_steps": self.max_steps_spin.value(),
            "max_seconds": self.max_seconds_spin.value(),
            "image_format": self.format_combo.currentData(),
            "jpeg_quality": self.quality_spin.value(),
            "retention_days": self.retention_spin.value(),
            "never_touch": [n.strip() for n in self.never_touch_edit.text().split(",")
                            if n.strip()],
            "log_screenshots": self.log_screenshots_check.isChecked(),
        }
        if self.stop_hotkey_edit is not None:
            values["stop_hotkey"] = self.stop_hotkey_edit.text().strip()
        return {name: value for name, value in values.items() if name in Settings.model_fields}

    def changed_values(self) -> dict[str, Any]:
        """The fields whose value differs from the settings the dialog opened with."""
        loaded = self._loaded.model_dump(mode="json")
        return {name: value for name, value in self.values().items() if loaded[name] != value}

    # ------------------------------------------------------------------ save

    @Slot()
    def save(self) -> None:
        """Validate, then store the key and write the file in the background; close when done.

        On an error the dialog stays open with the message, and nothing is saved.
        """
        if self._saving:
            return
        self._show_error("")
        changed = self.changed_values()
        try:
            settings = validate_values(changed, path=self._path)
        except SettingsError as exc:
            self._show_error(str(exc))
            return
        key_text = self.api_key_edit.text()
        forget = self.forget_key_check.isChecked()
        key: str | None = None
        if key_text.strip() and not forget:
            try:
                key = validate_api_key(key_text)
            except InvalidApiKey as exc:
                self._show_error(f"API key: {exc}")
                return
        endpoint = settings.endpoint
        store, path, environ = self._store, self._path, self._environ
        start_at_login = self.autostart_check.isChecked()
        autostart = self._autostart if start_at_login != self._autostart_was else None

        def work() -> Settings:
            # The key first: when the keyring fails, the settings stay as they were too.
            if key is not None:
                store_api_key(endpoint, key, store)
            elif forget:
                delete_api_key(endpoint, store)
            saved = set_values(changed, path=path, environ=environ, store=store)
            if autostart is not None:
                autostart.set(start_at_login)
            return saved

        self._set_saving(True)
        self._tasks.run(work, self._saved, self._save_failed)

    def _saved(self, settings: Settings) -> None:
        self._set_saving(False)
        self._autostart_was = self.autostart_check.isChecked()
        self.api_key_edit.clear()
        self._loaded = settings
        self.saved.emit(settings)
        self.accept()

    def _save_failed(self, error: BaseException) -> None:
        self._set_saving(False)
        _log.warning("saving settings failed: %s", error)
        self._show_error(str(error))

    def _set_saving(self, saving: bool) -> None:
        self._saving = saving
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        if save is not None:
            save.setEnabled(not saving)

    # ------------------------------------------------------------------ key

    def _look_up_key(self) -> None:
        endpoint = self._loaded.endpoint
        store, environ = self._store, self._environ

        def work() -> KeyLookup:
            return lookup_api_key(endpoint, store, environ)

        self._tasks.run(work, self._key_found, self._key_failed)

    def _key_found(self, found: KeyLookup) -> None:
        self._key_lookup = found
        backend = found.backend
        if found.source == "env":
            text = (
                f"The key comes from ${ENV_API_KEY} in the environment (not saved); it wins "
                f"over the keyring ({backend})."
            )
        elif backend.startswith("unavailable") or found.problem:
            text = _no_keyring(found.problem or backend)
        elif found.source == "keyring":
            text = f"A key is stored in {backend}. Leave the field empty to keep it."
        else:
            text = (
                f"No key stored; a key typed here goes to {backend}. vLLM on this machine "
                "usually needs none."
            )
        self._show_key_info(text)
        self._fetch_models(found.key)

    def _key_failed(self, error: BaseException) -> None:
        self._show_key_info(_no_keyring(f"the keyring cannot be read: {error}"))
        self._fetch_models(None)

    def _show_key_info(self, text: str) -> None:
        self.key_label.setText(text)
        self.key_info_loaded.emit()

    def _key_for_probe(self) -> str | None:
        typed = self.api_key_edit.text().strip()
        if typed:
            return typed
        if self.forget_key_check.isChecked():
            return None
        return self._key_lookup.key if self._key_lookup is not None else None

    # ------------------------------------------------------------------ server

    @Slot()
    def test_connection(self) -> None:
        """Probe the server the fields describe, in the background; the result shows below."""
        try:
            endpoint = normalize_endpoint(self.endpoint_edit.text())
        except ValueError as exc:
            self._show_status(
                ServerStatus(
                    "error",
                    f"The endpoint URL {exc}.",
                    Fix("Enter the server's base URL, such as http://127.0.0.1:8000/v1.",
                        setting="endpoint"),
                )
            )
            return
        key = self._key_for_probe()
        model = self.model_combo.currentText().strip() or None
        probe_fn = self._probe
        typed_pin = self.tls_fingerprint_edit.text().strip()
        try:
            pin: dict[str, str | bool] = (
                {"tls_fingerprint": normalize_fingerprint(typed_pin)} if typed_pin else {})
        except ValueError as exc:
            self._show_status(ServerStatus(
                "error", f"The TLS fingerprint {exc}.",
                Fix("Copy the fingerprint `holodesk serve --tls` printed on the server.",
                    setting="tls_fingerprint"),
            ))
            return
        self.test_button.setEnabled(False)
        self.status_label.setStyleSheet("")
        self.status_label.setText(f"Testing {endpoint}…")

        def done(status: ServerStatus) -> None:
            self.test_button.setEnabled(True)
            self._show_status(status)
            self._add_models(status.models)
            self.status_checked.emit(status)

        def failed(error: BaseException) -> None:
            self.test_button.setEnabled(True)
            self._show_status(ServerStatus("error", f"The test failed: {error}"))

        # Ticked here by the person: their consent for this test, as it will be for runs.
        if self.plain_http_check.isChecked() and needs_consent(endpoint):
            pin["plain_http_ok"] = True
        self._tasks.run(lambda: probe_fn(endpoint, key, model, **pin), done, failed)

    def _fetch_models(self, key: str | None) -> None:
        endpoint = self._loaded.endpoint
        probe_fn = self._probe
        loaded_pin = self._loaded.tls_fingerprint
        pin: dict[str, str | bool] = {"tls_fingerprint": loaded_pin} if loaded_pin else {}
        if endpoint in self._loaded.plain_http_ok:
            pin["plain_http_ok"] = True
        # No model name: a wrong one must not hide the list of right ones.
        self._tasks.run(
            lambda: probe_fn(endpoint, key, None, check_images=False, **pin),
            lambda status: self._add_models(status.models),
            lambda error: _log.info("could not list the served models: %s", error),
        )

    def _add_models(self, names: Sequence[str]) -> None:
        text = self.model_combo.currentText()
        for name in names:
            if self.model_combo.findText(name) < 0:
                self.model_combo.addItem(name)
        self.model_combo.setEditText(text)
        self.models_loaded.emit(list(names))

    def _show_status(self, status: ServerStatus) -> None:
        title = STATE_TITLES.get(status.state, status.state)
        self.status_label.setStyleSheet(text_style(Tone.OK if status.ok else Tone.ERROR))
        self.status_label.setText(f"{title}. {view(status.problem).text()}")

    def _show_error(self, text: str) -> None:
        self.error_label.setText(text)

    # ------------------------------------------------------------------ lifetime

    def done(self, result: int) -> None:
        """Close; background results that arrive later are dropped."""
        self._tasks.forget_pending()
        super().done(result)


def _no_keyring(problem: str) -> str:
    """Where no secure keyring can keep the key: the problem with what to do, said once (the
    keyring's own problem holds app.secrets' help already), in a window's words."""
    if UNAVAILABLE_HELP not in problem:
        problem = f"No secure keyring ({problem}). {UNAVAILABLE_HELP}"
    return plain_words(problem)


def _select(combo: QComboBox, value: str, *, editable: bool = False) -> None:
    index = combo.findData(value)
    if index >= 0:
        combo.setCurrentIndex(index)
    elif editable:
        combo.setEditText(value)
