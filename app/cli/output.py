"""What every `holodesk` subcommand shares for its output: the error line, the exit codes, the
stop signals.

An error goes to stderr as ``holodesk: `` and the problem as :mod:`app.cli.render` renders it;
:func:`fail` returns the exit code to end with, so a command says ``return fail(e)``. Text
that holds what a file says (a task, a setting's value, an automation's name: any program may
have written them) is printed with :func:`say`, as every error is: an escape sequence there
would drive the person's terminal (erase the lines above, write its clipboard).
"""

from __future__ import annotations

import sys

from app.cli.exitcodes import (
    EXIT_BUSY,
    EXIT_NOT_DONE,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_RUN_FAILED,
    EXIT_STOPPED,
    EXIT_USAGE,
    RESULT_CODES,
)
from app.cli.render import render
from app.runner import stop_signals
from app.visible import without_controls
from model.problem import HolodeskError, Problem

__all__ = [
    "EXIT_BUSY",
    "EXIT_NOT_DONE",
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_RUN_FAILED",
    "EXIT_STOPPED",
    "EXIT_USAGE",
    "RESULT_CODES",
    "error",
    "fail",
    "say",
    "stop_signals",
]


def fail(
    problem: Problem | HolodeskError | BaseException | str, code: int = EXIT_RUN_FAILED
) -> int:
    """Say ``problem`` on stderr after ``holodesk: ``; returns ``code``.

    A :class:`~model.problem.Problem` or :class:`~model.problem.HolodeskError` is rendered with
    its fix in the terminal's terms; any other exception or text is said as it is.
    """
    error(problem)
    return code


def error(problem: Problem | HolodeskError | BaseException | str) -> None:
    """Say ``problem`` on stderr after ``holodesk: `` (for an error that does not end the
    command: the command goes on, or ends later with its own code)."""
    text = render(problem) if isinstance(problem, (Problem, HolodeskError)) else str(problem)
    say(f"holodesk: {text}", err=True)


def say(text: str = "", *, err: bool = False) -> None:
    """Print ``text`` (on stderr with ``err``) with every control character and bidirectional
    control shown as a visible symbol (:func:`app.visible.without_controls`), line breaks kept:
    the one way out for text that may hold what a file says."""
    print(without_controls(text), file=sys.stderr if err else sys.stdout)
