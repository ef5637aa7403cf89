"""The first-run guide in the task window: what holodesk needs, in plain words, and three ways
to get it while no model server answers.

It holds no logic of its own. Its buttons are requests (``setup_requested``: start a model
server on this machine with the same checks and steps as the tray's Start model server;
``connect_requested``: the server settings with Test connection; ``demo_requested``: the demo),
and :meth:`FirstRunGuide.set_setup` shows how the set-up started from it is going (the
:class:`ui.server_control.ServerControl` states and progress lines).
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from ui.colours import Tone, text_style
from ui.plain import plain_label, shown

__all__ = ["FirstRunGuide", "server_buttons"]

TITLE = "holodesk needs a model server"
WHAT = (
    "holodesk looks at your screen and works the mouse and keyboard by asking a vision model "
    "(Holotron-12B) what to do next. The model runs in a model server: on this machine when "
    "it has a large NVIDIA graphics card (40 GB or more of memory), or on another machine "
    "that you connect to. You can also try holodesk first on a practice window, with no "
    "model server at all."
)

#: The set-up button's words per server state (ui.server_control.ServerState).
_SETUP_WORDS = {
    "stopped": "Set up a model server on this machine",
    "failed": "Try setting up the model server again",
    "starting": "Setting up the model server…",
    "stopping": "Stopping the model server…",
    "ready": "The model server is running",
}


def server_buttons() -> tuple[QPushButton, QPushButton]:
    """The two ways to a model server, as buttons: set one up on this machine, connect to one
    elsewhere (the guide's, and the note after a done demo: ui/next_steps.py)."""
    setup = QPushButton(_SETUP_WORDS["stopped"])
    setup.setToolTip(
        "Checks that this machine can run the model (the vLLM program and the graphics "
        "card), then starts the model server and shows how it is going"
    )
    elsewhere = QPushButton("Connect to a server elsewhere…")
    elsewhere.setToolTip(
        "Enter the address and the key of a model server on another machine, and test it"
    )
    return setup, elsewhere


class FirstRunGuide(QFrame):
    """What holodesk needs and the three ways to get it (see the module doc)."""

    setup_requested = Signal()
    connect_requested = Signal()
    demo_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("first_run_guide")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title_label = plain_label(TITLE)
        bold = QFont(self.title_label.font())
        bold.setBold(True)
        self.title_label.setFont(bold)
        self.what_label = plain_label(WHAT)
        self.what_label.setWordWrap(True)
        self.where_label = plain_label()
        self.where_label.setWordWrap(True)
        self.where_label.hide()

        self.setup_button, self.connect_button = server_buttons()
        self.setup_button.clicked.connect(self.setup_requested)
        self.connect_button.clicked.connect(self.connect_requested)
        # Alt+D: a mnemonic, as the menus have (and the way a keyboard reaches it first).
        self.demo_button = QPushButton("Try the &demo")
        self.demo_button.setToolTip(
            "Watch holodesk work a practice window with a built-in stand-in model: no model "
            "server needed, nothing else on your screen is touched"
        )
        self.demo_button.clicked.connect(self.demo_requested)
        # The set-up's progress and, when it fails, why and what to do: wrapped, never cut.
        self.progress_label = plain_label()
        self.progress_label.setObjectName("setup_progress")
        self.progress_label.setWordWrap(True)
        self.progress_label.hide()

        # One above the other: three choices, read in order, and narrow enough for a small
        # window.
        buttons = QVBoxLayout()
        for button in (self.setup_button, self.connect_button, self.demo_button):
            row = QHBoxLayout()
            row.addWidget(button)
            row.addStretch(1)
            buttons.addLayout(row)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title_label)
        layout.addWidget(self.what_label)
        layout.addWidget(self.where_label)
        layout.addLayout(buttons)
        layout.addWidget(self.progress_label)
        self._state = "stopped"

    @Slot(str)
    def set_endpoint(self, endpoint: str) -> None:
        """Say where holodesk looked for a server (the endpoint setting); "" says nothing."""
        self.where_label.setText(
            f"No model server answers at {shown(endpoint)} yet." if endpoint else "")
        self.where_label.setVisible(bool(endpoint))

    @Slot(str, str)
    def set_setup(self, state: str, text: str = "") -> None:
        """How the set-up on this machine is going: a server ``state`` (stopped, starting,
        ready, stopping, failed) and a line of progress or, on failure, the reason and fix."""
        self._state = state
        self.setup_button.setText(_SETUP_WORDS.get(state, _SETUP_WORDS["stopped"]))
        self.setup_button.setEnabled(state in ("stopped", "failed"))
        if text or state in ("stopped", "ready"):
            self.progress_label.setText(shown(text))
        self.progress_label.setProperty("failed", state == "failed")
        self.progress_label.setStyleSheet(text_style(Tone.ERROR) if state == "failed" else "")
        self.progress_label.setVisible(bool(self.progress_label.text()))

    def progress(self) -> str:
        """The progress or failure line as shown ("" when hidden)."""
        return self.progress_label.text() if not self.progress_label.isHidden() else ""
