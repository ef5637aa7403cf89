"""The session `holodesk run` and the desktop app build (app/session.py ``build_session``) carries
the person's safety settings into the run (no display).

The X11 end-to-end tests pin the same on a real desktop (e2e/test_reserved_hotkey_x11.py,
test_target_rules_x11.py, test_release_x11.py, test_e2e_x11.py::test_dry_run_touches_nothing);
here the quick tier holds them too. The session is the real ``build_session``'s, with only what
needs a display stood in: the display check, the screen (tests/support/fake_capturer.py, which
paints out what the session asks it to), the release at run start (recorded), and the target
finder (tests/support/fake_targets.py). Its runs go through the real agent, policy and
dry-run backend, against the stand-in model server.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw

import app.session as session_module
from app.events import Decision, Outcome, StepDecided
from app.run_request import make_run_request
from app.session import RealParts, Session, build_session
from app.settings import Settings
from control import release
from control.capture import ExcludeRects
from control.input import DryRunBackend
from model.coords import Rect
from tests.support.fake_capturer import FakeCapturer
from tests.support.fake_targets import FakeTargetFinder, window
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, ScriptItem
from tests.support.home import isolate_home

W, H = 1280, 800
KEEPASS = Rect(700, 100, 400, 300)  # a password manager's window, on the right
EDITOR = Rect(0, 0, 640, 800)  # another application, on the left
RED = (255, 0, 0)
MASK_GREY = 128  # control/capture.py's MASK_BGRX
ANSWER: ScriptItem = {"thought": "done", "action": {"action": "answer", "text": "finished"}}


def _screen() -> Image.Image:
    """Grey, with both windows drawn red: what is not painted out reaches the model red."""
    image = Image.new("RGB", (W, H), (200, 200, 200))
    draw = ImageDraw.Draw(image)
    for r in (KEEPASS, EDITOR):
        draw.rectangle((r.left, r.top, r.right - 1, r.top + r.height - 1), fill=RED)
    return image


def _click_at(x: int, y: int, element: str = "Save button") -> ScriptItem:
    """A click at screen pixel (x, y), in the model's 0-1000 convention."""
    return {"thought": f"click {element}",
            "action": {"action": "click", "element": element,
                       "x": round(x * 1000 / W), "y": round(y * 1000 / H)}}


def _keys(*keys: str) -> ScriptItem:
    return {"thought": "keys", "action": {"action": "hotkey", "keys": list(keys)}}


class Built:
    """Builds sessions the way app/runner.py does; ``releases`` records each release at run
    start (the platform it was asked on)."""

    def __init__(self, server: FakeVLLM) -> None:
        self.server = server
        self.releases: list[str] = []
        self.sessions: list[Session] = []

    def session(self, finder: FakeTargetFinder, *, dry_run: bool = True,
                backend: DryRunBackend | None = None, **settings: Any) -> Session:
        values: dict[str, Any] = {"endpoint": self.server.base_url, "confirm": "never",
                                  "settle_min": 0.0, "settle_max": 0.05, **settings}
        made = build_session(make_run_request(Settings(**values), "do the task", dry_run=dry_run),
                             RealParts(backend=backend, finder=finder))
        self.sessions.append(made)
        return made


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[Callable[[FakeVLLM], Built]]:
    isolate_home(monkeypatch, tmp_path)
    monkeypatch.delenv("DISPLAY", raising=False)  # nothing here may reach a real display
    monkeypatch.setattr(session_module, "check_display", lambda: None)

    def capturer(_settings: Settings, *, exclude: ExcludeRects | None = None,
                 display: str | None = None) -> FakeCapturer:
        return FakeCapturer([np.asarray(_screen())], exclude=exclude)

    monkeypatch.setattr(session_module, "make_capturer", capturer)
    made: list[Built] = []

    def make(server: FakeVLLM) -> Built:
        b = Built(server)

        def record(platform: str = sys.platform) -> release.Released:
            b.releases.append(platform)
            return release.Released()

        monkeypatch.setattr(release, "release_everything", record)
        made.append(b)
        return b

    yield make
    for b in made:
        for s in b.sessions:
            s.close()


