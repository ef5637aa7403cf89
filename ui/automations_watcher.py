"""Notices the automations file changing (the CLI, the Automations window or an editor wrote it).

The file is replaced by a rename on every save, which ends a watch on the file itself: the
folder is watched too (it sees the rename). A burst of file events becomes one ``changed``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from app import paths

__all__ = ["AutomationsWatcher"]

log = logging.getLogger(__name__)


class AutomationsWatcher(QObject):
    """``changed`` shortly after ``path`` (or its folder) changed; :meth:`watch` (re)arms it."""

    changed = Signal()

    def __init__(self, path: Path, parent: QObject | None = None, *,
                 settle_ms: int = 200) -> None:
        super().__init__(parent)
        self.path = path
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(settle_ms)  # one reload for a burst of file events
        self._timer.timeout.connect(self.changed.emit)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(lambda _p: self._timer.start())
        self._watcher.fileChanged.connect(lambda _p: self._timer.start())

    def watch(self) -> None:
        """Watch the folder, and the file once it exists (call again after each reload)."""
        folder = self.path.parent
        try:
            paths.ensure_private_dir(folder)
        except OSError as e:
            log.warning("cannot watch %s: %s", folder, e)
            return
        wanted = [str(folder)]
        if self.path.exists():
            wanted.append(str(self.path))
        watched = self._watcher.files() + self._watcher.directories()
        missing = [p for p in wanted if p not in watched]
        if missing:
            self._watcher.addPaths(missing)

    def stop(self) -> None:
        """No ``changed`` any more from events already seen (quit)."""
        self._timer.stop()
