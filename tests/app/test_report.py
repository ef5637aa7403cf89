"""Report a problem (app/report.py, `holodesk report`): what goes in, that no secret does,
screenshots only when asked, the question before saving, and a failed write leaving nothing.

The secrets are planted where they really end up: the API key of the endpoint in use and a
keyring key of an older endpoint (a run in the log used it) in lines of the log file written
before the key was known and in a stored step's thought; a password the model typed in a
real run (the agent masks it in the action log and registers it with the log file's filter).
"""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from app.cli.render import fix_line
from app.doctor import CheckResult, DoctorConfig, run_doctor
from app.report import (
    LOG_LINES,
    Report,
    ReportError,
    collect_report,
    project_address,
    send_words,
)
from app.settings import Settings
from app.store import StepRecord
from tests.support.agent_harness import HarnessFor
from tests.support.e2e import holodesk_argv, holodesk_env, run_holodesk
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import REPO_ROOT, Home, isolate_home
from tests.support.memory_secrets import MemoryStore

API_KEY = "sk-report-test-9f8e7d6c5b4a39281726"
OLD_ENDPOINT = "http://10.9.8.7:8000/v1"
OLD_KEY = "old-endpoint-key-Q7w8E9r0T1y2"
PASSWORD = "Tr0ub4dor&3xyz"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
ENDPOINT = "http://127.0.0.1:8011/v1"
SECRETS = (API_KEY, OLD_KEY, PASSWORD, TOKEN)


def _doctor(settings: Settings) -> list[CheckResult]:
    # The real checks, with no display in their environment: the desktop ones fail at once,
    # the endpoint one against a port nobody serves.
    return run_doctor(DoctorConfig(settings=settings, environ={}, platform="linux",
                                   check_timeout=10, request_timeout=5))


def _plant_runs(harness_for: HarnessFor) -> Path:
    """An older run on OLD_ENDPOINT whose thought quotes its key, then a real run that types
    PASSWORD and whose thought quotes the API key; returns the database."""
    script = ScriptedPolicy([
        {"note": "", "thought": f"The key {API_KEY} is set; the password field has focus.",
         "action": {"action": "type", "text": PASSWORD}},
        {"note": "", "thought": "Signed in.", "action": {"action": "answer", "text": "ok"}},
    ])
    with FakeVLLM(script) as server:
        h = harness_for(server)
        old = h.store.start_run("an older task", OLD_ENDPOINT, "holotron", {})
        h.store.add_step(StepRecord(old.id, 1, old.started_at - 1, old.started_at,
                                    thought=f"retrying with {OLD_KEY}"))
        h.store.finish_run(old.id, "error", "the server refused the key")
        h.run("sign in")
    return h.store.path


