"""Render every window of the desktop app into docs/screenshots/, on a private 1366x768 Xvfb.

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]      # or: make screenshots

The windows show real content: the script starts its own Xvfb and runs Qt on it through xcb,
isolates holodesk in a temporary home, and drives real runs through :class:`ui.app.HolodeskApp`
and the agent loop against the fake vLLM server (tests/support/fake_vllm.py), with a drawn
desktop as the screen (a file manager, tests/support/fake_capturer.py) and dry-run
input. Each window is rendered with ``QWidget.grab()`` at the moment it shows what matters
(the task window while the thought streams in, the confirmation panel with its target, the
set-up checks once they have all run, a calibration target while the model is asked about
it). The display is the smallest holodesk is made for (1366x768): Settings (after Test
connection), the tray's stand-in window, Report a problem and the action log are shown at the
size they open with there, as a newcomer sees them (tests/ui/test_text_fit.py checks that their
text fits). The `holodesk bench` chart comes from a short in-process sweep against a second fake
server with a latency model. The pictures are reduced to at most 256 colours when that keeps
them legible and small.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from tests.support.fake_vllm import ChatRequest, FakeVLLM  # noqa: E402
from tests.support.home import make_home  # noqa: E402
from tests.support.qtwait import wait_until  # noqa: E402
from tests.support.xvfb import Xvfb  # noqa: E402

SCREEN = (1280, 800)  # the drawn desktop the "model" sees
DISPLAY_SIZE = (1366, 768)  # the Xvfb the windows live on: the smallest screen holodesk fits
MAX_PNG_BYTES = 300_000
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")

# --------------------------------------------------------------------------- the drawn desktop

FILES = (
    ("report-q3.pdf", "2.4 MB", "Oct 14"),
    ("budget-2024.xlsx", "88 kB", "Oct 12"),
    ("draft-notes.txt", "4 kB", "Oct 11"),
    ("old-backup.zip", "1.2 GB", "Mar 02"),
    ("holiday-photos", "—", "Aug 21"),
    ("invoice-0193.pdf", "142 kB", "Sep 30"),
)
WINDOW = (140, 90, 1140, 700)  # the file manager window on the drawn desktop
ROW_TOP, ROW_HEIGHT = 236, 44
BUTTONS = {"Open": (420, 150), "Rename": (540, 150), "Delete": (660, 150)}  # centres


def _font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    path = FONT_DIR / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")
    if path.exists():
        return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size)


def row_centre(index: int) -> tuple[int, int]:
    """The centre of a file row on the drawn desktop (pixels)."""
    return (WINDOW[0] + 360, ROW_TOP + index * ROW_HEIGHT + ROW_HEIGHT // 2)


@dataclass(frozen=True)
class DesktopState:
    """What the drawn file manager shows: the selected row, deleted rows, a name being edited
    (Rename) and names changed since."""

    selected: int | None = None
    deleted: frozenset[int] = frozenset()
    renaming: int | None = None
    renamed: tuple[tuple[int, str], ...] = ()


class Desktop:
    """The picture on the fake screen; the "model" changes it as its actions would."""

    def __init__(self) -> None:
        self.state = DesktopState()
        self._lock = threading.Lock()
        self._cache: tuple[DesktopState, Any] | None = None

    def set(self, selected: int | None = None, deleted: Sequence[int] = (),
            renaming: int | None = None, renamed: Sequence[tuple[int, str]] = ()) -> None:
        with self._lock:
            self.state = DesktopState(selected, frozenset(deleted), renaming, tuple(renamed))

    def frame(self) -> Any:
        """The current screen as an RGB array (FakeCapturer's source)."""
        import numpy as np

        with self._lock:
            state = self.state
            if self._cache is None or self._cache[0] != state:
                self._cache = (state, np.asarray(self.draw(state)))
            return self._cache[1]

    def draw(self, state: DesktopState) -> Image.Image:
        w, h = SCREEN
        image = Image.new("RGB", SCREEN)
        d = ImageDraw.Draw(image)
        for y in range(h):  # a calm vertical gradient wallpaper
            t = y / h
            d.line((0, y, w, y), fill=(int(38 + 30 * t), int(70 + 40 * t), int(112 + 50 * t)))
        d.rectangle((0, 0, w, 30), fill=(32, 34, 38))
        d.text((14, 7), "Activities", font=_font(14, True), fill=(235, 235, 235))
        d.text((w // 2 - 60, 7), "Tue 15 Oct  10:42", font=_font(14), fill=(235, 235, 235))
        d.text((w - 110, 7), "EN    100%", font=_font(14), fill=(235, 235, 235))
        for i, name in enumerate(("Home", "Trash")):  # desktop icons
            x, y = 30, 70 + i * 100
            d.rounded_rectangle((x, y, x + 56, y + 48), 6, fill=(230, 190, 90))
            d.text((x + 4, y + 56), name, font=_font(13), fill=(255, 255, 255))

        x0, y0, x1, y1 = WINDOW
        d.rectangle((x0 + 6, y0 + 8, x1 + 6, y1 + 8), fill=(20, 30, 45))  # shadow
        d.rectangle(WINDOW, fill=(250, 250, 250), outline=(120, 120, 120))
        d.rectangle((x0, y0, x1, y0 + 36), fill=(228, 228, 231))
        d.text((x0 + 380, y0 + 9), "Documents — Files", font=_font(15, True), fill=(40, 40, 40))
        for i, colour in enumerate(((237, 106, 94), (245, 191, 79), (98, 197, 84))):
            cx = x1 - 70 + i * 22
            d.ellipse((cx, y0 + 11, cx + 14, y0 + 25), fill=colour)
        # sidebar
        d.rectangle((x0 + 1, y0 + 37, x0 + 190, y1 - 1), fill=(240, 240, 243))
        for i, place in enumerate(("Recent", "Home", "Documents", "Downloads", "Pictures")):
            y = y0 + 60 + i * 34
            if place == "Documents":
                d.rounded_rectangle((x0 + 8, y - 6, x0 + 182, y + 24), 5, fill=(210, 222, 245))
            d.text((x0 + 22, y), place, font=_font(15), fill=(40, 40, 40))
        # toolbar
        for label, (cx, cy) in BUTTONS.items():
            red = label == "Delete"
            d.rounded_rectangle(
                (cx - 52, cy - 17, cx + 52, cy + 17), 6,
                fill=(250, 228, 228) if red else (236, 236, 238),
                outline=(200, 80, 80) if red else (170, 170, 170),
            )
            tw = d.textlength(label, font=_font(15))
            d.text((cx - tw / 2, cy - 9), label, font=_font(15),
                   fill=(180, 30, 30) if red else (30, 30, 30))
        d.text((x0 + 700, 141), "Search files", font=_font(15), fill=(130, 130, 130))
        # the file list
        header_y = ROW_TOP - 30
        for label, x in (("Name", x0 + 240), ("Size", x0 + 640), ("Modified", x0 + 780)):
            d.text((x, header_y), label, font=_font(14, True), fill=(90, 90, 90))
        d.line((x0 + 200, ROW_TOP - 4, x1 - 20, ROW_TOP - 4), fill=(210, 210, 210))
        row = 0
        names = dict(state.renamed)
        for index, (original, size, date) in enumerate(FILES):
            if index in state.deleted:
                continue
            name = names.get(index, original)
            y = ROW_TOP + row * ROW_HEIGHT
            selected = index == state.selected
            if selected:
                d.rectangle((x0 + 200, y, x1 - 20, y + ROW_HEIGHT - 4), fill=(53, 132, 228))
            ink = (255, 255, 255) if selected else (30, 30, 30)
            icon = (120, 160, 220) if name.endswith("photos") else (200, 200, 205)
            d.rectangle((x0 + 210, y + 9, x0 + 228, y + 31), fill=icon)
            if index == state.renaming:
                # The name open for editing, as Files shows it: the stem selected.
                stem = name.rsplit(".", 1)[0]
                d.rounded_rectangle((x0 + 234, y + 5, x0 + 560, y + 35), 4, fill=(255, 255, 255),
                                    outline=(28, 113, 216), width=2)
                d.rectangle((x0 + 239, y + 9, x0 + 240 + d.textlength(stem, font=_font(16)),
                             y + 31), fill=(153, 193, 241))
                d.text((x0 + 240, y + 11), name, font=_font(16), fill=(30, 30, 30))
            else:
                d.text((x0 + 240, y + 11), name, font=_font(16), fill=ink)
            d.text((x0 + 640, y + 11), size, font=_font(16), fill=ink)
            d.text((x0 + 780, y + 11), date, font=_font(16), fill=ink)
            row += 1
        shown = len(FILES) - len(state.deleted)
        d.text((x0 + 210, y1 - 32), f"{shown} items, 1.3 GB free of 250 GB", font=_font(13),
               fill=(110, 110, 110))
        return image


def norm(point: tuple[int, int]) -> tuple[int, int]:
    """A drawn-desktop pixel in the model's default convention (norm1000)."""
    return round(point[0] * 1000 / SCREEN[0]), round(point[1] * 1000 / SCREEN[1])


def click(element: str, point: tuple[int, int]) -> dict[str, Any]:
    x, y = norm(point)
    return {"action": "click", "element": element, "x": x, "y": y}


# --------------------------------------------------------------------------- the "model"


class Script:
    """A fake-vLLM policy: scripted replies, each also changing the desktop as the action will.

    The agent captures the next screen after the action ran, so changing the picture when the
    reply leaves makes the next screenshot show the action's effect.
    """

    def __init__(self, desktop: Desktop) -> None:
        self.desktop = desktop
        self.steps: list[tuple[dict[str, Any], Callable[[], None] | None]] = []
        # Another policy answering the steps meanwhile (the calibration's, which looks).
        self.delegate: Callable[[ChatRequest], str] | None = None
        self._lock = threading.Lock()

    def load(self, steps: Sequence[tuple[dict[str, Any], Callable[[], None] | None]]) -> None:
        with self._lock:
            self.steps = list(steps)

    def __call__(self, request: ChatRequest) -> str:
        if request.max_tokens == 1:
            return "ok"  # the server probe (one token), not a step
        if self.delegate is not None:
            return self.delegate(request)
        if not self.steps:
            return "ok"
        with self._lock:
            reply, effect = self.steps.pop(0)
        if effect is not None:
            effect()
        return json.dumps(reply, ensure_ascii=False)


DELETE_THOUGHT = (
    "old-backup.zip is selected in the file list. It is an outdated 1.2 GB backup from "
    "March, which the task asks me to remove. The Delete button in the toolbar deletes the "
    "selected file, so I will click it."
)


def run_one(desktop: Desktop) -> list[tuple[dict[str, Any], Callable[[], None] | None]]:
    return [
        ({"note": "Documents is open.", "thought": "The file list shows report-q3.pdf; its "
          "size is in the Size column. I will select it to be sure I read the right row.",
          "action": click("report-q3.pdf row", row_centre(0))},
         lambda: desktop.set(selected=0)),
        ({"thought": "The selected row says report-q3.pdf, 2.4 MB, modified Oct 14.",
          "action": {"action": "answer", "text": "report-q3.pdf is 2.4 MB (modified Oct 14)."}},
         None),
    ]


def run_two(desktop: Desktop) -> list[tuple[dict[str, Any], Callable[[], None] | None]]:
    return [
        ({"note": "Files shows Documents with six items.",
          "thought": "The task is to delete the old backup. old-backup.zip is the fourth row "
          "of the list; I will select it first.",
          "action": click("old-backup.zip row", row_centre(3))},
         lambda: desktop.set(selected=3)),
        ({"thought": DELETE_THOUGHT, "action": click("Delete button", BUTTONS["Delete"])},
         lambda: desktop.set(deleted=[3])),
        ({"thought": "old-backup.zip is no longer in the list: the backup is deleted.",
          "action": {"action": "answer", "text": "Deleted old-backup.zip from Documents."}},
         None),
    ]


RENAME_TASK = "Rename draft-notes.txt in Documents to meeting-notes.txt"


def run_three(desktop: Desktop) -> list[tuple[dict[str, Any], Callable[[], None] | None]]:
    """A rename whose typing step the person corrects (the model typed a space)."""
    return [
        ({"note": "Documents is open with six files.",
          "thought": "draft-notes.txt is the third row. To rename it I select it, then use "
          "Rename in the toolbar.",
          "action": click("draft-notes.txt row", row_centre(2))},
         lambda: desktop.set(selected=2)),
        ({"thought": "draft-notes.txt is selected. Rename in the toolbar opens its name for "
          "editing.", "action": click("Rename button", BUTTONS["Rename"])},
         lambda: desktop.set(selected=2, renaming=2)),
        ({"thought": "The name is open for editing. I will replace it with the new name and "
          "press Enter to keep it.",
          "action": {"action": "type", "text": "meeting notes.txt", "press_enter": True,
                     "clear_first": True}},
         lambda: desktop.set(selected=2, renamed=[(2, "meeting-notes.txt")])),
        ({"thought": "The third row now reads meeting-notes.txt.",
          "action": {"action": "answer", "text": "Renamed draft-notes.txt to "
                     "meeting-notes.txt."}},
         None),
    ]


# --------------------------------------------------------------------------- rendering


def to_pil(image: Any) -> Image.Image:
    """A QImage/QPixmap as a Pillow image."""
    from PySide6.QtCore import QBuffer, QIODevice

    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    picture = Image.open(io.BytesIO(bytes(buffer.data().data())))
    picture.load()
    return picture


def save_png(image: Any, path: Path) -> int:
    """Save a QImage/QPixmap or a Pillow image as a small PNG; returns its size in bytes."""
    picture = image if isinstance(image, Image.Image) else to_pil(image)
    # UI pictures hold few colours: an adaptive 256-colour palette keeps them crisp and small.
    if picture.mode == "RGBA":
        small = picture.quantize(256, method=Image.Quantize.FASTOCTREE)
    else:
        small = picture.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    small.save(out, "PNG", optimize=True)
    data = out.getvalue()
    if len(data) > MAX_PNG_BYTES:
        raise SystemExit(f"{path.name} is {len(data)} bytes, over {MAX_PNG_BYTES}")
    path.write_bytes(data)
    return len(data)


def scaled(image: Any, factor: float) -> Image.Image:
    """A QImage/QPixmap made smaller (a full-screen window for the README)."""
    picture = to_pil(image).convert("RGB")
    size = (round(picture.width * factor), round(picture.height * factor))
    return picture.resize(size, Image.Resampling.LANCZOS)


def quiet_dropped_connections(fake: FakeVLLM) -> None:
    """No traceback from the fake server when a client drops a connection it kept open.

    socketserver prints one for each (a cancelled stream, a session that ended): noise in
    this script's output, not a failure. Every other error is still printed.
    """
    http = fake._server
    assert http is not None, "start the server first"
    report = http.handle_error

    def handle_error(request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            report(request, client_address)

    setattr(http, "handle_error", handle_error)  # noqa: B010 (mypy: no method assignment)


def render_bench(path: Path) -> int:
    """Run a short `holodesk bench` sweep in-process against the fake server and save its
    chart at ``path``; returns the PNG's size in bytes."""
    from model.client import ClientConfig
    from model.loadbench.bench import BenchConfig, format_errors, run_bench
    from model.loadbench.frames import GeneratedFrames
    from model.loadbench.plot import render_chart
    from tests.support.fake_vllm import ScriptedPolicy

    step = {"note": "The export dialog is open; the file name is filled in.",
            "thought": "The file name and the folder are what the task asks for, so the "
            "export is ready. The Save button at the bottom right of the dialog starts it; "
            "I will click it and then check that the dialog closed.",
            "action": {"action": "click", "element": "Save button", "x": 812, "y": 706}}
    with FakeVLLM(ScriptedPolicy([step], repeat_last=True)) as server:
        quiet_dropped_connections(server)
        server.decode_images = False  # the sizes are all the fake needs; spare the 2 cores
        server.keep_requests = False
        # The latency model: each request in flight slows the first token and every chunk,
        # as a GPU sharing its batch does.
        server.delay = 0.25
        server.delay_per_active = 0.05
        server.stream_chunk_delay = 0.004
        server.chunk_delay_per_active = 0.002
        config = BenchConfig(client=ClientConfig(base_url=server.base_url, request_timeout=60),
                             levels=(1, 2, 4, 8), duration=None, steps=4, error_backoff=0.05)
        report = run_bench(config, GeneratedFrames(640, 360))
    if not report.ok:
        raise SystemExit(f"the bench failed:\n{format_errors(report)}")
    return save_png(render_chart(report), path)


def settle(seconds: float) -> None:
    """Let queued events, background loads and repaints happen."""
    end = time.monotonic() + seconds
    wait_until(lambda: time.monotonic() >= end, "nothing", seconds + 5)


def render(out: Path) -> None:
    """Build the app over real parts and write every window's picture into ``out``."""
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtGui import QImage, QPainter, QTextCursor
    from PySide6.QtWidgets import QApplication, QPlainTextEdit

    from app.agent import AgentParts
    from app.automations import Automation, add_automation
    from app.calibrate import TARGETS
    from app.doctor import CHECK_NAMES
    from app.events import Event, ModelText, RunFinished, RunStarted
    from app.pause import PauseGate
    from app.run_request import RunRequest
    from app.secrets import KeyringStore
    from app.session import RunParts, Session, build_session
    from app.settings import Settings, load_settings, save_settings
    from app.store import ActionLog
    from control.hotkeys import parse_combo
    from control.input import DryRunBackend, Executor
    from control.policy import ConfirmMode, SafetyPolicy
    from control.stop import StopLatch
    from model.client import ClientConfig, HolotronClient
    from model.run_secrets import RunSecrets
    from tests.support.fake_capturer import FakeCapturer
    from tests.support.fake_vllm import SeeingPolicy, Target
    from ui.app import HolodeskApp
    from ui.calibrate_screen import CalibrationWindow
    from ui.confirm_panel import TypeEditor
    from ui.settings_dialog import SettingsDialog

    qt = QApplication(["holodesk"])
    qt.setApplicationName("holodesk")
    desktop = Desktop()
    script = Script(desktop)
    events: list[Event] = []
    out.mkdir(parents=True, exist_ok=True)

    def shot(name: str, image: Any) -> None:
        print(f"{out / name}: {save_png(image, out / name) // 1024} KB", flush=True)

    with FakeVLLM(script) as server:
        quiet_dropped_connections(server)
        server.delay = 0.2

        def parts(request: RunRequest, latch: StopLatch, pause: PauseGate | None) -> RunParts:
            secrets = RunSecrets()  # one per run, as app/session.py's RealParts makes it
            return RunParts(AgentParts(
                client=HolotronClient(ClientConfig(base_url=server.base_url)),
                capturer=FakeCapturer(desktop.frame),
                executor=Executor(DryRunBackend(), latch),
                policy=SafetyPolicy(request.settings.confirm, secrets=secrets),
                store=ActionLog.open(secrets=secrets),
                latch=latch,
                pause=pause,
            ), dry_run=True)

        def factory(request: RunRequest, latch: StopLatch, gate: PauseGate) -> Session:
            # The run's session as every front end builds it (app/session.py), over the
            # drawn desktop and dry-run input.
            return build_session(request, parts, latch=latch, pause=gate)

        save_settings(Settings(endpoint=server.base_url, model="holotron", retention_days=30))
        app = HolodeskApp(load_settings(), session_factory=factory, use_system_tray=False)
        app.controller.run_event.connect(events.append)
        app.show_task_window()
        app.task_window.setGeometry(40, 30, 640, 700)
        tray = app.tray.window
        assert tray is not None
        tray.move(620, 30)  # its width is fixed: the longest texts its buttons may show
        app.show_log()
        log_window = app.log_window
        assert log_window is not None
        log_window.move(60, 30)  # at the size it opens with
        wait_until(lambda: app.status is not None and app.status.state == "ok", "the probe")

        def finished_runs() -> int:
            return sum(isinstance(e, RunFinished) for e in events)

        # A first run, finished: the log has history.
        script.load(run_one(desktop))
        desktop.set()
        app.task_window.task_edit.setPlainText("How big is report-q3.pdf in Documents?")
        assert app.start_task("How big is report-q3.pdf in Documents?", confirm=ConfirmMode.NEVER)
        wait_until(lambda: finished_runs() == 1, "the first run")
        settle(0.5)

        # The second run: watched while the thought streams, then a risky click to confirm.
        task = "Delete the old backup in Documents"
        script.load(run_two(desktop))
        desktop.set()
        server.stream_chunk_delay = 0.04
        app.task_window.task_edit.setPlainText(task)
        assert app.start_task(task, confirm=ConfirmMode.RISKY)

        def streaming_second_step() -> bool:
            texts = [e.text for e in events if isinstance(e, ModelText) and e.step_no == 2]
            return (bool(texts) and len(app.task_window.thought()) > 110
                    and app.task_window.screenshot_image() is not None)

        wait_until(streaming_second_step, "the second step streaming")
        settle(0.05)
        shot("task-window.png", app.task_window.grab())
        shot("tray-window.png", tray.grab())

        wait_until(lambda: app.controller.pending is not None, "the confirmation")
        panel = app.confirm_panel
        panel.resize(680, 660)
        wait_until(lambda: panel.image() is not None, "the confirmation picture")
        settle(0.6)  # the panel arms its approve buttons after a moment
        shot("confirm-panel.png", panel.grab())

        # The run bar (what the task window collapses into while a run acts) over the
        # desktop it floats above, as it stands while the confirmation waits.
        bar = app.run_bar
        # The hint exactly as ui.app sets it for the stop hotkey in the settings.
        bar.set_hint(parse_combo(app.settings.stop_hotkey).label())
        backdrop = QImage(desktop.draw(DesktopState(selected=1)).tobytes(), SCREEN[0], SCREEN[1],
                          SCREEN[0] * 3, QImage.Format.Format_RGB888)
        width = bar.width() + 64
        scene = backdrop.copy(QRect(SCREEN[0] - width, 0, width, 120)).convertToFormat(
            QImage.Format.Format_ARGB32)
        painter = QPainter(scene)
        painter.drawPixmap(QPoint(32, 32), bar.grab())
        painter.end()
        shot("run-bar.png", scene)

        panel.approve_button.click()
        wait_until(lambda: finished_runs() == 2, "the second run")
        server.stream_chunk_delay = 0.0

        # The action log, the second run selected, its thumbnails loaded.
        run_ids = [e.run_id for e in events if isinstance(e, RunStarted)]
        settle(0.5)
        wait_until(lambda: log_window.select_run(run_ids[-1]), "the run in the log")
        wait_until(lambda: len(log_window.step_numbers()) == 3 and not log_window.busy,
                   "the steps in the log")
        settle(1.0)
        shot("action-log.png", log_window.grab())

        # Settings, with Test connection answered, at the size it takes by itself.
        # The keyring this machine has (keyring's own choice), as a person would see it.
        dialog = SettingsDialog(tray, secret_store=KeyringStore(), environ={})
        checked: list[object] = []
        dialog.status_checked.connect(checked.append)
        dialog.show()
        wait_until(lambda: not dialog.key_label.text().startswith("Looking"), "the keyring")
        dialog.test_connection()
        wait_until(lambda: bool(checked), "Test connection")
        settle(0.3)
        shot("settings.png", dialog.grab())
        dialog.close()
        dialog.deleteLater()


        # The confirmation panel in Edit mode: the model typed a space where the task says a
        # hyphen, and the person corrects the text before approving it.
        script.load(run_three(desktop))
        desktop.set()
        app.task_window.task_edit.setPlainText(RENAME_TASK)
        assert app.start_task(RENAME_TASK, confirm=ConfirmMode.RISKY)
        wait_until(lambda: app.controller.pending is not None, "the typing step to confirm")
        panel.resize(680, 740)
        wait_until(lambda: panel.image() is not None and panel.edit_button.isEnabled(),
                   "the typing step's panel, armed")
        panel.start_edit()
        editor = panel.editor
        assert isinstance(editor, TypeEditor) and isinstance(editor.text_field, QPlainTextEdit)
        editor.text_field.setPlainText("meeting-notes.txt")
        editor.text_field.moveCursor(QTextCursor.MoveOperation.End)
        wait_until(lambda: panel.approve_button.isEnabled(), "the edit to arm")
        settle(0.2)
        shot("confirm-edit.png", panel.grab())
        panel.approve_button.click()
        wait_until(lambda: finished_runs() == 3, "the third run")

        # Automations: one saved before (by the CLI, say), one made in the window and saved.
        add_automation(Automation.make(
            name="tidy downloads", confirm="always", monitor="1",
            task="In Downloads, move every PDF older than a month into Documents/Archive.",
        ), stop_hotkey=app.settings.stop_hotkey)
        app.reload_automations()
        app.show_automations()
        automations = app.automations_dialog
        assert automations is not None
        automations.setGeometry(200, 150, 780, 400)
        automations.new()
        automations.name_edit.setText("timesheet")
        automations.task_edit.setPlainText(
            "Open the timesheet page in the browser and file today's hours: 7.5 on project "
            "Atlas.")
        automations.hotkey_edit.setText("ctrl+alt+1")
        automations.save()
        wait_until(lambda: automations.message.text() == "Saved.", "the automation saved")
        settle(0.3)
        shot("automations.png", automations.grab())
        automations.close()

        # Check set-up: the desktop checks run for real on this display, the server checks
        # against the fake server, whose "model" holds to the schema and points at a button.
        target = app.task_window.automations_button
        centre = target.mapToGlobal(target.rect().center())
        x, y = (round(centre.x() * 1000 / DISPLAY_SIZE[0]),
                round(centre.y() * 1000 / DISPLAY_SIZE[1]))
        checks = [
            ({"thought": "I am asked for the word OK.",
              "action": {"action": "answer", "text": "OK"}}, None),
            ({"note": "The holodesk window is open.",
              "thought": "The most prominent button is Automations… in the holodesk window.",
              "action": {"action": "click", "element": "Automations… button", "x": x, "y": y}},
             None),
        ]
        script.load(checks)
        app.show_doctor()
        doctor = app.doctor_window
        assert doctor is not None
        doctor.setGeometry(500, 20, 820, 580)
        wait_until(lambda: not doctor.running and len(doctor.results) == len(CHECK_NAMES),
                   "the set-up checks", 120)
        settle(0.3)
        shot("doctor.png", doctor.grab())
        doctor.close()

        # Report a problem, gathered for real (the set-up checks again), the last run
        # selected: its steps as text, long lines wrapped.
        script.load(checks)
        app.show_report()
        report_dialog = app.report_dialog
        assert report_dialog is not None
        report_dialog.move(80, 60)
        wait_until(lambda: report_dialog.report is not None, "the problem report", 120)
        names = [report_dialog.parts.item(i).text() for i in range(report_dialog.parts.count())]
        report_dialog.parts.setCurrentRow(names.index("last-run.txt"))
        settle(0.3)
        shot("report-dialog.png", report_dialog.grab())
        report_dialog.close()

        # Calibrate…: the real flow on this display (targets in a full-screen window, captured
        # as a run captures), the "model" finding each target by its colour, answering in
        # pixels while the settings say norm1000.
        script.delegate = SeeingPolicy([Target(t.description, t.rgb) for t in TARGETS],
                                        convention="pixels")
        server.delay = 0.5  # time to photograph a target before the next one shows
        assert app.calibrate()

        def showing(index: int) -> CalibrationWindow | None:
            for widget in qt.topLevelWidgets():
                if (isinstance(widget, CalibrationWindow) and widget.isVisible()
                        and widget.target is not None and widget.target.index == index):
                    return widget
            return None

        wait_until(lambda: showing(3) is not None, "the centre target")
        settle(0.1)
        screen = showing(3)
        assert screen is not None
        shot("calibration-target.png", scaled(screen.grab(), 0.6))
        wait_until(lambda: app.calibration_control.dialog is not None, "the calibration report",
                   120)
        script.delegate = None
        server.delay = 0.2
        report = app.calibration_control.dialog
        assert report is not None
        # Wide enough for the table's header lines, which do not wrap.
        report.resize(1080, 400)
        settle(0.3)
        shot("calibration-report.png", report.grab())
        report.close()

        app.close()
        settle(0.2)

    shot("demo-practice.png", render_practice())

    # The `holodesk bench` chart, from a short sweep against a server slowing with its load.
    bench = out / "bench-chart.png"
    print(f"{bench}: {render_bench(bench) // 1024} KB", flush=True)


def render_practice() -> Any:
    """`holodesk demo`'s practice window as the demo model leaves it just before the risky
    step: the name typed, Blue chosen, the entry saved, Delete draft still to do."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from app.demo.look import COLOUR, NAME
    from ui.practice.window import PracticeWindow

    window = PracticeWindow()
    window.move(40, 40)
    window.show()
    window.name.setText(NAME)
    (blue,) = window.colours.findItems(COLOUR, Qt.MatchFlag.MatchExactly)
    window.colours.setCurrentItem(blue)
    window.save.click()
    settle(0.3)
    QApplication.processEvents()
    image = window.grab()
    window.close()
    return image


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="holodesk-shots-") as tmp, \
            Xvfb(*DISPLAY_SIZE) as server:
        home = make_home(Path(tmp))
        env = home.env()
        env.update(server.env(env))
        env["QT_QPA_PLATFORM"] = "xcb"
        env["LANG"] = env["LC_ALL"] = "C.UTF-8"
        # Set before Qt and holodesk read them (QApplication, platformdirs, keyring).
        os.environ.clear()
        os.environ.update(env)
        render(args.out.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
