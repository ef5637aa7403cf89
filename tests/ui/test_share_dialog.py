"""Export… and Import… in the Automations window, offscreen: the export dialog shows the screen
crops and leaves the saved steps out until the box is ticked; import shows what the file holds,
refuses a taken name with the way out, keeps the schedule only when ticked, and a hostile file is
refused in the window with nothing written."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.automations import Automation, add_automation, load_automations
from app.trajectory import has_trajectory, load_trajectory, save_trajectory
from tests.support.home import Home, isolate_home
from tests.support.saved_steps import SHARED_TASK, saved_steps
from ui.automations_dialog import AutomationsDialog

TIMEOUT = 20000


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def path(home: Home) -> Path:
    return home.config / "holodesk" / "automations.toml"


def _saved(path: Path, *, secret: bool = False) -> Automation:
    # No keyring is usable here: a secret parameter's saved steps cannot be checked, so they
    # stay home (test_secret_steps_are_not_exported_while_the_keyring_is_locked).
    automation = Automation.make(
        "", name="Timesheet", task=SHARED_TASK, hotkey="ctrl+alt+1", schedule="daily at 09:00",
        parameters={"user": {"default": "ann"}, "password": {"secret": secret} if secret else
                    {"default": "not-a-secret"}, "hours": {}})
    add_automation(automation, path=path)
    trajectory, pictures = saved_steps(automation.task)
    save_trajectory(automation.key, trajectory, pictures)
    return automation


@pytest.fixture
def make_dialog(qtbot: QtBot, path: Path, tmp_path: Path) -> Callable[..., AutomationsDialog]:
    def make(**kwargs: Any) -> AutomationsDialog:
        dialog = AutomationsDialog(path=path, export_folder=tmp_path / "out", **kwargs)
        qtbot.addWidget(dialog)
        return dialog

    return make


def _export(qtbot: QtBot, dialog: AutomationsDialog, dest: Path, *, include: bool) -> None:
    dialog.export_dialog = None
    dialog.export_button.click()
    qtbot.waitUntil(lambda: dialog.export_dialog is not None, timeout=TIMEOUT)
    export = dialog.export_dialog
    assert export is not None
    assert export.crops.count() == 2  # every crop shown, as a thumbnail
    assert not export.include.isChecked()  # off until the person ticks it
    assert export.include.text() == "Include the saved steps (2 screen crops)"
    export.path_edit.setText(str(dest))
    export.include.setChecked(include)
    with qtbot.waitSignal(export.exported, timeout=TIMEOUT):
        export.export_button.click()


def test_export_shows_the_crops_and_includes_them_only_when_ticked(
        qtbot: QtBot, path: Path, tmp_path: Path,
        make_dialog: Callable[..., AutomationsDialog]) -> None:
    _saved(path)
    dialog = make_dialog()
    assert dialog.export_button.isEnabled()
    _export(qtbot, dialog, tmp_path / "plain.zip", include=False)
    with zipfile.ZipFile(tmp_path / "plain.zip") as zf:
        assert zf.namelist() == ["automation.toml"]
    assert "Exported “Timesheet”" in dialog.message.text()

    _export(qtbot, dialog, tmp_path / "steps.zip", include=True)
    with zipfile.ZipFile(tmp_path / "steps.zip") as zf:
        assert "trajectory.json" in zf.namelist() and len(zf.namelist()) == 8

    # An existing file is not replaced: the dialog says so and stays open.
    dialog.export_button.click()
    qtbot.waitUntil(lambda: dialog.export_dialog is not None
                    and dialog.export_dialog.isVisible(), timeout=TIMEOUT)
    export = dialog.export_dialog
    assert export is not None
    export.path_edit.setText(str(tmp_path / "plain.zip"))
    export.export_button.click()
    qtbot.waitUntil(lambda: "exists already" in export.message.text(), timeout=TIMEOUT)
    assert export.isVisible()


def test_import_refuses_a_taken_name_then_imports_under_another_without_the_schedule(
        qtbot: QtBot, path: Path, tmp_path: Path,
        make_dialog: Callable[..., AutomationsDialog]) -> None:
    _saved(path)
    dest = tmp_path / "t.zip"
    exporter = make_dialog()
    _export(qtbot, exporter, dest, include=True)

    dialog = make_dialog(choose_import=lambda _parent: dest)
    dialog.import_button.click()
    qtbot.waitUntil(lambda: dialog.import_dialog is not None, timeout=TIMEOUT)
    imp = dialog.import_dialog
    assert imp is not None
    assert not imp.keep_schedule.isChecked() and "Daily at 09:00" in imp.keep_schedule.text()
    before = path.read_bytes()
    imp.import_button.click()
    qtbot.waitUntil(lambda: "another name" in imp.message.text(), timeout=TIMEOUT)
    assert path.read_bytes() == before

    imp.name_edit.setText("Timesheet copy")
    imp.keep_hotkey.setChecked(False)  # Ctrl+Alt+1 is the original's
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        imp.import_button.click()
    copy = load_automations(path)[1]
    assert copy.name == "Timesheet copy" and copy.schedule is None and copy.hotkey is None
    steps = load_trajectory(copy.key)
    assert steps is not None and len(steps.steps) == 4
    assert dialog.editing == "Timesheet copy"
    assert "Imported “Timesheet copy” with 4 saved steps" in dialog.message.text()


def test_a_hostile_file_is_refused_in_the_window_and_nothing_is_written(
        qtbot: QtBot, path: Path, tmp_path: Path,
        make_dialog: Callable[..., AutomationsDialog]) -> None:
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("automation.toml", "format = 1\n")
        zf.writestr("../../evil.png", b"")
    dialog = make_dialog(choose_import=lambda _parent: bad)
    assert not dialog.export_button.isEnabled()  # nothing saved to export
    dialog.import_button.click()
    qtbot.waitUntil(lambda: "evil.png" in dialog.message.text(), timeout=TIMEOUT)
    assert dialog.import_dialog is None
    assert not path.exists() and not has_trajectory("timesheet")


def test_secret_steps_are_not_exported_while_the_keyring_is_locked(
        qtbot: QtBot, path: Path, tmp_path: Path,
        make_dialog: Callable[..., AutomationsDialog]) -> None:
    _saved(path, secret=True)
    dialog = make_dialog()
    dialog.export_button.click()
    qtbot.waitUntil(lambda: dialog.export_dialog is not None, timeout=TIMEOUT)
    export = dialog.export_dialog
    assert export is not None
    export.path_edit.setText(str(tmp_path / "t.zip"))
    export.include.setChecked(True)
    export.export_button.click()
    qtbot.waitUntil(lambda: "keyring cannot be read" in export.message.text(), timeout=TIMEOUT)
    assert not (tmp_path / "t.zip").exists()
    export.include.setChecked(False)
    with qtbot.waitSignal(export.exported, timeout=TIMEOUT):
        export.export_button.click()
    assert zipfile.ZipFile(tmp_path / "t.zip").namelist() == ["automation.toml"]
