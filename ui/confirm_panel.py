"""The confirmation panel: what the agent is about to do, where, and why it asks.

It shows the area around the target cut from the step's screenshot, with the marker (a drag:
both ends and an arrow), the action in words, the target element, the screen point and the
policy's reasons. Approve (Enter), Skip, Stop (Esc), Approve the rest of this run, and for
the actions worth correcting, Edit (Alt+E).

Two guards against approving by accident: Enter is read by the panel itself (not a window-wide
shortcut), so a person typing in another field never approves; and the approving answers are
held back for ``arm_ms`` after a request appears, so an Enter already on its way (the end of a
sentence typed elsewhere) cannot approve a step the person has not seen. Skip and Stop work at
once.

Editing. Only what a person can correct better than the model is offered: the text of a
``type`` action (and its Enter and clear-first switches), the keys of a ``hotkey`` and how many
times they are pressed (its repeat count, always shown: an edit runs what the editor shows,
never a count it did not show), the direction and amount of a ``scroll``. A point or a target
element is not editable: the remedy for a wrong target is Skip, and the model looks again at a
fresh screenshot. Edit is held back like Approve, and opening or cancelling the editor restarts
the hold-back, because each changes what Enter means. While the editor is open:

- Enter (in any field) approves the edited action, once it is valid and the hold-back is over;
  an Enter too early does nothing at all (it neither approves nor enters a line break).
- Shift+Enter in the text enters a line break.
- Esc cancels the edit and shows the proposal again; it does **not** stop the run. The Stop
  button (and the emergency-stop hotkey) still stop the run.
- "Approve the rest of this run" is off: an edit answers this one step.

An edit that changes nothing is an ordinary approval; an invalid one (checked with the
pydantic action models and the key names holodesk can press) shows why under the fields and
cannot be approved.
"""

from __future__ import annotations

import json
import typing

import annotated_types
from pydantic import BaseModel, ValidationError
from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFont, QFontMetricsF, QImage, QKeyEvent, QPixmap, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.events import Answer, ConfirmReply, ConfirmRequest
from control.keys import UnknownKeyError, normalize_hotkey, split_combo
from model.schema import ACTION_ADAPTER, Action, Drag, DragTo, Hotkey, Scroll, Type
from ui.colours import SCREEN_STYLE, Tone, danger_button_style, marked_style, text_style
from ui.marker import CROP_SIZE, ImageLoader, render_marked_crop
from ui.plain import plain_label, shown, shown_line

# A 400x250 crop shown 1.5x: small targets (a checkbox) become legible.
POINTED_BOUNDS = QSize(600, 375)
# Actions without a point (type, hotkey): the whole screen, small, for context.
WHOLE_BOUNDS = QSize(400, 250)
DEFAULT_ARM_MS = 350
# Long text to type scrolls inside the payload box beyond this many lines.
PAYLOAD_LINES = 8

EDIT_HINT = (
    "Enter approves the edited action · Esc cancels the edit (the run goes on) · "
    "the red Stop button stops the run"
)
_ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)
_PLAIN = (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)


# -- the editors ---------------------------------------------------------------------------


class EditError(ValueError):
    """An edit that is not a valid action; the message is shown to the person as is."""


def _validated(original: Action, changes: dict[str, object]) -> Action:
    """``original`` with ``changes``, checked by the schema; raises :class:`EditError`.

    Only pydantic's message and the field name are kept: its full text repeats the input,
    which may be a password.
    """
    try:
        return ACTION_ADAPTER.validate_python({**original.model_dump(), **changes})
    except ValidationError as e:
        lines = []
        for error in e.errors(include_url=False, include_input=False):
            where = ".".join(str(part) for part in error["loc"][1:])  # [0] is the action kind
            lines.append(f"{where}: {error['msg']}" if where else error["msg"])
        raise EditError("; ".join(lines)) from e


def _int_bounds(model: type[BaseModel], name: str) -> tuple[int, int]:
    """The ge/le bounds the schema puts on an integer field, for a spin box's range."""
    low, high = 0, 1_000_000
    for rule in model.model_fields[name].metadata:
        if isinstance(rule, annotated_types.Ge):
            low = int(typing.cast(int, rule.ge))
        elif isinstance(rule, annotated_types.Le):
            high = int(typing.cast(int, rule.le))
    return low, high


