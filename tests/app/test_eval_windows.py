"""`holodesk eval`'s Tk task windows without a display: the settings a two-window task runs
with, when its windows count as moved, and the checks, read from the state a window writes
(the editor's from the file on disk). The windows themselves run in
tests/e2e/test_eval_x11.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from app.demo.task_look import NOTES_AFTER, NOTES_BEFORE, NOTES_FILE, ORDER_NUMBER, TaskWindow
from app.demo.task_windows import TASK_WINDOW_OPTION, bounding, task_window_command
from app.eval import TASKS, task_settings
from app.eval_windows import (
    ContactsSubject,
    DeliverySubject,
    EditorSubject,
    ExportSubject,
    FilesSubject,
    OrderSubject,
    TaskWindowSubject,
)
from app.settings import Settings
from model.coords import Rect

ORDER = {"order": [100, 150, 355, 190], "form": [500, 150, 394, 198]}


def write_state(subject: TaskWindowSubject, **state: object) -> None:
    path = subject._window.state_path
    path.write_text(json.dumps({"ready": True, "windows": ORDER, **state}), encoding="utf-8")


def opened(subject: TaskWindowSubject) -> None:
    """``subject`` as :meth:`TaskWindowSubject.open` leaves it, without starting a process."""
    state = subject.state()
    assert state is not None
    subject._first = subject._window.rects(state)


def test_every_task_window_is_in_the_suite() -> None:
    names = [task.name for task in TASKS]
    for name in ("edit-and-save", "copy-order-number", "export-as-csv",
                 "open-by-double-click", "search-with-shortcut", "tab-between-fields"):
        assert name in names


def test_a_two_window_task_acts_in_both_and_sees_both(tmp_path: Path) -> None:
    subject = OrderSubject(tmp_path)
    write_state(subject)
    box = subject._window.placed(subject.state() or {})
    assert box == Rect(100, 150, 794, 198)  # from the order's left to the form's right
    config = task_settings(Settings(), box, subject, max_steps=9)
    assert config.only_in == ("holodesk-order-source", "holodesk-order-form")
    assert config.monitor == "826x230+84+134"  # both windows and the margin round them
    assert config.confirm == "never"


def test_either_window_moving_is_a_move(tmp_path: Path) -> None:
    """The capture is the rectangle holding both: it is said while both stay, and the moved
    window's rectangle once either moved (the eval then stops the run), even one moved inside
    that rectangle."""
    subject = OrderSubject(tmp_path)
    write_state(subject)
    opened(subject)
    first = bounding([Rect(*ORDER["order"]), Rect(*ORDER["form"])])
    assert subject.where() == first
    write_state(subject, windows={**ORDER, "order": [100, 155, 355, 190]})
    assert subject.where() == Rect(100, 155, 355, 190)
    write_state(subject, windows={**ORDER, "form": [520, 150, 394, 198]})
    assert subject.where() == Rect(520, 150, 394, 198)


def test_the_order_is_checked_by_what_was_submitted(tmp_path: Path) -> None:
    subject = OrderSubject(tmp_path)
    write_state(subject, submitted=None, field="")
    assert not subject.check().passed
    write_state(subject, submitted="4815", field="4815")
    assert "wanted" in subject.check().detail
    write_state(subject, submitted=ORDER_NUMBER, field=ORDER_NUMBER)
    assert subject.check().passed


def test_the_editor_is_checked_on_disk(tmp_path: Path) -> None:
    subject = EditorSubject(tmp_path)
    subject.prepare()
    notes = tmp_path / NOTES_FILE
    assert notes.read_text(encoding="utf-8") == NOTES_BEFORE
    write_state(subject, unsaved=True)
    check = subject.check()
    assert not check.passed and "unsaved" in check.detail  # typed, not saved: not done
    notes.write_text(NOTES_AFTER.replace("Friday", "Monday"), encoding="utf-8")
    check = subject.check()
    assert not check.passed and "Monday" in check.detail  # something else changed too
    notes.write_text(NOTES_AFTER, encoding="utf-8")
    assert subject.check().passed


def test_the_other_windows_are_checked_by_their_state(tmp_path: Path) -> None:
    export = ExportSubject(tmp_path)
    write_state(export, chosen="CSV", exported=None)
    assert not export.check().passed
    write_state(export, chosen="CSV", exported="CSV")
    assert export.check().passed
    files = FilesSubject(tmp_path)
    write_state(files, selected="invoice-0042.pdf", opened=None)
    assert not files.check().passed  # selected is not opened
    write_state(files, selected="invoice-0042.pdf", opened="invoice-0042.pdf")
    assert files.check().passed
    contacts = ContactsSubject(tmp_path)
    write_state(contacts, searched=None, opened="Grace Hopper")
    assert not contacts.check().passed  # clicked open, not found through the search
    write_state(contacts, searched="Hopper", opened="Grace Hopper")
    assert contacts.check().passed


def test_the_delivery_form_counts_only_a_tab_to_the_postcode(tmp_path: Path) -> None:
    delivery = DeliverySubject(tmp_path)
    saved = {"City": "Lyon", "Postcode": "69002"}
    write_state(delivery, saved=None, tabbed=False, typed=saved)
    assert not delivery.check().passed
    write_state(delivery, saved=saved, tabbed=False, typed=saved)
    check = delivery.check()
    assert not check.passed and "Tab" in check.detail  # clicked there, not tabbed
    write_state(delivery, saved={**saved, "Postcode": "69"}, tabbed=True, typed=saved)
    assert not delivery.check().passed
    write_state(delivery, saved=saved, tabbed=True, typed=saved)
    assert delivery.check().passed


def test_no_state_is_a_failed_check(tmp_path: Path) -> None:
    assert "wrote no state" in FilesSubject(tmp_path).check().detail


def test_a_frozen_holodesk_starts_its_windows_itself(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    assert task_window_command(TaskWindow.EDITOR, state, frozen=True) == [
        sys.executable, TASK_WINDOW_OPTION, "editor", "--state", str(state)]
    unfrozen = task_window_command(TaskWindow.ORDER, state, frozen=False)
    assert unfrozen[1:4] == ["-P", "-m", "ui.main"]
