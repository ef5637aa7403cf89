"""The Automations window: list, add, edit, delete and test-run saved automations.

The list is read from the file when the window opens (a small TOML read) and again by
:meth:`AutomationsDialog.reload` (the app calls it when the file changes). Save and Delete apply
the change to the file as it is now, on a worker thread (:mod:`app.automations` validates the
whole list first: a taken name or a conflicting hotkey is refused with the reason, and nothing
is written). A file that cannot be read is shown with its error and the window edits nothing
until it is fixed, so that file is never overwritten.

Unsaved edits are never dropped silently: moving to another entry or to New with changes in
the form asks Save / Discard / Cancel; a change to the file made elsewhere meanwhile leaves
the form as the person typed it (and says so); closing the window keeps the form as it is for
the next time it opens.

The schedule (none, once, daily, weekly with its days, at login) is edited under the hotkey;
the line below it says when the next run is, what an "at login" schedule still needs, and a
scheduled run that was missed or skipped (the app passes those in with :meth:`set_notes`).

A ``{name}`` in the task is a parameter, filled at each run: the Parameters table follows the
task as it is typed (a row per placeholder, in order of use), where each gets an optional default,
a description shown when its value is asked, and Secret (no default then: the value is asked in a
password field or kept in the desktop's keyring, never in the file). A row dropped because its
placeholder was deleted comes back as it was when the placeholder is typed again.

Export… writes the automation in the form (as saved) to one file to share, and Import… adds one
from such a file (ui/share_dialog.py, over app/share.py); the files are read on a worker thread.

"Test run" asks for a run of the automation as it stands in the form (saved or not) with every
step confirmed and decided by the model (saved steps are not replayed): the person watches each
step and can stop at any of them. The window only emits
:attr:`AutomationsDialog.test_run_requested`; the app starts the run.

"Saved steps" says whether the automation keeps the steps of its last successful run (its runs
replay them without the model, app/replay.py); "Forget saved steps" drops them, as `holodesk
automation forget` does. Deleting an automation forgets them too (and its secrets); renaming
takes them along; changing its task forgets them (:func:`app.trajectory.follow_edit`).
"""

from __future__ import annotations

import logging
import time as clock
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, time, timedelta
from pathlib import Path

from PySide6.QtCore import QDate, QDateTime, Qt, QTime, QTimer, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTimeEdit,
    QVBoxLayout,
    QWidget,
)

from app.automations import (
    Automation,
    AutomationError,
    add_automation,
    automations_path,
    load_automations,
    remove_automation,
    replace_automation,
    validate_hotkey,
)
from app.autostart import Autostart, default_autostart
from app.parameter_values import forget_secrets, rename_secrets
from app.parameters import Parameter, ParameterError, placeholders
from app.schedule import DAY_NAMES, Repeat, Schedule, local_zone
from app.scheduler import check_new_schedule, login_needs, next_runs
from app.share import ExportPlan, Imported, Shared, default_output, plan_export, read_share
from app.trajectory import follow_edit, forget_trajectory, trajectory_time
from control.hotkeys import DEFAULT_STOP_HOTKEY, HotkeyError, conflicts, parse_combo
from control.policy import ConfirmMode
from model.problem import Fix, HolodeskError, Problem
from ui.colours import Tone, text_style
from ui.hotkey_edit import HotkeyEdit
from ui.problem_view import view
from ui.run_options import DEFAULT_MONITORS, confirm_combo, monitor_combo
from ui.share_dialog import ExportDialog, ImportDialog, choose_import_file
from ui.workers import Background

__all__ = ["AutomationsDialog"]

log = logging.getLogger(__name__)

#: While the file cannot be read the window changes nothing: a save would overwrite it.
_UNREADABLE_FIX = Fix("Correct or remove the file; nothing is changed until then.")

ConfirmDelete = Callable[[QWidget, str], bool]
#: Asked before unsaved edits are left: returns "save", "discard" or "cancel".
AskUnsaved = Callable[[QWidget, str], str]
#: The schedule kinds in the editor's drop-down: (shown, kind; "" for none).
_KINDS = (("None", ""), ("Once", Repeat.ONCE), ("Daily", Repeat.DAILY),
          ("Weekly", Repeat.WEEKLY), ("At login", Repeat.LOGIN))


