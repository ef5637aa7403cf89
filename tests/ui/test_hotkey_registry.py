"""ui.hotkey_registry on its own: the stop hotkey first, the automations' hotkeys around it."""

from __future__ import annotations

from collections.abc import Callable

from pytestqt.qtbot import QtBot

from app.automations import Automation
from control.hotkeys import DEFAULT_STOP_HOTKEY
from tests.support.fake_hotkeys import FakeHotkeys
from ui.hotkey_registry import HotkeyRegistry


def _a(name: str, hotkey: str) -> Automation:
    return Automation.make("", name=name, task="do it", hotkey=hotkey)


class Recorder:
    def __init__(self) -> None:
        self.stops: list[str] = []
        self.told: list[str] = []


class RefusingHotkeys(FakeHotkeys):
    """A listener the platform refuses one combination on (taken by another program)."""

    refused = "ctrl+alt+8"

    def register(self, combo: str, callback: Callable[[], None]) -> None:
        if combo == self.refused:
            raise OSError("taken by another program")
        super().register(combo, callback)


def _registry(qtbot: QtBot) -> tuple[HotkeyRegistry, FakeHotkeys, Recorder]:
    seen = Recorder()
    registry = HotkeyRegistry(seen.stops.append, seen.told.append)
    listener = RefusingHotkeys()
    listener.register(DEFAULT_STOP_HOTKEY, registry.stop_callback(DEFAULT_STOP_HOTKEY))
    listener.start()
    registry.set_listener(listener, DEFAULT_STOP_HOTKEY)
    return registry, listener, seen


def test_a_press_names_the_automation_and_the_stop_calls_back(qtbot: QtBot) -> None:
    registry, listener, seen = _registry(qtbot)
    registry.set_automations([_a("mail", "ctrl+alt+2")])
    assert registry.registered == ["ctrl+alt+2"]
    with qtbot.waitSignal(registry.automation_pressed) as pressed:
        assert listener.fire("ctrl+alt+2")
    assert pressed.args == ["mail"]
    assert listener.fire(DEFAULT_STOP_HOTKEY)
    assert seen.stops == [DEFAULT_STOP_HOTKEY]


def test_a_clash_with_the_stop_is_left_out_and_told_once(qtbot: QtBot) -> None:
    registry, listener, seen = _registry(qtbot)
    clash = _a("mail", DEFAULT_STOP_HOTKEY)
    registry.set_automations([clash, _a("notes", "ctrl+alt+3")])
    registry.set_automations([clash, _a("notes", "ctrl+alt+4")])
    assert registry.registered == ["ctrl+alt+4"]
    assert sorted(listener.combos) == sorted([DEFAULT_STOP_HOTKEY, "ctrl+alt+4"])
    assert len(seen.told) == 1 and seen.told[0].endswith("Until then it runs only from the "
                                                         "tray menu.")


def test_a_new_stop_hotkey_replaces_the_old_one(qtbot: QtBot) -> None:
    registry, listener, seen = _registry(qtbot)
    registry.set_automations([_a("mail", "ctrl+alt+9")])
    with qtbot.waitSignal(registry.stop_hotkey_changed) as changed:
        assert registry.apply_stop_hotkey("ctrl+alt+9")
    assert changed.args == ["ctrl+alt+9"]
    assert registry.stop_combo == "ctrl+alt+9" and registry.registered == []
    assert listener.combos == ["ctrl+alt+9"]
    assert listener.fire("ctrl+alt+9") and seen.stops == ["ctrl+alt+9"]


def test_a_stop_hotkey_that_cannot_be_used_keeps_the_old_one(qtbot: QtBot) -> None:
    registry, listener, seen = _registry(qtbot)
    registry.set_automations([_a("mail", "ctrl+alt+2")])
    assert not registry.apply_stop_hotkey(RefusingHotkeys.refused)
    assert registry.stop_combo == DEFAULT_STOP_HOTKEY
    assert sorted(listener.combos) == sorted([DEFAULT_STOP_HOTKEY, "ctrl+alt+2"])
    assert seen.told and seen.told[0].startswith("The stop hotkey ctrl+alt+8 cannot be used")


def test_one_refused_automation_hotkey_costs_no_other(qtbot: QtBot) -> None:
    registry, _listener, seen = _registry(qtbot)
    registry.set_automations([_a("mail", RefusingHotkeys.refused), _a("notes", "ctrl+alt+3")])
    assert registry.registered == ["ctrl+alt+3"]
    assert seen.told == ["The hotkey ctrl+alt+8 of “mail” cannot be used: taken by another "
                         "program"]


def test_clear_leaves_only_the_stop(qtbot: QtBot) -> None:
    registry, listener, _seen = _registry(qtbot)
    registry.set_automations([_a("mail", "ctrl+alt+2")])
    registry.clear()
    assert registry.registered == [] and listener.combos == [DEFAULT_STOP_HOTKEY]
