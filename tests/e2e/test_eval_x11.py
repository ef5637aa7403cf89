"""End to end: `holodesk eval` on Xvfb with openbox, the real CLI as a subprocess (issue 22).

Each task's window opens in its own process and the real run drives it; whether a task passed
is read from the window's own state. Against the built-in demo model (holodesk's own dialect
and H's structured contract, `--compare legacy holotron-12b`; H's native tool calls,
`--profile holo3.1-9b-tools`), and against the stand-in vLLM server holding every request to
H's contract, for Holotron-12B (holo-nano tools) and Holo3.1 (the hub's tools, thinking on, in
structured output and in native tool calls).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from app.demo.look import PRACTICE_WM_CLASS
from app.demo.rows import ROWS_WM_CLASS
from app.demo.task_look import ORDER_FORM_WM_CLASS, WM_CLASSES
from app.eval import task_names
from model.contracts import Vocabulary
from tests.support.e2e import run_holodesk
from tests.support.eval_stand_in import InContract, ReadsTheChecklist, practice_policy
from tests.support.fake_vllm import FakeVLLM
from tests.support.fixtures import xvfb_fixture
from tests.support.home import Home
from tests.support.wm import WindowManager
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

WIDTH, HEIGHT = 1280, 800
xvfb = xvfb_fixture(WIDTH, HEIGHT)
#: The fewest steps each task takes: its clicks and typing (the answer ends the run).
LEAST_STEPS = {"practice-form": 5, "practice-resume": 2, "practice-fix-colour": 3,
               "scroll-to-row": 2, "menu-zoom": 3, "drag-card": 2, "read-invoice": 1,
               "settings-ticks": 5, "set-copies": 6, "tab-theme": 3,
               # double-click draft, type final, Ctrl+S
               "edit-and-save": 3,
               # double-click the number, Ctrl+C, click the field, Ctrl+V, Submit
               "copy-order-number": 5,
               # CSV, OK
               "export-as-csv": 2,
               # the double click
               "open-by-double-click": 1,
               # click the list, Ctrl+F, type with Enter
               "search-with-shortcut": 3,
               # click City, type, Tab, type, Save
               "tab-between-fields": 5}


@pytest.fixture(autouse=True)
def _desktop(openbox: WindowManager, xvfb: Xvfb) -> Iterator[None]:
    # The pointer rests away from the failsafe corners and from where the window opens.
    subprocess.run(["xdotool", "mousemove", "40", "400"], env=xvfb.env(), check=True)
    yield


def task_windows(xvfb: Xvfb) -> list[str]:
    """The task windows still open: the practice, rows and Tk task windows' classes."""
    left: list[str] = []
    for wm_class in (PRACTICE_WM_CLASS, ROWS_WM_CLASS, *WM_CLASSES.values(), ORDER_FORM_WM_CLASS):
        found = subprocess.run(["xdotool", "search", "--class", f"^{wm_class}$"],
                               env=xvfb.env(), capture_output=True, text=True)
        left += found.stdout.split()
    return left


def raw_answers(home: Home, run_id: str) -> list[str]:
    """What the model answered at each step of ``run_id``, read from the action log."""
    db = next(home.data.rglob("*.db"))
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT raw_output FROM steps WHERE run_id = ? ORDER BY step_no",
                            (run_id,)).fetchall()
    return [row[0] for row in rows if row[0]]


def reports(stdout: str) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads(stdout)["reports"]
    return loaded


def test_eval_against_the_demo_model_passes_every_task(xvfb: Xvfb, home: Home) -> None:
    result = run_holodesk(home, "eval", "--json", xvfb=xvfb, timeout=600)
    assert result.returncode == 0, str(result)
    [report] = reports(result.stdout)
    assert report["passed"] is True
    assert report["success_rate"] == 1.0
    for task in report["tasks"]:
        assert task["passed"] is True, task
        assert task["outcome"] == "answered"
        assert task["steps"] >= LEAST_STEPS[task["task"]], task
        assert task["prompt_tokens"] > 0 and task["completion_tokens"] > 0
        assert task["reasoning_tokens"] is None  # not recorded: "n/a" in the table
        said = raw_answers(home, task["run_id"])
        assert len(said) == task["steps"]
        assert all('"tool_call"' in raw for raw in said)  # the default profile: H's contract
    assert task_windows(xvfb) == []  # every window closed at the end


