"""The desktop's run controller, without Qt: whether a run may start, the automation start
pipeline, the schedule and login queues and the protocol of later launches (``holodesk
trigger``, a second ``holodesk``).

The front end (ui/app.py) hands it a :class:`Desk`: a few callables for what only the front end
can do (start the run on its worker, ask for a missing value, tell the person, run something
off its event loop). Every request ends as a value (:class:`~app.admission.Started` or
:class:`~app.admission.Refused`); a refusal is told to the person once, where it happens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from app.admission import (
    Activity,
    Outcome,
    Refusal,
    Refused,
    RunSource,
    Started,
    admit,
    busy,
    what_run,
)
from app.approval import read_record, record_path
from app.automations import (
    Automation,
    AutomationError,
    find_automation,
    narrow_only_in,
)
from app.ipc import Command, Message, reply_error, reply_ok
from app.parameter_values import Ask, MissingValues, resolve, store_secret, stored_secrets
from app.parameters import Filled
from app.run_request import AutomationMode, RunRequest, make_run_request
from app.secrets import redact
from app.settings import RunValues, Settings
from app.way import WorkArea
from control.policy import ConfirmMode

log = logging.getLogger(__name__)

T = TypeVar("T")


class OffThread(Protocol):
    """Runs ``work`` off the caller's thread, then ``done`` or ``failed`` back on it."""

    def __call__(self, work: Callable[[], T], done: Callable[[T], None] | None,
                 failed: Callable[[BaseException], None] | None) -> None: ...


#: Asks the person for the values ``missing`` of ``automation``; calls ``answered(typed,
#: kept)`` with what they typed and the names they chose to keep in the keyring, never when
#: they cancel.
AskValues = Callable[[Automation, list[str], Callable[[dict[str, str], list[str]], None]], None]

#: Starts the run on the front end's worker, its request made there as it starts (the
#: settings read afresh); False when a run is active.
StartRun = Callable[[Callable[[], RunRequest]], bool]


@dataclass
class Desk:
    """What the controller needs of the front end that shows it."""

    activity: Callable[[], Activity]
    start_run: StartRun
    settings: Callable[[], Settings]
    automations: Callable[[], list[Automation]]
    #: Reads the automations file again (a change saved just before a trigger counts).
    reload: Callable[[], None]
    #: The folder of the automations file (its approvals record sits next to it).
    folder: Path
    off_thread: OffThread
    ask_values: AskValues
    #: Tells the person about a refusal.
    tell: Callable[[Refused], None]
    #: A notification only (no window raised); False when the desktop has none.
    notify: Callable[[str], bool]
    #: A line about an automation's schedule (a run skipped or missed); ``tell``: also a
    #: notification.
    note: Callable[[str, str, bool], None]
    #: Calls a function soon on the front end's own thread (after the current event).
    soon: Callable[[Callable[[], None]], None]
    #: Why the model server cannot take a run now; "" when it can or is not known yet.
    server_problem: Callable[[], str] = lambda: ""
    #: Reads the settings afresh for a run (judged); None: ``settings()`` for every run.
    load: Callable[[], Settings] | None = None
    #: The settings read for a run (on the run's worker): the front end's from then on.
    settings_read: Callable[[Settings], None] = lambda _settings: None
    #: Before a run that passed admission starts: the front end shows it (its task, secrets
    #: masked) under its name.
    expect_run: Callable[[str, str], None] = lambda _name, _task: None
    #: Before a run that passed admission starts: look for safety settings changed outside
    #: holodesk (the run uses the approved values meanwhile: the question never holds it up).
    check_safety: Callable[[], None] = lambda: None
    #: A second launch: show the windows; a trigger's stop: stop the run and a calibration.
    show: Callable[[], None] = lambda: None
    stop: Callable[[str], None] = lambda _reason: None
    closed: Callable[[], bool] = lambda: False
    #: A run in a terminal (its pid, its task as shown) asks the front end to take its windows
    #: out of where it works (app/way.py); whether anything changed on the screen.
    make_way: Callable[[int, str, WorkArea], bool] = lambda _pid, _task, _area: False
    #: That run (its pid) ended: the front end's windows come back.
    run_over: Callable[[int], None] = lambda _pid: None