class ActionEditor(QWidget):
    """The fields for correcting one action; ``changed`` fires on every change.

    :meth:`edited` returns the corrected action or raises :class:`EditError`; :meth:`fields`
    lists the focusable fields in tab order (the first one gets the focus).
    """

    changed = Signal()

    def __init__(self, original: Action, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.original = original
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)

    def edited(self) -> Action:
        """The action as edited; raises :class:`EditError` when it is not valid."""
        raise NotImplementedError

    def fields(self) -> list[QWidget]:
        """The fields, in tab order."""
        raise NotImplementedError


class TypeEditor(ActionEditor):
    """The text to type (several lines allowed), Enter after it, clear the field first.

    Text the policy hid (it looks like a password) is edited in a password field, masked
    unless the person ticks "Show text".
    """

    def __init__(self, original: Type, masked: bool, parent: QWidget | None = None) -> None:
        super().__init__(original, parent)
        self._text = original.text
        self._initial = original.text
        self.show_box: QCheckBox | None = None
        self.text_field: QPlainTextEdit | QLineEdit
        if masked:
            line = QLineEdit(original.text)
            line.setEchoMode(QLineEdit.EchoMode.Password)
            line.textChanged.connect(self.changed)
            self.show_box = QCheckBox("Show text")
            self.show_box.toggled.connect(
                lambda shown: line.setEchoMode(
                    QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password
                )
            )
            row = QHBoxLayout()
            row.addWidget(line, 1)
            row.addWidget(self.show_box)
            self.text_field = line
            self.form.addRow("Text to type:", row)
        else:
            box = QPlainTextEdit()
            box.setPlainText(original.text)
            # The caret at the end, nothing selected: a stray key must not replace the text.
            box.moveCursor(QTextCursor.MoveOperation.End)
            # Tab moves on to the switches: the fields must be reachable by keyboard.
            box.setTabChangesFocus(True)
            box.setFixedHeight(box.fontMetrics().lineSpacing() * 4 + 12)
            box.textChanged.connect(self.changed)
            self.text_field = box
            self._initial = self._plain_text()
            self.form.addRow("Text to type:", box)
        self.press_enter_box = QCheckBox("Press Enter after typing")
        self.press_enter_box.setChecked(original.press_enter)
        self.clear_first_box = QCheckBox("Clear the field first")
        self.clear_first_box.setChecked(original.clear_first)
        for box_ in (self.press_enter_box, self.clear_first_box):
            box_.toggled.connect(self.changed)
            self.form.addRow("", box_)

    def _plain_text(self) -> str:
        field = self.text_field
        if isinstance(field, QLineEdit):
            return field.text()
        # toPlainText() would turn no-break spaces into spaces; the raw text keeps every
        # character and only marks line breaks as paragraph separators.
        return field.document().toRawText().replace("\u2029", "\n")

    def text(self) -> str:
        """The text as edited; the original, character for character, when untouched."""
        text = self._plain_text()
        if isinstance(self.text_field, QPlainTextEdit) and text == self._initial:
            return self._text  # the editor stores "\r\n" as "\n": untouched text stays exact
        return text

    def edited(self) -> Action:
        text = self.text()
        enter = self.press_enter_box.isChecked()
        clear = self.clear_first_box.isChecked()
        if not text and not enter and not clear:
            raise EditError("Nothing to do: enter the text to type, or Skip this step")
        return _validated(self.original, {"text": text, "press_enter": enter, "clear_first": clear})

    def fields(self) -> list[QWidget]:
        shown = [self.show_box] if self.show_box is not None else []
        return [self.text_field, *shown, self.press_enter_box, self.clear_first_box]


