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
# 4: holodesk's own packages are shadowed by another project's (ui.identity.EXIT_NOT_OURS,
# decided before anything of app/ may be imported).
