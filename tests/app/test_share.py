"""Sharing automations: export and import (app/share.py, `holodesk automation export/import`).

A round trip into a fresh home gives the same automation and the same saved steps (equal steps,
equal pictures); a secret parameter's value is never in the file; hostile files are refused with
a clear message before anything is written; a taken name or hotkey is refused; the CLI asks before
including the screen crops, and refuses to guess without a terminal."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from app.approval import read_record, record_path
from app.automations import Automation, add_automation, load_automations, run_settings
from app.parameter_values import load_secret, store_secret
from app.settings import Settings
from app.share import (
    MAX_PICTURE,
    ExportPlan,
    NameTaken,
    ShareError,
    export_automation,
    import_automation,
    plan_export,
    read_share,
    write_pictures,
)
from app.trajectory import forget_trajectory, load_trajectory, read_picture, save_trajectory
from control.policy import ConfirmMode
from tests.support.e2e import holodesk_argv, holodesk_env, run_holodesk
from tests.support.home import Home
from tests.support.memory_secrets import MemoryStore
from tests.support.pty_run import Pty
from tests.support.saved_steps import SHARED_TASK, png, saved_steps

SECRET = "Tr0ub4dor&3-horse"
TASK = SHARED_TASK
KEY = "timesheet"


class Side:
    """One holodesk's files: its automations file and its data folder (trajectories)."""

    def __init__(self, root: Path) -> None:
        self.file = root / "config" / "automations.toml"
        self.data = root / "data"

    def written(self) -> list[Path]:
        return sorted(p for p in (self.file.parent, self.data) if p.exists()
                      for p in p.rglob("*") if p.is_file())


def _automation(**values: object) -> Automation:
    fields: dict[str, object] = {
        "name": "Timesheet", "task": TASK, "confirm": "risky", "hotkey": "ctrl+alt+1",
        "schedule": "daily at 09:00",
        "parameters": {"user": {"default": "ann"}, "password": {"secret": True},
                       "hours": {"description": "hours worked"}}}
    fields.update(values)
    return Automation.make("", **fields)


@pytest.fixture
def here(tmp_path: Path) -> Side:
    return Side(tmp_path / "here")


@pytest.fixture
def there(tmp_path: Path) -> Side:
    return Side(tmp_path / "there")


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


def _recorded(side: Side, store: MemoryStore, **values: object) -> Automation:
    automation = _automation(**values)
    add_automation(automation, path=side.file, store=store)
    store_secret(automation, "password", SECRET, store)  # planted: must never be exported
    trajectory, pictures = saved_steps(automation.task)
    save_trajectory(automation.key, trajectory, pictures, side.data)
    return automation


def _export(side: Side, dest: Path, store: MemoryStore, *, with_steps: bool = True) -> Path:
    plan = plan_export("timesheet", automations=side.file, root=side.data)
    return export_automation(plan, dest, with_steps=with_steps, store=store)


# -- round trip ---------------------------------------------------------------------------------


def test_round_trip_gives_the_same_automation_and_saved_steps(
        here: Side, there: Side, store: MemoryStore, tmp_path: Path) -> None:
    original = _recorded(here, store)
    plan = plan_export("TIMESHEET", automations=here.file, root=here.data)
    summary = "\n".join(plan.summary())
    assert "parameter password: secret (its value stays in your keyring)" in summary
    assert "parameter user: default 'ann'" in summary and "Daily at 09:00" in summary
    assert "saved steps: 4, with 2 screen crops" in summary and "types 'ann'" in summary

    dest = _export(here, tmp_path / "out" / "t.holodesk.zip", store)
    with zipfile.ZipFile(dest) as zf:
        assert sorted(zf.namelist()) == sorted(["automation.toml", "trajectory.json",
                                                *plan.pictures])
    assert SECRET.encode() not in dest.read_bytes()

    shared = read_share(dest)
    done = import_automation(shared, keep_schedule=True, automations=there.file,
                             root=there.data, store=MemoryStore())
    assert load_automations(there.file) == [original]
    assert done.steps == 4
    mine, theirs = load_trajectory(KEY, here.data), load_trajectory(KEY, there.data)
    assert mine is not None and theirs is not None
    assert theirs.steps == mine.steps and theirs.task == original.task
    for name in plan.pictures:
        assert np.array_equal(np.asarray(read_picture(KEY, name, here.data)),
                              np.asarray(read_picture(KEY, name, there.data)))