@dataclass(frozen=True)
class Launch:
    """A run about to start: the task, its choices and whose it is."""

    task: str
    source: RunSource
    #: The person's choices for this run (None, "": the settings', or the automation's).
    confirm: ConfirmMode | None = None
    monitor: str = ""
    parameters: Filled | None = None
    #: The automation's name ("" for a typed task).
    automation: str = ""
    #: The automation run, as ``mode`` says (its saved steps replay first, or a test run).
    saved: Automation | None = None
    mode: AutomationMode = AutomationMode.RUN
    #: Saved steps replay without the model: the server is needed only if the replay hands
    #: over (said then as for any run).
    replayable: bool = False

    @property
    def title(self) -> str:
        """The name the run is shown under ("" for a typed task)."""
        if self.source is RunSource.TEST_RUN:
            return f"{self.automation} (test run)"
        return self.automation


@dataclass
class Missing:
    """Values an automation still needs (their names; the secret ones among them)."""

    names: list[str]
    secret: list[str] = field(default_factory=list)


def find(automations: Sequence[Automation], name: str) -> Automation | Refused:
    """The automation called ``name``, or why there is none."""
    try:
        return find_automation(list(automations), name)
    except AutomationError as e:
        return Refused(Refusal.NOT_FOUND, str(e))


def fill(automation: Automation, given: Mapping[str, str] | None = None, *,
         secrets: Mapping[str, str] | None = None, ask: Ask | None = None,
         ask_all: bool = False) -> Filled | Missing | Refused:
    """The task of ``automation`` filled (app/parameter_values.py resolve), the values it still
    needs, or why it cannot run (a bad value)."""
    try:
        return resolve(automation, given, secrets=secrets, ask=ask, ask_all=ask_all)
    except MissingValues as e:
        return Missing(list(e.names), list(e.secret))
    except AutomationError as e:
        return Refused(Refusal.BAD_VALUE, str(e))


def missing_refused(automation: Automation, missing: Missing, source: RunSource) -> Refused:
    """A run that nobody can be asked for ``missing`` values: how to give them."""
    needs = ", ".join(missing.names)
    if source is RunSource.COMMAND_LINE:
        plain = [n for n in missing.names if n not in missing.secret]
        quoted = f'"{automation.name}"' if " " in automation.name else automation.name
        how = []
        if plain:
            how.append("give " + " ".join(f"--set {n}=VALUE" for n in plain))
        how += [f"store {n} with `holodesk automation set-secret {quoted} {n}`"
                for n in missing.secret]
        return Refused(Refusal.MISSING_VALUES,
                       f"{automation.name!r} needs a value for {needs} and none can be asked "
                       "here (stdin is not a terminal):", "; ".join(how))
    return Refused(Refusal.MISSING_VALUES,
                   f"“{automation.name}” was not started: it needs a value for {needs}, and a "
                   f"{source} uses only saved defaults and the keyring.",
                   "Run it from the tray menu or the Automations window, which ask for it, or "
                   "give it a default in the Automations window.")


