"""(Fixed; failed before its fix.)
Red team 8: the whole document selected, removed with a
*modified* removal key (Shift+Backspace: a chord, or Shift held and Backspace tapped with
``hold_and_tap``, or Shift left down by ``key_down``), then saved: the save is not asked.

GTK's text views bind Shift+BackSpace to "backspace" (as Qt's editors do): with the whole
content selected it removes all of it, as Backspace does. ``control.policy._content_replaced``
compares each chord with ``_REMOVE_SELECTION`` exactly; ``{shift, backspace}`` is not in it
and types nothing, so it is taken for a key that merely drops the selection, and the Ctrl+S
after it saves the emptied file over the original with nobody asked. The held-keys lowering
(control/held.py) makes every Shift-held Backspace this very chord.

Breaks docs/safety.md: "a save after the whole content was selected and then typed over,
deleted, cut or pasted over" asks; and "A key held down is pressed for every rule until it is
released".

Suggested fix (mechanism): read a removal by its non-modifier key, not the exact chord: a chord
whose keys other than Shift (and, for the word-deleting ones, Ctrl) are Backspace or Delete
removes the selection; or keep the selection "whole" only through keys known to leave it
(moves with Shift, Escape) and treat any other key as possibly replacing it.
"""

from __future__ import annotations

from control.policy import Aim, SafetyPolicy
from tests.support.actions import act, key
from tests.support.fake_targets import window

RISKY = SafetyPolicy()
GEDIT = window("gedit", title="notes.txt - gedit")
SAVE = key("ctrl", "s")


def test_control_select_all_backspace_save_asks() -> None:
    verdict = RISKY.assess(SAVE, history=[key("ctrl", "a"), key("backspace")], aim=Aim(GEDIT))
    assert verdict.confirm


def test_redteam8_shift_backspace_chord_empties_the_document_and_the_save_is_unasked() -> None:
    emptied = [key("ctrl", "a"), key("shift", "backspace")]
    verdict = RISKY.assess(SAVE, history=emptied, aim=Aim(GEDIT))
    assert verdict.confirm, "Shift+Backspace removed the whole selection; the save must ask"


def test_redteam8_shift_held_backspace_tapped_empties_the_document_unasked() -> None:
    emptied = [act(action="hold_and_tap", hold=["ctrl"], tap=["a"]),
               act(action="hold_and_tap", hold=["shift"], tap=["backspace"])]
    verdict = RISKY.assess(SAVE, history=emptied, aim=Aim(GEDIT))
    assert verdict.confirm, "Shift held, Backspace tapped: the selection is gone; save asks"


def test_redteam8_backspace_with_shift_left_down_empties_the_document_unasked() -> None:
    emptied = [key("ctrl", "a"), act(action="key_down", key="shift"), key("backspace"),
               act(action="key_up", key="shift")]
    verdict = RISKY.assess(SAVE, history=emptied, aim=Aim(GEDIT))
    assert verdict.confirm, "Backspace with Shift held down is Shift+Backspace; save asks"
