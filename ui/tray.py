"""The tray icon and its menu; a small always-available window where there is no tray.

The menu lists the saved automations (a click runs one) above "Automations…", which opens the
window that edits them; the stand-in window shows the same list as the drop-down of its
Automations button.

The stand-in window keeps one width whatever it says: its status line is cut with "…" (the
whole text on hover), and each button keeps the width of the longest text it may show
(:meth:`FallbackTrayWindow.reserve`), so no button moves as texts change or one hides.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from enum import Enum, StrEnum

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QMenu,
    QMessageBox,
    QSizePolicy,
    QSystemTrayIcon,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ui.fit import ElidedLabel
from ui.plain import plain_label, plain_tooltip, shown, shown_line
from ui.workers import Background

log = logging.getLogger(__name__)


class TrayState(StrEnum):
    """What the tray shows; each state has its own colour and glyph."""

    IDLE = "idle"
    WORKING = "working"
    WAITING = "waiting"  # a confirmation waits for the person
    STOPPED = "stopped"
    OFFLINE = "offline"  # the model server is down or not ready
    # How the last run ended (app/result.py), until the next run or server change:
    DONE = "done"
    NOT_DONE = "not_done"
    FAILED = "failed"  # the run failed, or was refused


_LOOK: dict[TrayState, tuple[str, str]] = {
    TrayState.IDLE: ("#6b7280", ""),
    TrayState.WORKING: ("#2563eb", "▶"),
    TrayState.WAITING: ("#f59e0b", "?"),
    TrayState.STOPPED: ("#dc2626", "■"),
    TrayState.OFFLINE: ("#111827", "×"),
    TrayState.DONE: ("#15803d", "✓"),
    TrayState.NOT_DONE: ("#c2410c", "!"),
    TrayState.FAILED: ("#991b1b", "✕"),
}


def state_icon(state: TrayState, size: int = 64) -> QIcon:
    """A round icon in the state's colour with its glyph, drawn (no image files needed)."""
    colour, glyph = _LOOK[state]
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(colour))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(2, 2, size - 4, size - 4)
    if glyph:
        painter.setPen(QColor("white"))
        font = painter.font()
        font.setPixelSize(size // 2)
        font.setBold(True)
        painter.setFont(font)
        painter.drawText(pixmap.rect(), Qt.AlignmentFlag.AlignCenter, glyph)
    painter.end()
    return QIcon(pixmap)


class TrayActions(QObject):
    """The menu's actions, shared by the system tray and the stand-in window."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.new_task = QAction("New task…", self)
        # The practice run of holodesk demo: the real loop on a practice window, no GPU.
        self.demo = QAction("Try the demo", self)
        self.automations = QAction("Automations…", self)
        self.action_log = QAction("Action log", self)
        self.settings = QAction("Settings", self)
        self.check = QAction("Check set-up…", self)  # holodesk doctor, as a window
        self.calibrate = QAction("Calibrate…", self)  # holodesk calibrate
        self.report = QAction("Report a problem…", self)  # holodesk report
        # Start or stop the local vLLM; shown only when the endpoint is this machine.
        self.server = QAction("Start model server", self)
        self.stop = QAction("Stop", self)
        self.about = QAction("About holodesk", self)
        self.quit = QAction("Quit", self)
        self.stop.setEnabled(False)

    def all(self) -> list[QAction]:
        """Every entry, in menu order: the tray menu, its stand-in window and the task
        window's menu all list these, so an action added here appears in each."""
        return [self.new_task, self.demo, self.automations, self.action_log, self.settings,
                self.check, self.calibrate, self.report, self.server, self.stop, self.about,
                self.quit]

    def starts_group(self, action: QAction) -> bool:
        """Whether a menu draws a separator above ``action``."""
        return action in (self.action_log, self.about)


class Tray(QObject):
    """The tray icon, or a small window standing in for it where the desktop has no tray.

    ``automation_chosen(name)``: the person picked a saved automation to run.
    ``undelivered(title, message, error)``: a desktop notification that :meth:`notify` took
    could not be shown after all (the caller shows it in a window instead).

    Without a tray, notifications go to the desktop's notification service
    (control/notify.py) once :meth:`probe_notifications` found one.
    """

    activated = Signal()
    automation_chosen = Signal(str)
    undelivered = Signal(str, str, bool)

    def __init__(
        self,
        actions: TrayActions,
        *,
        use_system_tray: bool | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.actions = actions
        self.state = TrayState.IDLE
        self.tooltip = "holodesk"
        if use_system_tray is None:
            use_system_tray = QSystemTrayIcon.isSystemTrayAvailable()
        self.menu = QMenu()
        self.menu.setToolTipsVisible(True)  # an entry that cannot be used says why on hover
        for action in actions.all():
            if actions.starts_group(action):
                self.menu.addSeparator()
            self.menu.addAction(action)
        # The same run actions, as the drop-down of the stand-in window's Automations button.
        self.run_menu = QMenu("Run automation")
        self.automation_actions: list[QAction] = []
        self.icon: QSystemTrayIcon | None = None
        self.window: FallbackTrayWindow | None = None
        #: The notification service answered (only asked where there is no tray); ``probed``:
        #: the question was answered, either way.
        self.desktop_notifications = False
        self.probed = False
        self._markup = False
        self._environ: Mapping[str, str] | None = None
        self._background: Background | None = None
        if use_system_tray:
            self.icon = QSystemTrayIcon(state_icon(self.state))
            self.icon.setContextMenu(self.menu)
            self.icon.activated.connect(self._on_activated)
            self.icon.show()
        else:
            self.window = FallbackTrayWindow(actions, self.run_menu)
            self.window.show()
        self.set_state(TrayState.IDLE, "holodesk: idle")

    def set_state(self, state: TrayState, tooltip: str) -> None:
        """Show ``state`` and a one-line explanation (the tooltip)."""
        self.state = state
        self.tooltip = tooltip
        icon = state_icon(state)
        if self.icon is not None:
            self.icon.setIcon(icon)
            self.icon.setToolTip(plain_tooltip(tooltip))
        if self.window is not None:
            self.window.show_state(icon, tooltip)

    def set_automations(self, entries: Sequence[tuple[str, str]]) -> None:
        """List the automations to run: (name, hotkey label or "") each, in order."""
        for action in self.automation_actions:
            self.menu.removeAction(action)
            self.run_menu.removeAction(action)
            action.deleteLater()
        self.automation_actions = []
        for name, hotkey in entries:
            # Text after a tab is drawn in the menu's shortcut column (nothing is bound).
            action = QAction(f"▶ {name}\t{hotkey}" if hotkey else f"▶ {name}", self)
            action.setToolTip(plain_tooltip(f"Run the automation {name}"))
            action.triggered.connect(lambda _checked=False, n=name: self.automation_chosen.emit(n))
            self.menu.insertAction(self.actions.automations, action)
            self.run_menu.addAction(action)
            self.automation_actions.append(action)
        self.run_menu.setEnabled(bool(entries))

    def probe_notifications(self, environ: Mapping[str, str] | None = None) -> None:
        """Look for the desktop's notification service, off this thread (``environ``: the
        session bus to use, default this process's)."""
        from control import notify

        self._environ = environ

        def found(server: notify.Server) -> None:
            log.info("desktop notifications through %s (%s)", server.name, server.vendor)
            self.desktop_notifications = True
            self._markup = server.markup
            self.probed = True

        def missing(e: BaseException) -> None:
            log.info("no desktop notifications (messages show in the task window): %s", e)
            self.probed = True

        self._worker().run(lambda: notify.server(environ), found, missing)

    def notify(self, title: str, message: str, error: bool = False) -> bool:
        """A desktop notification through the tray, else the notification service; False when
        neither is there to use (show it in a window then)."""
        if self.icon is None and self.desktop_notifications:
            self._send(title, message, error)
            return True
        if self.icon is None or not QSystemTrayIcon.supportsMessages():
            return False
        icons = QSystemTrayIcon.MessageIcon
        kind = icons.Critical if error else icons.Information
        # The message may quote the model or the server: shown literally, never as markup.
        self.icon.showMessage(title, plain_tooltip(message), kind, 8000)
        return True

    def _send(self, title: str, message: str, error: bool) -> None:
        from control import notify

        environ, markup = self._environ, self._markup

        def failed(e: BaseException) -> None:
            log.warning("a desktop notification could not be shown: %s", e)
            self.desktop_notifications = False  # the next messages go to the window at once
            self.undelivered.emit(title, message, error)

        # The message may quote the model or the server: invisible characters made visible,
        # and escaped for servers that read markup.
        self._worker().run(
            lambda: notify.notify(title, shown(message), urgent=error, markup=markup,
                                  environ=environ),
            None, failed,
        )

    def _worker(self) -> Background:
        if self._background is None:
            # One at a time, in order: notifications keep the order they were raised in.
            self._background = Background(self, max_threads=1)
        return self._background

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.activated.emit()


class TrayCloseChoice(Enum):
    """What the person chose on closing the tray's stand-in window."""

    HIDE = "hide"
    QUIT = "quit"
    CANCEL = "cancel"


#: How to get the stand-in window back, said when it is closed.
BRING_BACK = ("To get it back, open holodesk again (from your applications menu, or by "
              "running holodesk), or choose “Show the status window” in the menu of the "
              "holodesk task window.")


def tray_close_box(parent: QWidget | None = None) -> QMessageBox:
    """The question asked when the stand-in window is closed (this desktop has no tray, so
    closing it could leave holodesk running with nothing on screen)."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("holodesk")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText("Quit holodesk, or keep it running without this window?")
    box.setInformativeText(f"This desktop has no tray area, so this window stands in for it. "
                           f"{BRING_BACK}")
    hide = box.addButton("Hide this window", QMessageBox.ButtonRole.AcceptRole)
    box.addButton("Quit holodesk", QMessageBox.ButtonRole.DestructiveRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(hide)
    return box


def ask_tray_close(parent: QWidget | None = None) -> TrayCloseChoice:
    """Ask :func:`tray_close_box`'s question and wait for the answer (a nested event loop)."""
    box = tray_close_box(parent)
    box.exec()
    return choice_of(box)


def choice_of(box: QMessageBox) -> TrayCloseChoice:
    """The answer given to ``box`` (Cancel, or the box closed, keeps everything as it is)."""
    clicked = box.clickedButton()
    if clicked is None:
        return TrayCloseChoice.CANCEL
    role = box.buttonRole(clicked)
    if role == QMessageBox.ButtonRole.AcceptRole:
        return TrayCloseChoice.HIDE
    if role == QMessageBox.ButtonRole.DestructiveRole:
        return TrayCloseChoice.QUIT
    return TrayCloseChoice.CANCEL


_BUTTONS_PER_ROW = 6


class FallbackTrayWindow(QWidget):
    """A small always-on-top window with the tray menu's actions as buttons, of a fixed width
    (see the module doc).

    Closing it from the window manager does not close it: ``close_requested`` is emitted and
    the app asks what to do (:func:`ask_tray_close`). ``quitting = True`` lets it close (the
    app quitting).
    """

    close_requested = Signal()

    def __init__(self, actions: TrayActions, run_menu: QMenu | None = None) -> None:
        super().__init__(None, Qt.WindowType.Tool | Qt.WindowType.WindowStaysOnTopHint)
        self.setWindowTitle("holodesk")
        self.quitting = False
        self.status_icon = plain_label()
        # The tooltip's text: it may quote a task of any length, so it is cut, never widening
        # the window (it grew from 654 to 1170 pixels with the messages of one demo).
        self.status_text = ElidedLabel("holodesk")
        self.buttons: dict[QAction, QToolButton] = {}
        top = QHBoxLayout()
        top.addWidget(self.status_icon)
        top.addWidget(self.status_text, 1)
        # Rows of a few buttons: one long row grows with every entry, and a wide window
        # pushes the task window off the screen's edge at 1366x768.
        buttons = QGridLayout()
        for index, action in enumerate(actions.all()):
            button = QToolButton()
            button.setDefaultAction(action)
            # Each button fills its column, and a hidden one keeps its place: none moves.
            policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            policy.setRetainSizeWhenHidden(True)
            button.setSizePolicy(policy)
            self.buttons[action] = button
            if action is actions.server:
                # A tool button does not follow its action's visibility by itself.
                button.setVisible(action.isVisible())
                action.changed.connect(
                    lambda b=button, a=action: b.setVisible(a.isVisible())
                )
            if action is actions.automations and run_menu is not None:
                # Click: manage them; the arrow: run one.
                button.setMenu(run_menu)
                button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
            buttons.addWidget(button, *divmod(index, _BUTTONS_PER_ROW))
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(buttons)
        self._fix_width()

    def reserve(self, action: QAction, texts: Sequence[str]) -> None:
        """Keep ``action``'s button as wide as the longest of ``texts`` (every text the
        action may show), so that a change of text moves nothing."""
        button = self.buttons[action]
        shown_now = button.text()
        widest = 0
        for text in (shown_now, *texts):
            button.setText(text)
            widest = max(widest, button.sizeHint().width())
        button.setText(shown_now)
        button.setMinimumWidth(widest)
        self._fix_width()

    def _fix_width(self) -> None:
        layout = self.layout()
        if layout is not None:
            layout.activate()
            self.setFixedWidth(layout.totalSizeHint().width())

    def show_state(self, icon: QIcon, text: str) -> None:
        self.status_icon.setPixmap(icon.pixmap(20, 20))
        self.status_text.set_full_text(shown_line(text))

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.quitting:
            event.accept()
            return
        # Where there is no tray this window is the way back to everything: never lost
        # without the person choosing it.
        event.ignore()
        self.close_requested.emit()