def _run(session: Session) -> tuple[list[Any], DryRunBackend]:
    events: list[Any] = []
    finished = session.run(events.append)
    assert finished.outcome is Outcome.ANSWERED, finished
    backend = session.parts.executor.backend
    assert isinstance(backend, DryRunBackend)
    return events, backend


def _decisions(events: list[Any]) -> list[Decision]:
    return [e.decision for e in events if isinstance(e, StepDecided)]


def _share(image: Image.Image, r: Rect, rgb: tuple[int, int, int]) -> float:
    """The share of ``r`` in ``image`` that is ``rgb`` (JPEG moves it a little)."""
    pixels = np.asarray(image.convert("RGB"), dtype=np.int16)
    area = pixels[r.top:r.top + r.height, r.left:r.right]
    close = (np.abs(area - np.array(rgb)) <= 24).all(axis=-1)
    return float(close.mean())


@pytest.mark.parametrize("stop_hotkey", ["ctrl+alt+shift+escape", "ctrl+shift+f9"],
                         ids=["default", "configured"])
def test_the_session_never_presses_the_stop_hotkey(
        built: Callable[[FakeVLLM], Built], stop_hotkey: str) -> None:
    with FakeVLLM(ScriptedPolicy([_keys(*stop_hotkey.split("+")), ANSWER])) as server:
        session = built(server).session(FakeTargetFinder(focus=window("Gedit")),
                                        stop_hotkey=stop_hotkey)
        events, backend = _run(session)
        told = server.requests[1].text
    assert _decisions(events) == [Decision.FORBIDDEN]
    assert backend.calls == []
    assert "the person's own hotkey (holodesk's emergency stop)" in told


def test_a_never_touched_application_is_painted_out_and_never_clicked(
        built: Callable[[FakeVLLM], Built]) -> None:
    finder = FakeTargetFinder()
    finder.placed_at(window("Gedit"), EDITOR)
    finder.placed_at(window("KeePassXC"), KEEPASS)  # in the default never_touch
    inside = (KEEPASS.left + 200, KEEPASS.top + 150)
    with FakeVLLM(ScriptedPolicy([_click_at(*inside), ANSWER])) as server:
        events, backend = _run(built(server).session(finder))
        shot = server.requests[0].latest_image
        told = server.requests[1].text
    assert shot is not None
    assert _share(shot.image, KEEPASS, (MASK_GREY,) * 3) > 0.97, "KeePassXC reached the model"
    assert _share(shot.image, EDITOR, RED) > 0.97  # the other application is not
    assert _decisions(events) == [Decision.FORBIDDEN]
    assert backend.calls == []
    assert "an application holodesk never touches (setting never_touch)" in told


def test_only_in_refuses_every_other_application(built: Callable[[FakeVLLM], Built]) -> None:
    finder = FakeTargetFinder()
    finder.placed_at(window("Firefox"), Rect(640, 0, 640, 800))
    editor = finder.placed_at(window("Gedit"), EDITOR)
    script = [_click_at(128, 160), _click_at(960, 400), ANSWER]  # Gedit, then Firefox
    with FakeVLLM(ScriptedPolicy(script)) as server:
        events, backend = _run(built(server).session(finder, only_in="firefox",
                                                     never_touch=[]))
        told = server.requests[1].text
    assert _decisions(events) == [Decision.FORBIDDEN, Decision.AUTO]
    assert [c.args for c in backend.calls if c.name == "move_to"] == [(960, 400)]
    assert f"aims at {editor.label()}, but this run may act only in firefox" in told


def test_a_real_run_releases_what_was_left_pressed_and_a_dry_run_touches_nothing(
        built: Callable[[FakeVLLM], Built]) -> None:
    with FakeVLLM(ScriptedPolicy([_click_at(128, 160), ANSWER])) as server:
        b = built(server)
        # A real run (the backend passed in, as the desktop app does): released at its start.
        real = b.session(FakeTargetFinder(), dry_run=False, backend=DryRunBackend())
        assert b.releases == [sys.platform]
        real.close()
        # A dry run: no release, and its input goes nowhere but the dry-run backend's record.
        dry = b.session(FakeTargetFinder(below=window("Gedit")), never_touch=[])
        assert b.releases == [sys.platform]
        events, backend = _run(dry)
    assert _decisions(events) == [Decision.AUTO]
    assert "mouse_down" in backend.names()