def _plant_log(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"old line {i}" for i in range(LOG_LINES + 50)] + [
        f"httpx: 401 for Authorization: Bearer {API_KEY}",
        f"retrying {OLD_ENDPOINT} with {OLD_KEY}",
        f'client: rejected answer {{"action": "type", "text": "{PASSWORD}"}}',
        f"the person's shell exported GITHUB_TOKEN={TOKEN}",
        "the last line",
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def report(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, harness_for: HarnessFor) -> Report:
    home = isolate_home(monkeypatch, tmp_path)
    db = _plant_runs(harness_for)
    log = home.state / "holodesk" / "holodesk.log"
    _plant_log(log)
    store = MemoryStore({ENDPOINT: API_KEY, OLD_ENDPOINT: OLD_KEY})
    return collect_report(Settings(endpoint=ENDPOINT), say=fix_line, doctor=_doctor,
                          db_path=db, log_path=log, store=store, environ={})


def test_the_report_holds_every_part_and_no_secret(report: Report) -> None:
    names = [p.name for p in report.parts]
    assert names == ["README.txt", "version.txt", "doctor.json", "settings.txt", "log.txt",
                     "last-run.txt"]
    for part in report.parts:
        for secret in SECRETS:
            assert secret not in part.text, (part.name, secret)
        assert str(Path.home()) not in part.text, part.name
    log = report.part("log.txt").text.splitlines()
    assert len(log) == LOG_LINES and log[-1] == "the last line"
    assert "Bearer ***" in report.part("log.txt").text
    assert "GITHUB_TOKEN=***" in report.part("log.txt").text
    doctor = json.loads(report.part("doctor.json").text)
    assert doctor["endpoint"] == ENDPOINT and not doctor["ok"]
    assert doctor["checks"][0]["name"] == "display server"
    last = report.part("last-run.txt").text
    assert last.startswith("run ") and "task: sign in" in last and "The key *** is set" in last
    assert 'type "***"' in last
    assert "endpoint" in report.part("settings.txt").text
    assert "holodesk" in report.part("version.txt").text


def test_no_secret_reaches_the_written_zip(report: Report, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    out = report.write(tmp_path / "out" / "r.zip", screenshots=False)
    with zipfile.ZipFile(out) as bundle:
        assert sorted(bundle.namelist()) == sorted(p.name for p in report.parts)
        for name in bundle.namelist():
            text = bundle.read(name).decode("utf-8")
            assert text == report.part(name).text
            for secret in SECRETS:
                assert secret not in text, (name, secret)
    assert os.stat(out).st_mode & 0o077 == 0  # personal data: the owner's only
    assert os.listdir(tmp_path / "out") == ["r.zip"]


def test_screenshots_go_in_only_when_asked(report: Report, tmp_path: Path) -> None:
    assert [s.step_no for s in report.screenshots] == [1, 2]  # the last run's steps
    without = report.write(tmp_path / "without.zip", screenshots=False)
    with zipfile.ZipFile(without) as bundle:
        assert not [n for n in bundle.namelist() if n.startswith("screenshots/")]
    assert not [line for line in report.contents(screenshots=False) if "screenshots/" in line]
    listed = [line for line in report.contents(screenshots=True) if "screenshots/" in line]
    assert len(listed) == 2 and all("not masked" in line for line in listed)
    with_shots = report.write(tmp_path / "with.zip", screenshots=True)
    with zipfile.ZipFile(with_shots) as bundle:
        for shot in report.screenshots:
            assert bundle.read(shot.name) == shot.path.read_bytes()


def test_an_existing_file_a_missing_folder_or_a_folder_is_refused(
    report: Report, tmp_path: Path
) -> None:
    existing = tmp_path / "there.zip"
    existing.write_bytes(b"keep me")
    with pytest.raises(ReportError, match="exists already"):
        report.write(existing, screenshots=False)
    assert existing.read_bytes() == b"keep me"
    with pytest.raises(ReportError, match="does not exist") as missing:
        report.write(tmp_path / "nowhere" / "r.zip", screenshots=False)
    assert missing.value.fix is not None
    with pytest.raises(ReportError, match="is a folder"):
        report.write(tmp_path, screenshots=False)
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".part")]


# --- the command ---------------------------------------------------------------------------


def _home_with_a_run(home: Home, screenshot: bytes | None = None) -> None:
    """A stored API key (the tests' keyring), log lines quoting it, one run with a step."""
    from app.store import ActionLog

    assert run_holodesk(home, "config", "set", "endpoint", ENDPOINT).returncode == 0
    stored = run_holodesk(home, "config", "set", "api_key", stdin=API_KEY + "\n")
    assert stored.returncode == 0, stored
    _plant_log(home.state / "holodesk" / "holodesk.log")
    with ActionLog.open(home.data / "holodesk" / "holodesk.db") as log:
        run = log.start_run("open the mail", ENDPOINT, "holotron", {})
        shot, _thumb = log.save_screenshot(run.id, 1, screenshot or _jpeg(), "image/jpeg")
        log.add_step(StepRecord(run.id, 1, run.started_at, run.started_at + 1,
                                screenshot_path=str(shot), thought=f"the key is {API_KEY}"))
        log.finish_run(run.id, "answered", "done")


def _jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (10, 120, 200)).save(out, "JPEG")
    return out.getvalue()


def test_the_command_shows_what_goes_in_and_refuses_without_a_terminal(
    home: Home, tmp_path: Path
) -> None:
    _home_with_a_run(home)
    out = tmp_path / "report.zip"
    refused = run_holodesk(home, "report", "--output", str(out))  # stdin is not a terminal
    assert refused.returncode == 2, refused
    for name in ("README.txt", "version.txt", "doctor.json", "settings.txt", "log.txt",
                 "last-run.txt"):
        assert name in refused.stdout
    assert "screenshot(s) are left out" in refused.stdout
    assert "nothing was written" in refused.stderr and "--yes" in refused.stderr
    assert not out.exists()
    assert API_KEY not in refused.stdout + refused.stderr

    saved = run_holodesk(home, "report", "--output", str(out), "--yes", "--screenshots")
    assert saved.returncode == 0, saved
    assert f"Saved: {out}" in saved.stdout
    # Where the file goes, in the window's words too (ui/report_dialog.py).
    assert send_words(project_address()) in saved.stdout
    with zipfile.ZipFile(out) as bundle:
        names = bundle.namelist()
        assert "screenshots/step-001.jpg" in names
        for name in names:
            if not name.startswith("screenshots/"):
                assert API_KEY not in bundle.read(name).decode("utf-8"), name
        assert "the key is ***" in bundle.read("last-run.txt").decode("utf-8")
    assert API_KEY not in saved.stdout + saved.stderr


