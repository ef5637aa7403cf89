"""`holodesk eval`'s use case and its printing, without a display (the runs themselves are in
tests/e2e/test_eval_x11.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.cli.eval import table
from app.cli.main import main
from app.demo.look import PRACTICE_WM_CLASS
from app.demo.server import DEMO_MODEL_NAME
from app.eval import (
    TASKS,
    Check,
    EvalError,
    EvalReport,
    PracticeSubject,
    TaskResult,
    _watch,
    confined_to,
    reasoning_total,
    select_tasks,
    target_settings,
    task_settings,
)
from app.settings import Settings
from app.store import StepRecord
from control.stop import StopLatch
from model.coords import Rect
from tests.support.home import isolate_home


def _result(task: str, passed: bool, prompt: int | None = 100) -> TaskResult:
    return TaskResult(task=task, passed=passed, detail="", outcome="answered", steps=6,
                      seconds=1.25, prompt_tokens=prompt, completion_tokens=40)


def test_tasks_are_selected_by_name_in_the_suites_order() -> None:
    assert select_tasks(None) == TASKS
    assert select_tasks(["practice-form"]) == TASKS[:1]
    with pytest.raises(EvalError, match="no eval task named nope"):
        select_tasks(["nope"])


def test_a_task_acts_only_in_its_window_without_confirmation() -> None:
    subject = PracticeSubject.__new__(PracticeSubject)  # only its class is read
    config = task_settings(Settings(), Rect(100, 50, 600, 400), subject, max_steps=7)
    assert config.confirm == "never"
    assert config.only_in == (PRACTICE_WM_CLASS,)
    assert config.monitor == "632x432+84+34"  # the window and a margin round it
    assert config.max_steps == 7


def test_the_demo_model_is_asked_as_the_demo_asks_it() -> None:
    config = target_settings(Settings(), endpoint="http://127.0.0.1:9/v1", model="x", demo=True)
    assert (config.endpoint, config.model) == ("http://127.0.0.1:9/v1", DEMO_MODEL_NAME)
    other = target_settings(Settings(), endpoint="http://127.0.0.1:9/v1", model="x", demo=False)
    assert other.model == "x"


def test_a_report_passes_only_when_every_task_did() -> None:
    good = EvalReport("legacy", "e", "m", (_result("a", True), _result("b", True)))
    bad = EvalReport("legacy", "e", "m", (_result("a", True), _result("b", False)))
    assert good.passed and not bad.passed
    assert bad.success_rate == 0.5
    assert not EvalReport("legacy", "e", "m").passed  # nothing ran: nothing proven
    data = bad.as_dict()
    assert data["tasks"][1]["passed"] is False
    assert data["tasks"][0]["reasoning_tokens"] is None


def test_the_table_puts_two_profiles_side_by_side() -> None:
    a = EvalReport("legacy", "e", "m", (_result("practice-form", True, prompt=None),))
    b = EvalReport("holotron-12b", "e", "m", (_result("practice-form", False),))
    lines = table([a, b]).splitlines()
    assert lines[0].split() == ["task", "legacy:", "passed", "steps", "seconds", "prompt",
                                "answer", "reasoning", "holotron-12b:", "passed", "steps",
                                "seconds", "prompt", "answer", "reasoning"]
    assert lines[2].split() == ["practice-form", "yes", "6", "1.2", "n/a", "40", "n/a",
                                "NO", "6", "1.2", "100", "40", "n/a"]
    assert lines[3].split() == ["passed", "1/1", "0/1"]


def test_reasoning_is_summed_per_task_and_marked_when_estimated() -> None:
    def step(n: int, tokens: int | None, estimated: bool = False) -> StepRecord:
        return StepRecord(run_id="r", step_no=n, started_at=0.0, reasoning_tokens=tokens,
                          reasoning_estimated=estimated)

    assert reasoning_total([step(1, 40), step(2, None), step(3, 2)]) == (42, False)
    assert reasoning_total([step(1, 40), step(2, 5, estimated=True)]) == (45, True)
    assert reasoning_total([step(1, None), step(2, None)]) == (None, False)
    assert reasoning_total([]) == (None, False)
    counted = EvalReport("holo3.1-9b", "e", "m", (
        replace(_result("practice-form", True), reasoning_tokens=45, reasoning_estimated=True),
        replace(_result("scroll-to-row", True), reasoning_tokens=12),
    ))
    lines = table([counted]).splitlines()
    assert lines[2].split()[-1] == "~45" and lines[3].split()[-1] == "12"
    data = counted.as_dict()["tasks"][0]
    assert (data["reasoning_tokens"], data["reasoning_estimated"]) == (45, True)


@pytest.fixture
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


@pytest.mark.usefixtures("_home")
def test_an_unknown_profile_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--profile", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


@pytest.mark.usefixtures("_home")
def test_list_names_every_task(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(task.name in out for task in TASKS)


class _Gone:
    """A subject whose window has gone away."""

    wm_class = "gone"
    alive = False

    def open(self) -> Rect:
        raise AssertionError("not opened here")

    def check(self) -> Check:
        return Check(False, "gone")

    def close(self) -> None:
        pass


def test_the_run_is_stopped_when_its_window_goes_away() -> None:
    latch = StopLatch()
    unwatch = _watch(_Gone(), latch, poll=0.01)
    try:
        assert latch.wait(10)
    finally:
        unwatch()


@pytest.mark.usefixtures("_home")
def test_a_model_name_without_an_endpoint_is_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--model", "holotron"]) == 2
    assert "--endpoint" in capsys.readouterr().err


def test_a_subject_of_one_window_acts_in_its_class_alone() -> None:
    """``wm_classes`` is optional: the practice and rows windows name only their class."""
    subject = PracticeSubject.__new__(PracticeSubject)
    assert confined_to(subject) == (PRACTICE_WM_CLASS,)


def test_every_task_has_a_name_of_its_own() -> None:
    names = [task.name for task in TASKS]
    assert len(names) == len(set(names)) >= 9