class HotkeyEditor(ActionEditor):
    """The keys of a shortcut, written as shown: ``ctrl+shift+t``, and how many times the chord
    is pressed (the proposal's repeat count: what is approved is what the fields show)."""

    def __init__(self, original: Hotkey, parent: QWidget | None = None) -> None:
        super().__init__(original, parent)
        self.keys_field = QLineEdit("+".join(original.keys))
        self.keys_field.setPlaceholderText("e.g. ctrl+s")
        self.keys_field.textChanged.connect(self.changed)
        self.repeat_box = QSpinBox()
        self.repeat_box.setRange(*_int_bounds(Hotkey, "repeat"))
        self.repeat_box.setValue(original.repeat)
        self.repeat_box.valueChanged.connect(self.changed)
        self.form.addRow("Keys:", self.keys_field)
        self.form.addRow("Times pressed:", self.repeat_box)

    def edited(self) -> Action:
        text = self.keys_field.text().strip()
        if not text:
            raise EditError("Enter the keys to press, e.g. ctrl+s")
        keys = split_combo([text])
        try:
            # The executor refuses an unknown key only when the step runs, ending the run:
            # the same check here lets the person fix the name instead.
            normalize_hotkey(keys)
        except UnknownKeyError as e:
            raise EditError(f"{e} (key names like ctrl, shift, alt, enter, f5, a)") from e
        # The count is the field's, never the proposal's unseen: the edit presses what it shows.
        return _validated(self.original, {"keys": keys, "repeat": self.repeat_box.value()})

    def fields(self) -> list[QWidget]:
        return [self.keys_field, self.repeat_box]


class ScrollEditor(ActionEditor):
    """Which way and how far to scroll, over the same point."""

    def __init__(self, original: Scroll, parent: QWidget | None = None) -> None:
        super().__init__(original, parent)
        self.direction_box = QComboBox()
        directions = typing.get_args(Scroll.model_fields["direction"].annotation)
        self.direction_box.addItems([str(d) for d in directions])
        self.direction_box.setCurrentText(original.direction)
        self.direction_box.currentTextChanged.connect(self.changed)
        self.amount_box = QSpinBox()
        self.amount_box.setRange(*_int_bounds(Scroll, "amount"))
        self.amount_box.setValue(original.amount)
        self.amount_box.valueChanged.connect(self.changed)
        self.form.addRow("Direction:", self.direction_box)
        self.form.addRow("Amount (steps):", self.amount_box)

    def edited(self) -> Action:
        return _validated(
            self.original,
            {"direction": self.direction_box.currentText(), "amount": self.amount_box.value()},
        )

    def fields(self) -> list[QWidget]:
        return [self.direction_box, self.amount_box]


def editable(action: Action) -> bool:
    """Whether the panel offers Edit for ``action`` (type, hotkey, scroll)."""
    return isinstance(action, Type | Hotkey | Scroll)


def editor_for(request: ConfirmRequest) -> ActionEditor | None:
    """The editor for the request's action, or None when it has nothing worth editing."""
    action = request.action
    if isinstance(action, Type):
        return TypeEditor(action, _text_is_masked(request))
    if isinstance(action, Hotkey):
        return HotkeyEditor(action)
    if isinstance(action, Scroll):
        return ScrollEditor(action)
    return None


def _text_is_masked(request: ConfirmRequest) -> bool:
    """Whether the policy hid the typed text (it looks like a secret): edit it masked too.

    The request's ``secret`` flag says so; a description that does not show the text's
    beginning counts as hidden as well (failing closed, whoever built the request).
    """
    action = request.action
    assert isinstance(action, Type)
    if request.secret or f"[hidden text, {len(action.text)} characters]" in request.description:
        return True
    # The description quotes the text as JSON, cut after 77 characters.
    probe = json.dumps(action.text[:20], ensure_ascii=False)[:-1]
    return probe not in request.description


# -- the panel -----------------------------------------------------------------------------


