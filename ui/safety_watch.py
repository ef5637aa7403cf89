"""Safety settings changed outside holodesk, looked for at start and before each run, and
asked about in a small window (app/safety_review.py); never holds a run up."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from app.safety_review import Review, review
from app.safety_review import apply as apply_changes
from app.safety_review import keep as keep_approved
from app.settings import Settings, load_settings
from ui.safety_changes_dialog import SafetyChangesDialog
from ui.workers import Background

log = logging.getLogger(__name__)


class SafetyWatch:
    """Looks for changed safety settings off the GUI thread (the keyring may wait to be
    unlocked) with ``background``.

    ``load`` reads the settings in effect (judged), given to ``read``; an answer's settings
    go to ``changed``; ``tell`` says a note to the person; ``keep_out`` keeps the window out
    of the model's screenshots; ``closed`` is whether the app is closing.
    """

    def __init__(self, background: Background, automations_file: Path, *,
                 load: Callable[[], Settings] | None, read: Callable[[Settings], None],
                 changed: Callable[[Settings], None], tell: Callable[[str], None],
                 keep_out: Callable[[QWidget], None], closed: Callable[[], bool]) -> None:
        self._background, self._path, self._load = background, automations_file, load
        self._read, self._changed, self._tell = read, changed, tell
        self._keep_out, self._closed = keep_out, closed
        #: The open window, if any.
        self.dialog: SafetyChangesDialog | None = None
        self._notes: set[str] = set()

    def check(self) -> None:
        """Look now; ask when something changed."""
        if self._closed():
            return
        load, path = self._load, self._path

        def look() -> tuple[Review, Settings | None]:
            done = review(every_automation=True, automations_file=path)
            # The settings in effect now, as judged (a stop hotkey set with `config set`).
            return done, load() if load is not None else None

        self._background.run(
            look, self._looked,
            lambda e: log.warning("the safety settings could not be checked: %s", e))

    def _looked(self, result: tuple[Review, Settings | None]) -> None:
        done, fresh = result
        if fresh is not None:
            self._read(fresh)
        if self._closed():
            return
        if done.note and done.note not in self._notes:
            self._notes.add(done.note)  # told once per start
            self._tell(done.note[:1].upper() + done.note[1:] + ".")
        if not done.changes:
            return
        if self.dialog is not None:
            self.dialog.show_review(done)  # the newest look at the files
            return
        dialog = SafetyChangesDialog(done)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.answered.connect(lambda apply: self._answer(dialog.review, apply))
        dialog.finished.connect(lambda _result: self._dialog_closed(dialog))
        self._keep_out(dialog)  # never seen, never clicked by the model
        self.dialog = dialog
        dialog.open()
        dialog.raise_()

    def _dialog_closed(self, dialog: SafetyChangesDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None  # deleted on close: never touched again

    def _answer(self, done: Review, apply: bool) -> None:
        what = "applied" if apply else "kept"

        def work() -> Settings:
            if apply:
                apply_changes(done)
            else:
                keep_approved(done)
            return load_settings()

        def failed(e: BaseException) -> None:
            self._tell(f"The safety settings could not be {what}: {e}")

        self._background.run(work, self._changed, failed)
