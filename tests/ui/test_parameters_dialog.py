"""The form that asks for an automation's missing values, and the app's automation runs with
parameters: asked when the person started it, refused (never run empty) from a hotkey, secrets
from the keyring or a password field, masked in what the app shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from app.automations import load_automations
from app.parameter_values import load_secret, store_secret
from app.parameters import Parameter
from tests.support.app_rig import MakeApp
from tests.support.automations_made import rename, sign_in
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home, isolate_home
from tests.support.keyring_backend import DIR_ENV, FileBackend
from ui.automations_dialog import AutomationsDialog
from ui.parameters_dialog import ParametersDialog

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}
SECRET = "velvet-otter-lantern"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def keyring_file(home: Home, monkeypatch: pytest.MonkeyPatch) -> Iterator[FileBackend]:
    from app.secrets import use_keyring_backend

    monkeypatch.setenv(DIR_ENV, str(home.keyring))
    backend = FileBackend()
    before = use_keyring_backend(backend)
    yield backend
    use_keyring_backend(before)


def test_the_form_asks_for_the_missing_values_and_checks_them(qtbot: QtBot) -> None:
    dialog = ParametersDialog(sign_in().changed(
        task="sign in as {user} with {password}",
        parameters={"password": {"secret": True}, "user": {"description": "who"}}),
        ["user", "password"])
    qtbot.addWidget(dialog)
    dialog.show()
    assert list(dialog.fields) == ["user", "password"]
    assert dialog.fields["password"].echoMode() is QLineEdit.EchoMode.Password
    assert dialog.fields["user"].echoMode() is QLineEdit.EchoMode.Normal
    assert dialog.fields["user"].placeholderText() == "who"
    assert list(dialog.keep) == ["password"] and not dialog.keep["password"].isChecked()
    dialog.run_button.click()
    assert dialog.isVisible() and "is empty" in dialog.message.text()
    dialog.fields["user"].setText("ann")
    dialog.fields["password"].setText("abc")
    dialog.run_button.click()
    assert dialog.isVisible() and "shorter than 6" in dialog.message.text()
    dialog.fields["password"].setText(SECRET)
    dialog.run_button.click()
    assert not dialog.isVisible()
    assert dialog.values() == {"user": "ann", "password": SECRET}


def test_the_tray_asks_for_a_missing_value_and_runs_the_filled_task(
        qtbot: QtBot, make_app: MakeApp, home: Home) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig = make_app(server)
        app.set_automations([rename()])
        assert app.run_automation("rename", "tray")
        dialog = app.values_asker.dialog
        assert dialog is not None and dialog.isVisible()
        assert list(dialog.fields) == ["new_name"]  # the default fills file
        assert not app.controller.running  # nothing starts before the values are there
        dialog.fields["new_name"].setText("final.pdf")
        dialog.run_button.click()
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=20_000)
        assert "rename report.pdf to final.pdf" in server.requests[0].text
    assert rig.started() == ["rename report.pdf to final.pdf"]


def test_a_hotkey_refuses_a_missing_value_and_runs_nothing(
        qtbot: QtBot, make_app: MakeApp, home: Home) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, _rig = make_app(server)
        app.set_automations([rename()])
        assert not app.run_automation("rename", "hotkey")
        assert app.values_asker.dialog is None
        assert not app.controller.running and server.requests == []
    said = app.teller.told[-1]
    assert "needs a value for new_name" in said and "hotkey uses only saved defaults" in said


def test_a_secret_from_the_keyring_runs_from_a_hotkey_masked(
        qtbot: QtBot, make_app: MakeApp, keyring_file: FileBackend) -> None:
    automation = sign_in()
    store_secret(automation, "password", SECRET)
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig = make_app(server)
        app.set_automations([automation])
        assert app.run_automation("sign in", "hotkey")
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=20_000)
        assert SECRET in server.requests[0].text  # the model is told
    assert rig.started() == ["sign in with ***"]  # what the app shows: masked
    assert SECRET not in app.task_window.step_label.text()


def test_a_secret_typed_in_the_form_is_kept_only_when_asked(
        qtbot: QtBot, make_app: MakeApp, keyring_file: FileBackend) -> None:
    automation = sign_in()
    with FakeVLLM(ScriptedPolicy([ANSWER, ANSWER])) as server:
        app, rig = make_app(server)
        app.set_automations([automation])
        for keep, runs in ((False, 1), (True, 2)):
            assert app.run_automation("sign in", "tray")
            qtbot.waitUntil(lambda: app.values_asker.dialog is not None, timeout=10_000)
            dialog = app.values_asker.dialog
            assert dialog is not None
            dialog.fields["password"].setText(SECRET)
            dialog.keep["password"].setChecked(keep)
            dialog.run_button.click()
            qtbot.waitUntil(lambda runs=runs: rig.finished() == runs
                            and not app.controller.running, timeout=20_000)
            if not keep:
                assert load_secret(automation, "password") is None
    qtbot.waitUntil(lambda: load_secret(automation, "password") == SECRET, timeout=10_000)
    assert rig.started() == ["sign in with ***", "sign in with ***"]


# -- declaring them in the Automations window --------------------------------------------------


def _set_cell(dialog: AutomationsDialog, row: int, column: int, text: str) -> None:
    item = dialog.params_table.item(row, column)
    assert item is not None
    item.setText(text)


def _tick_secret(dialog: AutomationsDialog, row: int) -> None:
    item = dialog.params_table.item(row, 2)
    assert item is not None
    item.setCheckState(Qt.CheckState.Checked)


def test_the_window_declares_the_task_s_placeholders(qtbot: QtBot, home: Home) -> None:
    path = home.config / "holodesk" / "automations.toml"
    dialog = AutomationsDialog(path=path)
    qtbot.addWidget(dialog)
    dialog.name_edit.setText("sign in")
    dialog.task_edit.setPlainText("sign in as {user} with {password}")
    assert list(dialog.form_parameters()) == ["user", "password"]
    _set_cell(dialog, 0, 1, "ann")
    _set_cell(dialog, 0, 3, "who signs in")
    _set_cell(dialog, 1, 1, "typed by mistake")
    _tick_secret(dialog, 1)
    default = dialog.params_table.item(1, 1)
    # A secret has no default: emptied, and the cell cannot be edited.
    assert default is not None and default.text() == ""
    assert not default.flags() & Qt.ItemFlag.ItemIsEditable
    # Deleting a placeholder drops its row; typing it again brings the row back as it was.
    dialog.task_edit.setPlainText("sign in with {password}")
    assert list(dialog.form_parameters()) == ["password"]
    dialog.task_edit.setPlainText("sign in as {user} with {password}")
    assert dialog.form_parameters()["user"] == Parameter(default="ann",
                                                         description="who signs in")
    with qtbot.waitSignal(dialog.saved, timeout=20_000):
        dialog.save_button.click()
    saved = load_automations(path)[0]
    assert saved.parameters == {"user": Parameter(default="ann", description="who signs in"),
                                "password": Parameter(secret=True)}
    text = path.read_text(encoding="utf-8")
    assert "typed by mistake" not in text and "secret = true" in text
    # Shown again as saved.
    dialog.new()
    dialog.select("sign in")
    assert dialog.form_parameters() == saved.parameters
    assert not dialog.is_dirty
    _set_cell(dialog, 0, 1, "bob")
    assert dialog.is_dirty


def test_the_window_names_a_stray_brace(qtbot: QtBot, home: Home) -> None:
    dialog = AutomationsDialog(path=home.config / "holodesk" / "automations.toml")
    qtbot.addWidget(dialog)
    dialog.name_edit.setText("x")
    dialog.task_edit.setPlainText("type {new name}")
    dialog.save_button.click()
    assert "is not a placeholder" in dialog.message.text()
