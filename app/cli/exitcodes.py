"""Exit codes of the `holodesk` command, shared by every subcommand."""

from __future__ import annotations

#: 0 only when the command did what it was asked (a run: the model answered the task).
EXIT_OK = 0
#: The run ended without an answer (stop, limit, loop, error, question), or a check failed.
EXIT_RUN_FAILED = 1
#: Bad arguments or settings.
EXIT_USAGE = 2
#: Another run holds the desktop.
EXIT_BUSY = 3
