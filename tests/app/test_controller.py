"""The desktop's run controller without Qt (app/controller.py): admission from every source,
the one refusal while a run is active, the automation start pipeline (look-up, values asked or
refused, secrets read off the caller's thread), the schedule and login queues, and the
protocol of later launches."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from app.admission import Activity, Refusal, Refused, RunSource, Started, admit, busy, what_run
from app.automations import Automation
from app.controller import Controller, Desk, Launch, Missing, fill, find, missing_refused
from app.parameter_values import load_secret, store_secret
from app.parameters import Filled
from app.run_request import RunRequest
from app.settings import Settings
from app.way import WorkArea, area_message
from model.coords import Point, Rect
from tests.support.automations_made import rename, sign_in
from tests.support.home import Home, isolate_home

T = TypeVar("T")
SECRET = "velvet-otter-lantern"


@dataclass
class Started_:
    task: str
    parameters: Filled | None
    saved: Automation | None
    settings: Settings


@dataclass
class FakeDesk:
    """The front end's part, recorded: runs started, refusals told, notes, questions asked,
    and the work handed off the caller's thread (run by :meth:`drain`, as a worker would)."""

    automations: list[Automation] = field(default_factory=list)
    activity: Activity = Activity.IDLE
    server_problem: str = ""
    closed: bool = False
    runs: list[Started_] = field(default_factory=list)
    told: list[Refused] = field(default_factory=list)
    notes: list[tuple[str, str, bool]] = field(default_factory=list)
    notified: list[str] = field(default_factory=list)
    asked: list[tuple[str, list[str], Callable[[dict[str, str], list[str]], None]]] = \
        field(default_factory=list)
    off: list[Callable[[], None]] = field(default_factory=list)
    soon: list[Callable[[], None]] = field(default_factory=list)
    shown: int = 0
    expected: list[tuple[str, str]] = field(default_factory=list)
    safety_checks: int = 0
    stopped: list[str] = field(default_factory=list)
    made_way: list[tuple[int, str, WorkArea]] = field(default_factory=list)
    over: list[int] = field(default_factory=list)

    def desk(self, folder: Path) -> Desk:
        def start_run(prepare: Callable[[], RunRequest]) -> bool:
            if self.activity is Activity.RUN:
                return False
            request = prepare()
            self.runs.append(Started_(request.task, request.parameters, request.saved_steps,
                                      request.settings))
            self.activity = Activity.RUN
            return True

        def off_thread(work: Callable[[], T], done: Callable[[T], None] | None,
                       failed: Callable[[BaseException], None] | None) -> None:
            def later() -> None:
                try:
                    result = work()
                except Exception as e:
                    if failed is not None:
                        failed(e)
                    return
                if done is not None:
                    done(result)
            self.off.append(later)

        def show() -> None:
            self.shown += 1

        def check_safety() -> None:
            self.safety_checks += 1

        return Desk(
            activity=lambda: self.activity,
            start_run=start_run,
            settings=Settings,
            automations=lambda: self.automations,
            reload=lambda: None,
            folder=folder,
            off_thread=off_thread,
            ask_values=lambda a, missing, answered: self.asked.append((a.name, missing, answered)),
            tell=self.told.append,
            notify=lambda text: self.notified.append(text) is None,
            note=lambda name, text, tell: self.notes.append((name, text, tell)),
            soon=self.soon.append,
            server_problem=lambda: self.server_problem,
            show=show,
            expect_run=lambda name, task: self.expected.append((name, task)),
            check_safety=check_safety,
            stop=self.stopped.append,
            closed=lambda: self.closed,
            make_way=lambda pid, task, area: self.made_way.append((pid, task, area)) is None,
            run_over=self.over.append,
        )

    def drain(self) -> None:
        while self.off:
            self.off.pop(0)()

    def end_run(self, controller: Controller) -> None:
        self.activity = Activity.IDLE
        controller.run_ended()
        while self.soon:
            self.soon.pop(0)()


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def keyring(home: Home) -> Iterator[None]:
    from app.secrets import use_keyring_backend
    from tests.support.keyring_backend import FileBackend

    home.keyring.mkdir(mode=0o700, parents=True, exist_ok=True)
    before = use_keyring_backend(FileBackend(home.keyring))
    yield
    use_keyring_backend(before)


def _make(home: Home, *automations: Automation, at_login: bool = False
          ) -> tuple[Controller, FakeDesk]:
    fake = FakeDesk(list(automations))
    return Controller(fake.desk(home.config), at_login=at_login), fake


