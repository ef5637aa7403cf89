"""The CLI's one renderer of a problem: the message, then the fix in the terminal's terms.

A fix's ``setting`` becomes the `holodesk config set` command that changes it, its ``remedy``
the ``holodesk`` command that does it (model/problem.py says what each front end names).
"""

from __future__ import annotations

from model.problem import Fix, HolodeskError, Problem, Remedy

COMMANDS: dict[Remedy, str] = {
    Remedy.START_SERVER: "holodesk serve",
    Remedy.CHECK_SERVER: "holodesk doctor",
    Remedy.RUN_DOCTOR: "holodesk doctor",
    Remedy.CALIBRATE: "holodesk calibrate",
    Remedy.SET_API_KEY: "holodesk config set api_key",
    Remedy.OPEN_SETTINGS: "holodesk config show",
    Remedy.SHOW_LOG: "holodesk log",
}


def fix_line(fix: Fix) -> str:
    """The fix as the terminal says it: its words, then what to type."""
    parts = [fix.text]
    if fix.setting:
        parts.append(f"(`holodesk config set {fix.setting} ...`)")
    if fix.remedy is not None:
        parts.append(f"(`{COMMANDS[fix.remedy]}`)")
    return " ".join(parts)


def render(problem: Problem | HolodeskError) -> str:
    """``message`` and, indented on the next line, ``fix: ...``."""
    if problem.fix is None:
        return problem.message
    return f"{problem.message}\n  fix: {fix_line(problem.fix)}"
