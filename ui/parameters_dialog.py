"""The small form that asks for an automation's missing values before its run starts.

One field per parameter that has no value yet (no default, nothing in the keyring), labelled
with its name and description; a secret one is a password field with "Keep in the keyring" (off
unless ticked: the person decides whether it is stored). Run checks every value as a run would
(one printable line, a secret long enough to be masked) and keeps the form open with the reason
when one is not usable; nothing starts with a value missing. The form is opened with
:meth:`QDialog.open` (never a nested event loop): the app goes on when it is accepted.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.automations import Automation
from app.parameter_values import check_secret
from app.parameters import ParameterError, check_value
from ui.colours import Tone, text_style

__all__ = ["ParametersDialog", "ValuesAsker"]


class ParametersDialog(QDialog):
    """Asks for the values of ``missing`` parameters of ``automation`` (see the module doc)."""

    def __init__(self, automation: Automation, missing: list[str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.automation = automation
        self.setWindowTitle(f"holodesk — {automation.name}")
        self.fields: dict[str, QLineEdit] = {}
        self.keep: dict[str, QCheckBox] = {}
        intro = QLabel(f"“{automation.name}” needs these values before it starts:")
        intro.setTextFormat(Qt.TextFormat.PlainText)
        intro.setWordWrap(True)
        form = QFormLayout()
        for name in missing:
            declared = automation.parameters[name]
            edit = QLineEdit()
            edit.setObjectName(f"param_{name}")
            if declared.description:
                edit.setPlaceholderText(declared.description)
                edit.setToolTip(declared.description)
            form.addRow(f"{name}:", edit)
            self.fields[name] = edit
            if declared.secret:
                edit.setEchoMode(QLineEdit.EchoMode.Password)
                keep = QCheckBox("Keep in the keyring for the next runs")
                keep.setToolTip("Stored in your desktop's keyring, never in the automations "
                                "file; hotkeys and triggers can then run it without asking.")
                form.addRow("", keep)
                self.keep[name] = keep
        self.message = QLabel()
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.run_button = buttons.addButton("&Run", QDialogButtonBox.ButtonRole.AcceptRole)
        self.run_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        if self.fields:
            next(iter(self.fields.values())).setFocus()

    def values(self) -> dict[str, str]:
        """The values typed, by parameter (secrets too: hand them on, never show them)."""
        return {name: edit.text() for name, edit in self.fields.items()}

    def kept(self) -> list[str]:
        """The secret parameters whose value the person wants kept in the keyring."""
        return [name for name, box in self.keep.items() if box.isChecked()]

    def accept(self) -> None:
        for name, edit in self.fields.items():
            label = f"the value of {name}"
            try:
                if self.automation.parameters[name].secret:
                    check_secret(label, edit.text())
                else:
                    check_value(label, edit.text())
            except ParameterError as e:
                text = str(e)
                self.message.setStyleSheet(text_style(Tone.ERROR))
                self.message.setText(text[:1].upper() + text[1:] + ".")
                edit.setFocus()
                return
        super().accept()


class ValuesAsker:
    """Asks for an automation's missing values (app/controller.py ``Desk.ask_values``): one
    form at a time, the newest request; ``dialog`` is the open one."""

    def __init__(self) -> None:
        self.dialog: ParametersDialog | None = None

    def ask(self, automation: Automation, missing: list[str],
            answered: Callable[[dict[str, str], list[str]], None]) -> None:
        """Open the form; ``answered(values, kept)`` once Run is pressed, never on Cancel."""
        if self.dialog is not None:
            self.dialog.close()
        dialog = ParametersDialog(automation, missing, None)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialog = dialog

        def finished(_result: int) -> None:
            if self.dialog is dialog:
                self.dialog = None  # deleted on close: never touched again

        dialog.accepted.connect(lambda: answered(dialog.values(), dialog.kept()))
        dialog.finished.connect(finished)
        dialog.open()
        dialog.raise_()
        dialog.activateWindow()
