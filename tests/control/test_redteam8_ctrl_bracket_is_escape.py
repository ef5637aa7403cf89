"""(Fixed; failed before its fix.)
Red team 8: ``ctrl+[`` is Escape to a shell.

A terminal sends the ESC byte for Ctrl+[ exactly as for the Escape key, so readline takes what
follows as a Meta command: ``ctrl+[`` then ``#`` is M-# (insert-comment, which accepts the
line: it runs), ``ctrl+[``, ``1``, ``ctrl+[``, ``#`` uncomments and runs it, ``ctrl+[`` then
``<`` puts the oldest history line on the line. Where holodesk found no window (it may be a
terminal) docs/safety.md promises "typing after Escape" asks; ``control.policy._after_escape``
looks only for the key named ``escape``, so the same sequence with ``ctrl+[`` asks nothing.

Suggested fix (mechanism): one notion of "sends ESC" (``escape``, ``ctrl+[``, ``ctrl+3`` on
xterm-like terminals) shared by ``_after_escape`` and the terminal rules; or treat any chord
with Ctrl and a key that types as a possible control character in a may-be terminal.
"""

from __future__ import annotations

from control.policy import Aim, SafetyPolicy
from tests.support.actions import key, typing
from tests.support.fake_targets import NOTHING

RISKY = SafetyPolicy()


def test_control_escape_then_hash_asks() -> None:
    assert RISKY.assess(typing("#"), history=[key("escape")], aim=Aim(NOTHING)).confirm


def test_redteam8_ctrl_bracket_then_hash_is_escape_hash_unasked() -> None:
    verdict = RISKY.assess(typing("#"), history=[key("ctrl", "bracketleft")], aim=Aim(NOTHING))
    assert verdict.confirm, "ctrl+[ sends ESC: ctrl+[ then # is M-#, which runs the line"
