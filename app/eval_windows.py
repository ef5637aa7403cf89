"""The eval tasks in the Tk task windows (app/demo/task_windows.py starts them, ui/practice
draws them): their subjects, which check the outcome from each window's own state (for the
editor, from the file on disk; for a task whose goal is to read a value, from the run's
answer), and their entries in the suite (app/eval.py).

A subject may have several windows (copy-order-number: an order and a form side by side):
``wm_classes`` names every one (the run may act in those only, app/eval_task.py
:func:`~app.eval_task.confined_to`), :meth:`TaskWindowSubject.open` gives the rectangle that
holds them all (the capture), and :meth:`TaskWindowSubject.where` says that same rectangle only
while every window is where it opened: once one moved, it says where that one is now, so the
eval stops the run before the next screenshot. The menu window's ``wm_classes`` also names its
menu bar's pop-up menus, which Tk makes windows of their own.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.demo.task_look import (
    CARD_TITLE,
    CITY,
    COPIES_START,
    COPIES_WANTED,
    INVOICES,
    NOTES_AFTER,
    NOTES_BEFORE,
    NOTES_FILE,
    OPTIONS_WANTED,
    ORDER_FORM_WM_CLASS,
    ORDER_NUMBER,
    POPUP_INSTANCES,
    POSTCODE,
    SEARCH_FOR,
    THEME_START,
    THEME_WANTED,
    WANTED_CONTACT,
    WANTED_FILE,
    WANTED_FORMAT,
    WANTED_INVOICE,
    WM_CLASSES,
    ZOOM_START,
    ZOOM_WANTED,
    TaskWindow,
)
from app.demo.task_windows import TaskWindowProcess, bounding
from app.eval_task import Check, EvalError, EvalTask
from model.coords import Rect

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")

Judge = Callable[[dict[str, Any], "str | None"], Check]


class TaskWindowSubject:
    """A task window of its own process, of :class:`TaskWindow` ``kind``; subclasses say what
    its state must be (:meth:`judge`)."""

    kind: TaskWindow
    #: Every window class the run may act in; empty: its ``wm_class`` alone.
    wm_classes: tuple[str, ...] = ()

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._window = TaskWindowProcess(self.kind, folder)
        self._first: dict[str, Rect] = {}

    @property
    def wm_class(self) -> str:
        return WM_CLASSES[self.kind]

    def prepare(self) -> None:
        """Put in the task folder what the window opens (nothing unless a task needs it)."""

    def open(self) -> Rect:
        self.prepare()
        try:
            state = self._window.start()
        except RuntimeError as e:
            raise EvalError(str(e)) from e
        self._first = self._window.rects(state)
        box = self._window.placed(state)
        assert box is not None  # start returns a placed state
        return box

    def state(self) -> dict[str, Any] | None:
        return self._window.state()

    def check(self, answer: str | None = None) -> Check:
        state = self.state()
        if state is None:
            return Check(False, f"{self._window.label} wrote no state")
        return self.judge(state, answer)

    def judge(self, state: dict[str, Any], answer: str | None) -> Check:
        raise NotImplementedError

    @property
    def alive(self) -> bool:
        return self._window.alive

    def where(self) -> Rect | None:
        state = self.state()
        if state is None or not self._first:
            return None
        now = self._window.rects(state)
        for name, first in self._first.items():
            if name in now and now[name] != first:
                return now[name]  # not the first rectangle: the run stops
        return bounding(list(self._first.values()))

    def close(self) -> None:
        self._window.close()


class JudgedSubject(TaskWindowSubject):
    """A task window whose check is a function of its state and the run's answer."""

    def __init__(self, kind: TaskWindow, folder: Path, judge: Judge) -> None:
        self.kind = kind
        self._judge = judge
        super().__init__(folder)

    def judge(self, state: dict[str, Any], answer: str | None) -> Check:
        return self._judge(state, answer)


def zoom_set(state: dict[str, Any], _answer: str | None) -> Check:
    zoom = state.get("zoom")
    if zoom == ZOOM_WANTED:
        return Check(True, f"the zoom is {ZOOM_WANTED}")
    return Check(False, f"the zoom is {zoom} (wanted {ZOOM_WANTED})")