def _mail() -> Automation:
    return Automation.make("", name="mail", task="send the mail")


# -- admission ------------------------------------------------------------------------------


@pytest.mark.parametrize("source", list(RunSource))
def test_every_source_is_admitted_when_idle_and_refused_the_same_way_while_a_run_is_active(
        home: Home, source: RunSource) -> None:
    controller, desk = _make(home)
    assert controller.admit(source) is None and controller.admit(source, "mail") is None
    desk.activity = Activity.RUN
    refused = controller.admit(source, "mail")
    assert refused == busy(what_run(source, "mail")) and refused.kind is Refusal.BUSY
    assert refused.text == (f"A run is already active: {what_run(source, 'mail')} was not "
                            "started. Stop the run first.")
    desk.activity = Activity.CALIBRATION
    calibrating = controller.admit(source)
    assert calibrating is not None and calibrating.kind is Refusal.CALIBRATING
    assert calibrating.fix  # every refusal says what to do
    assert desk.told == [refused, calibrating]  # each told once
    assert admit(Activity.IDLE, "x") is None


def test_the_refusal_names_the_run_that_was_not_started() -> None:
    assert what_run(RunSource.HOTKEY, "mail") == "the automation “mail” (hotkey)"
    assert what_run(RunSource.TEST_RUN, "mail") == "the test run of “mail”"
    assert what_run(RunSource.TYPED) == what_run(RunSource.TRIGGER) == "the task"
    assert what_run(RunSource.DEMO) == "the demo"
    assert Activity.of(True, True) is Activity.RUN
    assert Activity.of(False, True) is Activity.CALIBRATION
    assert Activity.of(False, False) is Activity.IDLE


def test_only_the_person_s_own_starts_ask_for_values() -> None:
    assert {s for s in RunSource if s.asks} == {
        RunSource.TYPED, RunSource.TRAY, RunSource.TEST_RUN}
    assert {s for s in RunSource if s.scheduled} == {RunSource.SCHEDULE, RunSource.LOGIN}


@pytest.mark.parametrize("source", [s for s in RunSource if s is not RunSource.TEST_RUN])
def test_an_automation_runs_from_every_source_and_never_next_to_an_active_run(
        home: Home, source: RunSource) -> None:
    controller, desk = _make(home, _mail())
    assert controller.run_automation("MAIL", source) == Started()
    assert [r.task for r in desk.runs] == ["send the mail"]
    assert desk.runs[0].saved is not None and desk.runs[0].saved.name == "mail"
    assert controller.scheduled_run == ("mail" if source.scheduled else None)
    again = controller.run_automation("mail", source)
    assert again == busy(f"the automation “mail” ({source})")
    assert desk.told == [again]  # told once, where it was refused
    assert len(desk.runs) == 1


def test_a_typed_task_the_demo_and_a_test_run_are_refused_with_the_same_text(
        home: Home) -> None:
    controller, desk = _make(home, _mail())
    assert controller.start(Launch("one", RunSource.TYPED)) == Started()
    assert controller.start(Launch("two", RunSource.TYPED)) == busy("the task")
    assert controller.test_run(_mail()) == busy("the test run of “mail”")
    assert all(r.kind is Refusal.BUSY and r.text.startswith("A run is already active: ")
               and r.text.endswith(" was not started. Stop the run first.") for r in desk.told)
    assert [r.task for r in desk.runs] == ["one"]


def test_a_calibration_and_an_unready_server_refuse_a_run(home: Home) -> None:
    controller, desk = _make(home)
    desk.activity = Activity.CALIBRATION
    refused = controller.start(Launch("one", RunSource.TYPED))
    assert isinstance(refused, Refused) and refused.kind is Refusal.CALIBRATING
    desk.activity = Activity.IDLE
    desk.server_problem = "no model server answers"
    refused = controller.start(Launch("one", RunSource.TYPED))
    assert isinstance(refused, Refused) and refused.kind is Refusal.SERVER
    assert refused.text == "The model server is not ready: no model server answers"
    # Saved steps replay without the model: the server is needed only if the replay hands over.
    assert controller.start(Launch("one", RunSource.HOTKEY, replayable=True)) == Started()
    assert desk.told[-1] is refused and desk.runs[0].task == "one"


