"""The desktop app's first-run guide and its honest status, over real parts: the stand-in
`vllm` and `nvidia-smi` (real processes), the real server checks and probe, offscreen; the
stand-in tray window naming the demo as it starts, and Settings kept above it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.automations import Automation
from app.settings import Settings
from app.status import ServerStatus
from tests.app.test_serve import free_port
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.fake_vllm_cli import install_shims, shim_path
from tests.support.home import isolate_home
from tests.support.keyring_backend import without_keyring
from ui.app import HolodeskApp
from ui.demo_control import DEMO_OPENING
from ui.settings_dialog import SettingsDialog

DOWN = ServerStatus("down", "No model server answers at http://127.0.0.1:8000/v1.",
                    "Start the model server.", endpoint="http://127.0.0.1:8000/v1")
READY = ServerStatus("ok", "The model server at http://127.0.0.1:8000/v1 is ready: it serves "
                     "'holotron' (context 32768 tokens).", endpoint="http://127.0.0.1:8000/v1")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_home(monkeypatch, tmp_path)
    without_keyring(monkeypatch)
    return tmp_path


@pytest.fixture
def apps(qtbot: QtBot, home: Path) -> Iterator[list[HolodeskApp]]:
    made: list[HolodeskApp] = []
    yield made
    for app in made:
        app.close()
    qtbot.wait(50)


def make(apps: list[HolodeskApp], endpoint: str = "http://127.0.0.1:8000/v1") -> HolodeskApp:
    app = HolodeskApp(Settings(endpoint=endpoint), use_system_tray=False, probe=False)
    apps.append(app)
    app.show_task_window()
    return app


def test_the_guide_follows_whether_a_server_answers(apps: list[HolodeskApp]) -> None:
    app = make(apps)
    guide = app.task_window.guide
    app.status_changed.emit(DOWN)  # first start: nothing answers
    assert guide.isVisible()
    assert "http://127.0.0.1:8000/v1" in guide.where_label.text()
    app.status_changed.emit(READY)  # a server answers: the guide goes
    assert guide.isHidden()
    app.status_changed.emit(DOWN)  # the server is lost: it comes back
    assert guide.isVisible()


def test_a_not_ready_error_goes_once_the_server_is_ready(apps: list[HolodeskApp]) -> None:
    """The reported case: an old red "not ready" error under a green "ready"."""
    app = make(apps)
    window = app.task_window
    app.status_changed.emit(DOWN)
    assert not app.start_task("sort the downloads")
    assert window.error_label.isVisible() and "not ready" in window.error_label.text()
    app.status_changed.emit(READY)
    assert window.error_label.isHidden()
    assert window.model_status.property("state") == "online"

    # An error about something else is not the server's to clear.
    app.status_changed.emit(DOWN)
    app.report_error("The automations cannot be read: line 3 is not TOML.")
    app.status_changed.emit(READY)
    assert window.error_label.isVisible() and "automations" in window.error_label.text()


def test_a_failed_set_up_resets_the_status_with_the_reason(
    qtbot: QtBot, apps: list[HolodeskApp], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported case: "Model server starting: checking vLLM and the GPU" stayed on."""
    folder = install_shims(home / "nogpu", gpus="")  # nvidia-smi lists no GPU: fatal
    monkeypatch.setenv("PATH", shim_path(folder))
    app = make(apps, f"http://127.0.0.1:{free_port()}/v1")
    app.status_changed.emit(DOWN)
    window, guide = app.task_window, app.task_window.guide
    progress: list[str] = []
    app.server.progress.connect(progress.append)

    guide.setup_button.click()  # the guide's Set up: the checks first, as the tray's Start
    assert not guide.setup_button.isEnabled()
    qtbot.waitUntil(lambda: app.server.state == "failed", timeout=60_000)
    assert "checking vLLM and the GPU" in progress  # the checks ran and were shown...
    status = window.model_status.text()
    assert "checking" not in status  # ...and the status line does not stay on them
    assert "did not start" in status and "GPU" in status
    assert window.model_status.property("state") == "error"
    assert "did not start" in app.tray.tooltip  # the tray too: not "starting" any more
    assert guide.setup_button.isEnabled()
    assert "GPU" in guide.progress()  # the guide says why, in the window's words
    assert "`" not in guide.progress() and "holodesk config" not in guide.progress()
    assert "Settings > Model server > Endpoint URL" in guide.progress()  # or a server elsewhere
    assert window.error_label.isHidden()  # said once, in the guide