def ask_delete(parent: QWidget, name: str) -> bool:
    """Ask the person whether to delete ``name`` (the default: No)."""
    answer = QMessageBox.question(
        parent, "Delete automation", f"Delete the automation “{name}”?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes


def ask_unsaved(parent: QWidget, name: str) -> str:
    """Ask whether to save the form's changes to ``name`` first: save, discard or cancel."""
    buttons = QMessageBox.StandardButton
    answer = QMessageBox.question(
        parent, "Unsaved changes", f"Save the changes to “{name}” first?",
        buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save,
    )
    return {buttons.Save: "save", buttons.Discard: "discard"}.get(answer, "cancel")


class AutomationsDialog(QDialog):
    """List, add, edit, delete and test-run automations (see the module doc).

    Signals: ``saved(list[Automation])`` after a change reached the file,
    ``test_run_requested(Automation)`` for a watched run of the form's automation.
    Slots: :meth:`reload`, :meth:`new`, :meth:`select`, :meth:`save`, :meth:`delete`,
    :meth:`test_run`.
    """

    saved = Signal(object)
    test_run_requested = Signal(object)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        path: Path | None = None,
        stop_hotkey: str = DEFAULT_STOP_HOTKEY,
        confirm: str = "risky",
        monitor: str = "1",
        monitors: Sequence[str] = DEFAULT_MONITORS,
        confirm_delete: ConfirmDelete = ask_delete,
        ask_unsaved: AskUnsaved = ask_unsaved,
        now: Callable[[], datetime] | None = None,
        autostart: Callable[[], Autostart | None] = default_autostart,
        choose_import: Callable[[QWidget], Path | None] = choose_import_file,
        export_folder: Path | None = None,
    ) -> None:
        super().__init__(parent)
        zone = local_zone()
        self._now: Callable[[], datetime] = now or (lambda: datetime.now(zone))
        self._autostart = autostart  # read when shown: Settings may turn it on meanwhile
        self._choose_import = choose_import
        self._export_folder = export_folder
        self.export_dialog: ExportDialog | None = None
        self.import_dialog: ImportDialog | None = None
        self._notes: dict[str, str] = {}
        self.setWindowTitle("holodesk — automations")
        self.path = automations_path() if path is None else path
        self.stop_hotkey = stop_hotkey
        self._defaults = (confirm, monitor)
        self._confirm_delete = confirm_delete
        self._ask_unsaved = ask_unsaved
        self._items: list[Automation] = []
        self._editing: str | None = None  # the saved name of the entry in the form
        self._loaded: Automation | None = None  # that entry as it was put in the form
        self._after_save: Callable[[], object] | None = None  # what Save in a prompt goes on to
        self._readable = True
        self._busy = False
        # Writes in the order asked. A write still running when the window closes is
        # delivered all the same: the app opens this window again, which must not find it
        # busy for good (and the app learns of the change at once).
        self._tasks = Background(self, max_threads=1)
        self._build(monitors)
        self._clean = self._snapshot()
        self.reload()

    # -- layout ------------------------------------------------------------------------------

    def _build(self, monitors: Sequence[str]) -> None:
        self.list = QListWidget()
        self.list.setMinimumWidth(200)
        self.list.currentItemChanged.connect(self._on_current)
        self.new_button = QPushButton("&New")
        self.new_button.clicked.connect(self.new)
        self.delete_button = QPushButton("&Delete")
        self.delete_button.clicked.connect(self.delete)
        left_buttons = QHBoxLayout()
        left_buttons.addWidget(self.new_button)
        left_buttons.addWidget(self.delete_button)
        self.export_button = QPushButton("E&xport…")
        self.export_button.setToolTip("Write the selected automation to a file to share it")
        self.export_button.clicked.connect(self.export)
        self.import_button = QPushButton("&Import…")
        self.import_button.setToolTip("Add an automation from a file someone exported")
        self.import_button.clicked.connect(self.import_file)
        share_buttons = QHBoxLayout()
        share_buttons.addWidget(self.export_button)
        share_buttons.addWidget(self.import_button)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        left.addLayout(left_buttons)
        left.addLayout(share_buttons)

        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("e.g. timesheet (holodesk trigger NAME runs it)")
        self.task_edit = QPlainTextEdit()
        self.task_edit.setPlaceholderText("What should holodesk do? In plain words, as for a "
                                          "new task.")
        self.task_edit.setTabChangesFocus(True)
        self.confirm_combo = confirm_combo()
        self.monitor_combo = monitor_combo(monitors)
        self.task_edit.textChanged.connect(self._follow_task)
        self.params_table = QTableWidget(0, 4)
        self.params_table.setHorizontalHeaderLabels(
            ["Parameter", "Default", "Secret", "Description"])
        self.params_table.verticalHeader().setVisible(False)
        header = self.params_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.params_table.setMaximumHeight(120)
        self.params_table.setToolTip(
            "Write {name} in the task for a value filled in at each run, e.g. rename {file}. "
            "Without a default it is asked when you run it from the tray or this window; "
            "hotkeys use the defaults. A secret is never saved in the automations file.")
        self.params_table.itemChanged.connect(self._on_param_changed)
        self._param_memory: dict[str, Parameter] = {}
        self.hotkey_edit = HotkeyEdit(self._check_hotkey)
        self.hotkey_edit.setPlaceholderText("none: click here, then press the keys")
        stop = parse_combo(self.stop_hotkey).label()
        self.hotkey_edit.setToolTip(
            f"Click here and press a global hotkey that runs this automation while holodesk "
            f"runs: two of Ctrl, Alt and Super with a key (Ctrl+Alt+1), or an F-key or Pause "
            f"(F9, Ctrl+F9); not {stop}, the emergency stop. Backspace empties it.")
        form = QFormLayout()
        # Alt+letter reaches each field (QFormLayout makes the label its buddy).
        form.addRow("Na&me:", self.name_edit)
        form.addRow("&Task:", self.task_edit)
        form.addRow("&Confirm:", self.confirm_combo)
        form.addRow("M&onitor:", self.monitor_combo)
        form.addRow("&Hotkey:", self.hotkey_edit)
        form.addRow("Schedu&le:", self._build_schedule())
        form.addRow("", self.schedule_status)
        form.addRow("&Parameters:", self.params_table)
        form.addRow("Saved steps:", self._build_steps())

        self.message = QLabel()
        self.message.setTextFormat(Qt.TextFormat.PlainText)  # it quotes the file
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.test_button = QPushButton("Test r&un")
        self.test_button.setToolTip("Run it now with every step confirmed, to watch it safely; "
                                    "the model decides every step (saved steps are not "
                                    "replayed, and this run's are not saved)")
        self.test_button.clicked.connect(self.test_run)
        self.save_button = QPushButton("&Save")
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self.save)
        self.close_button = QPushButton("Close")
        self.close_button.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.close_button)
        right = QVBoxLayout()
        right.addLayout(form, 1)
        right.addWidget(self.message)
        right.addLayout(buttons)

        layout = QHBoxLayout(self)
        layout.addLayout(left)
        layout.addLayout(right, 2)
        self.resize(760, 460)

        # The usual keys: Ctrl+S saves, Ctrl+N starts a new one, Delete in the list deletes.
        QShortcut(QKeySequence.StandardKey.Save, self, self.save)
        QShortcut(QKeySequence.StandardKey.New, self, self.new)
        delete = QShortcut(QKeySequence(Qt.Key.Key_Delete), self.list, self.delete)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)

    def _build_steps(self) -> QWidget:
        self.steps_status = QLabel()
        self.steps_status.setTextFormat(Qt.TextFormat.PlainText)
        self.steps_status.setWordWrap(True)
        self.forget_steps_button = QPushButton("&Forget saved steps")
        self.forget_steps_button.setToolTip(
            "Its next run asks the model at every step, and saves its steps if it succeeds")
        self.forget_steps_button.clicked.connect(self.forget_steps)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.steps_status, 1)
        row.addWidget(self.forget_steps_button)
        box = QWidget()
        box.setLayout(row)
        return box

    def _build_schedule(self) -> QWidget:
        self.schedule_status = QLabel()
        self.schedule_status.setTextFormat(Qt.TextFormat.PlainText)  # it may quote a name
        self.schedule_status.setWordWrap(True)
        self.schedule_kind = QComboBox()
        for shown, kind in _KINDS:
            self.schedule_kind.addItem(shown, str(kind))
        self.schedule_kind.setToolTip(
            "Run it by itself while holodesk runs. A run missed while holodesk was not "
            "running or the computer slept is reported, not run late.")
        self.schedule_date = QDateTimeEdit()
        self.schedule_date.setCalendarPopup(True)
        self.schedule_date.setDisplayFormat("yyyy-MM-dd HH:mm")
        self.schedule_time = QTimeEdit()
        self.schedule_time.setDisplayFormat("HH:mm")
        self.day_checks: list[QCheckBox] = []
        days = QHBoxLayout()
        days.setContentsMargins(0, 0, 0, 0)
        for name in DAY_NAMES:
            check = QCheckBox(name.capitalize())
            check.toggled.connect(self._schedule_changed)
            self.day_checks.append(check)
            days.addWidget(check)
        days.addStretch(1)
        self.days_box = QWidget()
        self.days_box.setLayout(days)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.schedule_kind)
        row.addWidget(self.schedule_date)
        row.addWidget(self.schedule_time)
        row.addStretch(1)
        box = QVBoxLayout()
        box.setContentsMargins(0, 0, 0, 0)
        box.addLayout(row)
        box.addWidget(self.days_box)
        editor = QWidget()
        editor.setLayout(box)
        self.schedule_kind.currentIndexChanged.connect(self._schedule_changed)
        self.schedule_date.dateTimeChanged.connect(self._schedule_changed)
        self.schedule_time.timeChanged.connect(self._schedule_changed)
        self._set_schedule(None)
        return editor

    # -- parameters ----------------------------------------------------------------------------

    def _follow_task(self) -> None:
        """One row per placeholder of the task, in order; a task with a stray brace leaves the
        rows as they are (Save names the brace)."""
        try:
            names = placeholders(self.task_edit.toPlainText())
        except ParameterError:
            return
        current = self.form_parameters()
        if names == list(current):
            return
        self._param_memory.update(current)
        self._set_param_rows({n: self._param_memory.get(n, Parameter()) for n in names})

    def _set_param_rows(self, params: dict[str, Parameter]) -> None:
        table = self.params_table
        table.blockSignals(True)
        table.setRowCount(0)
        for name, p in params.items():
            row = table.rowCount()
            table.insertRow(row)
            label = QTableWidgetItem(name)
            label.setFlags(Qt.ItemFlag.ItemIsEnabled)
            table.setItem(row, 0, label)
            table.setItem(row, 1, QTableWidgetItem(p.default or ""))
            secret = QTableWidgetItem()
            secret.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
            secret.setCheckState(Qt.CheckState.Checked if p.secret else Qt.CheckState.Unchecked)
            secret.setToolTip("Asked in a password field or kept in your keyring; never saved "
                              "in the automations file, masked in the log")
            table.setItem(row, 2, secret)
            table.setItem(row, 3, QTableWidgetItem(p.description))
            self._lock_default(row)
        table.blockSignals(False)

    def _on_param_changed(self, item: QTableWidgetItem) -> None:
        if item.column() == 2:
            self.params_table.blockSignals(True)
            self._lock_default(item.row())
            self.params_table.blockSignals(False)

    def _lock_default(self, row: int) -> None:
        """A secret has no default: its cell is emptied and cannot be edited."""
        secret = self.params_table.item(row, 2)
        default = self.params_table.item(row, 1)
        if secret is None or default is None:
            return
        if secret.checkState() == Qt.CheckState.Checked:
            default.setText("")
            default.setFlags(Qt.ItemFlag.NoItemFlags)
            default.setToolTip("A secret has no default")
        else:
            default.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                             | Qt.ItemFlag.ItemIsEditable)
            default.setToolTip("Used when no value is given; hotkeys need one")

    def form_parameters(self) -> dict[str, Parameter]:
        """The table's declarations as they stand (not validated: :meth:`form_automation`
        does that)."""
        out: dict[str, Parameter] = {}
        table = self.params_table
        for row in range(table.rowCount()):
            name, default = table.item(row, 0), table.item(row, 1)
            secret, about = table.item(row, 2), table.item(row, 3)
            if name is None or default is None or secret is None or about is None:
                continue
            out[name.text()] = Parameter.model_construct(
                default=default.text() or None,
                secret=secret.checkState() == Qt.CheckState.Checked,
                description=about.text().strip())
        return out

    def _check_hotkey(self, text: str) -> None:
        """A pressed hotkey, refused at once when the file would refuse it (the rule, or the
        emergency stop's chord); other automations' hotkeys are checked on Save."""
        validate_hotkey(text)
        if conflicts(text, self.stop_hotkey):
            raise HotkeyError(f"{text!r} would also fire the emergency stop hotkey "
                              f"({parse_combo(self.stop_hotkey).label()}); choose another")

    # -- what the window shows ---------------------------------------------------------------

    @property
    def automations(self) -> list[Automation]:
        """The automations as last read or saved."""
        return list(self._items)

    @property
    def editing(self) -> str | None:
        """The saved name of the automation in the form; None for a new one."""
        return self._editing

    @property
    def is_dirty(self) -> bool:
        """Whether the form holds changes not saved yet (``Ctrl+Alt+1`` for ``ctrl+alt+1`` or
        a trailing space is no change)."""
        if self._snapshot() == self._clean:
            return False
        if self._loaded is None:
            return True
        try:
            return self.form_automation() != self._loaded
        except AutomationError:
            return True

    def _snapshot(self) -> tuple[str, ...]:
        params = tuple((n, p.default or "", str(p.secret), p.description)
                       for n, p in self.form_parameters().items())
        return (self.name_edit.text(), self.task_edit.toPlainText(),
                str(self.confirm_combo.currentData()), self.monitor_combo.currentText(),
                self.hotkey_edit.text(), self.schedule_text() or "", str(params))

    @Slot()
    def reload(self) -> None:
        """Read the file again (keeps the entry being edited selected when it still exists).

        Unsaved edits in the form stay as they are: the file changing elsewhere (the CLI, an
        editor, the app) must not wipe what the person is typing.
        """
        try:
            items = load_automations(self.path)
        except AutomationError as e:
            self._readable = False
            self._items = []
            self._fill_list()
            self._show_error(view(Problem(e.message, _UNREADABLE_FIX)).text())
            self._refresh()
            return
        was_unreadable = not self._readable
        self._readable = True
        self._items = items
        self._fill_list()
        if was_unreadable:
            self._show_info("")
        keep = self._editing
        row = self._row_of(keep) if keep is not None else -1
        if self.is_dirty:
            self._show_row(row)
            if keep is not None and row < 0:
                self._editing = self._loaded = None
                self._show_error(f"“{keep}” was renamed or deleted elsewhere; your changes are "
                                 "still here, and Save adds them as a new automation.")
            elif row >= 0 and self._items[row] != self._loaded:
                self._loaded = self._items[row]  # told once
                self._show_error(f"“{keep}” was changed elsewhere; your changes are still "
                                 "here, and Save replaces that version with them.")
        elif row >= 0:
            self._show_row(row)
            if self._items[row] != self._loaded:  # else the form and its message stay
                self._load_form(self._items[row])
        elif self._items and keep is None:
            self._show_row(0)
            self._load_form(self._items[0])
        elif keep is not None:
            self._clear_form()
        self._refresh()

    def _fill_list(self) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for a in self._items:
            label = a.hotkey_label()
            item = QListWidgetItem(f"{a.name}    {label}" if label else a.name)
            item.setData(Qt.ItemDataRole.UserRole, a.name)
            item.setToolTip(a.task)
            self.list.addItem(item)
        self.list.blockSignals(False)

    def _row_of(self, name: str) -> int:
        key = name.casefold()
        for row, a in enumerate(self._items):
            if a.key == key:
                return row
        return -1

    def _refresh(self) -> None:
        editable = self._readable and not self._busy
        for widget in (self.name_edit, self.task_edit, self.confirm_combo, self.monitor_combo,
                       self.hotkey_edit, self.params_table, self.save_button, self.new_button,
                       self.list, self.schedule_kind, self.schedule_date, self.schedule_time,
                       self.days_box):
            widget.setEnabled(editable)
        self.delete_button.setEnabled(editable and self._editing is not None)
        self.export_button.setEnabled(editable and self._editing is not None)
        self.import_button.setEnabled(editable)
        self.test_button.setEnabled(self._readable)
        self._show_steps(editable)

    def _show_steps(self, editable: bool) -> None:
        """Whether the automation in the form has saved steps (a file's date: cheap)."""
        loaded = self._loaded if self._editing is not None else None
        saved = None if loaded is None else trajectory_time(loaded.key)
        if loaded is None:
            text = "None yet: its first successful run saves them."
        elif saved is None:
            text = ("None: its next successful run saves them, and the runs after it replay "
                    "them without the model.")
        else:
            when = clock.strftime("%Y-%m-%d %H:%M", clock.localtime(saved))
            text = (f"From its successful run of {when}: its runs replay them without the "
                    "model, which takes over where the screen differs.")
        self.steps_status.setText(text)
        self.forget_steps_button.setEnabled(editable and saved is not None)

    def _show_error(self, text: str) -> None:
        self.message.setStyleSheet(text_style(Tone.ERROR))
        self.message.setText(text[:1].upper() + text[1:])

    def _show_info(self, text: str) -> None:
        self.message.setStyleSheet(text_style(Tone.OK))
        self.message.setText(text)

    def showEvent(self, event: QShowEvent) -> None:
        # A run may have saved (or replaced) steps since the window was last shown.
        self._refresh()
        super().showEvent(event)

    # -- editing -------------------------------------------------------------------------------

    def _on_current(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is None:
            return
        name = str(current.data(Qt.ItemDataRole.UserRole))
        if self._editing is not None and name.casefold() == self._editing.casefold():
            return  # already in the form
        if self.is_dirty:
            # Asked once the click or key press that moved the selection is over: a modal
            # box inside it, or moving the selection back inside it, confuses the list.
            QTimer.singleShot(0, lambda: self._leave_for(name))
            return
        self.select(name)

    def _leave_for(self, name: str) -> None:
        if self._may_leave(lambda: self.select(name)):
            self.select(name)
        else:
            self._show_row(self._row_of(self._editing) if self._editing is not None else -1)

    def _may_leave(self, then: Callable[[], object]) -> bool:
        """Whether the form may be replaced now: no unsaved changes, or the person discards
        them. Save in the prompt saves first and calls ``then`` once that reached the file."""
        if not self.is_dirty:
            return True
        shown = self.name_edit.text().strip() or self._editing or "the new automation"
        answer = self._ask_unsaved(self, shown)
        if answer == "discard":
            return True
        if answer == "save":
            self._after_save = then
            self.save()
        return False

    def _show_row(self, row: int) -> None:
        """Select ``row`` in the list (-1: none) without loading it into the form."""
        self.list.blockSignals(True)
        if row < 0:
            self.list.clearSelection()
        self.list.setCurrentRow(row)
        self.list.blockSignals(False)

    @Slot(str)
    def select(self, name: str) -> bool:
        """Show the automation ``name`` in the form (what was in the form is replaced); False
        when there is none."""
        row = self._row_of(name)
        if row < 0:
            return False
        self._show_row(row)
        self._load_form(self._items[row])
        return True

    def _load_form(self, a: Automation) -> None:
        self._editing = a.name
        self._loaded = a
        self.name_edit.setText(a.name)
        self._param_memory = dict(a.parameters)
        self._set_param_rows({})
        self.task_edit.setPlainText(a.task)
        self._set_param_rows(dict(a.parameters))
        self._set_confirm(str(a.confirm))
        self._set_monitor(a.monitor)
        self.hotkey_edit.setText(a.hotkey or "")
        self._set_schedule(a.when)
        self._clean = self._snapshot()
        self.message.clear()
        self._refresh()

    @Slot()
    def new(self) -> None:
        """Empty the form for a new automation (the settings' confirm mode and monitor); asks
        first when the form has unsaved changes."""
        if self._readable and not self._busy and self._may_leave(self.new):
            self._clear_form()
            self.name_edit.setFocus()

    def _clear_form(self) -> None:
        self._editing = self._loaded = None
        self._show_row(-1)
        self.name_edit.clear()
        self._param_memory = {}
        self.task_edit.clear()
        self._set_param_rows({})
        self._set_confirm(self._defaults[0])
        self._set_monitor(self._defaults[1])
        self.hotkey_edit.clear()
        self._set_schedule(None)
        self._clean = self._snapshot()
        self.message.clear()
        self._refresh()

    def _set_confirm(self, mode: str) -> None:
        index = self.confirm_combo.findData(mode)
        if index >= 0:
            self.confirm_combo.setCurrentIndex(index)

    def _set_monitor(self, monitor: str) -> None:
        if self.monitor_combo.findText(monitor) < 0:
            self.monitor_combo.addItem(monitor)
        self.monitor_combo.setCurrentText(monitor)

    def form_automation(self) -> Automation:
        """The form as an automation; :class:`AutomationError` naming the bad field."""
        return Automation.make(
            "",
            name=self.name_edit.text(),
            task=self.task_edit.toPlainText(),
            confirm=str(self.confirm_combo.currentData()),
            monitor=self.monitor_combo.currentText(),
            hotkey=self.hotkey_edit.text(),
            schedule=self.schedule_text(),
            parameters={n: p.model_dump() for n, p in self.form_parameters().items()},
        )

    # -- the schedule ------------------------------------------------------------------------

    def schedule_text(self) -> str | None:
        """The schedule in the form, as text (None: none). A weekly one with no day ticked
        is returned as it is, so that saving names the problem."""
        kind = str(self.schedule_kind.currentData())
        at = self.schedule_time.time().toString("HH:mm")
        if kind == Repeat.ONCE:
            return f"once at {self.schedule_date.dateTime().toString('yyyy-MM-dd HH:mm')}"
        if kind == Repeat.DAILY:
            return f"daily at {at}"
        if kind == Repeat.WEEKLY:
            days = ",".join(DAY_NAMES[i] for i, c in enumerate(self.day_checks) if c.isChecked())
            return f"weekly on {days or 'no day'} at {at}"
        if kind == Repeat.LOGIN:
            return "at login"
        return None

    def _set_schedule(self, schedule: Schedule | None) -> None:
        """Show ``schedule`` in the editor (the fields of other kinds keep useful defaults)."""
        widgets = (self.schedule_kind, self.schedule_date, self.schedule_time, *self.day_checks)
        for widget in widgets:
            widget.blockSignals(True)
        kind = "" if schedule is None else str(schedule.repeat)
        self.schedule_kind.setCurrentIndex(max(0, self.schedule_kind.findData(kind)))
        at = schedule.at if schedule is not None and schedule.at is not None else time(9, 0)
        on = schedule.on if schedule is not None and schedule.on is not None else \
            self._now().date() + timedelta(days=1)
        self.schedule_time.setTime(QTime(at.hour, at.minute))
        self.schedule_date.setDateTime(
            QDateTime(QDate(on.year, on.month, on.day), QTime(at.hour, at.minute)))
        days = schedule.days if schedule is not None and schedule.days else frozenset(range(5))
        for i, check in enumerate(self.day_checks):
            check.setChecked(i in days)
        for widget in widgets:
            widget.blockSignals(False)
        self._schedule_changed()

    def _schedule_changed(self) -> None:
        kind = str(self.schedule_kind.currentData())
        self.schedule_date.setVisible(kind == Repeat.ONCE)
        self.schedule_time.setVisible(kind in (Repeat.DAILY, Repeat.WEEKLY))
        self.days_box.setVisible(kind == Repeat.WEEKLY)
        self._show_schedule_status()

    def set_notes(self, notes: Mapping[str, str]) -> None:
        """What the app has to say about each automation's schedule (a missed or skipped
        run), by key; shown under the schedule of the automation in the form."""
        self._notes = dict(notes)
        self._show_schedule_status()

    def _show_schedule_status(self) -> None:
        lines: list[str] = []
        tone = Tone.INFO
        text = self.schedule_text()
        if text is not None:
            try:
                probe = Automation.make("", name="probe", task="probe", schedule=text)
            except AutomationError:
                probe = None
                lines.append("Tick at least one day." if "no day" in text else "")
                tone = Tone.ERROR
            if probe is not None and probe.when is not None:
                if probe.when.timed:
                    now = self._now()
                    lines.append(f"Next run: {next_runs([probe], now, now.tzinfo)[probe.key]}.")
                else:
                    lines.append("Runs once each time holodesk starts at login.")
                    need = login_needs(self._autostart())
                    if need is not None:
                        lines.append(need)
                        tone = Tone.WARNING
        note = self._notes.get((self._editing or "").casefold())
        if note:
            lines.append(note)
            tone = Tone.WARNING if tone is Tone.INFO else tone
        self.schedule_status.setStyleSheet(text_style(tone))
        self.schedule_status.setText("\n".join(line for line in lines if line))

    @Slot()
    def save(self) -> None:
        """Validate the form and write it to the file (added, or replacing the one edited)."""
        if not self._readable or self._busy:
            return
        try:
            automation = self.form_automation()
        except AutomationError as e:
            self._after_save = None
            self._show_error(view(e).text())
            return
        if automation.schedule != (self._loaded.schedule if self._loaded else None):
            try:  # a new once time must be ahead; one already saved stays as it is
                now = self._now()
                check_new_schedule(automation.schedule, now, now.tzinfo)
            except AutomationError as e:
                self._after_save = None
                self._show_error(view(e).text())
                return
        path, stop, old = self.path, self.stop_hotkey, self._editing

        before = self._loaded
        notes: list[str] = []

        # The mode in the form is the person's choice when they changed it (or for a new
        # one); otherwise the mode approved before carries over (app/approval.py).
        chosen = before is None or automation.confirm != before.confirm

        def work() -> list[Automation]:
            if old is None:
                return add_automation(automation, path=path, stop_hotkey=stop)
            items = replace_automation(old, automation, path=path, stop_hotkey=stop,
                                       confirm_chosen=chosen)
            if before is not None:
                rename_secrets(before, automation)  # renamed: its kept secrets follow it
                kept = follow_edit(before, automation)  # and its saved steps, for the same task
                if kept:
                    notes.append(f" {kept[:1].upper()}{kept[1:]}.")
            return items

        self._set_busy(True)
        self._tasks.run(work,
                        lambda items: self._saved(items, automation, "Saved." + "".join(notes)),
                        self._failed)

    @Slot()
    def delete(self) -> None:
        """Delete the automation in the form, once the person agrees."""
        name = self._editing
        if name is None or not self._readable or self._busy:
            return
        if not self._confirm_delete(self, name):
            return
        path, gone = self.path, self._loaded

        def work() -> list[Automation]:
            items = remove_automation(name, path=path)
            if gone is not None:
                forget_secrets(gone)  # nothing of it stays in the keyring
                forget_trajectory(gone.key)  # nor its saved steps: a new one starts afresh
            return items

        self._set_busy(True)
        self._tasks.run(work,
                        lambda items: self._saved(items, None, f"Deleted “{name}”."),
                        self._failed)

    def _saved(self, items: list[Automation], shown: Automation | None, text: str) -> None:
        self._set_busy(False)
        self._items = items
        self._fill_list()
        if shown is not None:
            self.select(shown.name)
        else:
            self._clear_form()
        self._show_info(text)
        self.saved.emit(list(items))
        then, self._after_save = self._after_save, None
        if then is not None:
            then()  # where the person was going when asked to save

    def _failed(self, error: BaseException) -> None:
        self._set_busy(False)
        self._after_save = None  # they stay on the form, with the reason shown
        if not isinstance(error, AutomationError | OSError):
            log.error("saving the automations failed", exc_info=error)
        self._show_error(view(error).text() if isinstance(error, AutomationError)
                         else f"Cannot save {self.path}: {error}")

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._refresh()

    # -- sharing -----------------------------------------------------------------------------------

    @Slot()
    def export(self) -> None:
        """Open the export dialog for the saved automation in the form (its saved steps are
        read on a worker thread first)."""
        name = self._editing
        if name is None or not self._readable or self._busy:
            return
        if self.is_dirty:
            self._show_error("Save your changes first: the file holds the automation as saved.")
            return
        path, folder = self.path, self._export_folder

        def shown(plan: ExportPlan) -> None:
            self._set_busy(False)
            dialog = ExportDialog(plan, default_output(plan.automation, folder or Path.home()),
                                  self)
            dialog.exported.connect(
                lambda dest: self._show_info(f"Exported “{plan.automation.name}” to {dest}."))
            self.export_dialog = dialog
            dialog.open()

        self._set_busy(True)
        self._tasks.run(lambda: plan_export(name, automations=path), shown, self._share_failed)

    @Slot()
    def import_file(self) -> None:
        """Ask for a file, check it on a worker thread, then show what it holds to import."""
        if not self._readable or self._busy or not self._may_leave(self.import_file):
            return
        chosen = self._choose_import(self)
        if chosen is None:
            return

        def shown(shared: Shared) -> None:
            self._set_busy(False)
            dialog = ImportDialog(shared, path=self.path, stop_hotkey=self.stop_hotkey,
                                  parent=self)
            dialog.imported.connect(self._imported)
            self.import_dialog = dialog
            dialog.open()

        self._set_busy(True)
        self._tasks.run(lambda: read_share(chosen), shown, self._share_failed)

    def _imported(self, done: Imported) -> None:
        items = load_automations(self.path)
        steps = f" with {done.steps} saved steps" if done.steps else ""
        notes = "".join(f" {n[:1].upper()}{n[1:]}." for n in done.notes)
        self._saved(items, done.automation, f"Imported “{done.automation.name}”{steps}.{notes}")

    def _share_failed(self, error: BaseException) -> None:
        self._set_busy(False)
        if not isinstance(error, HolodeskError | OSError):
            log.error("sharing an automation failed", exc_info=error)
        self._show_error(view(error).text() if isinstance(error, HolodeskError)
                         else f"It did not work: {error}")

    @Slot()
    def forget_steps(self) -> None:
        """Drop the saved steps of the automation in the form (its next run asks the model at
        every step)."""
        name, loaded = self._editing, self._loaded
        if name is None or loaded is None or not self._readable or self._busy:
            return
        key = loaded.key

        def done(had: bool) -> None:
            self._set_busy(False)
            self._show_info(f"The saved steps of “{name}” are forgotten: its next run asks the "
                            "model at every step." if had else f"“{name}” has no saved steps.")

        def failed(error: BaseException) -> None:
            self._set_busy(False)
            self._show_error(f"Cannot forget the saved steps of “{name}”: {error}")

        self._set_busy(True)
        self._tasks.run(lambda: forget_trajectory(key), done, failed)

    @Slot()
    def test_run(self) -> None:
        """Ask for a run of the form's automation with every step confirmed."""
        try:
            automation = self.form_automation()
        except AutomationError as e:
            self._show_error(view(e).text())
            return
        self._show_info(f"Test run of “{automation.name}”: every step waits for your approval.")
        self.test_run_requested.emit(automation.changed(confirm=ConfirmMode.ALWAYS))
