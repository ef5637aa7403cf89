"""control/release.py without a display: the pyautogui releaser and the never-raising entry."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from control import release
from control.release import PyAutoGuiReleaser, X11Releaser, release_everything, releaser


class FakePyAutoGui(types.ModuleType):
    """The part of pyautogui the releaser uses; records what it was asked."""

    def __init__(self) -> None:
        super().__init__("pyautogui")
        self.FAILSAFE = True
        self.calls: list[tuple[str, str, bool]] = []

    def isValidKey(self, key: str) -> bool:
        return key in ("shift", "ctrl", "alt", "command", "option")

    def mouseUp(self, button: str, _pause: bool = True) -> None:
        self.calls.append(("mouseUp", button, self.FAILSAFE))

    def keyUp(self, key: str, _pause: bool = True) -> None:
        self.calls.append(("keyUp", key, self.FAILSAFE))


def test_outside_x11_every_modifier_and_button_gets_a_release_with_the_failsafe_off(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakePyAutoGui()
    monkeypatch.setitem(sys.modules, "pyautogui", fake)
    released = PyAutoGuiReleaser().release_everything()
    assert released.buttons == ("left", "middle", "right")
    assert released.keys == ("shift", "ctrl", "alt", "option", "command")
    assert [c[:2] for c in fake.calls] == [
        ("mouseUp", "left"), ("mouseUp", "middle"), ("mouseUp", "right"),
        ("keyUp", "shift"), ("keyUp", "ctrl"), ("keyUp", "alt"), ("keyUp", "option"),
        ("keyUp", "command"),
    ]
    # A pointer resting in a fail-safe corner must not stop a release...
    assert not any(failsafe for _name, _what, failsafe in fake.calls)
    assert fake.FAILSAFE is True  # ...and the fail-safe is back afterwards


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
