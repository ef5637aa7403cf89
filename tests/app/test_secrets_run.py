"""One run's secrets (model/run_secrets.py ``RunSecrets``) are masked by every surface that takes
them, in every form a secret is written in: as typed, JSON-escaped (ASCII-only and not) and
URL-encoded (``%20`` and ``+``).

The surfaces: the action log's rows, the prompt sent to the model (a stand-in server), what the
front ends are shown (the step, the confirmation's reasons, the answer), ``holodesk.log``, an
exported run, a shared automation's bundle, a problem report, and the safety policy (its
verdict's reasons, and its "types a secret parameter's value" check reading the same object
the session adds the parameters to). Each test gives its surface the object and would fail if
the surface stopped taking it. The secret is new in every test: the log file's mask lives as
long as the process, so one test's secret must not be masked by another's.

FORMS is spelled out here rather than taken from ``forms_of``: a form dropped there must fail
here.
"""

from __future__ import annotations

import json
import logging
import uuid
import zipfile
from dataclasses import fields
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from app.automations import Automation
from app.cli.render import fix_line
from app.events import Answer, AwaitingConfirmation, ConfirmReply, Outcome, StepProposed
from app.export import export_run
from app.logs import watch
from app.parameter_values import resolve, store_secret
from app.report import collect_report
from app.secrets import RedactingFilter
from app.session import Session
from app.settings import Settings
from app.share import ExportPlan, ShareError, export_automation
from app.store import ActionLog, StepRecord
from control.policy import ConfirmMode, SafetyPolicy
from model.run_secrets import RunSecrets
from model.schema import Click, Type
from tests.support.agent_harness import HarnessFor
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy, ScriptItem
from tests.support.home import isolate_home
from tests.support.leaks import holodesk_log, strings
from tests.support.memory_secrets import MemoryStore
from tests.support.saved_steps import saved_steps


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def _secret() -> str:
    """A secret whose every form differs: a quote and a backslash (JSON escapes them), a
    non-ASCII letter (escaped only with ensure_ascii), a space and a slash (URL-encoded)."""
    return f'Pa"ss w\\\u00f6rd/{uuid.uuid4().hex[:8]}'


def _forms(secret: str) -> list[str]:
    return [secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
            quote(secret, safe=""), quote_plus(secret, safe="")]


def _leaks(texts: list[str], secret: str) -> list[tuple[str, str]]:
    """Every form found in ``texts``; also as the policy quotes a name (``"`` made ``'``)."""
    forms = {*_forms(secret), *(f.replace('"', "'") for f in _forms(secret))}
    return [(form, text) for text in texts for form in forms if form in text]


def test_the_forms_are_all_different() -> None:
    # Else a test below would not tell a form's mask missing from another's.
    assert len(set(_forms(_secret()))) == 5


def _login() -> Automation:
    return Automation.make("", name="log in", task="log in with {password}",
                           parameters={"password": {"secret": True}})


def _script(secret: str) -> list[ScriptItem]:
    """Type the secret parameter's value, then quote it in every form: in a thought and a
    note, in the name of an element a risky click asks about, and in the answer."""
    every = " | ".join(_forms(secret))
    return [
        {"note": f"the password: {every}", "thought": f"Type {every}.",
         "action": {"action": "type", "text": secret, "press_enter": False,
                    "clear_first": False}},
        {"note": "", "thought": f"I typed {every}; now delete the draft.",
         "action": {"action": "click", "element": f"Delete {every}", "x": 100, "y": 100}},
        {"note": "", "thought": "Signed in.",
         "action": {"action": "answer", "text": f"signed in with {every}"}},
    ]


