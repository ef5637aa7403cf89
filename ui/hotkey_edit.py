"""A hotkey field that records the keys pressed in it, instead of asking for them as text.

The person clicks the field and presses the combination: :func:`combo_from_key` turns Qt's key
event into holodesk's key vocabulary (control/keys.py), the field's ``check`` (the same rule the
settings and the automations file apply: :func:`control.hotkeys.validate_stop_hotkey`,
:func:`app.automations.validate_hotkey`) decides, and a refused combination leaves the old
value with the reason under the field. Backspace or Delete alone, or the Clear button, empty it;
Tab and Escape alone keep their usual jobs (the next field, closing the window).

While the field has the focus it holds the keyboard (a Qt keyboard grab), so a combination
holodesk already reserves for a hotkey (control/hotkeys_x11.py) reaches the field instead of
firing; :func:`is_recording` tells the hotkey registry to ignore automation hotkeys meanwhile
(those only listened for still hear every key).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFocusEvent, QHideEvent, QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QVBoxLayout, QWidget

from control.hotkeys import HotkeyError, parse_combo
from ui.colours import Tone, text_style

__all__ = ["HotkeyEdit", "combo_from_key", "is_recording"]

Key = Qt.Key
Mod = Qt.KeyboardModifier

_NAMED: dict[Key, str] = {
    Key.Key_Escape: "escape", Key.Key_Return: "enter", Key.Key_Enter: "enter",
    Key.Key_Tab: "tab", Key.Key_Backtab: "tab", Key.Key_Space: "space",
    Key.Key_Backspace: "backspace", Key.Key_Delete: "delete", Key.Key_Insert: "insert",
    Key.Key_Home: "home", Key.Key_End: "end", Key.Key_PageUp: "pageup",
    Key.Key_PageDown: "pagedown", Key.Key_Up: "up", Key.Key_Down: "down",
    Key.Key_Left: "left", Key.Key_Right: "right", Key.Key_Pause: "pause",
    Key.Key_Print: "printscreen", Key.Key_SysReq: "sysrq", Key.Key_ScrollLock: "scrolllock",
    Key.Key_CapsLock: "capslock", Key.Key_NumLock: "numlock", Key.Key_Menu: "menu",
}
_MODIFIER_KEYS: dict[Key, Qt.KeyboardModifier] = {
    Key.Key_Control: Mod.ControlModifier, Key.Key_Shift: Mod.ShiftModifier,
    Key.Key_Alt: Mod.AltModifier, Key.Key_Meta: Mod.MetaModifier,
    Key.Key_Super_L: Mod.MetaModifier, Key.Key_Super_R: Mod.MetaModifier,
    Key.Key_AltGr: Mod.NoModifier, Key.Key_Hyper_L: Mod.NoModifier,
    Key.Key_Hyper_R: Mod.NoModifier,
}
_MODIFIER_FLAGS: dict[int, Qt.KeyboardModifier] = {k.value: f for k, f in _MODIFIER_KEYS.items()}

_recorders = 0
_recorders_lock = threading.Lock()


def is_recording() -> bool:
    """Whether a hotkey field is recording now (safe to ask from any thread)."""
    return _recorders > 0


def _modifier_names(modifiers: Qt.KeyboardModifier, platform: str) -> list[str]:
    # On macOS Qt reports Command as Control and Control as Meta.
    ctrl, meta = (Mod.MetaModifier, Mod.ControlModifier) if platform == "darwin" else (
        Mod.ControlModifier, Mod.MetaModifier)
    names = [("ctrl", ctrl), ("alt", Mod.AltModifier), ("shift", Mod.ShiftModifier),
             ("super", meta)]
    return [name for name, flag in names if modifiers & flag]


def combo_from_key(key: int, modifiers: Qt.KeyboardModifier,
                   platform: str = sys.platform) -> str:
    """The combination a key press makes, in canonical text (``ctrl+alt+1``).

    Raises :class:`~control.hotkeys.HotkeyError` for a key a hotkey cannot use (the number
    pad's, which differ from the number row's and the arrows; keys without a name).
    """
    if modifiers & Mod.KeypadModifier:
        raise HotkeyError("the number pad's keys cannot be used in a hotkey; use the number "
                          "row or an F-key")
    named = {k.value: name for k, name in _NAMED.items()}
    if Key.Key_F1.value <= key <= Key.Key_F35.value:
        name = f"f{key - Key.Key_F1.value + 1}"
    elif key in named:
        name = named[key]
    elif 0x20 < key < 0x7F:
        name = chr(key).lower()
    else:
        raise HotkeyError("this key cannot be used in a hotkey; choose another")
    return str(parse_combo("+".join([*_modifier_names(modifiers, platform), name])))


class _Recorder(QLineEdit):
    """The read-only line the keys are pressed into."""

    def __init__(self, owner: HotkeyEdit) -> None:
        super().__init__(owner)
        self._owner = owner
        self._grabbing = False
        self.setReadOnly(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.NoContextMenu)

    def event(self, event: QEvent) -> bool:
        if isinstance(event, QKeyEvent):
            plain = not event.modifiers() & ~(Mod.ShiftModifier | Mod.KeypadModifier)
            passes = plain and event.key() in (Key.Key_Tab, Key.Key_Backtab, Key.Key_Escape)
            if event.type() == QEvent.Type.ShortcutOverride and not passes:
                event.accept()  # the window's shortcuts (Ctrl+S...) must not take the keys
                return True
            if event.type() == QEvent.Type.KeyPress and not passes:
                self.keyPressEvent(event)  # Tab with Ctrl or Alt is a hotkey, not navigation
                return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, modifiers = event.key(), event.modifiers()
        event.accept()
        own = _MODIFIER_FLAGS.get(key)
        if own is not None:
            # The press of a modifier may not carry its own flag yet (it does on release).
            held = _modifier_names(modifiers | own, sys.platform)
            self.setText("+".join(n.capitalize() for n in held) + "+…" if held else "")
            return
        if not modifiers & ~Mod.KeypadModifier and key in (Key.Key_Backspace, Key.Key_Delete):
            self._owner.set_value("", by_person=True)
            return
        try:
            text = combo_from_key(key, modifiers)
        except HotkeyError as e:
            self._owner.refuse(str(e))
            return
        self._owner.record(text)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        event.accept()
        held = event.modifiers() & ~Mod.KeypadModifier
        own = _MODIFIER_FLAGS.get(event.key())
        if own is not None:
            held &= ~own  # whether or not the release still carries its own flag
        if not held:
            self._owner.show_value()  # the modifiers alone were let go: show the value again

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self._start()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        self._end()
        super().focusOutEvent(event)
        self._owner.show_value()

    def hideEvent(self, event: QHideEvent) -> None:
        self._end()
        super().hideEvent(event)

    def _start(self) -> None:
        global _recorders
        if self._grabbing:
            return
        self._grabbing = True
        with _recorders_lock:
            _recorders += 1
        self.grabKeyboard()

    def _end(self) -> None:
        global _recorders
        if not self._grabbing:
            return
        self._grabbing = False
        self.releaseKeyboard()
        with _recorders_lock:
            _recorders -= 1


class HotkeyEdit(QWidget):
    """A hotkey field: press the keys to set it (see the module doc).

    ``check(text)`` raises :class:`~control.hotkeys.HotkeyError` (or ``ValueError``) with the
    reason when a pressed combination cannot be used. :meth:`text` is the value ("" for none),
    in the form the settings store; :meth:`setText` accepts any spelling and keeps it as given
    (the dialog's Save checks it as it always did). ``changed`` carries each new value the
    person sets; ``refused`` each reason shown.
    """

    changed = Signal(str)
    refused = Signal(str)

    def __init__(self, check: Callable[[str], object], parent: QWidget | None = None, *,
                 optional: bool = True) -> None:
        super().__init__(parent)
        self._check = check
        self._value = ""
        self.field = _Recorder(self)
        self.field.setPlaceholderText("click here, then press the keys" if not optional else
                                      "none: click here, then press the keys")
        self.clear_button = QToolButton(self)
        self.clear_button.setText("Clear")
        self.clear_button.setToolTip("No hotkey" if optional else "Empty the field")
        self.clear_button.clicked.connect(lambda: self.set_value("", by_person=True))
        self.reason_label = QLabel(self)
        self.reason_label.setWordWrap(True)
        self.reason_label.setTextFormat(Qt.TextFormat.PlainText)
        self.reason_label.setStyleSheet(text_style(Tone.ERROR))
        self.reason_label.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.field, 1)
        row.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.reason_label)
        self.setFocusProxy(self.field)

    def text(self) -> str:
        return self._value

    def setText(self, text: str) -> None:
        self.set_value(text, by_person=False)

    def clear(self) -> None:
        self.set_value("", by_person=False)

    def setToolTip(self, text: str) -> None:
        self.field.setToolTip(text)

    def setPlaceholderText(self, text: str) -> None:
        self.field.setPlaceholderText(text)

    @property
    def reason(self) -> str:
        """Why the last pressed combination was refused ("" when it was not)."""
        return self.reason_label.text() if self.reason_label.isVisibleTo(self) else ""

    def set_value(self, text: str, *, by_person: bool) -> None:
        self._value = text
        self._show_reason("")
        self.show_value()
        if by_person:
            self.changed.emit(text)

    def record(self, text: str) -> None:
        """A combination the person pressed: kept when ``check`` allows it."""
        try:
            self._check(text)
        except ValueError as e:
            self.refuse(_reason(text, e))
            return
        self.set_value(text, by_person=True)

    def refuse(self, reason: str) -> None:
        self.show_value()
        self._show_reason(reason)
        self.refused.emit(reason)

    def show_value(self) -> None:
        try:
            shown = parse_combo(self._value).label() if self._value.strip() else ""
        except HotkeyError:
            shown = self._value  # as given; Save names what is wrong with it
        self.field.setText(shown)

    def _show_reason(self, reason: str) -> None:
        self.reason_label.setText(reason[:1].upper() + reason[1:])
        self.reason_label.setVisible(bool(reason))


def _reason(text: str, error: ValueError) -> str:
    """The rule's message, naming the combination as people write it: the messages quote it
    as given ('ctrl+alt+a' is ...), which in a field of pressed keys the person never typed."""
    message = str(error)
    quoted = repr(text)
    if message.startswith(quoted):
        return parse_combo(text).label() + message[len(quoted):]
    return f"{parse_combo(text).label()}: {message}"
