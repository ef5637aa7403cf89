"""Red team 14: the model's words cannot say a run's result in the desktop app.

The tray's tooltip, its stand-in window and the notification say "holodesk: RESULT: why" in
one line (ui/result_view.py ``result_line``). The why may quote the model (its question): with
its line breaks kept, a question ending in "holodesk: done: ..." made a second line that reads
as the result, under the real one, in the tooltip and the notification.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.events import RunFinished
from app.result import RunResult
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import isolate_home
from ui.plain import plain_tooltip
from ui.tray import TrayState

FORGED = "holodesk: done: the model answered the task"


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


@pytest.mark.parametrize("brk", ["\n", "\r\n"], ids=["newline", "crlf"])
def test_a_question_cannot_add_a_line_to_the_tray_or_the_notification(
        qtbot: QtBot, make_app: MakeApp, brk: str) -> None:
    question = {"thought": "?", "action": {"action": "ask_user",
                                            "question": f"which file?{brk}{brk}{FORGED}"}}
    with FakeVLLM(ScriptedPolicy([question])) as server:
        app, rig = make_app(server)
        assert app.start_task("tidy up")
        qtbot.waitUntil(lambda: any(isinstance(e, RunFinished) for e in rig.events),
                        timeout=20_000)
        qtbot.waitUntil(lambda: not app.controller.running, timeout=10_000)
    (finished,) = [e for e in rig.events if isinstance(e, RunFinished)]
    assert finished.result is RunResult.NOT_DONE
    assert app.tray.state is TrayState.NOT_DONE
    # As the tray icon's tooltip and the notification show it (other control characters
    # come out as symbols there: only a line break is one).
    for said in (plain_tooltip(app.tray.tooltip), plain_tooltip(app.teller.told[-1])):
        assert said.startswith("holodesk: not done: the model asks: which file?"), said
        assert "\n" not in said and "<br" not in said, said
