"""The About window: version, what holodesk is, where its settings, log and records live, and
its licence (facts from app/about.py)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from app.about import about
from ui.app_icon import app_icon
from ui.plain import plain_label


class AboutDialog(QDialog):
    """Everything a person (or a helper on the phone) asks first; the paths are selectable."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        facts = about()
        self.setWindowTitle("About holodesk")
        self.setWindowIcon(app_icon())
        icon = plain_label()
        icon.setPixmap(app_icon().pixmap(64, 64))
        title = plain_label(f"holodesk {facts.version}")
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        title.setFont(font)
        summary = plain_label(facts.summary)
        summary.setWordWrap(True)
        form = QFormLayout()
        self.values: dict[str, QLabel] = {}
        for name, value in (("Version", facts.version), ("Settings", str(facts.settings_file)),
                            ("Log file", str(facts.log_file)),
                            ("Runs and screenshots", str(facts.data_dir)),
                            ("Licence", facts.licence)):
            label = plain_label(value)
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(f"{name}:", label)
            self.values[name] = label
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(icon)
        layout.addWidget(title)
        layout.addWidget(summary)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.setMinimumWidth(460)