def test_a_start_called_off_gives_the_probes_words_back(
    qtbot: QtBot, apps: list[HolodeskApp], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = install_shims(home / "slow", gpus="")
    monkeypatch.setenv("PATH", shim_path(folder))
    monkeypatch.setenv("FAKE_NVIDIA_SMI_DELAY", "3")  # still checking when stopped
    app = make(apps, f"http://127.0.0.1:{free_port()}/v1")
    app.status_changed.emit(DOWN)
    window = app.task_window
    with qtbot.waitSignal(app.server.progress, timeout=30_000):
        app.server_view.set_up()
    qtbot.waitUntil(lambda: "checking" in window.model_status.text(), timeout=5_000)
    app.server.stop()
    qtbot.waitUntil(lambda: app.server.state == "stopped", timeout=60_000)
    assert window.model_status.text() == f"Model: {DOWN.message}"
    assert app.tray.tooltip == f"holodesk: {DOWN.message}"
    assert window.guide.setup_button.isEnabled()


def test_an_automation_that_cannot_start_is_shown_under_its_name(
    apps: list[HolodeskApp],
) -> None:
    app = make(apps)
    window = app.task_window
    window.setWindowTitle("holodesk — rename the photos")  # the previous run's
    app.status_changed.emit(DOWN)
    app.set_automations([Automation(name="Morning report", task="sum up the mail")])
    assert not app.run_automation("Morning report", "hotkey")
    assert window.windowTitle() == "holodesk — automation: Morning report"
    assert window.error_label.isVisible() and "not ready" in window.error_label.text()
    assert window.automation == "Morning report"


def test_connect_elsewhere_shows_the_server_part_of_settings(
    qtbot: QtBot, home: Path
) -> None:
    long = "No model server answers at https://gpu.example.com/v1. " * 6 + "END"

    def probe(endpoint: str, key: str | None, model: str | None, **_: object) -> ServerStatus:
        return ServerStatus("down", long, "Check the address.")

    dialog = SettingsDialog(environ={}, probe_fn=probe, server_only=True)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.endpoint_edit.isVisible() and dialog.test_button.isVisible()
    assert not dialog.max_steps_spin.isVisible() and not dialog.autostart_check.isVisible()
    dialog.endpoint_edit.setText("https://gpu.example.com/v1")
    dialog.test_button.click()
    pane = dialog.status_label
    # The reported case: the result cut off until the dialog was resized. Here it is short
    # enough to show whole: nothing to scroll.
    qtbot.waitUntil(lambda: pane.text().endswith("Fix: Check the address."), timeout=10_000)
    qtbot.waitUntil(lambda: pane.height() >= pane.document().size().height()
                    and pane.verticalScrollBar().maximum() == 0, timeout=3_000)
    assert long in pane.text()
    assert dialog.changed_values() == {"endpoint": "https://gpu.example.com/v1"}


def test_an_automation_run_carries_its_name_to_its_end(qtbot: QtBot, home: Path,
                                                        make_app: MakeApp) -> None:
    answer = {"thought": "done", "action": {"action": "answer", "text": "3 new mails"}}
    with FakeVLLM(ScriptedPolicy([answer])) as server:
        app, rig = make_app(server)
        window = app.task_window
        window.setWindowTitle("holodesk — rename the photos")  # the previous run's
        app.set_automations([Automation(name="Morning report", task="sum up the mail")])
        tooltips: list[str] = []
        tray_state = app.tray.set_state
        app.tray.set_state = lambda state, tip: (tooltips.append(tip), tray_state(state, tip))
        assert app.run_automation("Morning report", "tray")
        qtbot.waitUntil(lambda: rig.finished() == 1, timeout=20_000)
        qtbot.waitUntil(lambda: not window.running, timeout=5_000)
    assert window.windowTitle() == "holodesk — automation: Morning report"
    assert window.status_label.text().startswith("Automation “Morning report”: Done")
    assert "3 new mails" in window.result_label.text()
    assert rig.started() == ["sum up the mail"]
    assert "holodesk: working on the automation “Morning report”" in tooltips


def test_the_guides_try_the_demo_starts_the_apps_demo(
        apps: list[HolodeskApp], qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    # No display for the practice window here: the demo starts (its status line says so) and
    # then fails to open the window, told in the app's own words, which proves the button
    # reaches HolodeskApp.start_demo and its core, not just a signal.
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make(apps)
    app.status_changed.emit(DOWN)
    app.task_window.guide.demo_button.click()
    qtbot.waitUntil(lambda: any("demo" in e.lower() for e in app.teller.told), timeout=20_000)
    assert any(e.startswith("The demo cannot start") for e in app.teller.told), app.teller.told
    assert not app.controller.running


def test_the_stand_in_says_the_demo_is_starting_not_that_no_server_answers(
        apps: list[HolodeskApp], qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 24: while the practice window opened, the stand-in kept the probe's "No model
    server answers…", which the demo does not need."""
    monkeypatch.delenv("DISPLAY", raising=False)  # the practice window cannot open here
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make(apps)
    app.status_changed.emit(DOWN)
    window = app.tray.window
    assert window is not None
    assert window.status_text.full_text() == f"holodesk: {DOWN.message}"
    assert app.start_demo()
    assert window.status_text.full_text() == DEMO_OPENING
    assert "No model server" not in app.tray.tooltip
    # It cannot open here: told, and the probe's words are back.
    qtbot.waitUntil(lambda: not app.demo.starting, timeout=20_000)
    assert window.status_text.full_text() == f"holodesk: {DOWN.message}"


def test_settings_opens_above_the_stand_in(apps: list[HolodeskApp],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in is always on top: a dialog of its own is kept above it by the window
    manager (a parentless one was under it, Save and Cancel covered: issue 24)."""
    parents: list[object] = []

    def exec_(dialog: SettingsDialog) -> int:
        parents.append(dialog.parentWidget())
        return 0

    monkeypatch.setattr(SettingsDialog, "exec", exec_)
    app = make(apps)
    app.show_settings()
    assert parents == [app.tray.window] and app.tray.window is not None
