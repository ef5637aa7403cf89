"""Export and import an automation in the desktop app, over the functions the CLI calls
(:mod:`app.share`).

:class:`ExportDialog` shows what goes in the file and, when the automation has saved steps,
every screen crop they hold as a thumbnail: the crops can show personal data, so the steps are
included only when the person ticks "Include the saved steps" (off when the dialog opens).
:class:`ImportDialog` shows an already validated file (:func:`app.share.read_share` ran on a
worker thread) and imports it under the name in its field; its schedule is kept only when the
person ticks it. Writing runs on a worker thread (:class:`ui.workers.Background`); an error is
shown in the dialog, which stays open with what the person chose.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal, Slot
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.share import (
    SUFFIX,
    ExportPlan,
    Imported,
    NameTaken,
    Shared,
    export_automation,
    import_automation,
)
from model.problem import HolodeskError
from ui.buttons import button_row
from ui.colours import Tone, text_style
from ui.problem_view import view
from ui.workers import Background

__all__ = ["ExportDialog", "ImportDialog", "choose_import_file"]

log = logging.getLogger(__name__)

THUMB = 96


def choose_import_file(parent: QWidget) -> Path | None:
    """Asks for a shared automation file to import; None when the person cancels."""
    name, _filter = QFileDialog.getOpenFileName(
        parent, "Import an automation", str(Path.home()),
        f"Shared automations (*{SUFFIX} *.zip);;All files (*)")
    return Path(name) if name else None


def _message_label() -> QLabel:
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)  # it quotes file names
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _summary_label(lines: list[str]) -> QLabel:
    label = _message_label()
    label.setText("\n".join(lines))
    return label


def _error_text(error: BaseException) -> str:
    if isinstance(error, HolodeskError):
        text = view(error).text()
    else:
        log.error("sharing an automation failed", exc_info=error)
        text = f"It did not work: {error}"
    return text[:1].upper() + text[1:]


class ExportDialog(QDialog):
    """Export one automation (see the module doc). Signal ``exported(Path)`` once written."""

    exported = Signal(object)

    def __init__(self, plan: ExportPlan, dest: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan = plan
        self.setWindowTitle(f"holodesk — export “{plan.automation.name}”")
        self._tasks = Background(self, max_threads=1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("The file will hold:"))
        layout.addWidget(_summary_label([_plain(line) for line in plan.summary()]))

        self.crops = QListWidget()
        self.crops.setViewMode(QListView.ViewMode.IconMode)
        self.crops.setIconSize(QSize(THUMB, THUMB))
        self.crops.setResizeMode(QListView.ResizeMode.Adjust)
        self.crops.setMovement(QListView.Movement.Static)
        for index, name in enumerate(plan.crops, start=1):
            pixmap = QPixmap()
            pixmap.loadFromData(plan.pictures[name], "PNG")
            item = QListWidgetItem(QIcon(pixmap), f"{index}")
            item.setToolTip(f"Screen crop {index}: {pixmap.width()}×{pixmap.height()} pixels")
            self.crops.addItem(item)
        self.include = QCheckBox(f"Include the saved steps ({len(plan.crops)} screen crops)")
        self.include.setChecked(False)
        if plan.trajectory is not None:
            layout.addWidget(QLabel(
                "The saved steps let the automation run without the model. They hold these "
                "pieces of your screen as it was, which can show personal data: look at them "
                "before you include them."))
            layout.addWidget(self.crops, 1)
            layout.addWidget(self.include)
        else:
            self.crops.hide()
            self.include.hide()

        self.path_edit = QLineEdit(str(dest))
        choose = QPushButton("Choose…")
        choose.clicked.connect(self._choose)
        row = QHBoxLayout()
        row.addWidget(self.path_edit, 1)
        row.addWidget(choose)
        form = QFormLayout()
        form.addRow("Save &as:", row)
        layout.addLayout(form)
        self.message = _message_label()
        layout.addWidget(self.message)
        self.export_button = QPushButton("&Export")
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.export)
        cancel = QPushButton("Cancel")
        cancel.clicked.connect(self.reject)
        buttons = button_row(self.export_button, cancel)
        layout.addLayout(buttons)
        self.resize(560, 480 if plan.trajectory is not None else 260)

    def _choose(self) -> None:
        name, _filter = QFileDialog.getSaveFileName(
            self, "Export the automation", self.path_edit.text(),
            f"Shared automations (*{SUFFIX})")
        if name:
            self.path_edit.setText(name)

    @Slot()
    def export(self) -> None:
        """Write the file on a worker thread; the steps only when the box is ticked."""
        text = self.path_edit.text().strip()
        if not text:
            self._error("Choose where to save the file.")
            return
        dest, plan = Path(text).expanduser(), self.plan
        with_steps = self.include.isChecked() and plan.trajectory is not None
        self.export_button.setEnabled(False)
        self._tasks.run(lambda: export_automation(plan, dest, with_steps=with_steps),
                        self._done, self._failed)

    def _done(self, dest: Path) -> None:
        self.export_button.setEnabled(True)
        self.exported.emit(dest)
        self.accept()

    def _failed(self, error: BaseException) -> None:
        self.export_button.setEnabled(True)
        self._error(_error_text(error))

    def _error(self, text: str) -> None:
        self.message.setStyleSheet(text_style(Tone.ERROR))
        self.message.setText(text)


class ImportDialog(QDialog):
    """Import a validated shared file (see the module doc). Signal ``imported(Imported)``."""

    imported = Signal(object)

    def __init__(self, shared: Shared, *, path: Path, stop_hotkey: str,
                 parent: QWidget | None = None,
                 work: Callable[..., Imported] = import_automation) -> None:
        super().__init__(parent)
        self.shared = shared
        self._path, self._stop, self._work = path, stop_hotkey, work
        a = shared.automation
        self.setWindowTitle(f"holodesk — import “{a.name}”")
        self._tasks = Background(self, max_threads=1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"{shared.source.name} holds:"))
        layout.addWidget(_summary_label([_plain(line) for line in shared.summary()]))
        if shared.trajectory is not None:
            layout.addWidget(_summary_label([
                "Its saved steps replay like your own: every action is checked and confirmed "
                "as the model's would be, and only where its screen crops are found."]))
        self.name_edit = QLineEdit(a.name)
        self.replace = QCheckBox("Replace my automation of the same name (the values of its "
                                 "secret parameters are deleted)")
        self.keep_hotkey = QCheckBox(f"Keep its hotkey ({a.hotkey_label()})")
        self.keep_hotkey.setChecked(True)
        self.keep_schedule = QCheckBox(
            f"Keep its schedule ({a.when.label() if a.when else ''}): it then runs by itself "
            "while holodesk runs")
        self.keep_schedule.setChecked(False)
        form = QFormLayout()
        form.addRow("Na&me:", self.name_edit)
        layout.addLayout(form)
        layout.addWidget(self.replace)
        if a.hotkey:
            layout.addWidget(self.keep_hotkey)
        else:
            self.keep_hotkey.hide()
        if a.schedule:
            layout.addWidget(self.keep_schedule)
        else:
            self.keep_schedule.hide()
        self.message = _message_label()
        layout.addWidget(self.message)
        self.import_button = QPushButton("&Import")
        self.import_button.setDefault(True)
        self.import_button.clicked.connect(self.run_import)
        cancel = QPushButton("Cancel")
        cancel.clicked.connect(self.reject)
        buttons = button_row(self.import_button, cancel)
        layout.addLayout(buttons)
        self.resize(560, 320)

    @Slot()
    def run_import(self) -> None:
        """Import on a worker thread with what the person chose."""
        name = self.name_edit.text().strip()
        shared, work = self.shared, self._work
        as_name = name if name and name != shared.automation.name else None
        options = {"as_name": as_name, "replace": self.replace.isChecked(),
                   "keep_schedule": self.keep_schedule.isChecked(),
                   "drop_hotkey": not self.keep_hotkey.isChecked(),
                   "stop_hotkey": self._stop, "automations": self._path}
        self.import_button.setEnabled(False)
        self._tasks.run(lambda: work(shared, **options), self._done, self._failed)

    def _done(self, done: Imported) -> None:
        self.import_button.setEnabled(True)
        self.imported.emit(done)
        self.accept()

    def _failed(self, error: BaseException) -> None:
        self.import_button.setEnabled(True)
        if isinstance(error, NameTaken):
            text = (f"You have an automation named “{error.name}” already: give this one "
                    "another name, or tick Replace.")
        else:
            text = _error_text(error)
        self.message.setStyleSheet(text_style(Tone.ERROR))
        self.message.setText(text)


def _plain(line: str) -> str:
    """A summary line for the window: the same facts, with an upper-case start."""
    line = line.strip()
    return line[:1].upper() + line[1:]
