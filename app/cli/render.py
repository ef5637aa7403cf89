"""The CLI's one renderer of a problem: the message, then the fix in the terminal's terms.

A fix's ``setting`` becomes the option or `holodesk config set` command that changes it, its
``remedy`` the ``holodesk`` command that does it (model/problem.py says what each front end
names).
"""

from __future__ import annotations

import shlex

from model.problem import Fix, HolodeskError, Problem, Remedy

COMMANDS: dict[Remedy, str] = {
    Remedy.START_SERVER: "holodesk serve",
    Remedy.CHECK_SERVER: "holodesk doctor",
    Remedy.RUN_DOCTOR: "holodesk doctor",
    Remedy.CALIBRATE: "holodesk calibrate",
    Remedy.SET_API_KEY: "holodesk config set api_key -",
    Remedy.OPEN_SETTINGS: "holodesk config show",
    Remedy.SHOW_LOG: "holodesk log",
}

#: Settings that the run, doctor, calibrate and bench commands also take as an option.
OPTIONS: dict[str, str] = {
    "endpoint": "--endpoint",
    "model": "--model",
    "monitor": "--monitor",
    # `holodesk serve`'s options for the serve_* settings.
    "serve_gpu_memory": "--gpu-memory",
    "serve_max_model_len": "--max-model-len",
    "serve_port": "--port",
    "serve_model": "--model",
}


def setting_words(setting: str, value: str | None = None) -> str:
    """How the terminal changes ``setting``: its option where there is one, else `config set`
    (with ``value`` when the fix knows it, so it can be pasted as it is)."""
    shown = shlex.quote(value) if value is not None else "..."
    command = f"`holodesk config set {setting} {shown}`"
    option = OPTIONS.get(setting)
    return f"{option} or {command}" if option and value is None else command


def what_to_type(fix: Fix) -> str:
    """The terminal's part of a fix: the command or option to use, in brackets; or nothing."""
    parts = []
    if fix.remedy is not None:
        parts.append(f"(`{COMMANDS[fix.remedy]}`)")
    if fix.setting:
        parts.append(f"({fix.setting}: {setting_words(fix.setting, fix.value)})")
    return " ".join(parts)


def fix_line(fix: Fix) -> str:
    """The fix as the terminal says it: its words, then what to type."""
    return " ".join(p for p in (fix.text, what_to_type(fix)) if p)


def reason_line(reason: str, fix: Fix | None) -> str:
    """A run's end reason (which holds the fix's words) with what to type for its fix."""
    extra = what_to_type(fix) if fix is not None else ""
    return f"{reason} {extra}" if extra else reason


def render(problem: Problem | HolodeskError) -> str:
    """``message`` and, on the next line, ``Fix: ...``: the form the commands have always
    printed (after their ``holodesk: `` prefix on stderr), which tests and scripts match."""
    if problem.fix is None:
        return problem.message
    return f"{problem.message}\nFix: {fix_line(problem.fix)}"
