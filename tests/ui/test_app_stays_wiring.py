"""The desktop app keeps only what needs Qt (issue 23): which runs start is decided in
app/controller.py, tested without Qt in tests/app/test_controller.py."""

from __future__ import annotations

import ast
from pathlib import Path

import ui.app
from app.admission import Refusal, Refused, RunSource
from tests.support.app_rig import MakeApp
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from ui.telling import TOLD_KEPT

#: Windows, tray, signals and wiring fit in this many methods; logic that needs more belongs
#: in app/ (no Qt) or in a small ui/ part of its own.
MOST_METHODS = 35
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}


def test_holodesk_app_is_wiring_of_at_most_35_methods() -> None:
    tree = ast.parse(Path(ui.app.__file__).read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "HolodeskApp"]
    methods = [n.name for n in cls.body
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert len(methods) <= MOST_METHODS, methods


def test_what_was_told_is_kept_bounded_and_a_refusal_is_a_value(make_app: MakeApp) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        app, rig = make_app(server)
        for n in range(TOLD_KEPT + 10):
            app.report_error(f"message {n}")
        assert len(app.teller.told) == TOLD_KEPT  # not a list that grows for the app's life
        assert app.teller.told[-1] == f"message {TOLD_KEPT + 9}"
        refused = app.runs.run_automation("nothing saved", RunSource.HOTKEY)
        assert isinstance(refused, Refused) and refused.kind is Refusal.NOT_FOUND
        assert app.teller.told[-1] == refused.text and rig.settings == []
