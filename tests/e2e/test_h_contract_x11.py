"""End to end: a run that speaks H's documented contract (issue 22; docs/contract.md).

`holodesk run --profile holotron-12b` against a stand-in that holds every request to H's
structured-output layout (the `<output_format>` block, observation wrappers, a
`<tool_output>` after each executed step; tests/support/fake_vllm_contract.py) and answers in
the holo-nano vocabulary with integer coordinates of the image sent. The click lands on the Tk
window's button and the run ends answered; the same answer in holodesk's own dialect is
refused by the stand-in, so the contract is what was spoken.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.e2e import configure, run_holodesk
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.fixtures import target_app_fixture, xvfb_fixture
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

WIDTH, HEIGHT = 1920, 1080
xvfb = xvfb_fixture(WIDTH, HEIGHT)
app = target_app_fixture("1000x660+0+0", pointer=(960, 900))


def _steps(app: RunningApp) -> list[dict[str, Any]]:
    x, y = app.widgets["save"].solid_center
    click = {"note": None, "thought": "Press the Save button.",
             "tool_call": {"tool_name": "click_desktop", "element": "Save button",
                           "x": round(x / WIDTH * 1000), "y": round(y / HEIGHT * 1000),
                           "button": "left"}}
    answer = {"note": None, "thought": "It is saved.",
              "tool_call": {"tool_name": "answer", "content": "saved"}}
    return [click, answer]


def test_a_run_in_hs_contract_clicks_and_answers(xvfb: Xvfb, app: RunningApp,
                                                 home: Home) -> None:
    configure(home, max_steps="4", confirm="never")
    with FakeVLLM(ScriptedPolicy(_steps(app)), contract="h_structured") as server:
        result = run_holodesk(home, "run", "save the document", "--profile", "holotron-12b",
                              "--endpoint", server.base_url, xvfb=xvfb)
        bodies = list(server.requests)
    assert result.returncode == 0, result
    assert "saved" in result.stdout, result
    assert app.wait_for(lambda: app.events("click", widget="save"), what="the click on Save")
    # The second request carries the first step's result as H's loop does.
    second = bodies[1].messages
    assert any(isinstance(m.get("content"), str)
               and m["content"].startswith('<tool_output tool="click_desktop">')
               for m in second), second


def test_holodesks_own_dialect_is_refused_by_the_strict_stand_in(
        xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    """The control: with the legacy profile holodesk speaks its own dialect, and the stand-in
    that wants H's contract refuses it."""
    configure(home, max_steps="4", confirm="never")
    legacy = {"thought": "done", "action": {"action": "answer", "text": "saved"}}
    with FakeVLLM(ScriptedPolicy([legacy]), contract="h_structured") as server:
        result = run_holodesk(home, "run", "save the document", "--profile", "legacy",
                              "--endpoint", server.base_url, xvfb=xvfb)
    assert result.returncode != 0
    assert "H contract" in result.stdout + result.stderr, result


def test_a_recognised_h_model_is_spoken_to_in_its_contract_without_a_profile(
        xvfb: Xvfb, app: RunningApp, home: Home) -> None:
    """No --profile: the server says it serves Holo3.1-9B (`/v1/models` root), so the run
    speaks H's contract in the hub's vocabulary, as docs/models.md says (issue 22)."""
    configure(home, max_steps="4", confirm="never")
    x, y = app.widgets["save"].solid_center
    steps = [{"note": None, "thought": "Press Save.",
              "tool_call": {"tool_name": "click", "element": "Save button",
                            "x": round(x / WIDTH * 1000), "y": round(y / HEIGHT * 1000)}},
             {"note": None, "thought": "Saved.",
              "tool_call": {"tool_name": "answer", "content": "saved"}}]
    with FakeVLLM(ScriptedPolicy(steps), contract="h_structured",
                  root="Hcompany/Holo-3.1-9B") as server:
        result = run_holodesk(home, "run", "save the document", "--endpoint", server.base_url,
                              xvfb=xvfb)
        first = server.requests[0]
    assert result.returncode == 0, result
    assert app.wait_for(lambda: app.events("click", widget="save"), what="the click on Save")
    assert first.body["chat_template_kwargs"] == {"enable_thinking": True}
