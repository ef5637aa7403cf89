"""Desktop notifications where there is no tray: through the freedesktop Notifications service
on a real (private) session bus, and back to the task window when there is none or it fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from control.notify import NotifyError, notify, server
from tests.support.fake_notifications import FakeNotifications, dbus_available
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home
from ui.tray import Tray, TrayActions

pytestmark = pytest.mark.skipif(not dbus_available(), reason="dbus-daemon is not installed")

ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}


def _tray(qtbot: QtBot, address: str) -> Tray:
    tray = Tray(TrayActions(), use_system_tray=False)
    assert tray.window is not None
    qtbot.addWidget(tray.window)
    tray.probe_notifications({"DBUS_SESSION_BUS_ADDRESS": address})
    qtbot.waitUntil(lambda: tray.probed, timeout=10_000)
    return tray


def test_without_a_tray_messages_go_to_the_notification_service(qtbot: QtBot) -> None:
    with FakeNotifications() as bus:
        tray = _tray(qtbot, bus.address)
        assert tray.desktop_notifications
        assert tray.notify("holodesk", "The run <b>stopped</b>", error=True)
        bus.wait_for(1)
        assert tray.notify("holodesk", "Done.")
        bus.wait_for(2)
    assert bus.refused == []  # the argument types a strict server checks
    first, second = bus.calls
    assert first.app_name == "holodesk" and first.summary == "holodesk"
    assert first.body == "The run &lt;b&gt;stopped&lt;/b&gt;"  # literal, never markup
    assert first.hints == {"urgency": 2, "desktop-entry": "holodesk"}
    assert first.app_icon == "holodesk"
    assert second.hints["urgency"] == 1


def test_a_server_without_markup_gets_the_text_as_it_is(qtbot: QtBot) -> None:
    with FakeNotifications(markup=False) as bus:
        tray = _tray(qtbot, bus.address)
        assert tray.notify("holodesk", "a < b & c\u202e")
        bus.wait_for(1)
    assert bus.calls[0].body == "a < b & c⟨U+202E⟩"  # a direction override made visible


def test_a_bus_without_a_notification_service_leaves_the_messages_to_the_window(
    qtbot: QtBot
) -> None:
    with FakeNotifications(serve=False) as bus:
        tray = _tray(qtbot, bus.address)
        assert not tray.desktop_notifications
        assert not tray.notify("holodesk", "The run stopped")


def test_a_notification_that_fails_is_handed_back(qtbot: QtBot) -> None:
    with FakeNotifications() as bus:
        tray = _tray(qtbot, bus.address)
        bus.failing = True
        with qtbot.waitSignal(tray.undelivered, timeout=10_000) as signal:
            assert tray.notify("holodesk", "The run stopped", error=True)
        assert signal.args == ["holodesk", "The run stopped", True]
        assert not tray.desktop_notifications  # the next ones go to the window at once
        assert not tray.notify("holodesk", "again")


def test_the_sender_says_why_it_cannot() -> None:
    with pytest.raises(NotifyError, match="no session bus"):
        server({})
    with pytest.raises(NotifyError, match="did not answer"):
        notify("holodesk", "x", environ={"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"})


def test_the_app_without_a_tray_notifies_and_keeps_the_task_window_down(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from app.settings import Settings
    from ui.app import HolodeskApp

    isolate_home(monkeypatch, tmp_path)
    with FakeNotifications() as bus, FakeVLLM(ScriptedPolicy([ANSWER])) as model:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
        app = HolodeskApp(Settings(endpoint=model.base_url), use_system_tray=False, probe=True)
        try:
            qtbot.waitUntil(lambda: app.tray.probed, timeout=10_000)
            app.report_error("The automations cannot be read: line 3")
            bus.wait_for(1)
            assert bus.calls[0].body == "The automations cannot be read: line 3"
            assert not app.task_window.isVisible()
            # A server that stops answering: the message is shown in the window instead.
            bus.failing = True
            app.report_error("Second message")
            qtbot.waitUntil(app.task_window.isVisible, timeout=10_000)
            assert "Second message" in app.task_window.error_label.text()
        finally:
            app.close()
            qtbot.wait(50)
