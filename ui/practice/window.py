"""The practice window: a small made-up form the demo model fills in, drawn for the demo.

It runs as its own process (``holodesk --practice-window --state FILE``, started by
:mod:`app.demo.practice`) with its own window class, :data:`app.demo.look.PRACTICE_WM_CLASS`,
so a demo run can be limited to it and nothing else. Each part carries the colour mark of
:mod:`app.demo.look` the demo model looks for, and a checklist shows how far the task is.
Every change is written to the state file (atomically, as JSON): the demo reads from it where
the window is and whether the task is done; nothing in the window is real or saved anywhere.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QIcon, QPainter, QPaintEvent, QPixmap
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.demo.look import (
    BLUE_SWATCH,
    BORDER,
    COLOUR,
    DELETE_BUTTON,
    NAME,
    NAME_FIELD,
    OTHER_SWATCHES,
    PRACTICE_WM_CLASS,
    RGB,
    SAVE_BUTTON,
    STATUS_COLORS,
    Status,
)
from ui.practice import PARENT_CHECK_MS, orphaned

log = logging.getLogger(__name__)

BORDER_WIDTH = 8
#: The states the window can start in besides empty (``--preset``).
PRESETS = ("filled", "wrong-colour")
SIZE = QSize(760, 520)
_CHECKLIST = (
    ("name", f"Type the name {NAME}"),
    ("colour", f"Choose {COLOUR}"),
    ("saved", "Save the entry"),
    ("deleted", "Delete the draft"),
)


def _css(color: RGB) -> str:
    return f"rgb({color[0]}, {color[1]}, {color[2]})"


def _marked(widget: QWidget, color: RGB, name: str) -> QFrame:
    """``widget`` inside a frame of the mark colour ``color`` (what the demo model looks for)."""
    frame = QFrame()
    frame.setObjectName(name)
    frame.setStyleSheet(f"#{name} {{ border: 5px solid {_css(color)}; }}")
    frame.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
    layout = QHBoxLayout(frame)
    layout.setContentsMargins(5, 5, 5, 5)
    layout.addWidget(widget)
    return frame


def _swatch(color: RGB) -> QIcon:
    pixmap = QPixmap(24, 24)
    pixmap.fill(QColor(*color))
    return QIcon(pixmap)


class PracticeWindow(QWidget):
    """The form, the list, the buttons and the checklist; see the module doc."""

    def __init__(self, state_path: Path | None = None, preset: str | None = None) -> None:
        super().__init__()
        self.state_path = state_path
        self.saved = False
        self.deleted = False
        self.ready = False
        self.events: list[str] = []
        self.setWindowTitle("holodesk practice window (demo)")
        self.setFixedSize(SIZE)

        title = QLabel("<b>holodesk practice window</b> — a demo")
        title.setStyleSheet("font-size: 16px;")
        note = QLabel("Nothing here is real or saved. The demo model fills in this form on its "
                      "own; you can watch, approve the risky step, or stop it.")
        note.setWordWrap(True)

        self.name = QLineEdit()
        self.name.setPlaceholderText("Name")
        self.name.setMinimumWidth(280)
        self.colours = QListWidget()
        self.colours.setIconSize(QSize(24, 24))
        for text, color in (*OTHER_SWATCHES.items(), (COLOUR, BLUE_SWATCH)):
            QListWidgetItem(_swatch(color), text, self.colours)
        self.colours.setFixedHeight(3 * 34 + 6)
        self.save = QPushButton("Save")
        self.delete = QPushButton("Delete draft")
        for button in (self.save, self.delete):
            button.setMinimumHeight(34)
        self.message = QLabel("Fill in the form, then save it.")
        self.message.setWordWrap(True)

        form = QGridLayout()
        form.addWidget(QLabel("Name"), 0, 0)
        form.addWidget(_marked(self.name, NAME_FIELD, "nameFrame"), 0, 1)
        form.addWidget(QLabel("Favourite colour"), 1, 0, Qt.AlignmentFlag.AlignTop)
        form.addWidget(self.colours, 1, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(_marked(self.save, SAVE_BUTTON, "saveFrame"))
        buttons.addWidget(_marked(self.delete, DELETE_BUTTON, "deleteFrame"))
        form.addLayout(buttons, 2, 1)
        form.addWidget(self.message, 3, 1)

        checklist = QVBoxLayout()
        checklist.addWidget(QLabel("<b>Checklist</b>"))
        self.squares: dict[str, QLabel] = {}
        for key, text in _CHECKLIST:
            row = QHBoxLayout()
            square = QLabel()
            square.setFixedSize(26, 26)
            self.squares[key] = square
            row.addWidget(square)
            row.addWidget(QLabel(text))
            row.addStretch(1)
            checklist.addLayout(row)
            checklist.addSpacing(10)
        self.done_label = QLabel("")
        self.done_label.setStyleSheet("font-size: 16px; font-weight: bold;")
        checklist.addWidget(self.done_label)
        checklist.addStretch(1)

        body = QHBoxLayout()
        body.addLayout(form, 3)
        body.addSpacing(24)
        body.addLayout(checklist, 2)
        outer = QVBoxLayout(self)
        margin = BORDER_WIDTH + 14
        outer.setContentsMargins(margin, margin, margin, margin)
        outer.addWidget(title)
        outer.addWidget(note)
        outer.addSpacing(8)
        outer.addLayout(body, 1)

        self.name.textChanged.connect(lambda _text: self.refresh())
        # Selection, not the current item: the current item changes before it is selected.
        self.colours.itemSelectionChanged.connect(self.refresh)
        self._preset(preset)
        self.save.clicked.connect(self._on_save)
        self.delete.clicked.connect(self._on_delete)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            # A bound slot, not a lambda: Qt disconnects it when the window is deleted.
            app.focusChanged.connect(self._on_focus_changed)
        self.refresh()

    def _preset(self, preset: str | None) -> None:
        """Start part way (`holodesk eval`'s tasks): ``filled``, the name typed and Blue
        chosen; ``wrong-colour``, the name typed and Red chosen."""
        if preset is None:
            return
        if preset not in PRESETS:
            raise ValueError(f"no practice preset {preset!r} (there is: {', '.join(PRESETS)})")
        self.name.setText(NAME)
        wanted = COLOUR if preset == "filled" else "Red"
        for row in range(self.colours.count()):
            item = self.colours.item(row)
            if item.text() == wanted:
                self.colours.setCurrentItem(item)
                item.setSelected(True)

    # -- the task's state ------------------------------------------------------------------

    def name_ok(self) -> bool:
        return self.saved or self.name.text() == NAME

    def colour_ok(self) -> bool:
        item = self.colours.currentItem()
        return self.saved or (item is not None and item.isSelected() and item.text() == COLOUR)

    def statuses(self) -> dict[str, Status]:
        if self.name_ok():
            name = Status.DONE
        elif self.name.hasFocus() and self.isActiveWindow():
            name = Status.ACTIVE
        else:
            name = Status.TODO
        return {
            "name": name,
            "colour": Status.DONE if self.colour_ok() else Status.TODO,
            "saved": Status.DONE if self.saved else Status.TODO,
            "deleted": Status.DONE if self.deleted else Status.TODO,
        }

    @property
    def done(self) -> bool:
        return all(s is Status.DONE for s in self.statuses().values())

    def _on_save(self) -> None:
        if self.deleted:
            return
        if not (self.name_ok() and self.colour_ok()):
            self.events.append("save refused")
            self.message.setText(f"Not saved: type the name {NAME} and choose {COLOUR} first.")
        elif not self.saved:
            self.saved = True
            self.events.append("saved")
            self.message.setText(f"Saved: {self.name.text()}, {COLOUR}. The draft can go.")
        self.refresh()

    def _on_delete(self) -> None:
        if not self.saved:
            self.events.append("delete refused")
            self.message.setText("Save the entry before deleting the draft.")
        elif not self.deleted:
            self.deleted = True
            self.events.append("deleted")
            self.name.clear()
            self.colours.clearSelection()
            for widget in (self.name, self.colours, self.save, self.delete):
                widget.setEnabled(False)
            self.message.setText("The draft is deleted (nothing real was deleted).")
        self.refresh()

    def _on_focus_changed(self, _old: QWidget | None, _new: QWidget | None) -> None:
        self.refresh()

    def refresh(self) -> None:
        statuses = self.statuses()
        for key, square in self.squares.items():
            square.setStyleSheet(f"background: {_css(STATUS_COLORS[statuses[key]])};")
        self.done_label.setText("Demo done" if self.done else "")
        self.write_state()

    # -- the state file ----------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        ratio = self.devicePixelRatioF()
        geometry = self.geometry()
        return {
            "pid": os.getpid(),
            "ready": self.ready,
            "window": [round(geometry.x() * ratio), round(geometry.y() * ratio),
                       round(geometry.width() * ratio), round(geometry.height() * ratio)],
            "steps": {k: str(v) for k, v in self.statuses().items()},
            "done": self.done,
            "name": self.name.text(),
            "events": list(self.events),
        }

    def write_state(self) -> None:
        if self.state_path is None:
            return
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        tmp.write_text(json.dumps(self.state()), encoding="utf-8")
        os.replace(tmp, self.state_path)

    # -- Qt ---------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().window())
        color = QColor(*BORDER)
        w, h, b = self.width(), self.height(), BORDER_WIDTH
        for rect in ((0, 0, w, b), (0, h - b, w, b), (0, 0, b, h), (w - b, 0, b, h)):
            painter.fillRect(*rect, color)
        painter.end()
        if not self.ready:
            # Ready once drawn: the demo starts its run only when there is a window to see.
            self.ready = True
            QTimer.singleShot(0, self.write_state)

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() in (QEvent.Type.Move, QEvent.Type.Resize,
                            QEvent.Type.WindowActivate, QEvent.Type.WindowDeactivate):
            self.refresh()
        return handled


def center_on_screen(window: QWidget) -> None:
    screen = QApplication.primaryScreen()
    if screen is None:
        return
    area = screen.availableGeometry()
    window.move(area.x() + max(0, (area.width() - window.width()) // 2),
                area.y() + max(0, (area.height() - window.height()) // 2))


def main(argv: Sequence[str] | None = None) -> int:
    """``holodesk --practice-window [--state FILE]``: show the window until it is closed."""
    parser = argparse.ArgumentParser(prog="holodesk --practice-window",
                                     description="the practice window of holodesk demo")
    parser.add_argument("--state", type=Path, help="write the window's state here (JSON)")
    parser.add_argument("--preset", choices=PRESETS, help="start part way (holodesk eval)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(level=logging.WARNING)
    # The instance name of WM_CLASS comes from argv[0], the class from the application name:
    # both are the practice window's own, never holodesk's (which a run never acts in).
    qt = QApplication([PRACTICE_WM_CLASS])
    qt.setApplicationName(PRACTICE_WM_CLASS)
    qt.setStyle("Fusion")  # the same look everywhere: the marks must not depend on a theme
    window = PracticeWindow(args.state, args.preset)
    center_on_screen(window)
    window.show()
    parent = os.getppid()
    watch = QTimer()
    watch.timeout.connect(lambda: qt.quit() if orphaned(parent) else None)
    watch.start(PARENT_CHECK_MS)
    return int(qt.exec())
