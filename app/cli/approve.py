"""The terminal's side of the safety settings changed outside holodesk (app/safety_review.py):
asked before a run when a person is at the terminal, told (not applied) when not, and
`holodesk config approve`."""

from __future__ import annotations

import sys

from app.cli.output import EXIT_OK, EXIT_USAGE, error, fail, say
from app.cli.terminal import ask_yes_no
from app.safety_review import Review, apply, keep, review
from app.visible import visible_line

__all__ = ["answer_on_terminal", "approve_command", "interactive", "settle_before_run"]

_CHANGED = ("safety settings were changed outside holodesk (not with `holodesk config set`, the "
            "Settings window or the automation commands):")


def interactive() -> bool:
    """Whether a person can be asked on this terminal."""
    return sys.stdin is not None and not sys.stdin.closed and sys.stdin.isatty()


def settle_before_run(*, automation: str | None = None) -> None:
    """Before a run: the changes not applied (the settings', and ``automation``'s mode) are
    asked about on an interactive terminal, else said (the approved values are used). The run
    reads the settings afterwards, as the answer left them."""
    from app.settings import SettingsError

    try:
        done = review(automation=automation)
    except SettingsError:
        return  # the run reports the file's own problem when it reads it
    if done.note:
        error(f"warning: {done.note}")
    if not done.changes:
        return
    if done.blocked or not interactive():
        error("warning: these safety settings were changed outside holodesk and are not "
              "applied; the run uses the approved values:")
        for line in done.lines():
            error(f"  {visible_line(line)}")  # a file any program wrote: no escape sequences
        error(done.how_to_approve())
        return
    answer_on_terminal(done)


def answer_on_terminal(done: Review) -> bool:
    """List the changes of ``done`` and ask; apply them (True) or keep the approved values."""
    say(_CHANGED)
    for line in done.lines():
        say(f"  {visible_line(line)}")  # a file any program wrote: no escape sequences
    if ask_yes_no("Apply these changes? [y/N] "):
        applied = apply(done)
        names = ", ".join(c.label() for c in applied)
        say(f"applied: {names or 'nothing (the files changed again meanwhile)'}")
        return True
    names = ", ".join(c.label() for c in keep(done))
    say("not applied: the approved values stay" +
          (f" and are written back ({names})" if names else ""))
    return False


def approve_command() -> int:
    """`holodesk config approve`: show the changes waiting for approval and ask."""
    from app.approval import RecordState

    done = review(every_automation=True)
    if not done.changes:
        if done.state is RecordState.TAMPERED:
            apply(done)  # nothing looser: the record is signed again with what is in effect
            say(f"{done.note}.\nThe record now holds the safety settings in effect.")
        else:
            say("no safety setting is waiting for approval")
        return EXIT_OK
    if done.blocked:
        return fail(f"{len(done.changes)} change(s) cannot be approved: {done.how_to_approve()}",
                    EXIT_USAGE)
    if not interactive():
        for line in done.lines():
            say(f"  {visible_line(line)}")
        return fail("stdin is not a terminal to ask on: run `holodesk config approve` in a "
                    "terminal, or set each value with `holodesk config set KEY VALUE`",
                    EXIT_USAGE)
    answer_on_terminal(done)
    return EXIT_OK
