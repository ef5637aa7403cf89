"""The small window that asks about safety settings changed outside holodesk.

It lists the changes the files hold and holodesk does not apply (app/safety_review.py): what the
file says, and the approved value used instead. "Keep the approved values" (the default button)
writes those back into the files; "Apply" approves the changes. Closing it answers nothing: the
approved values stay in effect and the question comes again at the next run. It is opened with
:meth:`QDialog.open` (never a nested event loop), and a run goes on with the approved values
meanwhile. The values come from a file any program could have written: they are shown as plain
text, every control character visible.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPushButton, QVBoxLayout, QWidget

from app.safety_review import Review
from ui.colours import Tone, text_style
from ui.plain import plain_label, shown

__all__ = ["SafetyChangesDialog"]

_INTRO = ("These safety settings were changed outside holodesk (not in Settings, the Automations "
          "window or with `holodesk config set`), perhaps by a program. They are not applied: "
          "holodesk uses the values you approved. Apply them only if you made these changes "
          "yourself.")


class SafetyChangesDialog(QDialog):
    """Lists a :class:`~app.safety_review.Review`'s changes; ``answered`` carries True for
    Apply, False for Keep the approved values (see the module doc)."""

    answered = Signal(bool)

    def __init__(self, done: Review, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("holodesk — safety settings changed")
        self.review = done
        intro = plain_label(_INTRO)
        intro.setWordWrap(True)
        self.changes_label = plain_label()
        self.changes_label.setObjectName("safety_changes")
        self.changes_label.setWordWrap(True)
        self.blocked_label = plain_label()
        self.blocked_label.setWordWrap(True)
        self.blocked_label.setStyleSheet(text_style(Tone.ERROR))
        buttons = QDialogButtonBox()
        self.keep_button = QPushButton("&Keep the approved values")
        self.apply_button = QPushButton("&Apply")
        buttons.addButton(self.keep_button, QDialogButtonBox.ButtonRole.RejectRole)
        buttons.addButton(self.apply_button, QDialogButtonBox.ButtonRole.AcceptRole)
        # The safe answer is the default: an Enter meant for something else keeps the values.
        self.keep_button.setDefault(True)
        self.keep_button.clicked.connect(lambda: self._answer(False))
        self.apply_button.clicked.connect(lambda: self._answer(True))
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.changes_label)
        layout.addWidget(self.blocked_label)
        layout.addWidget(buttons)
        self.show_review(done)

    def show_review(self, done: Review) -> None:
        """Show ``done``'s changes (a newer look at the files replaces the one shown)."""
        self.review = done
        self.changes_label.setText("\n".join(shown(line) for line in done.lines()))
        self.blocked_label.setText(done.how_to_approve() if done.blocked else "")
        self.blocked_label.setVisible(bool(done.blocked))
        self.apply_button.setEnabled(not done.blocked)

    def _answer(self, apply: bool) -> None:
        self.answered.emit(apply)
        self.accept()
