"""The confirmation panel: what the agent is about to do, where, and why it asks.

It shows the area around the target cut from the step's screenshot, with the marker (a drag:
both ends and an arrow), the action in words, the target element, the screen point and the
policy's reasons. Approve (Enter), Skip, Stop (Esc), Approve the rest of this run.

Two guards against approving by accident: Enter is read by the panel itself (not a window-wide
shortcut), so a person typing in another field never approves; and the approving answers are
held back for ``arm_ms`` after a request appears, so an Enter already on its way (the end of a
sentence typed elsewhere) cannot approve a step the person has not seen. Skip and Stop work at
once.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFont, QImage, QKeyEvent, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.events import Answer, ConfirmReply, ConfirmRequest
from model.schema import Drag, Hotkey
from ui.marker import CROP_SIZE, ImageLoader, render_marked_crop

# A 400x250 crop shown 1.5x: small targets (a checkbox) become legible.
POINTED_BOUNDS = QSize(600, 375)
# Actions without a point (type, hotkey): the whole screen, small, for context.
WHOLE_BOUNDS = QSize(400, 250)
DEFAULT_ARM_MS = 350


class ConfirmPanel(QWidget):
    """Asks the person about one step at a time.

    Signal ``answered(ConfirmReply)`` once per request; the panel then clears itself. Slots:
    ``show_request(request)``, ``clear()`` (the request was answered elsewhere, e.g. a stop).
    ``arm_ms`` delays the approving answers after a request appears (0 = at once).
    """

    answered = Signal(object)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        arm_ms: int = DEFAULT_ARM_MS,
        loader: ImageLoader | None = None,
    ) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._request: ConfirmRequest | None = None
        self._image: QImage | None = None
        self._wanted = 0
        self._armed = False
        self._arm_ms = arm_ms
        self._arm_timer = QTimer(self)
        self._arm_timer.setSingleShot(True)
        self._arm_timer.timeout.connect(self._arm)
        self._loader = loader or ImageLoader(self)
        self._loader.loaded.connect(self._on_loaded)
        self._build()
        self.clear()

    def _build(self) -> None:
        self.title_label = QLabel()
        big = QFont(self.title_label.font())
        big.setPointSizeF(big.pointSizeF() * 1.4)
        big.setBold(True)
        self.title_label.setFont(big)
        self.title_label.setWordWrap(True)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.image_label = QLabel()
        self.image_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.image_label.setMinimumSize(WHOLE_BOUNDS)
        self.image_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.image_label.setStyleSheet("background: #202020; color: #b0b0b0;")
        self.payload_label = QLabel()  # the text to type / the keys to press, prominently
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        mono.setPointSizeF(big.pointSizeF())
        self.payload_label.setFont(mono)
        self.payload_label.setWordWrap(True)
        self.payload_label.setStyleSheet("background: #fff8c5; color: #1f2328; padding: 6px;")
        self.details_label = QLabel()
        self.details_label.setTextFormat(Qt.TextFormat.RichText)
        self.details_label.setWordWrap(True)
        self.reasons_label = QLabel()
        self.reasons_label.setTextFormat(Qt.TextFormat.RichText)
        self.reasons_label.setWordWrap(True)
        self.reasons_label.setStyleSheet("color: #9a6700;")

        self.approve_button = QPushButton("Approve (Enter)")
        self.approve_button.setStyleSheet("QPushButton:enabled { font-weight: bold; }")
        self.approve_rest_button = QPushButton("Approve the rest of this run")
        self.skip_button = QPushButton("Skip")
        self.stop_button = QPushButton("Stop (Esc)")
        self.stop_button.setStyleSheet(
            "QPushButton:enabled { color: white; background: #cf222e; font-weight: bold; }"
        )
        for button, answer in (
            (self.approve_button, Answer.APPROVE),
            (self.approve_rest_button, Answer.APPROVE_REST),
            (self.skip_button, Answer.SKIP),
            (self.stop_button, Answer.STOP),
        ):
            # Buttons do not take focus: Enter and Esc always reach the panel.
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.clicked.connect(lambda _=False, a=answer: self._answer(a))
        buttons = QHBoxLayout()
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.approve_rest_button)
        buttons.addStretch(1)
        buttons.addWidget(self.skip_button)
        buttons.addWidget(self.stop_button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.title_label)
        layout.addWidget(self.image_label, 1)
        layout.addWidget(self.payload_label)
        layout.addWidget(self.details_label)
        layout.addWidget(self.reasons_label)
        layout.addLayout(buttons)

    # -- public ------------------------------------------------------------------------------

    @property
    def request(self) -> ConfirmRequest | None:
        """The request on display, if any."""
        return self._request

    def image(self) -> QImage | None:
        """The picture on display (crop with the marker, or the whole screen small)."""
        return self._image

    @Slot(object)
    def show_request(self, request: ConfirmRequest) -> None:
        """Show a request and wait for the person's answer."""
        self._request = request
        self._image = None
        action = request.action
        pointed = bool(request.points)
        self.title_label.setText(f"holodesk wants to {request.description}")
        self.payload_label.setVisible(not pointed)
        self.payload_label.setText(_payload(request))
        details = []
        if request.element:
            details.append(f"<b>Target:</b> {html.escape(request.element)}")
        if isinstance(action, Drag) and len(request.points) >= 2:
            details.append(f"<b>Screen points:</b> from {request.points[0]} to {request.points[1]}")
        elif pointed:
            details.append(f"<b>Screen point:</b> {request.points[0]}")
        self.details_label.setText("<br>".join(details))
        self.details_label.setVisible(bool(details))
        reasons = "".join(f"<li>{html.escape(r)}</li>" for r in request.reasons)
        self.reasons_label.setText(
            f"<b>Why you are asked:</b><ul>{reasons}</ul>"
            if reasons
            else "<b>Why you are asked:</b> every step is confirmed"
        )
        self.image_label.clear()
        self.image_label.setText("Loading the screenshot…")
        bounds = QSize(POINTED_BOUNDS if pointed else WHOLE_BOUNDS)
        path, points, geometry = request.screenshot_path, request.points, request.geometry
        self._wanted = self._loader.submit(
            lambda: render_marked_crop(path, points, geometry, bounds, CROP_SIZE)
        )
        for button in (self.skip_button, self.stop_button):
            button.setEnabled(True)
        self._set_armed(self._arm_ms <= 0)
        if not self._armed:
            self._arm_timer.start(self._arm_ms)
        self.setFocus(Qt.FocusReason.OtherFocusReason)

    @Slot()
    def clear(self) -> None:
        """Nothing to confirm (answered here or elsewhere)."""
        self._request = None
        self._image = None
        self._wanted = 0
        self._arm_timer.stop()
        self.title_label.setText("Nothing to confirm")
        self.image_label.clear()
        self.payload_label.hide()
        self.details_label.clear()
        self.reasons_label.clear()
        for button in (
            self.approve_button,
            self.approve_rest_button,
            self.skip_button,
            self.stop_button,
        ):
            button.setEnabled(False)
        self._armed = False

    # -- keys and answers --------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if self._request is not None and not event.isAutoRepeat():
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and event.modifiers() in (
                Qt.KeyboardModifier.NoModifier,
                Qt.KeyboardModifier.KeypadModifier,
            ):
                self._answer(Answer.APPROVE)
                event.accept()
                return
            if key == Qt.Key.Key_Escape:
                self._answer(Answer.STOP)
                event.accept()
                return
        super().keyPressEvent(event)

    def _answer(self, answer: Answer) -> None:
        if self._request is None:
            return
        if answer in (Answer.APPROVE, Answer.APPROVE_REST) and not self._armed:
            return  # too soon after the request appeared: the person has not seen it yet
        self.clear()
        self.answered.emit(ConfirmReply(answer))

    def _arm(self) -> None:
        if self._request is not None:
            self._set_armed(True)

    def _set_armed(self, armed: bool) -> None:
        self._armed = armed
        self.approve_button.setEnabled(armed)
        self.approve_rest_button.setEnabled(armed)

    @Slot(int, QImage)
    def _on_loaded(self, ticket: int, image: QImage) -> None:
        if ticket != self._wanted or self._request is None:
            return
        if image.isNull():
            self.image_label.setText("The screenshot could not be read")
            return
        self._image = image
        self.image_label.setPixmap(QPixmap.fromImage(image))


def _payload(request: ConfirmRequest) -> str:
    """What a type or hotkey action sends, for the prominent box.

    Typed text comes from the description, which the policy already masked when the text
    looks like a secret; the raw text is never shown here.
    """
    action = request.action
    if isinstance(action, Hotkey):
        return "+".join(action.keys)
    return request.description