def test_a_test_run_confirms_every_step_and_replays_nothing(home: Home) -> None:
    controller, desk = _make(home)
    assert controller.test_run(_mail()) == Started()
    run = desk.runs[0]
    assert run.saved is None and str(run.settings.confirm) == "always"
    assert desk.expected == [("mail (test run)", "send the mail")] and desk.safety_checks == 1


# -- the automation start pipeline -----------------------------------------------------------


def test_an_automation_that_is_not_there_is_refused_with_its_reason(home: Home) -> None:
    controller, desk = _make(home, _mail())
    refused = controller.run_automation("nope", RunSource.HOTKEY)
    assert isinstance(refused, Refused) and refused.kind is Refusal.NOT_FOUND
    assert "nope" in refused.text and desk.told == [refused] and desk.runs == []
    assert isinstance(find([_mail()], "nope"), Refused)
    assert find([_mail()], "Mail") == _mail()


def test_a_missing_value_is_asked_from_the_tray_and_the_filled_task_runs(home: Home) -> None:
    controller, desk = _make(home, rename())
    assert controller.run_automation("rename", RunSource.TRAY) == Started(later=True)
    assert desk.runs == [] and [(n, m) for n, m, _ in desk.asked] == [("rename", ["new_name"])]
    desk.asked[0][2]({"new_name": "final.pdf"}, [])
    assert [r.task for r in desk.runs] == ["rename report.pdf to final.pdf"]
    assert desk.told == []


def test_a_cancelled_question_starts_nothing_and_says_nothing(home: Home) -> None:
    controller, desk = _make(home, rename())
    assert controller.test_run(rename()) == Started(later=True)
    # The front end calls ``answered`` only when the person pressed Run: a cancel is silence.
    assert len(desk.asked) == 1 and desk.runs == [] and desk.told == []


def test_an_answer_after_another_run_began_is_refused_as_busy(home: Home) -> None:
    controller, desk = _make(home, rename(), _mail())
    controller.run_automation("rename", RunSource.TRAY)
    assert controller.run_automation("mail", RunSource.HOTKEY) == Started()
    desk.asked[0][2]({"new_name": "final.pdf"}, [])
    assert desk.told == [busy("the automation “rename” (tray)")]
    assert [r.task for r in desk.runs] == ["send the mail"]


@pytest.mark.parametrize("source", [RunSource.HOTKEY, RunSource.SCHEDULE, RunSource.LOGIN,
                                    RunSource.TRIGGER])
def test_a_missing_value_is_refused_where_nobody_can_be_asked(
        home: Home, source: RunSource) -> None:
    controller, desk = _make(home, rename())
    refused = controller.run_automation("rename", source)
    assert isinstance(refused, Refused) and refused.kind is Refusal.MISSING_VALUES
    assert "needs a value for new_name" in refused.text
    assert f"a {source} uses only saved defaults" in refused.text
    assert desk.asked == [] and desk.runs == [] and desk.told == [refused]


def test_secrets_are_read_off_the_caller_s_thread_then_the_run_starts(
        home: Home, keyring: None) -> None:
    store_secret(sign_in(), "password", SECRET)
    controller, desk = _make(home, sign_in())
    assert controller.run_automation("sign in", RunSource.HOTKEY) == Started(later=True)
    assert desk.runs == [] and len(desk.off) == 1  # the keyring is read on the worker
    desk.drain()
    assert [r.task for r in desk.runs] == [f"sign in with {SECRET}"]
    filled = desk.runs[0].parameters
    assert filled is not None and SECRET in filled.secrets()
    # Shown masked, as in the log: the run itself gets the value.
    assert len(desk.expected) == 1 and SECRET not in desk.expected[0][1]
    assert desk.expected[0][0] == "sign in"


def test_a_run_that_began_while_the_keyring_was_read_wins(home: Home, keyring: None) -> None:
    store_secret(sign_in(), "password", SECRET)
    controller, desk = _make(home, sign_in(), _mail())
    controller.run_automation("sign in", RunSource.HOTKEY)
    assert controller.run_automation("mail", RunSource.TRAY) == Started()
    desk.drain()
    assert desk.told == [busy("the automation “sign in” (hotkey)")]
    assert [r.task for r in desk.runs] == ["send the mail"]