def card_done(state: dict[str, Any], _answer: str | None) -> Check:
    box = state.get("box")
    if box == "done":
        return Check(True, "the card is in Done")
    return Check(False, f"the card is in {box} (wanted: done)")


def numbers(text: str) -> list[float]:
    """The numbers in ``text`` ("1,275.90" is 1275.9), without invoice numbers."""
    text = re.sub(r"INV-\d+", " ", text, flags=re.IGNORECASE)
    return [float(n.replace(",", "")) for n in _NUMBER.findall(text)]


def total_read(_state: dict[str, Any], answer: str | None) -> Check:
    wanted = float(next(total for number, _c, total in INVOICES if number == WANTED_INVOICE))
    if not answer:
        return Check(False, "the run gave no answer")
    said = numbers(answer)
    others = {float(total) for number, _c, total in INVOICES if number != WANTED_INVOICE}
    if wanted in said and not others & set(said):
        return Check(True, f"answered {wanted:.2f}")
    return Check(False, f"answered {answer!r} (wanted {wanted:.2f} and no other total)")


def options_applied(state: dict[str, Any], _answer: str | None) -> Check:
    applied = state.get("applied")
    if applied == OPTIONS_WANTED:
        return Check(True, "the wanted settings are applied")
    if applied is None:
        return Check(False, f"nothing applied (shown: {state.get('shown')})")
    wrong = [k for k, v in OPTIONS_WANTED.items() if applied.get(k) != v]
    return Check(False, f"applied with {', '.join(wrong)} wrong")


def copies_set(state: dict[str, Any], _answer: str | None) -> Check:
    if state.get("set") == COPIES_WANTED:
        return Check(True, f"{COPIES_WANTED} copies set")
    return Check(False, f"set: {state.get('set')}, shown: {state.get('copies')} "
                        f"(wanted {COPIES_WANTED}, then OK)")


def theme_applied(state: dict[str, Any], _answer: str | None) -> Check:
    if state.get("applied") == THEME_WANTED:
        return Check(True, f"the {THEME_WANTED} theme is applied")
    return Check(False, f"applied: {state.get('applied')}, chosen: {state.get('theme')} "
                        f"(wanted {THEME_WANTED}, then Apply)")


class MenuSubject(JudgedSubject):
    """The menu window: its menu bar's pop-ups are windows named by their menus."""

    kind = TaskWindow.MENU
    wm_classes = (WM_CLASSES[TaskWindow.MENU], *POPUP_INSTANCES)

    def __init__(self, folder: Path) -> None:
        super().__init__(TaskWindow.MENU, folder, zoom_set)


def _subject(kind: TaskWindow, judge: Judge) -> Callable[[Path], TaskWindowSubject]:
    return functools.partial(JudgedSubject, kind, judge=judge)


class EditorSubject(TaskWindowSubject):
    """edit-and-save: the notes file on disk must read :data:`NOTES_AFTER`, nothing else
    changed."""

    kind = TaskWindow.EDITOR

    def prepare(self) -> None:
        (self.folder / NOTES_FILE).write_text(NOTES_BEFORE, encoding="utf-8")

    def check(self, answer: str | None = None) -> Check:
        # The file, never the window: unsaved text in the editor is not a saved file.
        try:
            text = (self.folder / NOTES_FILE).read_text(encoding="utf-8")
        except OSError as e:
            return Check(False, f"cannot read {NOTES_FILE}: {e}")
        if text == NOTES_AFTER:
            return Check(True, f"{NOTES_FILE} on disk says 'status: final', nothing else "
                               "changed")
        if text == NOTES_BEFORE:
            state = self.state() or {}
            unsaved = " (the editor has unsaved changes)" if state.get("unsaved") else ""
            return Check(False, f"{NOTES_FILE} on disk is unchanged{unsaved}")
        changed = [f"{n}: {line!r}" for n, (line, wanted) in enumerate(
            zip(text.split("\n"), NOTES_AFTER.split("\n"), strict=False), start=1)
            if line != wanted]
        lines = "; ".join(changed) or "its length differs"
        return Check(False, f"{NOTES_FILE} on disk is not what was asked: line {lines}")


