"""Exit codes of the `holodesk` command, shared by every subcommand: the one place they are
listed (the README's "Use from the command line" says them too).

A run (`holodesk run`, `demo`, `automation run`, a `trigger NAME` run in this terminal) ends
with its result (app/result.py), each its own code, so a script can tell "not done" from
"stopped" from "failed"; the other commands use 0, 1 and 2.

====  ==================================================================================
code  meaning
====  ==================================================================================
0     done: the command did what it was asked (a run: its task is done)
1     failed: the server, the model's output, the machine or holodesk failed (a run that
      could not start too); for the other commands: a check failed
2     usage: bad arguments or settings
3     busy: another run holds the desktop
4     holodesk's own packages are shadowed by another project's (ui.identity
      ``EXIT_NOT_OURS``, decided before anything of app/ may be imported)
5     not done: the run ended without its task done (the model asked a question or gave
      up, a step or time limit, a loop, or the task's own check says it is not done)
6     stopped: the emergency stop, Ctrl+C, the person's Stop at a question, a guard
7     refused: holodesk (or the person, at a question before the run) refused the run
      before it acted (plain http to another machine, an automation changed outside
      holodesk and not approved, no way to keep the never-touch applications out)
====  ==================================================================================
"""

from __future__ import annotations

from app.result import RunResult

#: 0 only when the command did what it was asked (a run: its task is done).
EXIT_OK = 0
#: A run failed (or could not start), or another command's check failed.
EXIT_RUN_FAILED = 1
#: Bad arguments or settings.
EXIT_USAGE = 2
#: Another run holds the desktop.
EXIT_BUSY = 3
# 4: holodesk's own packages are shadowed by another project's (ui.identity.EXIT_NOT_OURS,
# decided before anything of app/ may be imported).
#: The run ended and its task is not done.
EXIT_NOT_DONE = 5
#: The run was stopped.
EXIT_STOPPED = 6
#: The run was refused before it acted.
EXIT_REFUSED = 7

#: The exit code of a run by its result.
RESULT_CODES: dict[RunResult, int] = {
    RunResult.DONE: EXIT_OK,
    RunResult.NOT_DONE: EXIT_NOT_DONE,
    RunResult.STOPPED: EXIT_STOPPED,
    RunResult.FAILED: EXIT_RUN_FAILED,
    RunResult.REFUSED: EXIT_REFUSED,
}
