"""Calibrate… in the desktop app: targets on the (offscreen) window, the model's clicks over
real HTTP, the report, and "Use <convention>" saving it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from pytestqt.qtbot import QtBot

from app.calibrate import TARGETS, Calibrator, PlacedTarget
from app.settings import Settings, load_settings
from control.stop import StopLatch
from model.client import ClientConfig, HolotronClient
from model.coords import Convention, Rect
from tests.support.fake_capturer import FakeCapturer
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, SeeingPolicy, Target
from tests.support.home import isolate_home
from ui.app import HolodeskApp
from ui.calibrate_flow import CalibrationFlow
from ui.calibrate_screen import CalibrationWindow, QtTargetScreen

MONITOR = Rect(0, 0, 1280, 800)
TIMEOUT = 60_000


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


class RecordingScreen(QtTargetScreen):
    """The real target window; remembers what it shows so the fake screen can draw it."""

    current: PlacedTarget | None = None

    def show(self, target: PlacedTarget) -> None:
        RecordingScreen.current = target
        super().show(target)


def _picture() -> Image.Image:
    image = Image.new("RGB", (MONITOR.width, MONITOR.height), (236, 236, 236))
    placed = RecordingScreen.current
    if placed is not None:
        cx, cy, r = placed.center.x + 0.5, placed.center.y + 0.5, placed.radius
        ImageDraw.Draw(image).ellipse((cx - r, cy - r, cx + r, cy + r), fill=placed.target.rgb)
    return image


def _flow(server: FakeVLLM, opened: list[Settings]) -> CalibrationFlow:
    @contextmanager
    def opener(settings: Settings, latch: StopLatch) -> Iterator[Calibrator]:
        opened.append(settings)
        client = HolotronClient(ClientConfig(base_url=server.base_url, request_timeout=20))
        try:
            yield Calibrator(client, FakeCapturer(_picture, monitor=MONITOR), latch,
                             convention=settings.convention, visible_timeout=0.5)
        finally:
            client.close()

    def screen(on_cancel: Callable[[], None]) -> RecordingScreen:
        return RecordingScreen(on_cancel, window=CalibrationWindow(identity=True))

    return CalibrationFlow(opener=opener, screen_maker=screen)


def test_calibrate_finds_the_convention_and_saves_it(qtbot: QtBot) -> None:
    RecordingScreen.current = None
    policy = SeeingPolicy([Target(t.description, t.rgb) for t in TARGETS], convention="pixels")
    opened: list[Settings] = []
    with FakeVLLM(policy) as server:
        app = HolodeskApp(Settings(endpoint=server.base_url), use_system_tray=False,
                          probe=False, calibration=_flow(server, opened))
        try:
            app.show_task_window()
            app.actions.calibrate.trigger()
            assert app.calibration.running
            assert not app.task_window.isVisible()  # out of the way of the targets
            assert not app.start_task("anything")  # no run while calibrating
            # ... and saying so does not put the task window over the targets: it comes back
            # with the message when the calibration ends.
            assert app.teller.told[-1].startswith("A calibration is running")
            assert not app.task_window.isVisible()
            qtbot.waitUntil(lambda: app.calibration_control.dialog is not None, timeout=TIMEOUT)
            dialog = app.calibration_control.dialog
            assert dialog is not None
            assert app.task_window.isVisible()  # back
            assert dialog.report.verdict.best is not None
            assert dialog.report.verdict.best.convention is Convention.PIXELS
            assert "pixels" in dialog.table.toPlainText()
            assert dialog.use_button is not None and dialog.use_button.text() == "Use pixels"
            dialog.use_button.click()
            qtbot.waitUntil(lambda: app.settings.convention is Convention.PIXELS,
                            timeout=TIMEOUT)
            assert load_settings().convention is Convention.PIXELS
        finally:
            app.close()
            qtbot.wait(50)
    assert len(opened) == 1


def test_a_model_that_misses_gets_the_warning_and_no_use_button(qtbot: QtBot) -> None:
    RecordingScreen.current = None
    wild = {"thought": "there", "action": {"action": "click", "element": "target",
                                            "x": 3, "y": 997}}
    with FakeVLLM(ScriptedPolicy([wild], repeat_last=True)) as server:
        app = HolodeskApp(Settings(endpoint=server.base_url), use_system_tray=False,
                          probe=False, calibration=_flow(server, []))
        try:
            assert app.calibrate()
            assert not app.calibrate()  # one at a time
            qtbot.waitUntil(lambda: app.calibration_control.dialog is not None, timeout=TIMEOUT)
            dialog = app.calibration_control.dialog
            assert dialog is not None and dialog.use_button is None
            assert dialog.report.verdict.best is None
            assert "miss" in dialog.verdict.text().lower()
            assert load_settings().convention is Convention.NORM1000
        finally:
            app.close()
            qtbot.wait(50)


def test_without_a_server_it_says_why(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real opener: no display here (offscreen, DISPLAY unset), so it refuses before any
    # window shows, with the reason.
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    app = HolodeskApp(Settings(), use_system_tray=False, probe=False)
    try:
        assert app.calibrate()
        qtbot.waitUntil(lambda: not app.calibration.running, timeout=TIMEOUT)
        assert app.teller.told and app.teller.told[-1].startswith("Cannot calibrate:")
        assert app.calibration_control.dialog is None
    finally:
        app.close()
        qtbot.wait(50)


def test_the_stop_hotkey_ends_a_calibration(qtbot: QtBot) -> None:
    from control.hotkeys import DEFAULT_STOP_HOTKEY
    from tests.support.fake_hotkeys import FakeHotkeys

    RecordingScreen.current = None
    wild = {"thought": "there", "action": {"action": "click", "element": "target",
                                            "x": 3, "y": 997}}
    hotkeys = FakeHotkeys()
    with FakeVLLM(ScriptedPolicy([wild], repeat_last=True)) as server:
        app = HolodeskApp(Settings(endpoint=server.base_url), use_system_tray=False,
                          probe=False, calibration=_flow(server, []))
        try:
            hotkeys.register(DEFAULT_STOP_HOTKEY, app.hotkeys.stop_callback(DEFAULT_STOP_HOTKEY))
            hotkeys.start()
            app.hotkeys.set_listener(hotkeys, DEFAULT_STOP_HOTKEY)
            assert app.calibrate()
            assert hotkeys.fire(DEFAULT_STOP_HOTKEY)  # the target window may lack the focus
            qtbot.waitUntil(lambda: app.calibration_control.dialog is not None, timeout=TIMEOUT)
            dialog = app.calibration_control.dialog
            assert dialog is not None and dialog.report.stopped
            assert dialog.use_button is None
            assert not app.calibration.running
        finally:
            app.close()
            qtbot.wait(50)


def test_a_calibration_that_breaks_names_the_menu_item_not_a_command(qtbot: QtBot) -> None:
    @contextmanager
    def broken(settings: Settings, latch: StopLatch) -> Iterator[Calibrator]:
        raise RuntimeError("no frame")
        yield  # pragma: no cover

    def screen(on_cancel: Callable[[], None]) -> RecordingScreen:
        return RecordingScreen(on_cancel, window=CalibrationWindow(identity=True))

    flow = CalibrationFlow(opener=broken, screen_maker=screen)
    app = HolodeskApp(Settings(), use_system_tray=False, probe=False, calibration=flow)
    try:
        app.show_task_window()
        assert app.calibrate()
        qtbot.waitUntil(lambda: not app.calibration.running, timeout=TIMEOUT)
        assert app.teller.told[-1] == ("The calibration failed: RuntimeError: no frame. Test the "
                                   "screen capture. Use the tray menu's Check set-up…")
        assert app.task_window.isVisible()  # back after the targets
    finally:
        app.close()
        qtbot.wait(50)
