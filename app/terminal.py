"""The terminal front end: prints the loop's events and answers confirmations from stdin."""

from __future__ import annotations

import sys
from typing import TextIO

from app.events import (
    ActionExecuted,
    Answer,
    AwaitingConfirmation,
    ConfirmReply,
    ConfirmRequest,
    Event,
    FrameCaptured,
    ModelText,
    RunFinished,
    RunStarted,
    StepDecided,
    StepFailed,
    StepProposed,
)

_ANSWERS = {
    "a": Answer.APPROVE,
    "approve": Answer.APPROVE,
    "y": Answer.APPROVE,
    "yes": Answer.APPROVE,
    "": Answer.APPROVE,
    "all": Answer.APPROVE_REST,
    "r": Answer.APPROVE_REST,
    "s": Answer.SKIP,
    "skip": Answer.SKIP,
    "n": Answer.SKIP,
    "q": Answer.STOP,
    "stop": Answer.STOP,
}


class TerminalFrontEnd:
    """Renders events as lines; every line goes to ``out`` (stdout by default)."""

    def __init__(self, out: TextIO | None = None, answers: TextIO | None = None,
                 verbose: bool = False) -> None:
        self.out = out or sys.stdout
        self.answers = answers or sys.stdin
        self.verbose = verbose

    def handle(self, event: Event) -> None:
        """Print one event; for a confirmation, ask and answer it (blocking this thread)."""
        match event:
            case RunStarted():
                mode = " (dry run: nothing is clicked or typed)" if event.dry_run else ""
                self._say(f"run {event.run_id}: {event.task!r} with {event.model} at "
                          f"{event.endpoint}, monitor {event.monitor}{mode}")
            case FrameCaptured():
                g = event.geometry
                self._say(f"[{event.step_no}] screenshot {g.sent_width}x{g.sent_height} of "
                          f"monitor {g.monitor} (scale {g.scale:g})", verbose=True)
            case ModelText():
                pass  # streaming text is for the GUI; the terminal prints the parsed step
            case StepProposed():
                self._say(f"[{event.step_no}] thinks: {event.step.thought}")
                self._say(f"[{event.step_no}] next: {event.description}")
            case AwaitingConfirmation():
                event.request.reply(self.ask(event.request))
            case StepDecided():
                self._say(f"[{event.step_no}] {event.decision.value}", verbose=True)
            case ActionExecuted():
                self._say(f"[{event.step_no}] done in {event.exec_ms:.0f} ms, screen settled "
                          f"after {event.settle_ms:.0f} ms", verbose=True)
            case StepFailed():
                self._say(f"[{event.step_no}] failed: {event.error}")
            case RunFinished():
                if event.answer:
                    self._say(f"answer: {event.answer}")
                self._say(f"run {event.run_id or '-'} ended: {event.outcome.value} "
                          f"after {event.steps} step(s): {event.reason}")

    def ask(self, request: ConfirmRequest) -> ConfirmReply:
        """Show the action in words, its target, the screen point and why; read the answer."""
        self._say("  confirm: " + request.description)
        if request.element:
            self._say(f"  target:  {request.element}")
        if request.points:
            self._say("  point:   " + " -> ".join(str(p) for p in request.points)
                      + f" on monitor {request.geometry.monitor}")
        for reason in request.reasons:
            self._say(f"  why:     {reason}")
        while True:
            self.out.write("  [a]pprove / approve [r]est of run / [s]kip / [q] stop? ")
            self.out.flush()
            line = self.answers.readline()
            if not line:  # end of input: nobody can confirm, so do not act
                self._say("")
                return ConfirmReply(Answer.STOP)
            answer = _ANSWERS.get(line.strip().lower())
            if answer is not None:
                return ConfirmReply(answer)
            self._say("  please answer a, r, s or q")

    def _say(self, text: str, verbose: bool = False) -> None:
        if verbose and not self.verbose:
            return
        self.out.write(text + "\n")
        self.out.flush()
