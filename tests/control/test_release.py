"""control/release.py without a display: the pyautogui releaser and the never-raising entry.

The stand-in pyautogui accepts every key name pyautogui has (its ``KEY_NAMES``, copied in
control/keys.py), so a modifier the releaser leaves out (a right-hand one, say) shows here as
not released, not as a name the stand-in happened to refuse.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from control import release
from control.keys import PYAUTOGUI_KEYS
from control.release import PyAutoGuiReleaser, X11Releaser, release_everything, releaser


class FakePyAutoGui(types.ModuleType):
    """The part of pyautogui the releaser uses; records what it was asked."""

    def __init__(self) -> None:
        super().__init__("pyautogui")
        self.FAILSAFE = True
        self.calls: list[tuple[str, str, bool]] = []

    def isValidKey(self, key: str) -> bool:
        return key in PYAUTOGUI_KEYS

    def mouseUp(self, button: str, _pause: bool = True) -> None:
        self.calls.append(("mouseUp", button, self.FAILSAFE))

    def keyUp(self, key: str, _pause: bool = True) -> None:
        self.calls.append(("keyUp", key, self.FAILSAFE))


#: Every modifier pyautogui names, each side: what a killed run may have left down.
SIDED = sorted(k for k in PYAUTOGUI_KEYS
               if k.endswith(("left", "right")) and k not in ("left", "right"))
RIGHT_HAND = [k for k in SIDED if k.endswith("right")]
MODIFIERS = ["shift", "ctrl", "alt", "win", "option", "command", "fn", *SIDED]


def test_outside_x11_every_modifier_and_button_gets_a_release_with_the_failsafe_off(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    assert RIGHT_HAND == ["altright", "ctrlright", "optionright", "shiftright", "winright"]
    fake = FakePyAutoGui()
    monkeypatch.setitem(sys.modules, "pyautogui", fake)
    released = PyAutoGuiReleaser().release_everything()
    assert released.buttons == ("left", "middle", "right")
    assert sorted(released.keys) == sorted(MODIFIERS)
    # Buttons first, as the executor releases them (a drag ends with its modifiers held).
    assert [c[:2] for c in fake.calls] == [
        ("mouseUp", "left"), ("mouseUp", "middle"), ("mouseUp", "right"),
        *(("keyUp", key) for key in released.keys),
    ]
    # A pointer resting in a fail-safe corner must not stop a release...
    assert not any(failsafe for _name, _what, failsafe in fake.calls)
    assert fake.FAILSAFE is True  # ...and the fail-safe is back afterwards


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_the_run_start_entry_point_releases_every_right_hand_modifier_and_button(
    monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    fake = FakePyAutoGui()
    monkeypatch.setitem(sys.modules, "pyautogui", fake)
    released = release_everything(platform)
    assert released is not None
    up = [what for name, what, _failsafe in fake.calls if name == "keyUp"]
    assert set(RIGHT_HAND) <= set(up)
    assert [what for name, what, _failsafe in fake.calls if name == "mouseUp"] == [
        "left", "middle", "right"]


def test_the_platform_picks_the_releaser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", ":42")
    chosen = releaser("linux")
    assert isinstance(chosen, X11Releaser) and chosen.display_name == ":42"
    assert isinstance(releaser("win32"), PyAutoGuiReleaser)
    assert isinstance(releaser("darwin"), PyAutoGuiReleaser)


def test_a_releaser_that_fails_is_logged_and_never_stops_the_run(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        def release_everything(self) -> Any:
            raise RuntimeError("no X server")

    monkeypatch.setattr(release, "releaser", lambda _platform: Broken())
    assert release_everything("linux") is None
    assert "could not release" in caplog.text