def test_without_steps_only_the_automation_goes_and_nothing_replays_there(
        here: Side, there: Side, store: MemoryStore, tmp_path: Path) -> None:
    _recorded(here, store)
    dest = _export(here, tmp_path / "t.zip", store, with_steps=False)
    with zipfile.ZipFile(dest) as zf:
        assert zf.namelist() == ["automation.toml"]
    done = import_automation(read_share(dest), automations=there.file, root=there.data)
    assert done.steps == 0 and load_trajectory(KEY, there.data) is None


def test_an_existing_file_is_never_replaced(here: Side, store: MemoryStore,
                                           tmp_path: Path) -> None:
    _recorded(here, store)
    dest = tmp_path / "t.zip"
    dest.write_bytes(b"mine")
    with pytest.raises(ShareError, match="exists already"):
        _export(here, dest, store)
    assert dest.read_bytes() == b"mine"


def test_the_crops_can_be_written_out_to_look_at(here: Side, store: MemoryStore,
                                                tmp_path: Path) -> None:
    _recorded(here, store)
    plan = plan_export("timesheet", automations=here.file, root=here.data)
    written = write_pictures(plan, tmp_path / "look")
    assert [p.read_bytes() for p in written] == [plan.pictures[n] for n in plan.crops]


# -- secrets ------------------------------------------------------------------------------------


def test_a_secret_value_is_never_exported_even_if_a_step_typed_it_in_clear(
        here: Side, store: MemoryStore, tmp_path: Path) -> None:
    automation = _recorded(here, store)
    # A step that typed the secret without being marked (it must not happen; the export checks).
    trajectory, pictures = saved_steps(automation.task, typed=f"pw {SECRET}")
    save_trajectory(automation.key, trajectory, pictures, here.data)
    with pytest.raises(ShareError, match="secret parameter password") as caught:
        _export(here, tmp_path / "t.zip", store)
    assert SECRET not in str(caught.value)
    assert not (tmp_path / "t.zip").exists()
    # Without the steps the file holds the declaration only.
    dest = _export(here, tmp_path / "t.zip", store, with_steps=False)
    text = zipfile.ZipFile(dest).read("automation.toml").decode()
    assert "[automation.parameters.password]\nsecret = true" in text
    assert SECRET not in text


