"""What every `holodesk` subcommand shares for its output: the error line, the exit codes, the
stop signals.

An error goes to stderr as ``holodesk: `` and the problem as :mod:`app.cli.render` renders it;
:func:`fail` returns the exit code to end with, so a command says ``return fail(e)``.
"""

from __future__ import annotations

import sys

from app.cli.exitcodes import EXIT_BUSY, EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE
from app.cli.render import render
from app.runner import stop_signals
from model.problem import HolodeskError, Problem

__all__ = [
    "EXIT_BUSY",
    "EXIT_OK",
    "EXIT_RUN_FAILED",
    "EXIT_USAGE",
    "error",
    "fail",
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
    print(f"holodesk: {text}", file=sys.stderr)