#: The tasks whose side-by-side table is read (a task of each kind of window; the JSON run
#: below compares every task, so the suite runs twice, not four times, under both profiles).
TABLE_TASKS = ("practice-form", "menu-zoom", "copy-order-number")


def test_compare_legacy_and_holotron_12b_side_by_side(xvfb: Xvfb, home: Home) -> None:
    result = run_holodesk(home, "eval", "--compare", "legacy", "holotron-12b", "--tasks",
                          ",".join(TABLE_TASKS), xvfb=xvfb, timeout=400)
    assert result.returncode == 0, str(result)
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("task"))
    assert "legacy: passed" in header and "holotron-12b: passed" in header
    for name in TABLE_TASKS:
        row = next(line for line in lines if line.startswith(name + " "))
        assert row.split()[1] == "yes" and row.split()[7] == "yes", row
        assert "n/a" in row  # reasoning tokens, which the client does not record
    # The same task was really spoken in both contracts: the log keeps the answers.
    again = run_holodesk(home, "eval", "--compare", "legacy", "holotron-12b", "--json",
                         xvfb=xvfb, timeout=800)
    assert again.returncode == 0, str(again)
    legacy, holotron = reports(again.stdout)
    assert (legacy["profile"], holotron["profile"]) == ("legacy", "holotron-12b")
    for report in (legacy, holotron):  # every task passes under both contracts
        assert report["passed"] is True
        assert [t["task"] for t in report["tasks"]] == list(task_names())
    legacy_said = [raw for t in legacy["tasks"] for raw in raw_answers(home, t["run_id"])]
    h_said = [raw for t in holotron["tasks"] for raw in raw_answers(home, t["run_id"])]
    assert legacy_said and h_said
    assert all('"action"' in raw and "tool_call" not in raw for raw in legacy_said)
    assert all('"tool_call"' in raw for raw in h_said)
    assert any('"click_desktop"' in raw for raw in h_said)


def test_eval_in_native_tool_calls_against_the_demo_model(xvfb: Xvfb, home: Home) -> None:
    """`holodesk eval --profile holo3.1-9b-tools`: the run speaks H's native function calling
    (docs/contract.md) to the demo model, which answers each step with a streamed tool call."""
    result = run_holodesk(home, "eval", "--profile", "holo3.1-9b-tools", "--tasks",
                          "practice-form", "--json", xvfb=xvfb, timeout=300)
    assert result.returncode == 0, str(result)
    [report] = reports(result.stdout)
    assert report["passed"] is True and report["profile"] == "holo3.1-9b-tools"
    [task] = report["tasks"]
    said = raw_answers(home, task["run_id"])
    assert len(said) == task["steps"] >= LEAST_STEPS["practice-form"]
    # Each answer is one call, as the log keeps it: name(arguments), no step JSON.
    assert all(raw.startswith(("click(", "write(", "answer(")) for raw in said), said
    assert task_windows(xvfb) == []