# -- hostile files ------------------------------------------------------------------------------


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _good_members(here: Side, store: MemoryStore, tmp_path: Path) -> dict[str, bytes]:
    _recorded(here, store)
    with zipfile.ZipFile(_export(here, tmp_path / "good.zip", store)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _edit_toml(old: str, new: str) -> Callable[[dict[str, bytes]], None]:
    def change(m: dict[str, bytes]) -> None:
        text = m["automation.toml"].decode()
        assert old in text
        m["automation.toml"] = text.replace(old, new).encode()
    return change


def _edit_json(change: Callable[[dict[str, object]], None]) -> Callable[[dict[str, bytes]], None]:
    def edit(m: dict[str, bytes]) -> None:
        data = json.loads(m["trajectory.json"])
        change(data)
        m["trajectory.json"] = json.dumps(data).encode()
    return edit


def _firstpng(m: dict[str, bytes]) -> str:
    return next(n for n in sorted(m) if n.endswith("-p1.png"))


HOSTILE: dict[str, tuple[Callable[[dict[str, bytes]], None], str]] = {
    "unknown member": (lambda m: m.update({"run.sh": b"rm -rf ~"}),
                       "'run.sh', which is not part of a shared automation"),
    "traversal": (lambda m: m.update({"../evil.png": png(1)}),
                  "'../evil.png', which is not part of a shared automation"),
    "folder": (lambda m: m.update({"pics/a.png": png(1)}),
               "'pics/a.png', which is not part of a shared automation"),
    "unnamed picture": (lambda m: m.update({"extra.png": png(1)}),
                        "'extra.png', which its saved steps do not name"),
    "huge member": (lambda m: m.update({_firstpng(m): b"\0" * (MAX_PICTURE + 1)}),
                    "more than it can be"),
    "bad png": (lambda m: m.update({_firstpng(m): b"\x89PNG\r\n\x1a\nnot really"}),
                "is not a readable PNG picture"),
    "missing picture": (lambda m: m.pop(_firstpng(m)), "names a picture that is missing"),
    "newer format": (_edit_toml("format = 1", "format = 9"), "written by a newer holodesk"),
    "newer automation": (_edit_toml("automations_version = 2", "automations_version = 99"),
                         "update holodesk"),
    "bad automation": (_edit_toml('hotkey = "ctrl+alt+1"', 'hotkey = "ctrl+v"'), "hotkey"),
    "unknown field": (_edit_toml('task = "', 'colour = "red"\ntask = "'),
                      "'colour' is not a field of an automation"),
    "no automation": (lambda m: m.pop("automation.toml"), "has no automation.toml"),
    "damaged steps": (_edit_json(lambda d: d.update({"steps": "nope"})), "is damaged"),
    "newer steps": (_edit_json(lambda d: d.update({"format": 99})), "format 99"),
    "other task": (_edit_json(lambda d: d.update({"task": "something else",
                                                  "template": "something else"})),
                   "recorded for another task"),
    "bad action": (_edit_json(lambda d: d["steps"][0].update(  # type: ignore[index]
        {"action": {"action": "format_disk"}})), "is damaged"),
    # The secret's value would be typed wherever "PW" was typed, shown masked.
    "value of a secret": (_edit_json(lambda d: d.update({"values": {"password": "PW"}})),
                          "'password', which is not a plain parameter"),
    "undeclared value": (_edit_json(lambda d: d.update({"values": {"pin": "PW"}})),
                         "'pin', which is not a plain parameter"),
    "secret step of a plain parameter": (_edit_json(lambda d: d["steps"][1].update(  # type: ignore[index]
        {"secret": True, "secret_parameter": "user", "action": {"action": "type", "text": ""}})),
        "types 'user' as a secret"),
    "drag with one anchor": (_edit_json(lambda d: d["steps"][0].update(  # type: ignore[index]
        {"action": {"action": "drag", "element": "Log in", "x": 100, "y": 200, "to_x": 999,
                    "to_y": 999}})),
        "has 1 anchors, not 2"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_file_is_refused_with_the_reason_and_nothing_is_written(
        case: str, here: Side, there: Side, store: MemoryStore, tmp_path: Path) -> None:
    members = _good_members(here, store, tmp_path)
    change, reason = HOSTILE[case]
    change(members)
    path = _zip(tmp_path / "hostile.zip", members)
    with pytest.raises(ShareError) as caught:
        import_automation(read_share(path), automations=there.file, root=there.data)
    assert reason in str(caught.value)
    assert str(path) in str(caught.value)
    assert there.written() == []


def test_not_a_zip_and_a_duplicate_member_are_refused(tmp_path: Path, here: Side,
                                                     store: MemoryStore) -> None:
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"hello")
    with pytest.raises(ShareError, match="not a readable zip"):
        read_share(junk)
    members = _good_members(here, store, tmp_path)
    path = _zip(tmp_path / "dup.zip", members)
    with zipfile.ZipFile(path, "a") as zf, pytest.warns(UserWarning):
        zf.writestr("automation.toml", b"format = 1")
    with pytest.raises(ShareError, match="twice"):
        read_share(path)


def test_the_good_file_the_hostile_ones_start_from_imports(
        here: Side, there: Side, store: MemoryStore, tmp_path: Path) -> None:
    # Each hostile case changes one thing in this file: unchanged, it is accepted.
    path = _zip(tmp_path / "fine.zip", _good_members(here, store, tmp_path))
    assert import_automation(read_share(path), automations=there.file,
                             root=there.data).steps == 4


# -- clashes and what an import changes ---------------------------------------------------------


def test_a_taken_name_is_refused_unless_renamed_or_replaced(
        here: Side, there: Side, store: MemoryStore, tmp_path: Path) -> None:
    _recorded(here, store)
    shared = read_share(_export(here, tmp_path / "t.zip", store))
    theirs = MemoryStore()
    mine = _automation(task="log in with {password}", hotkey=None, schedule=None,
                       parameters={"password": {"secret": True}})
    add_automation(mine, path=there.file)
    store_secret(mine, "password", "my-own-password-1", theirs)
    before = there.file.read_bytes()

    with pytest.raises(NameTaken, match="exists already"):
        import_automation(shared, automations=there.file, root=there.data, store=theirs)
    assert there.file.read_bytes() == before and load_trajectory(KEY, there.data) is None

    renamed = import_automation(shared, as_name="Timesheet 2", drop_hotkey=True,
                                automations=there.file, root=there.data, store=theirs)
    assert [a.name for a in load_automations(there.file)] == ["Timesheet", "Timesheet 2"]
    steps = load_trajectory("timesheet 2", there.data)
    assert steps is not None and steps.automation == "Timesheet 2" and renamed.steps == 4
    assert load_secret(mine, "password", theirs) == "my-own-password-1"

    # Replacing: their stored secret is deleted (never typed by an automation from elsewhere).
    forget_trajectory("timesheet 2", there.data)
    replaced = import_automation(shared, replace=True, automations=there.file,
                                 root=there.data, store=theirs)
    assert load_automations(there.file)[0].task == TASK
    assert load_secret(mine, "password", theirs) is None
    assert any("were deleted" in n for n in replaced.notes)


def test_a_hotkey_clash_is_refused_with_the_reason(
        here: Side, there: Side, store: MemoryStore, tmp_path: Path) -> None:
    _recorded(here, store)
    shared = read_share(_export(here, tmp_path / "t.zip", store))
    add_automation(Automation.make("", name="other", task="x", hotkey="ctrl+alt+1"),
                   path=there.file)
    before = there.file.read_bytes()
    with pytest.raises(ShareError, match="conflicts with the hotkey of 'other'"):
        import_automation(shared, automations=there.file, root=there.data)
    with pytest.raises(ShareError, match="emergency stop hotkey"):
        import_automation(shared, stop_hotkey="ctrl+alt+1", automations=tmp_path / "3.toml",
                          root=there.data)
    assert there.file.read_bytes() == before and load_trajectory(KEY, there.data) is None
    assert not (tmp_path / "3.toml").exists()
    done = import_automation(shared, drop_hotkey=True, automations=there.file, root=there.data)
    assert done.automation.hotkey is None and done.steps == 4


def test_the_schedule_is_kept_only_when_asked_and_never_confirm_becomes_risky(
        here: Side, there: Side, store: MemoryStore, tmp_path: Path) -> None:
    _recorded(here, store, confirm="never")
    shared = read_share(_export(here, tmp_path / "t.zip", store))
    done = import_automation(shared, automations=there.file, root=there.data)
    assert done.automation.schedule is None and done.automation.confirm is ConfirmMode.RISKY
    assert any("does not run by itself here" in n for n in done.notes)
    assert any("asks before risky actions" in n for n in done.notes)
    kept = import_automation(shared, as_name="t2", keep_schedule=True, drop_hotkey=True,
                             automations=there.file, root=there.data)
    assert kept.automation.schedule == "daily at 09:00"


def test_an_import_never_approves_never(here: Side, there: Side, store: MemoryStore,
                                        tmp_path: Path) -> None:
    """The mode an import writes is approved as risky: `never` put back by hand afterwards (or
    by a hostile program) is not applied (app/approval.py)."""
    _recorded(here, store, confirm="never")
    shared = read_share(_export(here, tmp_path / "t.zip", store))
    import_automation(shared, automations=there.file, root=there.data, store=store)
    there.file.write_text(there.file.read_text().replace('confirm = "risky"',
                                                          'confirm = "never"'))
    edited = load_automations(there.file)[0]
    assert edited.confirm is ConfirmMode.NEVER
    approvals = read_record(record_path(there.file.parent), store)
    assert run_settings(Settings(), edited, approvals=approvals).confirm is ConfirmMode.RISKY


# -- the command line ---------------------------------------------------------------------------


def _cli_home(home: Home) -> Automation:
    result = run_holodesk(
        home, "automation", "add", "Timesheet", "--task", TASK, "--param", "user=ann",
        "--secret-param", "password", "--param", "hours")
    assert result.returncode == 0, str(result)
    stored = run_holodesk(home, "automation", "set-secret", "timesheet", "password",
                          stdin=SECRET + "\n")
    assert stored.returncode == 0, str(stored)
    automation = load_automations(home.config / "holodesk" / "automations.toml")[0]
    trajectory, pictures = saved_steps(automation.task)
    save_trajectory(automation.key, trajectory, pictures, home.data / "holodesk")
    return automation


def test_cli_refuses_to_guess_about_the_crops_without_a_terminal(home: Home,
                                                                 tmp_path: Path) -> None:
    _cli_home(home)
    dest = tmp_path / "t.zip"
    refused = run_holodesk(home, "automation", "export", "timesheet", "-o", str(dest))
    assert refused.returncode == 2, str(refused)
    assert "--with-steps or --without-steps" in refused.stderr and "--show-crops" in \
        refused.stderr
    assert not dest.exists()

    shown = run_holodesk(home, "automation", "export", "timesheet", "--show-crops",
                         str(tmp_path / "look"))
    assert shown.returncode == 0 and len(list((tmp_path / "look").iterdir())) == 2

    done = run_holodesk(home, "automation", "export", "timesheet", "-o", str(dest),
                        "--with-steps")
    assert done.returncode == 0, str(done)
    assert "saved steps: 4, with 2 screen crops" in done.stdout
    assert SECRET.encode() not in dest.read_bytes()

    clash = run_holodesk(home, "automation", "import", str(dest))
    assert clash.returncode == 2 and "--as NEWNAME" in clash.stderr and "--replace" in \
        clash.stderr
    imported = run_holodesk(home, "automation", "import", str(dest), "--as", "copy")
    assert imported.returncode == 0, str(imported)
    assert "imported with 4 saved steps" in imported.stdout
    assert "set-secret copy password" in imported.stdout
    bad = tmp_path / "bad.zip"
    _zip(bad, {"automation.toml": b"format = 1", "evil.sh": b""})
    refused = run_holodesk(home, "automation", "import", str(bad))
    assert refused.returncode == 2 and "evil.sh" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_cli_asks_on_a_terminal_and_shows_the_crops_first(home: Home, tmp_path: Path) -> None:
    _cli_home(home)
    dest = tmp_path / "t.zip"
    term = Pty(holodesk_argv("automation", "export", "timesheet", "-o", str(dest)),
               holodesk_env(home))
    term.read_until("[s]how them first, [q]uit: ")
    term.send("s")
    term.read_until("open them, then answer")
    term.read_until("[q]uit: ")
    term.send("n")
    assert term.wait() == 0, term.seen
    assert "crop-001-" in term.seen
    with zipfile.ZipFile(dest) as zf:
        assert zf.namelist() == ["automation.toml"]


def test_a_plan_without_steps_says_so(here: Side) -> None:
    add_automation(_automation(), path=here.file)
    plan = plan_export("timesheet", automations=here.file, root=here.data)
    assert plan == ExportPlan(plan.automation) and plan.summary()[-1] == "saved steps: none"


def test_steps_recorded_with_filled_values_export_by_their_template(
        here: Side, there: Side, store: MemoryStore, tmp_path: Path) -> None:
    # A real recording keeps the filled task (with the run's plain values) and the template:
    # the template is what they belong to (found by a hostile review: such steps never went).
    automation = _automation()
    add_automation(automation, path=here.file)
    trajectory, pictures = saved_steps(automation.task)
    filled = trajectory.model_copy(update={"task": automation.task.replace("{user}", "ann"),
                                           "template": automation.task})
    assert filled.task != automation.task
    save_trajectory(automation.key, filled, pictures, here.data)
    plan = plan_export("timesheet", automations=here.file, root=here.data)
    assert plan.problem is None or plan.problem == "", plan.problem
    assert plan.trajectory is not None
    dest = _export(here, tmp_path / "t.holodesk.zip", store)
    shared = read_share(dest)
    assert shared.trajectory is not None and shared.trajectory.template == automation.task
