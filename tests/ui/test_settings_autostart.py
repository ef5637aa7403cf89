"""Settings' "Start at login": the box shows the autostart entry and Save writes or removes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.autostart import Autostart
from tests.support.home import Home
from tests.support.settings_rig import keyring_home, make_dialog, save


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return keyring_home(monkeypatch, tmp_path)


@pytest.fixture
def entry(home: Home) -> Autostart:
    return Autostart(home.config / "autostart" / "holodesk.desktop", ("/opt/holodesk/holodesk",))


def test_checking_it_writes_the_entry_and_unchecking_removes_it(
    qtbot: QtBot, entry: Autostart
) -> None:
    dialog = make_dialog(qtbot, autostart=entry)
    assert not dialog.autostart_check.isChecked()
    dialog.autostart_check.setChecked(True)
    save(qtbot, dialog)
    assert entry.enabled()
    assert "Exec=/opt/holodesk/holodesk" in entry.path.read_text()

    again = make_dialog(qtbot, autostart=entry)
    assert again.autostart_check.isChecked()
    again.autostart_check.setChecked(False)
    save(qtbot, again)
    assert not entry.path.exists()


def test_an_untouched_box_leaves_the_entry_alone(qtbot: QtBot, entry: Autostart) -> None:
    # An entry the person edited by hand (or the desktop's tool wrote) is not rewritten by a
    # Save that did not change the box.
    entry.path.parent.mkdir(parents=True)
    entry.path.write_text("[Desktop Entry]\nType=Application\nExec=/custom/holodesk --x\n")
    dialog = make_dialog(qtbot, autostart=entry)
    assert dialog.autostart_check.isChecked()
    dialog.max_steps_spin.setValue(33)
    save(qtbot, dialog)
    assert "Exec=/custom/holodesk --x" in entry.path.read_text()


def test_an_entry_that_cannot_be_written_is_an_error_shown(
    qtbot: QtBot, home: Home
) -> None:
    blocker = home.root / "not-a-folder"
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("")
    dialog = make_dialog(qtbot, autostart=Autostart(blocker / "holodesk.desktop", ("/bin/true",)))
    dialog.autostart_check.setChecked(True)
    dialog.save()
    qtbot.waitUntil(lambda: "autostart entry" in dialog.error_label.text(), timeout=10_000)
    assert "Check that" in dialog.error_label.text()