def test_a_run_masks_its_secret_parameter_in_every_form_everywhere(
        harness_for: HarnessFor, tmp_path: Path) -> None:
    secret = _secret()
    automation, keyring = _login(), MemoryStore()
    store_secret(automation, "password", secret, keyring)
    filled = resolve(automation, {}, store=keyring)
    log_path = tmp_path / "holodesk.log"
    with FakeVLLM(ScriptedPolicy(_script(secret))) as server, holodesk_log(log_path):
        h = harness_for(server, mode=ConfirmMode.RISKY,
                        answer=lambda _e: ConfirmReply(Answer.APPROVE))
        # The parameters are part of the session from its construction (app/session.py).
        session = Session(task=automation.task, settings=Settings(), dry_run=True,
                          parts=h.parts, parameters=filled)
        # A line written before the run typed anything: the log file masks the parameter.
        logging.getLogger("holodesk.test").warning("about to log in: %s", _forms(secret))
        finished = h.run(session.task)
        requests = server.requests
    assert finished.outcome is Outcome.ANSWERED, finished
    assert h.backend.typed() == secret  # typed in full: only what is written is masked

    # The action log's rows: the run and every field of every step.
    run = h.store.get_run(finished.run_id)
    stored = [str(getattr(run, f.name)) for f in fields(run)]
    stored += [str(getattr(s, f.name)) for s in h.store.steps(run.id) for f in fields(s)]
    assert not _leaks(stored, secret)
    assert any("Type *** | *** | *** | *** | ***." in text for text in stored)

    # What the front ends are shown: each step, the confirmation's reasons, the answer.
    shown = [p.step.thought + p.step.note + p.raw + p.description for p in h.of(StepProposed)]
    asked = [r for e in h.of(AwaitingConfirmation) for r in e.request.reasons]
    assert any("Delete ***" in r for r in asked), asked
    assert not _leaks([*shown, *asked, finished.answer], secret)

    # holodesk.log.
    log = log_path.read_text(encoding="utf-8")
    assert "about to log in" in log
    assert not _leaks([log], secret)

    # The prompt: the task the model is sent holds the value (it must type it); nothing else
    # of any request does, in any form.
    assert len(requests) == 3
    for request in requests:
        texts = [text.replace(filled.task, "") for text in strings(request.body)]
        assert not _leaks(texts, secret)


def test_the_policy_judges_and_masks_with_the_runs_secrets() -> None:
    secret = _secret()
    secrets = RunSecrets()
    policy = SafetyPolicy(ConfirmMode.RISKY, secrets=secrets)
    typing = Type(text=secret, press_enter=False, clear_first=False)
    assert not policy.assess(typing).secret  # not known yet, and it looks like no password
    # The session adds the parameters to the run's object: the policy reads the same one.
    secrets.add_parameters([secret])
    verdict = policy.assess(typing)
    assert verdict.secret and "types the value of a secret parameter" in verdict.reasons
    # Its reasons quote what the person is asked about (an element's name): masked.
    click = policy.assess(Click(element=f"Delete {' '.join(_forms(secret))}", x=1, y=1))
    assert click.confirm and any("Delete ***" in r for r in click.reasons), click.reasons
    assert not _leaks(list(click.reasons), secret)


def test_the_log_file_masks_a_watched_runs_secrets_learned_later(tmp_path: Path) -> None:
    secret = _secret()
    secrets = RunSecrets()
    log_path = tmp_path / "holodesk.log"
    with holodesk_log(log_path):
        watch(secrets)
        secrets.add_typed(secret)  # learned after the log took the object
        logging.getLogger("holodesk.test").warning("typed %s", " | ".join(_forms(secret)))
    log = log_path.read_text(encoding="utf-8")
    assert "typed ***" in log
    assert not _leaks([log], secret)


def test_a_settled_runs_secrets_stay_masked_and_it_is_followed_no_more() -> None:
    # A run over is settled (Session.close): its secrets stay masked as plain ones, and the
    # filter stops following it, so a long-lived app does not go through every past run's
    # object on each log line.
    secret, later = _secret(), _secret()
    secrets = RunSecrets()
    redactor = RedactingFilter()
    redactor.watch(secrets)
    secrets.add_typed(secret)
    redactor.settle(secrets)
    secrets.add_typed(later)  # the object changes no more once its run is over; if it did,
    record = logging.LogRecord("holodesk.test", logging.WARNING, __file__, 1,
                               "typed %s then %s", (" | ".join(_forms(secret)), later), None)
    redactor.filter(record)
    said = record.getMessage()
    assert not _leaks([said], secret)
    assert later in said  # ... the settled run is no longer followed
    redactor.settle(secrets)  # twice, or a run never watched: nothing changes
    redactor.settle(RunSecrets(typed=[later]))
    assert later not in redactor.secrets()