class Controller:
    """Admits, starts and queues the desktop's runs (see the module's docstring)."""

    def __init__(self, desk: Desk, *, at_login: bool = False) -> None:
        self.desk = desk
        #: The automation's name while a scheduled run is active.
        self.scheduled_run: str | None = None
        self._login_pending = at_login
        self._login_queue: list[str] = []  # "at login" automations still to run

    # -- admission and the start of a run ------------------------------------------------

    def refuse(self, refused: Refused) -> Refused:
        """Tell the person once (the front end logs it too), and hand the refusal back."""
        self.desk.tell(refused)
        return refused

    def admit(self, source: RunSource, automation: str = "") -> Refused | None:
        """Why a run from ``source`` (of the ``automation`` named) may not start now, told;
        None when it may."""
        refused = admit(self.desk.activity(), what_run(source, automation))
        return self.refuse(refused) if refused is not None else None

    def start(self, launch: Launch) -> Outcome:
        """Start the run ``launch`` now, or say why not."""
        refused = self.admit(launch.source, launch.automation)
        if refused is not None:
            return refused
        self.desk.check_safety()
        # From here on the front end shows this run, or why it did not start, under its name.
        # A secret parameter's value is in the filled task: shown masked, as in the log.
        filled = launch.parameters
        self.desk.expect_run(launch.title,
                             redact(launch.task, filled.secrets()) if filled else launch.task)
        problem = self.desk.server_problem()
        if problem and not launch.replayable:
            return self.refuse(Refused(Refusal.SERVER,
                                       f"The model server is not ready: {problem}"))
        name = launch.title or launch.task
        saved = launch.saved
        try:
            # An automation's limits only narrow the settings' (an imported one too). Said now
            # when they cannot; the run's own are made afresh as it starts (_prepare).
            if saved is not None and saved.only_in:
                narrow_only_in(self.desk.settings(), saved.only_in, name)
        except AutomationError as e:
            return self.refuse(Refused(Refusal.LIMITS, str(e)))
        prepare = self._prepare(launch)
        if not self.desk.start_run(prepare):
            # A run began meanwhile (the front end's worker is the last word).
            return self.refuse(busy(what_run(launch.source, launch.automation)))
        if launch.source.scheduled and launch.saved is not None:
            self.scheduled_run = launch.saved.name
        return Started()

    def _prepare(self, launch: Launch) -> Callable[[], RunRequest]:
        """What makes a run's request (app/run_request.py), on its worker as it starts: the
        settings read afresh and judged (a stricter value set with `config set` while the app
        runs applies, one written by another program does not), then the run's own values. A
        saved automation gets what the person approved for it (the approved mode is the
        floor, its approved applications), and does not run while what it does is changed
        outside holodesk and not approved."""
        load, current = self.desk.load, self.desk.settings()
        folder, settings_read = self.desk.folder, self.desk.settings_read
        choices = RunValues(confirm=launch.confirm, monitor=launch.monitor or None)

        def prepare() -> RunRequest:
            fresh = load() if load is not None else current
            if load is not None:
                settings_read(fresh)  # the front end's (stop hotkey, windows) from now on
            approvals = read_record(record_path(folder)) if launch.saved is not None else None
            return make_run_request(fresh, launch.task, choices, automation=launch.saved,
                                    mode=launch.mode, parameters=launch.parameters,
                                    approvals=approvals)

        return prepare

    # -- the automation start pipeline ---------------------------------------------------

    def run_automation(self, name: str, source: RunSource) -> Outcome:
        """Run the saved automation ``name``: never a second run next to an active one."""
        found = find(self.desk.automations(), name)
        if isinstance(found, Refused):
            return self.refuse(found)
        refused = self.admit(source, found.name)
        if refused is not None:
            return refused
        log.info("running automation %r (%s)", found.name, source)
        return self.start_automation(found, source)

    def test_run(self, automation: Automation) -> Outcome:
        """Run ``automation`` now with every step confirmed (the Automations window's Test
        run): watched step by step, it neither replays saved steps nor saves its own."""
        refused = self.admit(RunSource.TEST_RUN, automation.name)
        return refused or self.start_automation(automation, RunSource.TEST_RUN)

    def start_automation(self, automation: Automation, source: RunSource) -> Outcome:
        """Fill the automation's parameters and start it. Secret values are read from the
        keyring off the front end's thread (it may wait on the desktop's keyring), so a run
        with them starts a moment later (``Started(later=True)``: a later refusal is told). A
        missing value is asked when the person started it (the tray, the Automations window);
        a hotkey, a schedule or a trigger asks nothing and refuses, saying how to give it."""
        # What the person approved for it (its mode as the floor, its applications, whether
        # it may run at all) is read as its run starts, on the run's worker (_prepare).
        if not automation.secret_parameters():
            return self._fill_and_start(automation, source, {})
        try:  # refused at once when it may act nowhere, not after the look-up
            if automation.only_in:
                narrow_only_in(self.desk.settings(), automation.only_in, automation.name)
        except AutomationError as e:
            return self.refuse(Refused(Refusal.LIMITS, str(e)))

        def read() -> dict[str, str]:
            return stored_secrets(automation)

        def failed(e: BaseException) -> None:
            self.refuse(Refused(Refusal.KEYRING, f"“{automation.name}” was not started: {e}"))

        self.desk.off_thread(read, lambda found: self._read_secrets(automation, source, found),
                             failed)
        return Started(later=True)

    def _read_secrets(self, automation: Automation, source: RunSource,
                      secrets: dict[str, str]) -> None:
        if self.admit(source, automation.name) is None:
            self._fill_and_start(automation, source, secrets)

    def _fill_and_start(self, automation: Automation, source: RunSource,
                        secrets: dict[str, str], given: dict[str, str] | None = None) -> Outcome:
        filled = fill(automation, given, secrets=secrets)
        if isinstance(filled, Refused):
            return self.refuse(Refused(filled.kind, f"“{automation.name}” was not started: "
                                                    f"{filled.message}", filled.fix))
        if isinstance(filled, Missing):
            if not source.asks:
                return self.refuse(missing_refused(automation, filled, source))
            self._ask(automation, source, secrets, filled.names)
            return Started(later=True)
        # A test run is watched step by step and proves the task as it stands: every step
        # confirmed, it neither replays saved steps nor saves its own (AutomationMode.TEST).
        mode = AutomationMode.TEST if source is RunSource.TEST_RUN else AutomationMode.RUN
        return self.start(Launch(
            filled.task, source, parameters=filled, automation=automation.name,
            saved=automation, mode=mode,
            replayable=mode is AutomationMode.RUN and _has_steps(automation)))

    def _ask(self, automation: Automation, source: RunSource, secrets: dict[str, str],
             missing: list[str]) -> None:
        def answered(typed: dict[str, str], kept: list[str]) -> None:
            secret = set(automation.secret_parameters())
            known = {**secrets, **{k: v for k, v in typed.items() if k in secret}}
            plain = {k: v for k, v in typed.items() if k not in secret}
            keep = {name: typed[name] for name in kept}
            if keep:
                self.desk.off_thread(
                    lambda: _keep_secrets(automation, keep), None,
                    lambda e: self.desk.tell(Refused(
                        Refusal.KEYRING, f"The value was used but not kept: {e}")))
            if self.admit(source, automation.name) is None:
                self._fill_and_start(automation, source, known, plain)

        self.desk.ask_values(automation, missing, answered)

    # -- schedules -----------------------------------------------------------------------

    def run_scheduled(self, name: str, source: RunSource = RunSource.SCHEDULE) -> Outcome | None:
        """A schedule is due: run it as the hotkey would, and tell the person (None: the
        front end is closing).

        A run already active (or a calibration, a demo starting) is never interrupted and
        the due run is not queued either: it would start at some later moment the person did
        not choose. It is reported as skipped instead.
        """
        if self.desk.closed():
            return None
        if self.desk.activity() is not Activity.IDLE:
            refused = Refused(Refusal.BUSY, f"The scheduled run of “{name}” was skipped: another "
                                            "run was active.",
                              "Run it from the tray menu if it is still wanted.")
            self.desk.note(name, refused.text, True)
            return refused
        outcome = self.run_automation(name, source)
        if isinstance(outcome, Started):
            self.desk.notify(f"Scheduled run of “{name}” started. Stop it from the tray menu, "
                             "the Stop button or the stop hotkey.")
        else:  # told already: only the line in the Automations window
            self.desk.note(name, f"The scheduled run of “{name}” did not start: {outcome.text}",
                           False)
        return outcome

    def missed(self, name: str, text: str) -> None:
        """A scheduled run that was missed (the app was not running, the computer slept)."""
        if not self.desk.closed():
            self.desk.note(name, text, True)

    def run_ended(self) -> None:
        """The active run is over: the next "at login" automation may start (soon: after the
        end has been shown)."""
        self.scheduled_run = None
        if self._login_queue:
            self.desk.soon(self.next_login_run)

    def server_ready(self, at_login: Callable[[], list[str]]) -> None:
        """The model server is ready: the "at login" automations run now, once per start at
        login, one after another (each starts when the one before has ended), in the file's
        order. ``at_login``: their names."""
        if not self._login_pending or self.desk.closed():
            return
        self._login_pending = False
        self._login_queue = at_login()
        self.next_login_run()

    def next_login_run(self) -> None:
        # One that cannot start (reported) does not hold up the ones after it.
        while (self._login_queue and not self.desk.closed()
               and self.desk.activity() is Activity.IDLE):
            self.run_scheduled(self._login_queue.pop(0), RunSource.LOGIN)

    @property
    def login_queue(self) -> list[str]:
        """The "at login" automations still to run, next first."""
        return list(self._login_queue)

    def login_wait_over(self, at_login: Callable[[], list[str]], minutes: int) -> None:
        """The model server was not ready within ``minutes`` of login: the "at login"
        automations are reported as not run (a run an hour after login is a surprise)."""
        if not self._login_pending or self.desk.closed():
            return
        self._login_pending = False
        for name in at_login():
            self.desk.note(name, f"The automation “{name}” scheduled at login was not run: the "
                                 f"model server was not ready within {minutes} minutes of "
                                 "login. Run it from the tray menu once it is.", True)

    # -- other launches (app/ipc.py) -----------------------------------------------------

    def handle(self, raw: Any) -> dict[str, Any]:
        """Answer a later launch or ``holodesk trigger``: a message in, a reply out."""
        message = Message.parse(raw)
        if isinstance(message, Refused):
            return reply_error(message)
        if message.cmd is Command.PING:
            return reply_ok()
        if message.cmd is Command.SHOW:
            # A second launch: everything the person may have closed comes back.
            self.desk.show()
            return reply_ok()
        if message.cmd is Command.STOP:
            self.desk.stop("holodesk trigger stop")
            return reply_ok()
        if message.cmd is Command.MAKE_WAY and message.area is not None:
            return {**reply_ok(), "changed": self.desk.make_way(message.pid, message.task,
                                                                message.area)}
        if message.cmd is Command.RUN_OVER:
            self.desk.run_over(message.pid)
            return reply_ok()
        if message.cmd is Command.RUN:
            if not message.task:
                return reply_error(Refused(Refusal.NO_TASK, "no task given"))
            outcome = self.start(Launch(message.task, RunSource.TRIGGER))
            return reply_ok() if isinstance(outcome, Started) else reply_error(outcome)
        self.desk.reload()  # a change saved just before the trigger counts
        found = find(self.desk.automations(), message.name)
        if isinstance(found, Refused):  # said to the one who asked, not in the app
            return reply_error(found)
        outcome = self.run_automation(found.name, RunSource.TRIGGER)
        return reply_ok() if isinstance(outcome, Started) else reply_error(outcome)


def _keep_secrets(automation: Automation, values: dict[str, str]) -> None:
    for name, value in values.items():
        store_secret(automation, name, value)


def _has_steps(automation: Automation) -> bool:
    from app.trajectory import has_trajectory

    return has_trajectory(automation.key)
