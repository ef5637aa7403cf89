"""The subjects of `holodesk eval`'s Tk task windows (app/demo/task_window.py, drawn by
ui/practice/tk_*.py): what each opens and how each checks its goal from the window's own state
or, for the editor, from the file on disk.

A subject may have several windows (copy-order-number: an order and a form side by side):
``wm_classes`` names every one (the run may act in those only), :meth:`TkSubject.open` gives
the rectangle that holds them all (the capture), and :meth:`TkSubject.where` says that same
rectangle only while every window is where it opened: once one moved, it says where that one
is now, so the eval stops the run before the next screenshot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.demo.task_look import (
    CITY,
    CONTACTS_WM_CLASS,
    DELIVERY_WM_CLASS,
    EDITOR_WM_CLASS,
    EXPORT_WM_CLASS,
    FILES_WM_CLASS,
    NOTES_AFTER,
    NOTES_BEFORE,
    NOTES_FILE,
    ORDER_FORM_WM_CLASS,
    ORDER_NUMBER,
    ORDER_SOURCE_WM_CLASS,
    POSTCODE,
    SEARCH_FOR,
    WANTED_CONTACT,
    WANTED_FILE,
    WANTED_FORMAT,
)
from app.demo.task_window import Kind, TaskWindowProcess, bounding
from app.eval_check import Check, EvalError
from model.coords import Rect


class TkSubject:
    """A task window of :class:`Kind` ``kind``; subclasses say its classes and its check."""

    kind: Kind
    #: Its first window's class, and every window's (the run may act in these only).
    wm_class: str
    wm_classes: tuple[str, ...]

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._window = TaskWindowProcess(self.kind, folder)
        self._first: dict[str, Rect] = {}

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

    def check(self) -> Check:
        state = self.state()
        if state is None:
            return Check(False, f"the {self.kind.value} window wrote no state")
        return self.judge(state)

    def judge(self, state: dict[str, Any]) -> Check:
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


class EditorSubject(TkSubject):
    """edit-and-save: the notes file on disk must read :data:`NOTES_AFTER`, nothing else
    changed."""

    kind = Kind.EDITOR
    wm_class = EDITOR_WM_CLASS
    wm_classes = (EDITOR_WM_CLASS,)

    def prepare(self) -> None:
        (self.folder / NOTES_FILE).write_text(NOTES_BEFORE, encoding="utf-8")

    def check(self) -> Check:
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


class OrderSubject(TkSubject):
    """copy-order-number: the form's submitted order number must be the order's."""

    kind = Kind.ORDER
    wm_class = ORDER_SOURCE_WM_CLASS
    wm_classes = (ORDER_SOURCE_WM_CLASS, ORDER_FORM_WM_CLASS)

    def judge(self, state: dict[str, Any]) -> Check:
        sent = state.get("submitted")
        if sent == ORDER_NUMBER:
            return Check(True, f"the form was submitted with {ORDER_NUMBER}")
        if sent is None:
            return Check(False, f"the form was not submitted (its field: "
                                f"{state.get('field')!r})")
        return Check(False, f"the form was submitted with {sent!r} (wanted {ORDER_NUMBER})")


class ExportSubject(TkSubject):
    """export-as-csv: CSV must be the format confirmed with OK."""

    kind = Kind.EXPORT
    wm_class = EXPORT_WM_CLASS
    wm_classes = (EXPORT_WM_CLASS,)

    def judge(self, state: dict[str, Any]) -> Check:
        done = state.get("exported")
        if done == WANTED_FORMAT:
            return Check(True, f"exported as {WANTED_FORMAT}")
        if done is None:
            return Check(False, f"not confirmed with OK (chosen: {state.get('chosen')})")
        return Check(False, f"exported as {done} (wanted {WANTED_FORMAT})")


class FilesSubject(TkSubject):
    """open-by-double-click: the wanted document must be the one opened."""

    kind = Kind.FILES
    wm_class = FILES_WM_CLASS
    wm_classes = (FILES_WM_CLASS,)

    def judge(self, state: dict[str, Any]) -> Check:
        opened = state.get("opened")
        if opened == WANTED_FILE:
            return Check(True, f"{WANTED_FILE} is open")
        return Check(False, f"open: {opened or 'nothing'} (selected: "
                            f"{state.get('selected') or 'nothing'}; wanted {WANTED_FILE})")


class ContactsSubject(TkSubject):
    """search-with-shortcut: the wanted contact must be open, found through the search."""

    kind = Kind.CONTACTS
    wm_class = CONTACTS_WM_CLASS
    wm_classes = (CONTACTS_WM_CLASS,)

    def judge(self, state: dict[str, Any]) -> Check:
        opened = state.get("opened")
        searched = state.get("searched")
        if opened == WANTED_CONTACT and searched and SEARCH_FOR.lower() in searched.lower():
            return Check(True, f"{WANTED_CONTACT} is open, found by searching {searched!r}")
        return Check(False, f"open: {opened or 'nothing'} (searched: {searched!r}; wanted "
                            f"{WANTED_CONTACT} by searching {SEARCH_FOR})")


class DeliverySubject(TkSubject):
    """tab-between-fields: the city and postcode saved, the postcode field reached by Tab."""

    kind = Kind.DELIVERY
    wm_class = DELIVERY_WM_CLASS
    wm_classes = (DELIVERY_WM_CLASS,)

    def judge(self, state: dict[str, Any]) -> Check:
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