class OrderSubject(TaskWindowSubject):
    """copy-order-number: the form's submitted order number must be the order's."""

    kind = TaskWindow.ORDER
    wm_classes = (WM_CLASSES[TaskWindow.ORDER], ORDER_FORM_WM_CLASS)

    def judge(self, state: dict[str, Any], _answer: str | None) -> Check:
        sent = state.get("submitted")
        if sent == ORDER_NUMBER:
            return Check(True, f"the form was submitted with {ORDER_NUMBER}")
        if sent is None:
            return Check(False, f"the form was not submitted (its field: "
                                f"{state.get('field')!r})")
        return Check(False, f"the form was submitted with {sent!r} (wanted {ORDER_NUMBER})")


class ExportSubject(TaskWindowSubject):
    """export-as-csv: CSV must be the format confirmed with OK."""

    kind = TaskWindow.EXPORT

    def judge(self, state: dict[str, Any], _answer: str | None) -> Check:
        done = state.get("exported")
        if done == WANTED_FORMAT:
            return Check(True, f"exported as {WANTED_FORMAT}")
        if done is None:
            return Check(False, f"not confirmed with OK (chosen: {state.get('chosen')})")
        return Check(False, f"exported as {done} (wanted {WANTED_FORMAT})")


class FilesSubject(TaskWindowSubject):
    """open-by-double-click: the wanted document must be the one opened."""

    kind = TaskWindow.FILES

    def judge(self, state: dict[str, Any], _answer: str | None) -> Check:
        opened = state.get("opened")
        if opened == WANTED_FILE:
            return Check(True, f"{WANTED_FILE} is open")
        return Check(False, f"open: {opened or 'nothing'} (selected: "
                            f"{state.get('selected') or 'nothing'}; wanted {WANTED_FILE})")


class ContactsSubject(TaskWindowSubject):
    """search-with-shortcut: the wanted contact must be open, found through the search."""

    kind = TaskWindow.CONTACTS

    def judge(self, state: dict[str, Any], _answer: str | None) -> Check:
        opened = state.get("opened")
        searched = state.get("searched")
        if opened == WANTED_CONTACT and searched and SEARCH_FOR.lower() in searched.lower():
            return Check(True, f"{WANTED_CONTACT} is open, found by searching {searched!r}")
        return Check(False, f"open: {opened or 'nothing'} (searched: {searched!r}; wanted "
                            f"{WANTED_CONTACT} by searching {SEARCH_FOR})")


class DeliverySubject(TaskWindowSubject):
    """tab-between-fields: the city and postcode saved, the postcode field reached by Tab."""

    kind = TaskWindow.DELIVERY

    def judge(self, state: dict[str, Any], _answer: str | None) -> Check:
        saved = state.get("saved")
        wanted = {"City": CITY, "Postcode": POSTCODE}
        if saved is None:
            return Check(False, f"not saved (typed: {state.get('typed')})")
        if saved != wanted:
            return Check(False, f"saved {saved} (wanted {wanted})")
        if not state.get("tabbed"):
            return Check(False, "saved as asked, but the Postcode field was not reached with "
                                "Tab from City")
        return Check(True, f"saved {CITY} {POSTCODE}, the Postcode field reached with Tab")


def _ticks(wanted: bool) -> str:
    return " and ".join(k for k, v in OPTIONS_WANTED.items() if v is wanted)


