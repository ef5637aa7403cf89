"""The terminal front end: prints the loop's events and answers confirmations from stdin.

Model and server text is printed through app/visible.py, so an escape sequence in it never
reaches the terminal; typed-ahead input is discarded before each confirmation, so a key
pressed earlier never answers a question the person has not seen.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from collections.abc import Callable
from typing import TextIO

from pydantic import ValidationError

from app.cli.render import reason_line
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
from app.store import Source
from app.visible import visible_line, without_controls
from control.policy import secret_reasons
from model.schema import Type

_ANSWERS = {
    "a": Answer.APPROVE,
    "approve": Answer.APPROVE,
    "y": Answer.APPROVE,
    "yes": Answer.APPROVE,
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
                 verbose: bool = False, stopped: Callable[[], bool] = lambda: False) -> None:
        self.out = out or sys.stdout
        self.answers = answers or sys.stdin
        self.verbose = verbose
        self.stopped = stopped

    def handle(self, event: Event) -> None:
        """Print one event; for a confirmation, ask and answer it (blocking this thread)."""
        match event:
            case RunStarted():
                mode = " (dry run: nothing is clicked or typed)" if event.dry_run else ""
                model = _v(event.model) if event.model else "its saved steps (the model if needed)"
                self._say(f"run {event.run_id}: {_v(repr(event.task))} with {model} at "
                          f"{_v(event.endpoint)}, monitor {event.monitor}{mode}")
                if event.notice:
                    self._say(f"note: {_v(event.notice)}")
            case FrameCaptured():
                g = event.geometry
                self._say(f"[{event.step_no}] screenshot {g.sent_width}x{g.sent_height} of "
                          f"monitor {g.monitor} (scale {g.scale:g})", verbose=True)
            case ModelText():
                pass  # streaming text is for the GUI; the terminal prints the parsed step
            case StepProposed():
                if event.source is Source.REPLAYED:
                    self._say(f"[{event.step_no}] replayed: {_v(event.source_note)}")
                elif event.source_note:
                    self._say(f"[{event.step_no}] the model takes over: "
                              f"{_v(event.source_note)}")
                self._say(f"[{event.step_no}] thinks: {_v(event.step.thought)}")
                self._say(f"[{event.step_no}] next: {_v(event.description)}")
            case AwaitingConfirmation():
                event.request.reply(self.ask(event.request))
            case StepDecided():
                self._say(f"[{event.step_no}] {event.decision.value}", verbose=True)
            case ActionExecuted():
                self._say(f"[{event.step_no}] done in {event.exec_ms:.0f} ms, screen settled "
                          f"after {event.settle_ms:.0f} ms", verbose=True)
            case StepFailed():
                self._say(f"[{event.step_no}] failed: {_v(event.error)}")
            case RunFinished():
                if event.answer:
                    self._say(f"answer: {_v(event.answer)}")
                self._say(f"run {event.run_id or '-'} ended: {event.result.words} "
                          f"after {event.steps} step(s): "
                          f"{_v(reason_line(event.reason, event.fix))}")

    def ask(self, request: ConfirmRequest) -> ConfirmReply:
        """Show the action in words, its target, the screen point and why; read the answer."""
        self._say("  confirm: " + _v(request.description))
        action = request.action
        if isinstance(action, Type) and not request.secret:
            # The description cuts long text: the full text to type, every character shown.
            self._say(f"  text:    {_v(action.text)}")
        if request.target:
            self._say(f"  in:      {_v(request.target)}")
        if request.element:
            self._say(f"  target:  {_v(request.element)}")
        if request.points:
            self._say("  point:   " + " -> ".join(str(p) for p in request.points)
                      + f" on monitor {request.geometry.monitor}")
        for reason in request.reasons:
            self._say(f"  why:     {_v(reason)}")
        # Only text that is shown may be edited here: a terminal would echo a secret's edit.
        editable = isinstance(request.action, Type) and not request.secret
        question = ("  [a]pprove / [e]dit the text / approve [r]est of run / [s]kip / [q] stop? "
                    if editable else "  [a]pprove / approve [r]est of run / [s]kip / [q] stop? ")
        self._discard_typeahead()
        while True:
            self.out.write(question)
            self.out.flush()
            line = self._read_line(request)
            if line is None or not line:  # stopped meanwhile, or end of input: do not act
                self._say("")
                return ConfirmReply(Answer.STOP)
            choice = line.strip().lower()
            if editable and choice in ("e", "edit"):
                reply = self._edit_text(request)
                if reply is not None:
                    return reply
                continue
            answer = _ANSWERS.get(choice)
            if answer is not None:
                return ConfirmReply(answer)
            # Enter alone is not an answer: approving a risky action takes a deliberate key.
            self._say("  please answer a, e, r, s or q" if editable
                      else "  please answer a, r, s or q")

    def _edit_text(self, request: ConfirmRequest) -> ConfirmReply | None:
        """Read the text to type instead; None (ask again) when cancelled or invalid."""
        self.out.write("  type instead (Enter alone keeps the proposal): ")
        self.out.flush()
        line = self._read_line(request)
        if line is None or not line:
            return ConfirmReply(Answer.STOP)
        text = line.removesuffix("\n").removesuffix("\r")
        if not text:
            self._say("  not edited")
            return None
        try:
            edited = Type.model_validate({**request.action.model_dump(), "text": text})
        except ValidationError as e:
            self._say(f"  that cannot be typed: {e.errors()[0]['msg']}")
            return None
        # The person's own line showed it already; the scrollback need not repeat a password.
        shown = f"{len(text)} characters" if secret_reasons(text) else repr(text)
        self._say(f"  will type {shown} instead")
        return ConfirmReply(Answer.EDIT, edited)

    def _discard_typeahead(self) -> None:
        """Drop what was typed before the question: it was meant for something else."""
        discard_typeahead(self.answers)

    def _read_line(self, request: ConfirmRequest) -> str | None:
        """A line of input, or None once the run is stopped; a stop never waits for typing."""
        try:
            fileno = self.answers.fileno()
        except (AttributeError, OSError, ValueError):
            return self.answers.readline()  # not a real file (tests): no wait to interrupt
        if sys.platform == "win32":
            return self.answers.readline()  # select() does not work on console handles
        # Read the descriptor itself, byte by byte: a buffered readline could swallow the next
        # answer into its buffer, where select() no longer sees it.
        line = b""
        while True:
            if self.stopped() or request.answered:
                return None
            ready, _, _ = select.select([fileno], [], [], 0.1)
            if not ready:
                continue
            byte = os.read(fileno, 1)
            if not byte:
                return line.decode(errors="replace")  # end of input
            line += byte
            if byte == b"\n":
                return line.decode(errors="replace")

    def _say(self, text: str, verbose: bool = False) -> None:
        if verbose and not self.verbose:
            return
        # A last guard: model text is made visible where it is put in a line; a control
        # character that got here anyway is shown, not sent to the terminal.
        self.out.write(without_controls(text) + "\n")
        self.out.flush()


def discard_typeahead(answers: TextIO) -> None:
    """Drop what was typed on the terminal ``answers`` before a question: it was meant for
    something else (a pipe or a file holds answers on purpose and is left alone)."""
    if sys.platform == "win32":
        return
    try:
        fileno = answers.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (tests): nothing typed ahead
    if not os.isatty(fileno):
        return
    import termios

    # On failure the question is still asked; only this guard is missing.
    with contextlib.suppress(termios.error):
        termios.tcflush(fileno, termios.TCIFLUSH)


def ask_yes_no(question: str, *, answers: TextIO | None = None,
               out: TextIO | None = None) -> bool:
    """Ask ``question`` (ending in ``[y/N]``) on the terminal; True only for y or yes typed
    after it was shown. Keys typed before are dropped, Enter alone or the end of input is no."""
    answers = answers or sys.stdin
    out = out or sys.stdout
    discard_typeahead(answers)
    out.write(question)
    out.flush()
    try:
        fileno = answers.fileno()
    except (AttributeError, OSError, ValueError):
        line = answers.readline()  # not a real file (tests)
    else:
        # The descriptor itself, byte by byte: a buffered read could keep what follows.
        raw = b""
        while not raw.endswith(b"\n"):
            byte = os.read(fileno, 1)
            if not byte:
                break
            raw += byte
        line = raw.decode(errors="replace")
    if not line.endswith("\n"):
        out.write("\n")
    return line.strip().lower() in ("y", "yes")


def _v(text: str) -> str:
    """Model or server text on one terminal line, every control character shown as a symbol."""
    return visible_line(text)
