"""How a run's result (app/result.py) looks in the desktop app: one colour, one tray state and
one line of words for each, shared by the task window, the tray, its stand-in window, the
notification and the action log window, so they never disagree."""

from __future__ import annotations

from app.result import RunResult
from ui.colours import Tone
from ui.tray import TrayState

#: The colour of a result's words: green only for done.
RESULT_TONES: dict[RunResult, Tone] = {
    RunResult.DONE: Tone.OK,
    RunResult.NOT_DONE: Tone.ERROR,
    RunResult.STOPPED: Tone.WARNING,
    RunResult.FAILED: Tone.ERROR,
    RunResult.REFUSED: Tone.ERROR,
}

#: The tray's state after a run with that result.
RESULT_TRAY: dict[RunResult, TrayState] = {
    RunResult.DONE: TrayState.DONE,
    RunResult.NOT_DONE: TrayState.NOT_DONE,
    RunResult.STOPPED: TrayState.STOPPED,
    RunResult.FAILED: TrayState.FAILED,
    RunResult.REFUSED: TrayState.FAILED,
}


def result_line(result: RunResult, reason: str) -> str:
    """The result and why, as one line for the tray's tooltip, its stand-in window and a
    notification: "holodesk: not done: the practice task is not done ..."."""
    return f"holodesk: {result.words}: {reason}" if reason else f"holodesk: {result.words}"
