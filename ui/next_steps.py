"""After a done demo, in the task window: what just happened, and buttons for what to try next
(set up a model server, write a first task, open the action log): `holodesk demo`'s closing
note (app/demo/run.py ``WHAT_HAPPENED``, ``NEXT_STEPS``) with buttons that do each."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QGridLayout, QPushButton, QVBoxLayout, QWidget

from app.demo.run import NEXT_STEPS, WHAT_HAPPENED
from ui.first_run import server_buttons
from ui.plain import plain_label

TITLE = "The demo is done"


class NextStepsNote(QFrame):
    """The note; each button emits its request: ``setup_requested`` (a model server on this
    machine), ``connect_requested`` (one elsewhere), ``task_requested`` (write a first task),
    ``log_requested`` (open the action log)."""

    setup_requested = Signal()
    connect_requested = Signal()
    task_requested = Signal()
    log_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("next_steps")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title_label = plain_label(TITLE)
        bold = QFont(self.title_label.font())
        bold.setBold(True)
        self.title_label.setFont(bold)
        self.what_label = plain_label(WHAT_HAPPENED)
        self.what_label.setWordWrap(True)
        self.next_label = plain_label("What to try next:")
        _server, task, log = NEXT_STEPS
        # The first-run guide's two ways to a model server.
        self.setup_button, self.connect_button = server_buttons()
        self.setup_button.clicked.connect(self.setup_requested)
        self.connect_button.clicked.connect(self.connect_requested)
        self.task_button = QPushButton(task.title)
        self.task_button.setToolTip("Type what holodesk should do in the task box above, then "
                                    "Start (it needs a model server)")
        self.task_button.clicked.connect(self.task_requested)
        self.log_button = QPushButton(log.title)
        self.log_button.setToolTip("Every step of the demo: the screenshot, the model's "
                                   "thought, the action and your decisions")
        self.log_button.clicked.connect(self.log_requested)
        # Two by two: one row of four is wider than the window at 1366x768.
        buttons = QGridLayout()
        for index, button in enumerate((self.setup_button, self.connect_button,
                                        self.task_button, self.log_button)):
            buttons.addWidget(button, *divmod(index, 2))
        layout = QVBoxLayout(self)
        layout.addWidget(self.title_label)
        layout.addWidget(self.what_label)
        layout.addWidget(self.next_label)
        layout.addLayout(buttons)
