"""Replay with the model as fallback, over the real agent loop (tests/support/agent_harness.py):
an answered automation run is recorded; the next run replays it where the button is now with
no request to the model; a changed screen hands over to the model at the right step, with the
steps done so far in its prompt; a secret is never stored; a broken file is no trajectory."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from app.automations import Automation, add_automation, replace_automation
from app.events import Answer, AwaitingConfirmation, ConfirmReply, Event, Outcome, StepProposed
from app.parameters import ParameterError, replayed_text
from app.replay import RECORDED_ANSWER_NOTE, UNSIGNED_STEPS, Replayer
from app.session import Session
from app.settings import Settings
from app.share import Shared, import_automation
from app.store import Source
from app.trajectory import (
    FORMAT_VERSION,
    Recorder,
    TrajectoryError,
    follow_edit,
    forget_trajectory,
    load_trajectory,
    move_trajectory,
    picture_names,
    read_picture,
    sign_steps,
    trajectory_dir,
)
from control.policy import ConfirmMode
from model.coords import Convention
from tests.support.agent_harness import AgentHarness, HarnessFor
from tests.support.drawn_screens import window_screen
from tests.support.e2e import run_holodesk
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, SeeingPolicy, Target
from tests.support.home import isolate_home, make_home

TASK = "press save and type hello"
KEY = "save it"
SIZE = (1280, 800)
RECORDED_AT = (0, 0)  # the window's top-left corner when the run was recorded
MOVED_TO = (600, 150)  # where a fresh copy of the window opens
ANSWER = {"note": "", "thought": "done", "action": {"action": "answer", "text": "ok"}}


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, file_keyring: Any) -> None:
    """An isolated home with a keyring: holodesk signs the steps it saves there, and replays
    unasked only steps that verify (app/trajectory.py)."""
    isolate_home(monkeypatch, tmp_path)


def _seeing() -> SeeingPolicy:
    return SeeingPolicy([Target("Save button", (230, 20, 20), type_text="hello")])


def _record(harness_for: HarnessFor, tmp_path: Path, image: Image.Image) -> Recorder:
    recorder = Recorder(KEY, "save it", TASK, Convention.NORM1000, root=tmp_path)
    with FakeVLLM(_seeing()) as server:
        h = harness_for(server, screen=lambda: image)
        h.on_event = recorder
        assert h.run(TASK).outcome is Outcome.ANSWERED
    assert recorder.saved is not None
    return recorder


def _replaying(h: AgentHarness, tmp_path: Path, events: list[Event] | None = None) -> Replayer:
    replayer = Replayer.load(KEY, TASK, tmp_path)
    assert replayer.active, replayer.problem
    h.parts.replay = replayer
    return replayer


def _clicks(h: AgentHarness) -> list[tuple[int, int]]:
    return [(c.args[0], c.args[1]) for c in h.backend.calls if c.name == "move_to"]


def test_an_answered_run_is_recorded_and_replays_where_the_button_is_now(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    _record(harness_for, tmp_path, window_screen(RECORDED_AT))
    trajectory = load_trajectory(KEY, tmp_path)
    assert trajectory is not None and trajectory.format == FORMAT_VERSION
    assert [s.action["action"] for s in trajectory.steps] == ["click", "type", "answer"]
    assert len(trajectory.steps[0].anchors) == 1 and not trajectory.steps[1].anchors

    # Every step comes from the replay, the answer too (the screen before it is as recorded,
    # moved with the window): the model is never asked.
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        h = harness_for(server, screen=lambda: window_screen(MOVED_TO))
        _replaying(h, tmp_path)
        finished = h.run(TASK)
    assert finished.outcome is Outcome.ANSWERED, finished
    assert server.requests == []
    assert finished.answer.endswith(RECORDED_ANSWER_NOTE)
    # Where the recorded click went on the button, moved with the window.
    anchor = trajectory.steps[0].anchors[0]
    (x, y), = _clicks(h)
    assert abs(x - (anchor.x + MOVED_TO[0])) <= 1.5 and abs(y - (anchor.y + MOVED_TO[1])) <= 1.5
    assert h.backend.typed() == "hello"
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps] == [Source.REPLAYED] * 3
    assert "found again" in (steps[0].source_note or "")


def test_a_changed_button_hands_over_to_the_model_at_the_first_step(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    _record(harness_for, tmp_path, window_screen(RECORDED_AT))
    with FakeVLLM(_seeing()) as server:
        h = harness_for(server, screen=lambda: window_screen(MOVED_TO, label="quit"))
        _replaying(h, tmp_path)
        finished = h.run(TASK)
    assert finished.outcome is Outcome.ANSWERED
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps] == [Source.MODEL] * 3
    assert "replay handed over" in (steps[0].source_note or "")
    assert len(server.requests) == 3


def test_a_changed_screen_hands_over_at_the_keys_step_with_the_steps_done_so_far(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    _record(harness_for, tmp_path, window_screen(RECORDED_AT))
    clicked: list[bool] = []

    def now() -> Image.Image:
        # After the click, something opens over the screen: typing now would go elsewhere.
        extra = (0, 0, 1280, 380) if clicked else None
        return window_screen(MOVED_TO, extra=extra)

    typed = {"note": "", "thought": "type it", "action": {"action": "type", "text": "hello"}}
    answer = {"note": "", "thought": "done", "action": {"action": "answer", "text": "ok"}}
    with FakeVLLM(ScriptedPolicy([typed, answer])) as server:
        h = harness_for(server, screen=now)
        h.backend.hook = lambda call: clicked.append(True) if call.name == "mouse_up" else None
        _replaying(h, tmp_path)
        finished = h.run(TASK)
    assert finished.outcome is Outcome.ANSWERED
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps] == [Source.REPLAYED, Source.MODEL, Source.MODEL]
    assert "screen is not as it was" in (steps[1].source_note or "")
    # The model got the task and the replayed click as the step done so far.
    first = server.requests[0]
    assert TASK in first.text and "Replaying saved step 1" in first.text
    assert len(first.images) == 2


def test_a_typed_secret_is_never_stored_and_hands_over_there(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    secret = "hunter2-Secret!"
    recorder = Recorder(KEY, "save it", TASK, Convention.NORM1000, root=tmp_path,
                        secrets=lambda: frozenset({secret}))
    policy = SeeingPolicy([Target("Save button", (230, 20, 20), type_text=secret)])
    with FakeVLLM(policy) as server:
        h = harness_for(server, screen=lambda: window_screen(RECORDED_AT))
        h.on_event = recorder
        assert h.run(TASK).outcome is Outcome.ANSWERED
    folder = trajectory_dir(KEY, tmp_path)
    stored = b"".join(p.read_bytes() for p in folder.iterdir())
    assert secret.encode() not in stored
    trajectory = load_trajectory(KEY, tmp_path)
    assert trajectory is not None and trajectory.steps[1].secret

    with FakeVLLM(ScriptedPolicy([{"note": "", "thought": "t", "action": {
            "action": "answer", "text": "ok"}}])) as server:
        h = harness_for(server, screen=lambda: window_screen(RECORDED_AT))
        _replaying(h, tmp_path)
        finished = h.run(TASK)
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps] == [Source.REPLAYED, Source.MODEL]
    assert "secret" in (steps[1].source_note or "")


def test_a_run_that_does_not_answer_keeps_the_trajectory_before_it(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    recorder = _record(harness_for, tmp_path, window_screen(RECORDED_AT))
    before = json.loads((recorder.saved or Path()).read_text())
    again = Recorder(KEY, "save it", TASK, Convention.NORM1000, root=tmp_path)
    with FakeVLLM(SeeingPolicy([Target("Save button", (230, 20, 20))],
                               on_missing="ask_user")) as server:
        h = harness_for(server, screen=lambda: window_screen(RECORDED_AT, colour=(40, 40, 200)))
        h.on_event = again
        assert h.run(TASK).outcome is Outcome.ASKED_USER
    assert again.saved is None
    assert json.loads((recorder.saved or Path()).read_text()) == before


def test_a_broken_or_newer_file_is_no_trajectory(tmp_path: Path) -> None:
    folder = trajectory_dir(KEY, tmp_path)
    folder.mkdir(parents=True)
    path = folder / "trajectory.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(TrajectoryError, match="not valid JSON"):
        load_trajectory(KEY, tmp_path)
    assert not Replayer.load(KEY, TASK, tmp_path).active
    path.write_text(json.dumps({"format": FORMAT_VERSION + 1}), encoding="utf-8")
    replayer = Replayer.load(KEY, TASK, tmp_path)
    assert not replayer.active and "format" in replayer.problem
    assert forget_trajectory(KEY, tmp_path) and not folder.exists()
    assert not forget_trajectory(KEY, tmp_path)


def test_an_edited_task_does_not_replay(harness_for: HarnessFor, tmp_path: Path) -> None:
    _record(harness_for, tmp_path, window_screen(RECORDED_AT))
    replayer = Replayer.load(KEY, "press cancel instead", tmp_path)
    assert not replayer.active and "task changed" in replayer.problem


def test_a_replayed_step_is_confirmed_like_a_model_step_and_a_skip_hands_over(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    _record(harness_for, tmp_path, window_screen(RECORDED_AT))
    asked: list[AwaitingConfirmation] = []

    def skip(event: AwaitingConfirmation) -> ConfirmReply:
        asked.append(event)
        return ConfirmReply(Answer.SKIP)

    answer = {"note": "", "thought": "done", "action": {"action": "answer", "text": "ok"}}
    with FakeVLLM(ScriptedPolicy([answer])) as server:
        h = harness_for(server, mode=ConfirmMode.ALWAYS, answer=skip,
                        screen=lambda: window_screen(MOVED_TO))
        _replaying(h, tmp_path)
        finished = h.run(TASK)
    assert finished.outcome is Outcome.ANSWERED
    # The replayed click waited for the person, who skipped it: nothing was clicked.
    assert len(asked) == 1 and asked[0].request.action.action == "click"
    # The question says it is replayed: no model looked at this screen for it.
    assert any(r.startswith("replayed from this automation's saved steps")
               for r in asked[0].request.reasons), asked[0].request.reasons
    assert _clicks(h) == []
    steps = h.store.steps(finished.run_id)
    assert [(s.source, s.decision) for s in steps] == [(Source.REPLAYED, "skipped"),
                                                       (Source.MODEL, "auto")]
    assert "the replayed step 1 was skipped" in (steps[1].source_note or "")
    assert len(server.requests) == 1


def test_cli_forget_drops_the_saved_steps_and_remove_drops_them_too(tmp_path: Path) -> None:
    home = make_home(tmp_path / "cli")
    assert run_holodesk(home, "automation", "add", "Save It", "--task", TASK).returncode == 0
    folder = home.data / "holodesk" / "trajectories" / KEY
    folder.mkdir(parents=True)
    (folder / "trajectory.json").write_text("{}", encoding="utf-8")
    forgot = run_holodesk(home, "automation", "forget", "save it")
    assert forgot.returncode == 0, str(forgot)
    assert "forgotten" in forgot.stdout and not folder.exists()
    again = run_holodesk(home, "automation", "forget", "save it")
    assert again.returncode == 0 and "has no saved steps" in again.stdout
    folder.mkdir(parents=True)
    assert run_holodesk(home, "automation", "remove", "save it").returncode == 0
    assert not folder.exists()


# -- replay with parameters ------------------------------------------------------------------

TEMPLATE = "press save and type {name}"
SECRET_ONE = "velvet-otter-lantern"
SECRET_TWO = "copper-heron-meadow"


def _automation(*, secret: bool = False) -> Automation:
    return Automation.make(name="Save It", task=TEMPLATE,
                           parameters={"name": {"secret": True} if secret else {}})


def _wired(h: AgentHarness, automation: Automation, value: str) -> Session:
    """``h`` as a run of ``automation`` with ``name=value``, wired as the front ends wire it
    (a :class:`Session` given its parameters and the automation)."""
    session = Session(task=TEMPLATE, settings=Settings(), dry_run=False, parts=h.parts,
                      parameters=automation.fill({"name": value}), automation=automation)
    recorder = session.recorder
    assert recorder is not None
    h.on_event = recorder
    return session


def _record_with(harness_for: HarnessFor, automation: Automation, value: str) -> None:
    with FakeVLLM(SeeingPolicy([Target("Save button", (230, 20, 20), type_text=value)])) as s:
        h = harness_for(s, screen=lambda: window_screen(RECORDED_AT))
        session = _wired(h, automation, value)
        assert h.run(session.task).outcome is Outcome.ANSWERED
    assert session.recorder is not None and session.recorder.saved is not None


def _down() -> FakeVLLM:
    """A server that is gone: a single request to it would end the run in error."""
    server = FakeVLLM(ScriptedPolicy(["{}"]))
    server.start()
    server.stop()
    return server


def _answering() -> FakeVLLM:
    """A server that only answers: the replay does every step but the answer, which the
    model always gives from the screen as it is now."""
    server = FakeVLLM(ScriptedPolicy([ANSWER]))
    server.start()
    return server


def test_a_replayed_type_step_types_this_runs_value_and_confirms_it(
        harness_for: HarnessFor) -> None:
    automation = _automation()
    _record_with(harness_for, automation, "Ada")
    trajectory = load_trajectory(automation.key)
    assert trajectory is not None
    assert trajectory.template == TEMPLATE and trajectory.values == {"name": "Ada"}
    assert trajectory.task == "press save and type Ada"

    asked: list[AwaitingConfirmation] = []

    def approve(event: AwaitingConfirmation) -> ConfirmReply:
        asked.append(event)
        return ConfirmReply(Answer.APPROVE)

    server = _answering()
    h = harness_for(server, mode=ConfirmMode.ALWAYS, answer=approve,
                    screen=lambda: window_screen(MOVED_TO))
    session = _wired(h, automation, "Grace")
    assert session.parts.replay is not None and session.parts.replay.active
    finished = h.run(session.task)
    assert finished.outcome is Outcome.ANSWERED, finished
    assert len(server.requests) == 1  # the answer only
    assert h.backend.typed() == "Grace"
    # The confirmation showed what is typed now, not what was typed when recorded.
    typing = [e.request for e in asked if e.request.action.action == "type"]
    assert len(typing) == 1 and typing[0].action.text == "Grace"  # type: ignore[union-attr]
    assert "Grace" in typing[0].description and "Ada" not in typing[0].description
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps] == [Source.REPLAYED] * 2 + [Source.MODEL]
    # This run is the trajectory now: recorded with its own values.
    again = load_trajectory(automation.key)
    assert again is not None and again.values == {"name": "Grace"}


def test_the_policy_judges_the_retyped_text(harness_for: HarnessFor) -> None:
    automation = _automation()
    _record_with(harness_for, automation, "notes")
    asked: list[AwaitingConfirmation] = []

    def skip(event: AwaitingConfirmation) -> ConfirmReply:
        asked.append(event)
        return ConfirmReply(Answer.SKIP)

    answer = {"note": "", "thought": "done", "action": {"action": "answer", "text": "ok"}}
    with FakeVLLM(ScriptedPolicy([answer])) as server:
        h = harness_for(server, mode=ConfirmMode.RISKY, answer=skip,
                        screen=lambda: window_screen(MOVED_TO))
        session = _wired(h, automation, "rm -rf ~/")
        finished = h.run(session.task)
    assert finished.outcome is Outcome.ANSWERED
    # "notes" was typed without a question; "rm -rf ~/" in its place is asked about.
    assert len(asked) == 1 and asked[0].request.action.action == "type"
    assert any("destructive" in r for r in asked[0].request.reasons), asked[0].request.reasons
    assert h.backend.typed() == ""


def test_a_recorded_value_too_short_to_find_hands_over_at_its_typing(
        harness_for: HarnessFor) -> None:
    automation = _automation()
    _record_with(harness_for, automation, "Al")
    typed = {"note": "", "thought": "type", "action": {"action": "type", "text": "Grace"}}
    with FakeVLLM(ScriptedPolicy([typed, ANSWER])) as server:
        h = harness_for(server, screen=lambda: window_screen(MOVED_TO))
        session = _wired(h, automation, "Grace")
        finished = h.run(session.task)
    assert finished.outcome is Outcome.ANSWERED
    # "Al" may be part of other text: the replay does not guess, the model types instead.
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps] == [Source.REPLAYED, Source.MODEL, Source.MODEL]
    assert "cannot type this run's values" in (steps[1].source_note or "")
    assert "shorter than 3 characters" in (steps[1].source_note or "")
    assert h.backend.typed() == "Grace"


def test_a_secret_parameter_step_replays_from_this_runs_value_masked(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    automation = _automation(secret=True)
    _record_with(harness_for, automation, SECRET_ONE)
    folder = trajectory_dir(automation.key)
    stored = b"".join(p.read_bytes() for p in folder.iterdir())
    assert SECRET_ONE.encode() not in stored
    trajectory = load_trajectory(automation.key)
    assert trajectory is not None and trajectory.values == {}
    assert "velvet" not in trajectory.task
    typed_step = trajectory.steps[1]
    assert typed_step.secret and typed_step.secret_parameter == "name"
    assert typed_step.action["text"] == ""

    asked: list[AwaitingConfirmation] = []

    def approve(event: AwaitingConfirmation) -> ConfirmReply:
        asked.append(event)
        return ConfirmReply(Answer.APPROVE)

    server = _answering()
    h = harness_for(server, mode=ConfirmMode.ALWAYS, answer=approve,
                    screen=lambda: window_screen(MOVED_TO))
    session = _wired(h, automation, SECRET_TWO)  # the keyring holds another value now
    finished = h.run(session.task)
    assert finished.outcome is Outcome.ANSWERED, finished
    assert len(server.requests) == 1  # the answer only
    assert h.backend.typed() == SECRET_TWO
    typing = [e.request for e in asked if e.request.action.action == "type"]
    assert len(typing) == 1 and typing[0].secret
    assert SECRET_TWO not in typing[0].description and "hidden text" in typing[0].description
    proposed = [e for e in h.events if isinstance(e, StepProposed)]
    assert all(SECRET_TWO not in e.step.thought + e.description for e in proposed)
    # Masked in the action log as when the model types it; never in the saved steps.
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps] == [Source.REPLAYED] * 2 + [Source.MODEL]
    assert SECRET_TWO not in repr(steps)
    h.store.close()
    held = [p for p in tmp_path.rglob("*") if p.is_file() and SECRET_TWO.encode() in p.read_bytes()]
    assert held == []


def test_a_secret_step_without_its_parameter_hands_over_to_the_model(
        harness_for: HarnessFor) -> None:
    automation = _automation(secret=True)
    _record_with(harness_for, automation, SECRET_ONE)
    # The same automation, its value typed now as a plain one: no secret value to type.
    replayer = Replayer.load(automation.key, TEMPLATE, values={})
    assert replayer.active
    answer = {"note": "", "thought": "done", "action": {"action": "answer", "text": "ok"}}
    typed = {"note": "", "thought": "type", "action": {"action": "type", "text": "x"}}
    with FakeVLLM(ScriptedPolicy([typed, answer])) as server:
        h = harness_for(server, screen=lambda: window_screen(MOVED_TO))
        h.parts.replay = replayer
        finished = h.run(TEMPLATE)
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps] == [Source.REPLAYED, Source.MODEL, Source.MODEL]
    assert "typed a secret" in (steps[1].source_note or "")


def _edit_steps(automation: Automation, change: Callable[[dict[str, Any]], None]) -> None:
    """Change the saved file as a crafted (imported) one could be."""
    path = trajectory_dir(automation.key) / "trajectory.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_recorded_value_under_a_secret_parameters_name_is_refused(
        harness_for: HarnessFor) -> None:
    """A file saying the recorded run's value of the secret was "hello" would have this run's
    secret typed wherever "hello" is (into an address, shown masked): it does not replay."""
    automation = _automation(secret=True)
    _record_with(harness_for, automation, SECRET_ONE)

    def crafted(data: dict[str, Any]) -> None:
        data["values"] = {"name": "hello"}
        data["steps"][1].update(secret=False, secret_parameter=None,
                                action={"action": "type", "text": "evil.example/?q=hello"})
    _edit_steps(automation, crafted)
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        h = harness_for(server, screen=lambda: window_screen(MOVED_TO))
        session = _wired(h, automation, SECRET_TWO)
    replayer = session.parts.replay
    assert replayer is not None and not replayer.active
    assert "'name'" in replayer.problem and "not a plain parameter" in replayer.problem


def test_a_secret_step_naming_a_plain_parameter_hands_over(harness_for: HarnessFor) -> None:
    automation = _automation()
    _record_with(harness_for, automation, "Ada")

    def crafted(data: dict[str, Any]) -> None:
        data["steps"][1].update(secret=True, secret_parameter="name",
                                action={"action": "type", "text": ""})
    _edit_steps(automation, crafted)
    typed = {"note": "", "thought": "type", "action": {"action": "type", "text": "x"}}
    asked: list[AwaitingConfirmation] = []

    def approve(event: AwaitingConfirmation) -> ConfirmReply:
        asked.append(event)
        return ConfirmReply(Answer.APPROVE)

    with FakeVLLM(ScriptedPolicy([typed, ANSWER])) as server:
        h = harness_for(server, answer=approve, screen=lambda: window_screen(MOVED_TO))
        session = _wired(h, automation, "Grace")
        finished = h.run(session.task)
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps] == [Source.REPLAYED, Source.MODEL, Source.MODEL]
    # Steps edited outside holodesk do not verify: the replayed one was asked.
    assert any(r.startswith(UNSIGNED_STEPS) for r in asked[0].request.reasons)
    assert "typed a secret" in (steps[1].source_note or "")


IMPORTED = "these saved steps came with an imported automation"


def test_imported_steps_are_all_asked_until_a_run_of_them_is_answered_here(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    """An imported file names the elements the policy judges clicks by (a "Delete account"
    click named "Save"): its steps are not trusted until a run of it is watched here."""
    automation = _automation()
    add_automation(automation)
    _record_with(harness_for, automation, "Ada")
    recorded = load_trajectory(automation.key)
    assert recorded is not None and not recorded.imported
    folder = trajectory_dir(automation.key)
    pictures = {n: (folder / n).read_bytes() for n in picture_names(recorded)}
    # As read_share hands over a shared file (its checks: tests/app/test_share.py).
    import_automation(Shared(tmp_path / "shared.zip", automation, recorded, pictures),
                      replace=True)
    trajectory = load_trajectory(automation.key)
    assert trajectory is not None and trajectory.imported

    def run(mode: ConfirmMode) -> list[AwaitingConfirmation]:
        asked: list[AwaitingConfirmation] = []

        def approve(event: AwaitingConfirmation) -> ConfirmReply:
            asked.append(event)  # approving the rest still asks at each imported step
            return ConfirmReply(Answer.APPROVE_REST)

        with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
            h = harness_for(server, mode=mode, answer=approve,
                            screen=lambda: window_screen(MOVED_TO))
            session = _wired(h, automation, "Grace")
            assert h.run(session.task).outcome is Outcome.ANSWERED
        return asked

    asked = run(ConfirmMode.NEVER)  # asked although the settings ask nothing
    assert [e.request.action.action for e in asked] == ["click", "type"]
    assert all(any(r.startswith(IMPORTED) for r in e.request.reasons) for e in asked)
    again = load_trajectory(automation.key)
    assert again is not None and not again.imported  # this run's own steps now
    assert run(ConfirmMode.NEVER) == []


def test_a_trajectory_saved_before_parameters_still_loads_and_replays(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    """tests/app/data/trajectory_v1: recorded by the code before trajectories kept their
    template and values (format 1), for ``press save and type hello``."""
    folder = trajectory_dir(KEY, tmp_path)
    shutil.copytree(Path(__file__).parent / "data" / "trajectory_v1", folder)
    assert json.loads((folder / "trajectory.json").read_text())["format"] == 1
    trajectory = load_trajectory(KEY, tmp_path)
    assert trajectory is not None and trajectory.format == FORMAT_VERSION == 2
    assert trajectory.template == TASK and trajectory.values == {}
    assert not Replayer.load(KEY, "press save and type {name}", tmp_path).active
    # Saved before the area around each target was recorded: its pointing steps cannot be
    # checked against what surrounds them now, so the replay hands over at the first one.
    server = _answering()
    h = harness_for(server, screen=lambda: window_screen(MOVED_TO))
    _replaying(h, tmp_path)
    finished = h.run(TASK)
    server.stop()
    assert finished.outcome is Outcome.ANSWERED, finished
    (step,) = h.store.steps(finished.run_id)
    assert step.source is Source.MODEL
    assert "without the picture of what surrounds it" in (step.source_note or "")


def test_a_renamed_automation_keeps_its_steps(harness_for: HarnessFor, tmp_path: Path) -> None:
    _record(harness_for, tmp_path, window_screen(RECORDED_AT))
    assert move_trajectory(KEY, "saved", "Saved", tmp_path)
    assert not trajectory_dir(KEY, tmp_path).exists()
    moved = load_trajectory("saved", tmp_path)
    assert moved is not None and moved.automation == "Saved"
    assert not move_trajectory(KEY, "saved", "Saved", tmp_path)  # nothing left to move


def test_cli_lists_saved_steps_and_edits_keep_or_forget_them(tmp_path: Path) -> None:
    home = make_home(tmp_path / "cli")

    def ok(*args: str) -> str:
        result = run_holodesk(home, *args)
        assert result.returncode == 0, str(result)
        return result.stdout

    ok("automation", "add", "Save It", "--task", TASK)
    ok("automation", "add", "other", "--task", "something else")
    assert "STEPS" not in ok("automation", "list")  # nothing saved: no column
    folder = home.data / "holodesk" / "trajectories" / KEY
    folder.mkdir(parents=True)
    (folder / "trajectory.json").write_text('{"automation": "Save It"}', encoding="utf-8")
    header, first, second = ok("automation", "list").splitlines()
    assert header.split()[-2:] == ["STEPS", "TASK"]
    assert first.split()[-len(TASK.split()) - 1] == "saved"
    assert second.split()[-3] == "-"
    assert "go with the new name" in ok("automation", "edit", "save it", "--name", "Keep It")
    moved = home.data / "holodesk" / "trajectories" / "keep it"
    assert not folder.exists() and moved.is_dir()
    assert json.loads((moved / "trajectory.json").read_text())["automation"] == "Keep It"
    assert "old task" in ok("automation", "edit", "keep it", "--task", "press cancel")
    assert not moved.exists()


FORM_AT = (20, 30)  # the desktop shows left of the Save button: the Cancel button has none


def _form_screen(origin: tuple[int, int], typed: str) -> Image.Image:
    """A form like the X11 target window's: four big buttons alike but for their colour, and a
    blue field just below the red Save button showing the text typed into it."""
    image = Image.new("RGB", SIZE, (20, 24, 32))
    draw = ImageDraw.Draw(image)
    ox, oy = origin
    draw.rectangle((ox, oy, ox + 659, oy + 539), fill=(217, 217, 217))
    for x, y, colour, label in ((10, 40, (255, 0, 0), "Save"), (250, 40, (0, 255, 0), "Cancel"),
                                (10, 400, (255, 0, 255), "Open"), (250, 400, (255, 128, 0), "Go")):
        draw.rectangle((ox + x, oy + y, ox + x + 199, oy + y + 99), fill=colour)
        draw.text((ox + x + 80, oy + y + 8), label, fill=(0, 0, 0))
    draw.rectangle((ox + 10, oy + 180, ox + 449, oy + 223), fill=(0, 0, 255))
    for i, ch in enumerate(typed):  # glyph-like bars: other text, other bars
        x, h = ox + 16 + i * 12, 6 + (ord(ch) % 5) * 6
        draw.rectangle((x, oy + 186, x + 8, oy + 186 + h), fill=(255, 255, 255))
    return image


def test_a_target_beside_the_retyped_text_is_found_without_that_text(
        harness_for: HarnessFor) -> None:
    automation = Automation.make(name="Fill", task="type {name} and press save",
                                 parameters={"name": {}})
    policy = SeeingPolicy([Target("field", (0, 0, 255), type_text="velvet-otter-lantern"),
                           Target("Save button", (255, 0, 0))])
    with FakeVLLM(policy) as server:
        h = harness_for(server)
        h.screen = lambda: _form_screen(FORM_AT, h.backend.typed())
        session = _wired(h, automation, "velvet-otter-lantern")
        assert h.run(session.task).outcome is Outcome.ANSWERED
    trajectory = load_trajectory(automation.key)
    assert trajectory is not None
    save = trajectory.steps[2]
    # The recorded crop around Save takes in the field and its text: smaller ones were not
    # unique among the four buttons.
    below = read_picture(automation.key, save.anchors[0].crop).height - save.anchors[0].crop_y
    assert save.action["element"] == "Save button" and below > 120

    # Found without the part showing the retyped text, but what surrounds Save (the field
    # with other text in it) is not as recorded: the model takes over there. The safe way:
    # the replay cannot tell this change from a changed question (docs/safety.md).
    folder = trajectory_dir(automation.key)
    kept = folder.with_name("kept")
    shutil.copytree(folder, kept)  # the answered run below saves its own steps in their place
    server = _answering()
    h = harness_for(server)
    h.screen = lambda: _form_screen(MOVED_TO, h.backend.typed())
    session = _wired(h, automation, "copper-heron-meadow")
    finished = h.run(session.task)
    server.stop()
    steps = h.store.steps(finished.run_id)
    assert finished.outcome is Outcome.ANSWERED, [s.source_note for s in steps]
    assert h.backend.typed() == "copper-heron-meadow"
    assert [s.source for s in steps][:2] == [Source.REPLAYED, Source.REPLAYED]
    assert steps[2].source is Source.MODEL
    assert "what surrounds it changed" in (steps[2].source_note or "")
    # The same form with the Save button relabelled: still refused.
    shutil.rmtree(folder)
    shutil.copytree(kept, folder)
    sign_steps(automation.key, imported=False)  # put back as holodesk's own, not by hand
    h = harness_for(_down())
    h.screen = lambda: _form_screen(MOVED_TO, h.backend.typed()) if not h.backend.typed() \
        else _relabelled(_form_screen(MOVED_TO, h.backend.typed()))
    session = _wired(h, automation, "copper-heron-meadow")
    finished = h.run(session.task)
    steps = h.store.steps(finished.run_id)
    assert [s.source for s in steps][:2] == [Source.REPLAYED, Source.REPLAYED]
    assert steps[2].source is Source.MODEL and "Save button" in (steps[2].source_note or "")


def _relabelled(image: Image.Image) -> Image.Image:
    draw = ImageDraw.Draw(image)
    ox, oy = MOVED_TO
    draw.rectangle((ox + 10, oy + 40, ox + 209, oy + 139), fill=(255, 0, 0))
    draw.text((ox + 90, oy + 48), "Store", fill=(0, 0, 0))
    return image


# -- a third hostile review: the replayed answer and numbers ------------------------------------


def _record_typing(harness_for: HarnessFor, automation: Automation, value: str,
                   typed: str) -> None:
    """Record ``automation`` run with ``value`` whose model typed ``typed`` (maybe spelt
    otherwise than the value)."""
    policy = SeeingPolicy([Target("Save button", (230, 20, 20), type_text=typed)])
    with FakeVLLM(policy) as s:
        h = harness_for(s, screen=lambda: window_screen(RECORDED_AT))
        session = _wired(h, automation, value)
        assert h.run(session.task).outcome is Outcome.ANSWERED


def test_the_recorded_answer_is_not_replayed_with_other_values(harness_for: HarnessFor) -> None:
    # The value was typed spelt otherwise (ADA): not found to retype, the old one is typed
    # again; an answer rewritten with this run's value would claim what did not happen.
    automation = _automation()
    _record_typing(harness_for, automation, "Ada", "ADA")

    def answer_names_value(data: dict[str, Any]) -> None:
        data["steps"][-1]["action"]["text"] = "Saved the record of Ada"
    _edit_steps(automation, answer_names_value)
    sign_steps(automation.key, imported=False)  # as if holodesk saved them so: asked nothing
    h = harness_for(_down(), screen=lambda: window_screen(MOVED_TO))
    session = _wired(h, automation, "Grace")
    finished = h.run(session.task)
    assert "Grace" not in (finished.answer or "")


def test_the_recorded_answers_note_is_said_once(harness_for: HarnessFor) -> None:
    automation = _automation()
    _record_typing(harness_for, automation, "Ada", "Ada")
    for _ in range(2):  # the first replay is recorded again, with its note
        h = harness_for(_down(), screen=lambda: window_screen(MOVED_TO))
        session = _wired(h, automation, "Ada")
        finished = h.run(session.task)
        assert finished.outcome is Outcome.ANSWERED, finished
    assert finished.answer.count(RECORDED_ANSWER_NOTE) == 1


def test_a_value_inside_a_longer_number_is_not_retyped() -> None:
    for text in ("1,100", "100.50", "5-100"):
        with pytest.raises(ParameterError):
            replayed_text(text, {"invoice": "100"}, {"invoice": "250"})


def test_saved_steps_verify_only_as_holodesk_wrote_them(harness_for: HarnessFor) -> None:
    """The signed record keeps the digest of the steps holodesk saved, their pictures too: a
    crop swapped for another picture (a click aimed at another button) is asked at every
    step; a rename with holodesk keeps them signed; a replay uses the pictures it checked."""
    automation = _automation()
    add_automation(automation)
    _record_with(harness_for, automation, "Ada")
    assert Replayer.load(automation.key, TEMPLATE, values={"name": "Grace"}).untrusted == ""
    recorded = load_trajectory(automation.key)
    assert recorded is not None
    crop = trajectory_dir(automation.key) / recorded.steps[0].anchors[0].crop
    loaded = Replayer.load(automation.key, TEMPLATE, values={"name": "Grace"})
    with Image.open(crop) as image:
        Image.new("RGB", image.size, (0, 255, 0)).save(crop)
    swapped = Replayer.load(automation.key, TEMPLATE, values={"name": "Grace"})
    assert swapped.active and swapped.untrusted == UNSIGNED_STEPS
    # Read before the swap: the replay holds the bytes it checked, not the file now.
    assert loaded._picture(recorded.steps[0].anchors[0].crop).getpixel((0, 0)) != (0, 255, 0)
    _record_with(harness_for, automation, "Ada")  # signed anew
    renamed = automation.changed(name="Save It Now")
    replace_automation(automation.name, renamed)
    follow_edit(automation, renamed)
    moved = Replayer.load(renamed.key, TEMPLATE, values={"name": "Grace"})
    assert moved.active and moved.untrusted == ""
