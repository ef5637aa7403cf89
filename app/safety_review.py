"""What the front ends ask the person about the safety settings: the changes made outside
holodesk (in the files, or in the environment a file may have set) that are not applied
(:mod:`app.approval`), and the two answers.

:func:`review` reads the settings and automations files against the record of approved values.
The person then applies the changes (:func:`apply`: approved, in effect from then on) or keeps
the approved values (:func:`keep`: the files get them back, so the question is not asked
forever; the refused values go to ``holodesk.log`` only). Either answer touches only the changes
the person was shown, and only while the files still hold them: a file changed again meanwhile
(an automation's task swapped while the question waited) is asked about again. A value from the
environment is applied for the process that asked only, and cannot be written back: it is asked
again while the environment sets it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from app import paths
from app.approval import (
    ApprovalUnavailable,
    PendingChange,
    RecordState,
    keyring_problem,
    no_keyring_fix,
    read_record,
    record_path,
)
from app.automations import (
    AutomationError,
    approve_confirm,
    automations_path,
    keep_confirm,
    load_automations,
    pending_confirms,
)
from app.secrets import SecretStore
from app.settings import approve_changes, keep_approved, load_settings

__all__ = ["Review", "apply", "keep", "review"]


@dataclass(frozen=True)
class Review:
    """The safety changes waiting for the person, and what to say with them.

    ``note`` is about the record itself (not trusted, no keyring to check it; "" when there is
    nothing to say). ``blocked`` says why the changes cannot be approved now (no keyring to
    remember the approval; "" when they can).
    """

    changes: tuple[PendingChange, ...]
    state: RecordState
    note: str = ""
    blocked: str = ""
    settings_path: Path | None = None
    automations_path: Path | None = None

    def lines(self) -> list[str]:
        """One line per change, for a terminal or a window; a mode's change is followed by
        the task it would be approved for (a change of what an automation does shows it in
        its own line)."""
        out: list[str] = []
        for change in self.changes:
            out.append(change.describe())
            if change.task:
                out.append(f"    its task: {json.dumps(change.task, ensure_ascii=False)}")
        return out

    def how_to_approve(self) -> str:
        """What the person can do when not asked now."""
        if self.blocked:
            return f"{self.blocked}. {no_keyring_fix().text}"
        return ("To apply them, run `holodesk config approve` in a terminal (it shows them and "
                "asks), or set each value with `holodesk config set KEY VALUE`.")


def review(*, automation: str | None = None, every_automation: bool = False,
           settings_file: Path | None = None, automations_file: Path | None = None,
           store: SecretStore | None = None) -> Review:
    """The changes not applied: the settings', and the confirmation mode of ``automation``
    (a name) or of every automation. Never raises for a file that cannot be read: that is
    reported where the file is used."""
    settings_file = paths.settings_path() if settings_file is None else settings_file
    automations_file = automations_path() if automations_file is None else automations_file
    settings = load_settings(settings_file, store=store)
    changes = list(settings.pending)
    if automation is not None or every_automation:
        try:
            items = load_automations(automations_file)
        except AutomationError:
            items = []
        key = (automation or "").casefold()
        wanted = [a for a in items if every_automation or a.key == key]
        if wanted:
            approvals = read_record(record_path(automations_file.parent), store)
            changes += pending_confirms(wanted, settings.confirm, approvals)
    # A value from the environment is approved for this process: no keyring needed for it.
    blocked = keyring_problem(store) if any(not c.source for c in changes) else ""
    return Review(tuple(changes), settings.approval_state, settings.approval_note, blocked,
                  settings_file, automations_file)


def apply(done: Review, store: SecretStore | None = None) -> list[PendingChange]:
    """Approve the changes of ``done``; the ones approved (a change the files no longer hold
    is left to the next question). :class:`ApprovalUnavailable` without a keyring."""
    if done.blocked and any(not c.source for c in done.changes):
        raise ApprovalUnavailable(f"the changes cannot be approved: {done.blocked}",
                                  no_keyring_fix())
    applied = approve_changes(done.changes, path=done.settings_path, store=store)
    for change in done.changes:
        if change.automation is not None and approve_confirm(
                change, path=done.automations_path, store=store):
            applied.append(change)
    return applied


def keep(done: Review, store: SecretStore | None = None) -> list[PendingChange]:
    """Keep the approved values: written back in place of the changes of ``done``; the ones
    written back."""
    kept = keep_approved(done.changes, path=done.settings_path, store=store)
    for change in done.changes:
        if change.automation is not None and keep_confirm(
                change, path=done.automations_path, store=store):
            kept.append(change)
    return kept