def test_a_secret_typed_in_the_question_is_kept_only_when_asked_to(
        home: Home, keyring: None) -> None:
    controller, desk = _make(home, sign_in())
    assert controller.run_automation("sign in", RunSource.TRAY) == Started(later=True)
    desk.drain()  # nothing in the keyring: asked
    assert [(n, m) for n, m, _ in desk.asked] == [("sign in", ["password"])]
    desk.asked[0][2]({"password": SECRET}, ["password"])
    desk.drain()
    assert [r.task for r in desk.runs] == [f"sign in with {SECRET}"]
    assert load_secret(sign_in(), "password") == SECRET


def test_fill_says_what_is_missing_and_refuses_a_bad_value() -> None:
    assert fill(rename()) == Missing(["new_name"], [])
    filled = fill(rename(), {"new_name": "x.pdf"})
    assert isinstance(filled, Filled) and filled.task == "rename report.pdf to x.pdf"
    bad = fill(sign_in(), {"password": SECRET})  # never a secret on a command line
    assert isinstance(bad, Refused) and bad.kind is Refusal.BAD_VALUE
    cli = missing_refused(sign_in(), Missing(["password"], ["password"]), RunSource.COMMAND_LINE)
    assert "stdin is not a terminal" in cli.text
    assert "holodesk automation set-secret \"sign in\" password" in cli.fix


# -- schedules --------------------------------------------------------------------------------


def test_a_due_schedule_runs_and_one_due_while_busy_is_skipped_never_queued(
        home: Home) -> None:
    controller, desk = _make(home, _mail(), rename().changed(name="report"))
    assert controller.run_scheduled("mail") == Started()
    assert desk.notified and "Scheduled run of “mail” started" in desk.notified[0]
    skipped = controller.run_scheduled("report")
    assert isinstance(skipped, Refused) and skipped.kind is Refusal.BUSY
    assert desk.notes == [("report", "The scheduled run of “report” was skipped: another run "
                                     "was active. Run it from the tray menu if it is still "
                                     "wanted.", True)]
    desk.end_run(controller)
    assert [r.task for r in desk.runs] == ["send the mail"]  # the skipped one never ran
    assert controller.scheduled_run is None


def test_a_due_schedule_that_cannot_start_is_noted_with_its_reason(home: Home) -> None:
    controller, desk = _make(home, rename())
    refused = controller.run_scheduled("rename")
    assert isinstance(refused, Refused) and desk.told == [refused]
    assert desk.notes == [("rename", f"The scheduled run of “rename” did not start: "
                                     f"{refused.text}", False)]
    controller.missed("rename", "missed at 09:00")
    assert desk.notes[-1] == ("rename", "missed at 09:00", True)
    desk.closed = True
    assert controller.run_scheduled("rename") is None


def test_the_login_queue_runs_one_after_another_once_the_server_is_ready(home: Home) -> None:
    mail, news, bad = _mail(), _mail().changed(name="news"), rename()
    controller, desk = _make(home, mail, news, bad, at_login=True)
    controller.server_ready(lambda: ["mail", "rename", "news"])
    assert [r.task for r in desk.runs] == ["send the mail"]
    assert controller.login_queue == ["rename", "news"]
    controller.server_ready(lambda: ["mail"])  # once per start
    desk.end_run(controller)
    # "rename" cannot start (a value is missing, nobody to ask): it does not hold up "news".
    assert [r.task for r in desk.runs] == ["send the mail", "send the mail"]
    assert desk.runs[1].saved is not None and desk.runs[1].saved.name == "news"
    assert desk.told and "run at login uses only saved defaults" in desk.told[0].text
    assert controller.login_queue == []


def test_the_login_queue_waits_only_so_long_for_the_server(home: Home) -> None:
    controller, desk = _make(home, _mail(), at_login=True)
    controller.login_wait_over(lambda: ["mail"], 10)
    assert desk.notes == [("mail", "The automation “mail” scheduled at login was not run: the "
                                   "model server was not ready within 10 minutes of login. Run "
                                   "it from the tray menu once it is.", True)]
    controller.server_ready(lambda: ["mail"])
    assert desk.runs == []
    started_by_hand, desk2 = _make(home, _mail())
    started_by_hand.server_ready(lambda: ["mail"])
    assert desk2.runs == []  # not started at login: no login runs


# -- other launches -----------------------------------------------------------------------