#: The tasks in these windows, in the order the suite runs them.
WINDOW_TASKS: tuple[EvalTask, ...] = (
    EvalTask(
        name="menu-zoom",
        goal=f"In the holodesk menu window, choose View > Zoom > {ZOOM_WANTED} from the menu "
             "bar",
        summary=f"pick from a menu: open View, then the Zoom cascade, choose {ZOOM_WANTED} "
                f"(it starts at {ZOOM_START}; a Tk menu bar)",
        subject=MenuSubject,
    ),
    EvalTask(
        name="drag-card",
        goal=f"In the holodesk board window, drag the card \"{CARD_TITLE}\" from the To do box "
             "into the Done box",
        summary="drag an item: move a card from one box to another on a Tk canvas",
        subject=_subject(TaskWindow.DRAG, card_done),
    ),
    EvalTask(
        name="read-invoice",
        goal=f"In the holodesk invoices window, what is the total of invoice {WANTED_INVOICE}? "
             "Answer with the number",
        summary=f"find and read a value: the total of {WANTED_INVOICE} among invoices whose "
                "numbers and totals look alike; the answer is checked",
        subject=_subject(TaskWindow.INVOICES, total_read),
    ),
    EvalTask(
        name="settings-ticks",
        goal=f"In the holodesk settings window, tick {_ticks(True)}, untick {_ticks(False)}, "
             "then press Apply",
        summary="tick the right checkboxes: two on, two off (each starts the other way), "
                "then Apply",
        subject=_subject(TaskWindow.SETTINGS, options_applied),
    ),
    EvalTask(
        name="set-copies",
        goal=f"In the holodesk print window, set the number of copies to {COPIES_WANTED} "
             "with its - and + buttons, then press OK",
        summary=f"set a number: from {COPIES_START} to {COPIES_WANTED} copies with - and +, "
                "reading the number after each press, then OK",
        subject=_subject(TaskWindow.COPIES, copies_set),
    ),
    EvalTask(
        name="tab-theme",
        goal=f"In the holodesk preferences window, go to the Display tab, choose the "
             f"{THEME_WANTED} theme, then press Apply",
        summary=f"switch to a tab and change a value: the Display tab of a notebook (General "
                f"shows first), the {THEME_WANTED} theme instead of {THEME_START}, Apply",
        subject=_subject(TaskWindow.PREFS, theme_applied),
    ),
    EvalTask(
        name="edit-and-save",
        goal=(f"In the holodesk notes editor, change the line 'status: draft' to 'status: "
              f"final' and save the file {NOTES_FILE}"),
        summary=f"edit and save a file: a Tk text editor opened on {NOTES_FILE}; the check "
                "reads the file on disk (that line changed, nothing else)",
        subject=EditorSubject,
    ),
    EvalTask(
        name="copy-order-number",
        goal=("Copy the order number shown in the holodesk order window into the order number "
              "field of the holodesk returns form beside it, then press Submit"),
        summary=f"a two-window task: copy {ORDER_NUMBER} from one window into a form in "
                "another (two window classes) and submit",
        subject=OrderSubject,
    ),
    EvalTask(
        name="export-as-csv",
        goal=f"In the holodesk export dialog, choose {WANTED_FORMAT} as the format and "
             "confirm with OK",
        summary=f"a dialog: change the chosen format from PDF to {WANTED_FORMAT}, confirm "
                "with OK",
        subject=ExportSubject,
    ),
    EvalTask(
        name="open-by-double-click",
        goal=f"In the holodesk documents window, open the document {WANTED_FILE} by "
             "double-clicking it",
        summary=f"double-click a list item: open {WANTED_FILE} (a single click only selects)",
        subject=FilesSubject,
    ),
    EvalTask(
        name="search-with-shortcut",
        goal=f"In the holodesk contacts window, use the search (Ctrl+F) to find "
             f"{SEARCH_FOR} and press Enter to open the contact",
        summary=f"a keyboard shortcut: Ctrl+F shows a search field; search {SEARCH_FOR}, "
                f"Enter opens {WANTED_CONTACT}",
        subject=ContactsSubject,
    ),
    EvalTask(
        name="tab-between-fields",
        goal=f"In the holodesk delivery form, type {CITY} in the City field, press Tab to move "
             f"to the Postcode field, type {POSTCODE} there, then press Save",
        summary="two fields and the keyboard: type in one, Tab to the next (a click there does "
                "not count), type, Save",
        subject=DeliverySubject,
    ),
)
