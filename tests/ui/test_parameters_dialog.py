"""The form that asks for an automation's missing values, and the app's automation runs with
parameters: asked when the person started it, refused (never run empty) from a hotkey, secrets
from the keyring or a password field, masked in what the app shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from app.automations import Automation
from app.parameter_values import load_secret, store_secret
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home, isolate_home
from tests.support.keyring_backend import DIR_ENV, FileBackend
from ui.parameters_dialog import ParametersDialog

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}
SECRET = "velvet-otter-lantern"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def keyring_file(home: Home, monkeypatch: pytest.MonkeyPatch) -> Iterator[FileBackend]:
    import keyring

    monkeypatch.setenv(DIR_ENV, str(home.keyring))
    before = keyring.get_keyring()
    backend = FileBackend()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(before)


def _rename() -> Automation:
    return Automation.make("", name="rename", task="rename {file} to {new_name}",
                           parameters={"file": {"default": "report.pdf"},
                                       "new_name": {"description": "the new name"}})


def _login() -> Automation:
    return Automation.make("", name="sign in", task="sign in with {password}",
                           parameters={"password": {"secret": True}})


def test_the_form_asks_for_the_missing_values_and_checks_them(qtbot: QtBot) -> None:
    dialog = ParametersDialog(_login().changed(
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
        app.set_automations([_rename()])
        assert app.run_automation("rename", "tray")
        dialog = app.parameters_dialog
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
        app.set_automations([_rename()])
        assert not app.run_automation("rename", "hotkey")
        assert app.parameters_dialog is None
        assert not app.controller.running and server.requests == []
    said = app._errors[-1]
    assert "needs a value for new_name" in said and "hotkey uses only saved defaults" in said


def test_a_secret_from_the_keyring_runs_from_a_hotkey_masked(
        qtbot: QtBot, make_app: MakeApp, keyring_file: FileBackend) -> None:
    automation = _login()
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
    automation = _login()
    with FakeVLLM(ScriptedPolicy([ANSWER, ANSWER])) as server:
        app, rig = make_app(server)
        app.set_automations([automation])
        for keep, runs in ((False, 1), (True, 2)):
            assert app.run_automation("sign in", "tray")
            qtbot.waitUntil(lambda: app.parameters_dialog is not None, timeout=10_000)
            dialog = app.parameters_dialog
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