def test_the_command_asks_on_a_terminal(home: Home, tmp_path: Path) -> None:
    _home_with_a_run(home)
    for answer, code in ((b"n\n", 1), (b"y\n", 0)):
        out = tmp_path / f"{answer[:1].decode()}.zip"
        master, slave = os.openpty()
        try:
            os.write(master, answer)  # held by the line discipline until the question reads it
            proc = subprocess.run(holodesk_argv("report", "--output", str(out)),
                                  env=holodesk_env(home), cwd=REPO_ROOT, stdin=slave,
                                  capture_output=True, text=True, timeout=120)
        finally:
            os.close(master)
            os.close(slave)
        assert proc.returncode == code, proc
        assert f"Save the report to {out}? [y/N]" in proc.stdout
        assert out.exists() is (code == 0)


def _limit_file_size() -> None:
    # Stands in for a disk that fills up half-way: writes past 200 KB fail with EFBIG
    # (Python ignores SIGXFSZ, so the write returns the error instead of killing it).
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))


def test_a_disk_that_fills_up_gives_a_clear_error_and_leaves_no_file(
    home: Home, tmp_path: Path
) -> None:
    noise = io.BytesIO()
    Image.frombytes("RGB", (400, 400), os.urandom(400 * 400 * 3)).save(noise, "PNG")
    assert len(noise.getvalue()) > 300_000  # does not fit under the limit
    _home_with_a_run(home, screenshot=noise.getvalue())
    folder = tmp_path / "reports"
    folder.mkdir()
    out = folder / "report.zip"
    proc = subprocess.run(holodesk_argv("report", "--output", str(out), "--yes",
                                        "--screenshots"),
                          env=holodesk_env(home), cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120, preexec_fn=_limit_file_size)
    assert proc.returncode == 1, proc
    assert "could not be written" in proc.stderr and "nothing was written" in proc.stderr
    assert "Fix: free some space" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert os.listdir(folder) == []  # neither the report nor its unfinished temporary file


def test_a_broken_settings_file_is_reported_not_a_dead_end(home: Home, tmp_path: Path) -> None:
    settings = home.config / "holodesk" / "settings.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text('confirm = "sometimes"\n')
    out = tmp_path / "r.zip"
    result = run_holodesk(home, "report", "--yes", "--output", str(out))
    assert result.returncode == 0, result
    assert "cannot be read" in result.stderr
    with zipfile.ZipFile(out) as bundle:
        text = bundle.read("settings.txt").decode("utf-8")
    assert text.startswith("THE SETTINGS COULD NOT BE READ:") and "sometimes" in text


def test_a_secret_parameter_typed_by_another_process_is_masked_from_the_keyring(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The report runs as its own process: the log line of an earlier run (the app's) holds a
    # secret parameter's value it never saw typed; the keyring's copy masks it (found by a
    # hostile review).
    from app.automations import Automation, save_automations
    from app.parameter_values import store_secret

    home = isolate_home(monkeypatch, tmp_path)
    value = "Intranet-Pass-4711"
    automation = Automation.make(name="sign in", task="sign in with {password}",
                                 parameters={"password": {"secret": True}})
    save_automations([automation])
    store = MemoryStore({})
    store_secret(automation, "password", value, store)
    log = home.state / "holodesk" / "holodesk.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"an earlier run typed {value} into the form\nthe last line\n",
                   encoding="utf-8")
    report = collect_report(Settings(endpoint=ENDPOINT), say=fix_line, doctor=_doctor,
                            db_path=tmp_path / "none.db", log_path=log, store=store, environ={})
    assert "the last line" in report.part("log.txt").text
    assert not [p.name for p in report.parts if value in p.text]


def test_where_to_send_names_the_projects_address_when_the_package_has_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from email.message import Message
    from importlib import metadata

    meta = Message()
    meta["Name"] = "holodesk"
    meta["Project-URL"] = "Repository, https://example.org/holodesk"
    meta["Project-URL"] = "Issues, https://example.org/holodesk/issues"
    monkeypatch.setattr(metadata, "metadata", lambda _name: meta)
    assert project_address() == "https://example.org/holodesk/issues"
    assert send_words(project_address()) == (
        "To report the problem, attach the saved file to a bug report at "
        "https://example.org/holodesk/issues.")

    def missing(name: str) -> Message:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "metadata", missing)  # a frozen build: no metadata
    assert project_address() is None
    assert send_words(None).endswith("to a bug report for the holodesk project.")