def _unmasked_run(tmp_path: Path, secret: str) -> tuple[Path, str]:
    """A run written before its secret was known (a log opened without it): every form in
    clear in its rows, for the export and the report to mask."""
    every = " | ".join(_forms(secret))
    db = tmp_path / "log.db"
    with ActionLog.open(db) as log:
        run = log.start_run(f"open {every}", "http://127.0.0.1:8000/v1", "m", {})
        log.add_step(StepRecord(run.id, 1, run.started_at, run.started_at + 1,
                                thought=f"quoting {every}", raw_output=json.dumps(every)))
        log.finish_run(run.id, "answered", f"done with {every}")
    return db, run.id


def test_an_export_masks_the_secrets_it_is_given(tmp_path: Path) -> None:
    secret = _secret()
    db, run_id = _unmasked_run(tmp_path, secret)
    with ActionLog.open(db) as log:
        folder = export_run(log, run_id, tmp_path / "out",
                            secrets=RunSecrets(parameters=[secret]))
    texts = [p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file()]
    assert texts and any("quoting ***" in t for t in texts)
    assert not _leaks(texts, secret)


def test_a_report_masks_the_secrets_it_is_given(tmp_path: Path) -> None:
    secret = _secret()
    db, _run_id = _unmasked_run(tmp_path, secret)
    log_path = tmp_path / "holodesk.log"
    log_path.write_text(f"a line from before: {' | '.join(_forms(secret))}\n", encoding="utf-8")
    report = collect_report(Settings(), say=fix_line, doctor=lambda _s: [], db_path=db,
                            log_path=log_path, store=MemoryStore(), environ={},
                            secrets=RunSecrets(typed=[secret]))
    assert "a line from before: ***" in report.part("log.txt").text
    assert "quoting ***" in report.part("last-run.txt").text
    assert not _leaks([p.text for p in report.parts], secret)


# The raw value is in the bundle JSON-escaped (the trajectory is JSON), the URL-encoded ones
# as they are.
@pytest.mark.parametrize("form", [0, 3, 4])
def test_a_shared_bundle_holding_a_runs_secret_in_any_form_is_refused(
        tmp_path: Path, form: int) -> None:
    secret = _secret()
    automation = Automation.make("", name="search", task="search the wiki")
    trajectory, pictures = saved_steps(automation.task)
    held = trajectory.model_copy(update={"task": f"search for {_forms(secret)[form]}"})
    plan = ExportPlan(automation, held, pictures)
    dest = tmp_path / "search.holodesk"
    with pytest.raises(ShareError, match="would contain a secret of this run"):
        export_automation(plan, dest, with_steps=True, store=MemoryStore(),
                          secrets=RunSecrets(typed=[secret]))
    assert not dest.exists()
    # Without the secret in it, the same bundle is written.
    export_automation(ExportPlan(automation, trajectory, pictures), dest, with_steps=True,
                      store=MemoryStore(), secrets=RunSecrets(typed=[secret]))
    with zipfile.ZipFile(dest) as zf:
        assert zf.namelist()


def test_a_session_whose_policy_does_not_share_the_runs_secrets_takes_no_parameters(
        harness_for: HarnessFor) -> None:
    # Its policy would not judge typing a secret parameter's value a secret.
    with FakeVLLM(ScriptedPolicy(_script("never sent"))) as server:
        h = harness_for(server)
    h.parts.policy = SafetyPolicy(ConfirmMode.NEVER, secrets=RunSecrets())
    automation, keyring = _login(), MemoryStore()
    store_secret(automation, "password", _secret(), keyring)
    with pytest.raises(ValueError, match="same RunSecrets"):
        Session(task="t", settings=Settings(), dry_run=True, parts=h.parts,
                parameters=resolve(automation, {}, store=keyring))


def test_the_object_never_shows_its_values() -> None:
    secret = _secret()
    secrets = RunSecrets(api_key=secret + "key", parameters=[secret])
    assert not _leaks([repr(secrets), str(secrets)], secret)