def test_the_protocol_answers_good_messages(home: Home) -> None:
    controller, desk = _make(home, _mail())
    assert controller.handle({"cmd": "ping"}) == {"ok": True}
    assert controller.handle({"cmd": "show"}) == {"ok": True} and desk.shown == 1
    assert controller.handle({"cmd": "run", "task": "  tidy up "}) == {"ok": True}
    assert desk.runs[-1].task == "tidy up"
    assert controller.handle({"cmd": "stop"}) == {"ok": True}
    assert desk.stopped == ["holodesk trigger stop"]
    desk.end_run(controller)
    assert controller.handle({"cmd": "automation", "name": "MAIL"}) == {"ok": True}


def test_the_protocol_says_busy_while_a_run_is_active(home: Home) -> None:
    controller, desk = _make(home, _mail())
    desk.activity = Activity.RUN
    reply = controller.handle({"cmd": "automation", "name": "mail"})
    assert reply == {"ok": False, "busy": True,
                     "error": busy("the automation “mail” (trigger)").text}
    reply = controller.handle({"cmd": "run", "task": "x"})
    assert reply == {"ok": False, "busy": True, "error": busy("the task").text}
    assert len(desk.told) == 2  # the person is told too


def test_a_run_in_a_terminal_asks_the_app_to_make_way(home: Home) -> None:
    """`holodesk run` beside the app: where it works reaches the front end, as it said it."""
    controller, desk = _make(home)
    area = WorkArea(Rect(0, 0, 1366, 768), (Rect(300, 100, 700, 500),), (Point(400, 300),),
                    3, 'click "Save"')
    message = {"cmd": "make_way", "pid": 4242, "peer": 4242, "task": "tidy up",
               **area_message(area)}
    assert controller.handle(message) == {"ok": True, "changed": True}
    assert desk.made_way == [(4242, "tidy up", area)]
    assert controller.handle({"cmd": "run_over", "pid": 4242, "peer": 4242}) == {"ok": True}
    assert desk.over == [4242]
    assert desk.runs == []  # no run of the app's own


@pytest.mark.parametrize(("message", "error"), [
    ({"cmd": "make_way", "pid": 7, "peer": 8, "capture": [0, 0, 10, 10]},
     "process 8 spoke for process 7"),
    ({"cmd": "run_over", "pid": 7, "peer": 9}, "process 9 spoke for process 7"),
    ({"cmd": "make_way", "capture": [0, 0, 10, 10]}, "malformed message: no process named"),
    ({"cmd": "make_way", "pid": True, "capture": [0, 0, 10, 10]},
     "malformed message: no process named"),
    ({"cmd": "make_way", "pid": 7}, "malformed message: no work area"),
    ({"cmd": "make_way", "pid": 7, "capture": [0, 0, 0, 10]}, "malformed message: no work area"),
    ({"cmd": "make_way", "pid": 7, "capture": [0, 0, 10, 10], "points": [[1.5, 2]]},
     "malformed message: no work area"),
    ({"cmd": "make_way", "pid": 7, "capture": [0, 0, 10, 10], "windows": [[0, 0, 1]]},
     "malformed message: no work area"),
    ({"cmd": "make_way", "pid": 7, "capture": [0, 0, 10, 10], "windows": [[0, 0, 1, 1]] * 9},
     "malformed message: no work area"),
    ({"cmd": "make_way", "pid": 7, "capture": [0, 0, 10, 10], "step": "3"},
     "malformed message: no work area"),
])
def test_a_make_way_message_from_another_process_or_malformed_is_refused(
        home: Home, message: Any, error: str) -> None:
    controller, desk = _make(home)
    reply = controller.handle(message)
    assert reply == {"ok": False, "error": error}
    assert desk.made_way == [] and desk.over == []


@pytest.mark.parametrize(("message", "error"), [
    ({"cmd": "dance"}, "unknown command 'dance'"),
    ({}, "unknown command None"),
    ({"cmd": "run"}, "no task given"),
    ({"cmd": "run", "task": "   "}, "no task given"),
    ({"cmd": "run", "task": 3}, "malformed message: task and name are text"),
    (["run"], "malformed message: list, not an object"),
    ("run", "malformed message: str, not an object"),
    ({"cmd": "automation", "name": "nope"}, None),
])
def test_the_protocol_refuses_unknown_and_malformed_messages(
        home: Home, message: Any, error: str | None) -> None:
    controller, desk = _make(home, _mail())
    reply = controller.handle(message)
    assert reply["ok"] is False and "busy" not in reply
    if error is not None:
        assert reply["error"] == error
    else:
        assert "nope" in reply["error"]
    assert desk.runs == [] and desk.told == []  # said to the one who asked, not in the app
