"""Never-touched applications where holodesk has no target finder (red team, issue 21).

Without a finder (Windows, macOS, Wayland) holodesk cannot tell which window is the password
manager: ``NoTargetFinder.windows()`` lists nothing (where the TargetFinder protocol says an
unknown list must raise, so the caller paints everything out), so nothing is painted out of
the screenshot that goes to the model server, and the policy's never-touch names match no
target, so typing into the password manager is neither refused nor asked.
"""

from __future__ import annotations

from app.session import _with_never_touch
from app.settings import Settings
from control.policy import Aim, SafetyPolicy
from control.target import NO_FINDER, NoTargetFinder
from tests.support.actions import typing


def test_without_a_finder_a_password_managers_window_is_not_sent_to_the_model() -> None:
    settings = Settings()
    assert settings.never_touch  # password managers, by default
    rects = _with_never_touch(None, NoTargetFinder(), settings)
    assert rects is not None
    assert rects(), ("the frame goes to the model server with nothing painted out, "
                     "whatever a password manager shows")


def test_without_a_finder_typing_where_a_never_touched_application_may_be_asks() -> None:
    # Selecting a stored password's field and typing over it destroys the entry; the text
    # meant for a password manager is probably a password and must be masked too.
    policy = SafetyPolicy(never_touch=Settings().never_touch)
    verdict = policy.assess(typing("correct horse battery staple"), aim=Aim(NO_FINDER))
    assert verdict.confirm or verdict.forbidden, verdict
