"""`holodesk automation schedule NAME …` and the schedule columns of `automation list`."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.automations import Automation, load_automations, save_automations
from app.autostart import default_autostart
from app.cli.main import main
from tests.support.home import Home, isolate_home


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    return isolate_home(monkeypatch, tmp_path)


@pytest.fixture
def path(home: Home) -> Path:
    path = home.config / "holodesk" / "automations.toml"
    save_automations([Automation.make("", name="timesheet", task="file today's hours"),
                      Automation.make("", name="mail", task="check the mail")], path)
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_schedule_forms_set_the_same_canonical_text(
        capsys: pytest.CaptureFixture[str], path: Path) -> None:
    for args, stored in ((["daily", "9:00"], "daily at 09:00"),
                         (["--daily", "09:00"], "daily at 09:00"),
                         (["weekly", "mon,thu", "17:30"], "weekly on mon,thu at 17:30"),
                         (["--weekly", "thu,mon", "17:30"], "weekly on mon,thu at 17:30"),
                         (["--at", "2099-12-24T09:00"], "once at 2099-12-24 09:00"),
                         (["once", "2099-12-24", "09:00"], "once at 2099-12-24 09:00")):
        code, out, err = _run(capsys, "automation", "schedule", "timesheet", *args)
        assert code == 0, err
        assert f"'timesheet' runs {stored}; next run: " in out
        assert "reported, not run late" in out
        assert "the desktop app is not running now; start it (holodesk)" in err
        assert load_automations(path)[0].schedule == stored
    code, out, _ = _run(capsys, "automation", "schedule", "TIMESHEET")
    assert code == 0 and "is scheduled: once at 2099-12-24 09:00; next run: 2099-12-24 09:00" in out


def test_list_shows_the_schedule_and_the_next_run(
        capsys: pytest.CaptureFixture[str], path: Path) -> None:
    _, out, _ = _run(capsys, "automation", "list")
    assert "SCHEDULE" not in out  # nothing scheduled: the columns stay out of the way
    _run(capsys, "automation", "schedule", "mail", "--at", "2099-01-02T08:15")
    _, out, _ = _run(capsys, "automation", "list")
    header, first, second = out.splitlines()
    assert header.split() == ["NAME", "HOTKEY", "CONFIRM", "MONITOR", "SCHEDULE", "NEXT", "RUN",
                              "TASK"]
    assert first.split()[4] == "-"
    assert "once at 2099-01-02 08:15  2099-01-02 08:15  check the mail" in second


def test_bad_schedules_are_refused_and_nothing_changes(
        capsys: pytest.CaptureFixture[str], path: Path) -> None:
    for args, said in ((["sometimes"], "is not a schedule; say e.g. daily at 09:00"),
                       (["--daily", "25:00"], "not a time of day"),
                       (["--at", "2000-01-01T09:00"], "2000-01-01 09:00 has passed"),
                       (["daily", "09:00", "--at-login"], "give the schedule once"),
                       (["--weekly", "funday", "09:00"], "'funday' is not a day")):
        code, _, err = _run(capsys, "automation", "schedule", "timesheet", *args)
        assert code == 2, args
        assert said in err and "Traceback" not in err
    code, _, err = _run(capsys, "automation", "schedule", "nope", "daily", "09:00")
    assert code == 2 and "no automation named 'nope'" in err
    assert [a.schedule for a in load_automations(path)] == [None, None]


def test_at_login_warns_until_start_at_login_is_on_and_clear_removes(
        capsys: pytest.CaptureFixture[str], path: Path) -> None:
    code, out, err = _run(capsys, "automation", "schedule", "mail", "--at-login")
    assert code == 0
    assert "'mail' runs at login; next run: at login" in out
    assert "warning: It runs only when holodesk starts at login, which is off: turn on " \
        "Start at login in the desktop app's Settings" in err
    entry = default_autostart()
    assert entry is not None
    entry.enable()
    code, out, err = _run(capsys, "automation", "schedule", "mail", "at", "login")
    assert code == 0 and "warning" not in err
    code, out, _ = _run(capsys, "automation", "schedule", "mail", "--clear")
    assert code == 0 and "'mail' has no schedule now" in out
    assert load_automations(path)[1].schedule is None