class ConfirmPanel(QWidget):
    """Asks the person about one step at a time.

    Signal ``answered(ConfirmReply)`` once per request; the panel then clears itself. An
    approved edit answers ``ConfirmReply(Answer.EDIT, edited=<action>)``. Slots:
    ``show_request(request)``, ``clear()`` (the request was answered elsewhere, e.g. a stop),
    ``start_edit()``, ``cancel_edit()``. ``arm_ms`` delays the approving answers (and Edit)
    after a request appears and after the editor opens or closes (0 = at once).
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
        if parent is None:
            # The question must stay in sight: it is placed clear of the target, often beside
            # holodesk's own task window, which the person may click while reading it.
            self.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._request: ConfirmRequest | None = None
        self._image: QImage | None = None
        self._wanted = 0
        self._armed = False
        self._arm_ms = arm_ms
        self._editor: ActionEditor | None = None
        self._edit_error: str | None = None
        self._arm_timer = QTimer(self)
        self._arm_timer.setSingleShot(True)
        self._arm_timer.timeout.connect(self._arm)
        self._loader = loader or ImageLoader(self)
        self._loader.loaded.connect(self._on_loaded)
        self._build()
        self.clear()

    def _build(self) -> None:
        # Every label here is plain text: model text must never be rendered as HTML.
        self.title_label = plain_label()
        big = QFont(self.title_label.font())
        big.setPointSizeF(big.pointSizeF() * 1.4)
        big.setBold(True)
        self.title_label.setFont(big)
        self.title_label.setWordWrap(True)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.image_label = plain_label()
        self.image_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.image_label.setMinimumSize(WHOLE_BOUNDS)
        self.image_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.image_label.setStyleSheet(SCREEN_STYLE)
        # The text to type / the keys to press, prominently and in full: long text scrolls.
        self.payload_label = plain_label()
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        mono.setPointSizeF(big.pointSizeF())
        self.payload_label.setFont(mono)
        self.payload_label.setWordWrap(True)
        self.payload_label.setStyleSheet(f"{marked_style()} padding: 6px;")
        self.payload_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.payload_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.payload_scroll = QScrollArea()
        self.payload_scroll.setWidget(self.payload_label)
        self.payload_scroll.setWidgetResizable(True)
        self.payload_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.payload_scroll.setMaximumHeight(
            round(QFontMetricsF(mono).lineSpacing() * PAYLOAD_LINES) + 16
        )
        self.details_label = plain_label()
        self.details_label.setWordWrap(True)
        self.reasons_label = plain_label()
        self.reasons_label.setWordWrap(True)
        self.reasons_label.setStyleSheet(text_style(Tone.WARNING))

        # The editor's frame: the fields go in on Edit, then the error, the keys, Cancel.
        self.edit_frame = QFrame()
        self.edit_frame.setFrameShape(QFrame.Shape.StyledPanel)
        self._edit_layout = QVBoxLayout(self.edit_frame)
        edit_title = plain_label("Edit the action")
        bold = QFont(edit_title.font())
        bold.setBold(True)
        edit_title.setFont(bold)
        self._edit_layout.addWidget(edit_title)
        self.edit_error_label = plain_label()
        self.edit_error_label.setWordWrap(True)
        self.edit_error_label.setStyleSheet(text_style(Tone.ERROR))
        self.edit_hint_label = plain_label(EDIT_HINT)
        self.edit_hint_label.setWordWrap(True)
        self.edit_hint_label.setStyleSheet(text_style(Tone.MUTED))
        self.cancel_edit_button = QPushButton("Cancel edit (Esc)")
        self.cancel_edit_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.cancel_edit_button.clicked.connect(self.cancel_edit)
        edit_bottom = QHBoxLayout()
        edit_bottom.addWidget(self.edit_hint_label, 1)
        edit_bottom.addWidget(self.cancel_edit_button)
        self._edit_layout.addWidget(self.edit_error_label)
        self._edit_layout.addLayout(edit_bottom)

        self.approve_button = QPushButton("Approve (Enter)")
        self.approve_button.setStyleSheet("QPushButton:enabled { font-weight: bold; }")
        self.approve_rest_button = QPushButton("Approve the rest of this run")
        # No "&": a mnemonic would be a window-wide shortcut, and Alt+E is read by the panel.
        self.edit_button = QPushButton("Edit… (Alt+E)")
        self.edit_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.edit_button.clicked.connect(self.start_edit)
        self.skip_button = QPushButton("Skip")
        self.stop_button = QPushButton("Stop (Esc)")
        self.stop_button.setStyleSheet(danger_button_style())
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
        buttons.addWidget(self.edit_button)
        buttons.addStretch(1)
        buttons.addWidget(self.skip_button)
        buttons.addWidget(self.stop_button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.title_label)
        layout.addWidget(self.image_label, 1)
        layout.addWidget(self.payload_scroll)
        layout.addWidget(self.details_label)
        layout.addWidget(self.reasons_label)
        layout.addWidget(self.edit_frame)
        layout.addLayout(buttons)

    # -- public ------------------------------------------------------------------------------

    @property
    def request(self) -> ConfirmRequest | None:
        """The request on display, if any."""
        return self._request

    @property
    def editor(self) -> ActionEditor | None:
        """The open editor, if the person is editing the action."""
        return self._editor

    @property
    def edit_error(self) -> str | None:
        """Why the edit cannot be approved yet, or None (also None when not editing)."""
        return self._edit_error

    def image(self) -> QImage | None:
        """The picture on display (crop with the marker, or the whole screen small)."""
        return self._image

    @Slot(object)
    def show_request(self, request: ConfirmRequest) -> None:
        """Show a request and wait for the person's answer."""
        self._close_editor()
        self._request = request
        self._image = None
        action = request.action
        pointed = bool(request.points)
        self.title_label.setText(f"holodesk wants to {shown_line(request.description)}")
        self.payload_scroll.setVisible(not pointed)
        self.payload_label.setText(_payload(request))
        self.payload_scroll.verticalScrollBar().setValue(0)
        details = []
        if request.target:
            details.append(f"In: {shown_line(request.target)}")
        if request.element:
            details.append(f"Target: {shown_line(request.element)}")
        if isinstance(action, Drag | DragTo) and len(request.points) >= 2:
            details.append(f"Screen points: from {request.points[0]} to {request.points[1]}")
        elif pointed:
            details.append(f"Screen point: {request.points[0]}")
        self.details_label.setText("\n".join(details))
        self.details_label.setVisible(bool(details))
        reasons = "".join(f"\n• {shown_line(r)}" for r in request.reasons)
        self.reasons_label.setText(
            f"Why you are asked:{reasons}"
            if reasons
            else "Why you are asked: every step is confirmed"
        )
        self.image_label.clear()
        self.image_label.setText("Loading the screenshot…")
        bounds = QSize(POINTED_BOUNDS if pointed else WHOLE_BOUNDS)
        path = request.screenshot_path or request.screenshot  # bytes when no file is kept
        points, geometry = request.points, request.geometry
        # Keys and typing have no point: show the window they go to (a terminal's line).
        area = request.target_rect
        self._wanted = self._loader.submit(
            lambda: render_marked_crop(path, points, geometry, bounds, CROP_SIZE, area)
        )
        for button in (self.skip_button, self.stop_button):
            button.setEnabled(True)
        self._hold_back()
        self.setFocus(Qt.FocusReason.OtherFocusReason)

    @Slot()
    def clear(self) -> None:
        """Nothing to confirm (answered here or elsewhere)."""
        self._close_editor()
        self._request = None
        self._image = None
        self._wanted = 0
        self._arm_timer.stop()
        self.title_label.setText("Nothing to confirm")
        self.image_label.clear()
        self.payload_scroll.hide()
        self.payload_label.clear()
        self.details_label.clear()
        self.reasons_label.clear()
        for button in (self.skip_button, self.stop_button):
            button.setEnabled(False)
        self._armed = False
        self._refresh_buttons()

    @Slot()
    def start_edit(self) -> None:
        """Open the editor for the action on display (when it is editable and armed)."""
        request = self._request
        if request is None or not self._armed:
            return
        if self._editor is not None:
            self._focus_editor()
            return
        editor = editor_for(request)
        if editor is None:
            return
        self._editor = editor
        self._edit_layout.insertWidget(1, editor)
        for field in editor.fields():
            field.installEventFilter(self)
        editor.changed.connect(self._revalidate)
        self.edit_frame.show()
        self._revalidate()
        self._hold_back()  # Enter now approves something else: give the eyes time again
        self._focus_editor()

    @Slot()
    def cancel_edit(self) -> None:
        """Drop the edit and show the proposal again; the run is not stopped."""
        if self._editor is None:
            return
        self._close_editor()
        if self._request is not None:
            self._hold_back()
            self.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- keys and answers --------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if self._request is not None and not event.isAutoRepeat():
            if key in _ENTER_KEYS and event.modifiers() in _PLAIN:
                self._answer(Answer.APPROVE)
                event.accept()
                return
            if key == Qt.Key.Key_Escape:
                if self._editor is not None:
                    self.cancel_edit()
                else:
                    self._answer(Answer.STOP)
                event.accept()
                return
            if key == Qt.Key.Key_E and event.modifiers() == Qt.KeyboardModifier.AltModifier:
                self.start_edit()
                event.accept()
                return
        super().keyPressEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter and Esc in the editor's fields mean what they mean in the panel."""
        if (
            self._editor is None
            or event.type() != QEvent.Type.KeyPress
            or not isinstance(event, QKeyEvent)
        ):
            return super().eventFilter(watched, event)
        key = event.key()
        if key in _ENTER_KEYS:
            if event.modifiers() == Qt.KeyboardModifier.ShiftModifier and isinstance(
                watched, QPlainTextEdit
            ):
                # A line break of our own: Qt's Shift+Enter would put U+2028 in the text.
                watched.insertPlainText("\n")
            elif event.modifiers() in _PLAIN and not event.isAutoRepeat():
                self._answer(Answer.APPROVE)
            # Always swallowed: an Enter inside the hold-back must not become a line break.
            return True
        if key == Qt.Key.Key_Escape:
            if not event.isAutoRepeat():
                self.cancel_edit()
            return True
        return super().eventFilter(watched, event)

    def _answer(self, answer: Answer) -> None:
        if self._request is None:
            return
        if answer in (Answer.APPROVE, Answer.APPROVE_REST) and not self._armed:
            return  # too soon after the request appeared: the person has not seen it yet
        reply = ConfirmReply(answer)
        if self._editor is not None and answer in (Answer.APPROVE, Answer.APPROVE_REST):
            if answer is Answer.APPROVE_REST:
                return  # an edit answers one step; the button is off while editing
            try:
                edited = self._editor.edited()
            except EditError:
                return  # the error is on display; Approve is off
            if edited != self._editor.original:  # an unchanged edit is a plain approval
                reply = ConfirmReply(Answer.EDIT, edited=edited)
        self.clear()
        self.answered.emit(reply)

    def _hold_back(self) -> None:
        """Hold the approving answers back for ``arm_ms`` from now."""
        self._arm_timer.stop()
        self._set_armed(self._arm_ms <= 0)
        if not self._armed:
            self._arm_timer.start(self._arm_ms)

    def _arm(self) -> None:
        if self._request is not None:
            self._set_armed(True)

    def _set_armed(self, armed: bool) -> None:
        self._armed = armed
        self._refresh_buttons()

    def _refresh_buttons(self) -> None:
        asking = self._request is not None
        editing = self._editor is not None
        armed = asking and self._armed
        self.approve_button.setEnabled(armed and self._edit_error is None)
        self.approve_button.setText("Approve edit (Enter)" if editing else "Approve (Enter)")
        self.approve_rest_button.setEnabled(armed and not editing)
        self.stop_button.setText("Stop the run" if editing else "Stop (Esc)")
        can_edit = self._request is not None and editable(self._request.action)
        self.edit_button.setVisible(can_edit and not editing)
        self.edit_button.setEnabled(armed)

    def _revalidate(self) -> None:
        editor = self._editor
        if editor is None:
            return
        try:
            editor.edited()
        except EditError as e:
            self._edit_error = str(e)
        else:
            self._edit_error = None
        self.edit_error_label.setText(shown(self._edit_error or ""))
        self.edit_error_label.setVisible(self._edit_error is not None)
        self._refresh_buttons()

    def _focus_editor(self) -> None:
        if self._editor is not None:
            self._editor.fields()[0].setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _close_editor(self) -> None:
        editor, self._editor = self._editor, None
        self._edit_error = None
        self.edit_frame.hide()
        self.edit_error_label.clear()
        if editor is not None:
            # The focus must not be left on a field about to go: Enter and Esc come home.
            focused = self.focusWidget()
            if focused is not None and editor.isAncestorOf(focused) and self._request is not None:
                self.setFocus(Qt.FocusReason.OtherFocusReason)
            for field in editor.fields():
                field.removeEventFilter(self)
            self._edit_layout.removeWidget(editor)
            editor.hide()
            editor.deleteLater()
        self._refresh_buttons()

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
    """What a type or hotkey action sends, for the prominent box: in full, every invisible
    character shown as a symbol (app/visible.py).

    Text the policy hid (it looks like a secret) is shown as the description says it (its
    length only); the raw text is never shown then.
    """
    action = request.action
    if isinstance(action, Hotkey):
        times = f" ({action.repeat} times)" if action.repeat > 1 else ""
        return shown_line("+".join(action.keys) + times)
    if isinstance(action, Type) and not _text_is_masked(request):
        return shown(action.text)
    return shown_line(request.description)
