"""The eval tasks in the Tk task windows (ui/practice/tasks, app/demo/task_windows.py): their
subjects, which check the outcome from each window's own state (or, for a task whose goal is
to read a value, from the run's answer), and their entries in the suite (app/eval.py)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.demo.task_look import (
    CARD_TITLE,
    COPIES_START,
    COPIES_WANTED,
    INVOICES,
    OPTIONS_WANTED,
    POPUP_INSTANCES,
    THEME_START,
    THEME_WANTED,
    WANTED_INVOICE,
    WM_CLASSES,
    ZOOM_START,
    ZOOM_WANTED,
    TaskWindow,
)
from app.demo.task_windows import TaskWindowProcess
from app.eval_task import Check, EvalError, EvalTask
from model.coords import Rect

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


class TaskWindowSubject:
    """A task window of its own process; subclasses say what its state must be."""

    #: Other X11 names the run may act in (app/eval_task.py ``also_in``).
    also_in: tuple[str, ...] = ()

    def __init__(self, kind: TaskWindow, folder: Path,
                 judge: Callable[[dict[str, Any], str | None], Check]) -> None:
        self.wm_class = WM_CLASSES[kind]
        self._window = TaskWindowProcess(kind, folder)
        self._judge = judge

    def open(self) -> Rect:
        try:
            return self._window.start()
        except RuntimeError as e:
            raise EvalError(str(e)) from e

    def check(self, answer: str | None = None) -> Check:
        state = self._window.state()
        if state is None:
            return Check(False, f"{self._window.label} wrote no state")
        return self._judge(state, answer)

    @property
    def alive(self) -> bool:
        return self._window.alive

    def where(self) -> Rect | None:
        state = self._window.state()
        return self._window.placed(state) if state is not None else None

    def close(self) -> None:
        self._window.close()


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


class MenuSubject(TaskWindowSubject):
    """The menu window: its menu bar's pop-ups are windows named by their menus."""

    also_in = POPUP_INSTANCES

    def __init__(self, folder: Path) -> None:
        super().__init__(TaskWindow.MENU, folder, zoom_set)


def _subject(kind: TaskWindow, judge: Callable[[dict[str, Any], str | None], Check]
             ) -> Callable[[Path], TaskWindowSubject]:
    return functools.partial(TaskWindowSubject, kind, judge=judge)


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
)
