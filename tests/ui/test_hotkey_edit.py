"""The hotkey fields record the keys pressed in them (offscreen), in Settings and Automations.

Keys are played with QTest, which sends a ShortcutOverride before each press as Qt does for
real input: the windows' own shortcuts (Ctrl+S in Automations) must not take them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.automations import Automation, load_automations
from control.hotkeys import HotkeyError, validate_stop_hotkey
from tests.support.fake_hotkeys import FakeHotkeys
from tests.support.home import Home, isolate_home
from tests.support.settings_rig import make_dialog
from ui.automations_dialog import AutomationsDialog
from ui.hotkey_edit import HotkeyEdit, combo_from_key, is_recording
from ui.hotkey_registry import HotkeyRegistry

K = Qt.Key
M = Qt.KeyboardModifier
CTRL_ALT = M.ControlModifier | M.AltModifier
TIMEOUT = 10_000


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.mark.parametrize(("key", "modifiers", "platform", "expected"), [
    (K.Key_1, CTRL_ALT, "linux", "ctrl+alt+1"),
    (K.Key_Escape, CTRL_ALT | M.ShiftModifier, "linux", "ctrl+alt+shift+escape"),
    (K.Key_S, M.MetaModifier | M.AltModifier, "linux", "alt+super+s"),
    (K.Key_F9, M.NoModifier, "linux", "f9"),
    (K.Key_PageDown, M.ControlModifier, "linux", "ctrl+pagedown"),
    (K.Key_Backtab, CTRL_ALT | M.ShiftModifier, "linux", "ctrl+alt+shift+tab"),
    (K.Key_Minus, CTRL_ALT, "linux", "ctrl+alt+-"),
    # macOS: Qt reports Command as Control, and Control as Meta.
    (K.Key_K, M.ControlModifier | M.AltModifier, "darwin", "alt+super+k"),
    (K.Key_K, M.MetaModifier | M.AltModifier, "darwin", "ctrl+alt+k"),
])
def test_a_key_press_becomes_a_combination(key: Qt.Key, modifiers: Qt.KeyboardModifier,
                                           platform: str, expected: str) -> None:
    assert combo_from_key(key.value, modifiers, platform) == expected


def test_keys_a_hotkey_cannot_use_are_refused_with_the_reason() -> None:
    with pytest.raises(HotkeyError, match="number pad"):
        combo_from_key(K.Key_1.value, CTRL_ALT | M.KeypadModifier)
    with pytest.raises(HotkeyError, match="cannot be used"):
        combo_from_key(K.Key_VolumeUp.value, CTRL_ALT)


@pytest.fixture
def field(qtbot: QtBot) -> HotkeyEdit:
    edit = HotkeyEdit(validate_stop_hotkey, optional=False)
    qtbot.addWidget(edit)
    return edit


def test_pressing_a_combination_sets_it(qtbot: QtBot, field: HotkeyEdit) -> None:
    with qtbot.waitSignal(field.changed, timeout=TIMEOUT) as changed:
        QTest.keyClick(field.field, K.Key_Escape, CTRL_ALT | M.ShiftModifier)
    assert changed.args == ["ctrl+alt+shift+escape"]
    assert field.text() == "ctrl+alt+shift+escape"
    assert field.field.text() == "Ctrl+Alt+Shift+Esc"
    assert field.reason == ""


def test_a_refused_combination_keeps_the_old_one_and_says_why(
    qtbot: QtBot, field: HotkeyEdit
) -> None:
    field.setText("ctrl+alt+shift+escape")
    with qtbot.waitSignal(field.refused, timeout=TIMEOUT):
        QTest.keyClick(field.field, K.Key_A, M.ShiftModifier)
    assert field.text() == "ctrl+alt+shift+escape"
    assert field.field.text() == "Ctrl+Alt+Shift+Esc"
    assert field.reason.startswith("Shift+A can be pressed by holodesk's own typing")
    QTest.keyClick(field.field, K.Key_C, M.ControlModifier)
    assert field.reason.startswith("Ctrl+C is a key or shortcut people press all day")
    QTest.keyClick(field.field, K.Key_1, CTRL_ALT | M.KeypadModifier)
    assert "number pad" in field.reason
    QTest.keyClick(field.field, K.Key_F11, CTRL_ALT | M.ShiftModifier)  # a good one clears it
    assert field.text() == "ctrl+alt+shift+f11" and field.reason == ""


def test_backspace_or_clear_empties_it(qtbot: QtBot, field: HotkeyEdit) -> None:
    field.setText("ctrl+alt+1")
    with qtbot.waitSignal(field.changed, timeout=TIMEOUT) as changed:
        QTest.keyClick(field.field, K.Key_Backspace)
    assert changed.args == [""] and field.text() == "" and field.field.text() == ""
    field.setText("ctrl+alt+1")
    field.clear_button.click()
    assert field.text() == ""


def test_holding_modifiers_shows_them_until_released(field: HotkeyEdit) -> None:
    field.setText("f9")
    QTest.keyPress(field.field, K.Key_Control, M.ControlModifier)
    QTest.keyPress(field.field, K.Key_Alt, CTRL_ALT)
    assert field.field.text() == "Ctrl+Alt+…"
    QTest.keyRelease(field.field, K.Key_Alt, M.NoModifier)
    assert field.field.text() == "F9"
    assert field.text() == "f9"


def test_tab_still_moves_on_and_recording_ends_with_the_focus(qtbot: QtBot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    edit = HotkeyEdit(validate_stop_hotkey)
    layout = QVBoxLayout(window)
    layout.addWidget(edit)
    layout.addWidget(QLineEdit())
    window.show()
    window.activateWindow()
    qtbot.waitExposed(window)
    edit.setFocus()
    qtbot.waitUntil(edit.field.hasFocus, timeout=TIMEOUT)
    assert is_recording()
    QTest.keyClick(edit.field, K.Key_Tab)
    qtbot.waitUntil(lambda: not edit.field.hasFocus(), timeout=TIMEOUT)  # to Clear, then on
    assert edit.text() == "" and edit.reason == ""  # Tab was not recorded
    assert not is_recording()


def test_an_automation_hotkey_is_ignored_while_a_field_records(qtbot: QtBot) -> None:
    hotkeys = FakeHotkeys()
    hotkeys.start()
    registry = HotkeyRegistry(lambda _combo: None, lambda _text: None)
    registry.set_listener(hotkeys, "ctrl+alt+shift+escape")
    registry.set_automations([Automation.make("", name="mail", task="send", hotkey="ctrl+alt+1")])
    pressed: list[str] = []
    registry.automation_pressed.connect(pressed.append)
    window = QWidget()
    qtbot.addWidget(window)
    edit = HotkeyEdit(validate_stop_hotkey)
    other = QLineEdit()
    layout = QVBoxLayout(window)
    layout.addWidget(other)
    layout.addWidget(edit)
    window.show()
    window.activateWindow()
    qtbot.waitExposed(window)
    other.setFocus()
    qtbot.waitUntil(other.hasFocus, timeout=TIMEOUT)
    assert hotkeys.fire("ctrl+alt+1") and pressed == ["mail"]
    edit.setFocus()
    qtbot.waitUntil(is_recording, timeout=TIMEOUT)
    assert hotkeys.fire("ctrl+alt+1") and pressed == ["mail"]  # recording, not a run
    other.setFocus()
    qtbot.waitUntil(lambda: not is_recording(), timeout=TIMEOUT)
    assert hotkeys.fire("ctrl+alt+1") and pressed == ["mail", "mail"]


def test_the_automations_window_records_and_saves_a_pressed_hotkey(
    qtbot: QtBot, home: Home
) -> None:
    path = home.config / "holodesk" / "automations.toml"
    dialog = AutomationsDialog(path=path, stop_hotkey="ctrl+alt+shift+escape")
    qtbot.addWidget(dialog)
    dialog.new_button.click()
    dialog.name_edit.setText("mail")
    dialog.task_edit.setPlainText("send the report")
    field = dialog.hotkey_edit.field
    QTest.keyClick(field, K.Key_Escape, CTRL_ALT | M.ShiftModifier)  # the emergency stop
    assert "emergency stop" in dialog.hotkey_edit.reason
    QTest.keyClick(field, K.Key_S, M.ControlModifier)  # Ctrl+S records; it does not save
    assert "people press all day" in dialog.hotkey_edit.reason
    assert not path.exists()
    QTest.keyClick(field, K.Key_2, CTRL_ALT)
    assert dialog.hotkey_edit.text() == "ctrl+alt+2" and dialog.is_dirty
    with qtbot.waitSignal(dialog.saved, timeout=TIMEOUT):
        dialog.save_button.click()
    assert [(a.name, a.hotkey) for a in load_automations(path)] == [("mail", "ctrl+alt+2")]


def test_the_settings_window_records_the_stop_hotkey(qtbot: QtBot, home: Home) -> None:
    dialog = make_dialog(qtbot)
    field = dialog.stop_hotkey_edit
    assert field is not None
    QTest.keyClick(field.field, K.Key_A, M.ShiftModifier)
    assert "own typing" in field.reason
    assert "stop_hotkey" not in dialog.changed_values()
    QTest.keyClick(field.field, K.Key_Pause, M.ControlModifier)
    assert dialog.changed_values()["stop_hotkey"] == "ctrl+pause"