@pytest.mark.parametrize(("profile", "vocabulary", "root"), [
    ("holotron-12b", Vocabulary.HOLO_NANO, "Hcompany/Holotron-12B"),
    ("holo3.1-9b", Vocabulary.HUB, "Hcompany/Holo-3.1-9B"),
])
def test_eval_against_the_stand_in_in_hs_contract(xvfb: Xvfb, home: Home, profile: str,
                                                  vocabulary: Vocabulary, root: str) -> None:
    planner = ReadsTheChecklist()
    with FakeVLLM(InContract(planner, vocabulary), contract="h_structured", root=root) as server:
        result = run_holodesk(home, "eval", "--endpoint", server.base_url, "--profile",
                              profile, "--json", xvfb=xvfb, timeout=800)
        bodies = list(server.requests)
    assert result.returncode == 0, str(result)
    [report] = reports(result.stdout)
    assert report["passed"] is True and report["profile"] == profile
    assert [t["task"] for t in report["tasks"]] == list(task_names())
    assert planner.requests == sum(t["steps"] for t in report["tasks"])
    assert all("structured_outputs" in b.body for b in bodies)
    assert task_windows(xvfb) == []


def test_eval_against_the_stand_in_in_native_tool_calls(xvfb: Xvfb, home: Home) -> None:
    """The stand-in holding every request to H's native contract and every call to vLLM's
    required tool choice: the checklist planner's steps go out as streamed tool calls."""
    planner = ReadsTheChecklist()
    with FakeVLLM(planner, contract="h_native_tools", root="Hcompany/Holo-3.1-9B",
                  reasoning_parser=True, tool_parser="qwen3_coder") as server:
        result = run_holodesk(home, "eval", "--endpoint", server.base_url, "--profile",
                              "holo3.1-9b-tools", "--tasks", "practice-form", "--json",
                              xvfb=xvfb, timeout=300)
        bodies = list(server.requests)
    assert result.returncode == 0, str(result)
    [report] = reports(result.stdout)
    assert report["passed"] is True and report["profile"] == "holo3.1-9b-tools"
    assert planner.requests == report["tasks"][0]["steps"] == len(bodies)
    assert all(b.body["tool_choice"] == "required" for b in bodies)
    # The last request carries the whole history: each call answered by its tool message.
    assert sum(m["role"] == "tool" for m in bodies[-1].messages) == len(bodies) - 1
    assert task_windows(xvfb) == []


def test_the_seeing_stand_in_fills_the_form(xvfb: Xvfb, home: Home) -> None:
    """A second planner, which finds the parts by colour in a fixed order, in H's contract."""
    policy = practice_policy()
    with FakeVLLM(InContract(policy, Vocabulary.HOLO_NANO), contract="h_structured") as server:
        result = run_holodesk(home, "eval", "--endpoint", server.base_url, "--profile",
                              "holotron-12b", "--tasks", "practice-form", xvfb=xvfb,
                              timeout=300)
    assert result.returncode == 0, str(result)
    assert "practice-form: passed" in result.stdout
    assert policy.done and policy.missing == []


def test_a_failed_task_exits_1(xvfb: Xvfb, home: Home) -> None:
    """A model that never finishes the task: the report says so and the exit status is 1."""
    policy = practice_policy()
    policy.plan = policy.plan[:2]  # types the name, then claims to be done
    with FakeVLLM(policy) as server:
        result = run_holodesk(home, "eval", "--endpoint", server.base_url, "--profile",
                              "legacy", "--tasks", "practice-form", xvfb=xvfb, timeout=300)
    assert result.returncode == 1, str(result)
    assert "practice-form: FAILED" in result.stdout
    assert "still to do: colour, saved, deleted" in result.stdout


def test_a_wrong_reading_fails_the_task(xvfb: Xvfb, home: Home) -> None:
    """read-invoice is checked on the run's answer: another invoice's total fails it."""
    def misreads(_request: object) -> str:
        return json.dumps({"note": "", "thought": "the total is there",
                           "action": {"action": "answer", "text": "1257.09"}})

    with FakeVLLM(misreads) as server:
        result = run_holodesk(home, "eval", "--endpoint", server.base_url, "--profile",
                              "legacy", "--tasks", "read-invoice", xvfb=xvfb, timeout=300)
    assert result.returncode == 1, str(result)
    assert "read-invoice: FAILED" in result.stdout
    assert "wanted 1275.90" in result.stdout
    assert task_windows(xvfb) == []
