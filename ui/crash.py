"""Uncaught exceptions are logged in full and shown to the person, never a silent exit."""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from types import TracebackType

from PySide6.QtCore import QObject, Signal

log = logging.getLogger("holodesk.crash")


class CrashReporter(QObject):
    """Installs the hooks; ``crashed`` carries a readable sentence to the GUI thread."""

    crashed = Signal(str)

    def install(self) -> None:
        sys.excepthook = self._excepthook
        threading.excepthook = self._thread_excepthook

    def _excepthook(
        self, kind: type[BaseException], value: BaseException, tb: TracebackType | None
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, value, tb)
            return
        self._report(kind, value, tb, "the main thread")

    def _thread_excepthook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_value is None:
            return
        name = args.thread.name if args.thread is not None else "a worker"
        self._report(args.exc_type, args.exc_value, args.exc_traceback, f"thread {name}")

    def _report(
        self, kind: type[BaseException], value: BaseException, tb: TracebackType | None, where: str
    ) -> None:
        detail = "".join(traceback.format_exception(kind, value, tb))
        log.critical("uncaught exception in %s:\n%s", where, detail)
        # A queued signal: safe from any thread; the GUI shows it.
        self.crashed.emit(f"{kind.__name__}: {value}")


def show_error(text: str) -> None:
    """Show ``text`` in an error box that points to the log file for the full detail."""
    from PySide6.QtWidgets import QMessageBox

    from app import paths

    QMessageBox.critical(
        None,
        "holodesk: something went wrong",
        f"{text}\n\nThe full detail is in the log file:\n{paths.log_path()}",
    )
