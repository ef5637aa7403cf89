"""Automations: the file, the rules, and the `holodesk automation` / `trigger NAME` commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from app.approval import read_record, record_path
from app.automations import (
    Automation,
    AutomationError,
    add_automation,
    find_automation,
    load_automations,
    remove_automation,
    replace_automation,
    run_settings,
    save_automations,
    stop_conflicts,
    validate_automations,
    validate_hotkey,
)
from app.settings import Settings
from control.hotkeys import HotkeyError, validate_stop_hotkey
from control.policy import ConfirmMode
from tests.support.e2e import run_holodesk
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home
from tests.support.memory_secrets import MemoryStore

STOP = "ctrl+alt+shift+escape"
ANSWER = {"thought": "done", "action": {"action": "answer", "text": "ok"}}


def _a(name: str = "timesheet", task: str = "file today's hours", **values: object) -> Automation:
    return Automation.make("", name=name, task=task, **values)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "config" / "automations.toml"


# -- one automation ----------------------------------------------------------------------------


def test_values_are_normalized() -> None:
    a = _a(task="  file it  ", confirm="always", monitor=2, hotkey="Ctrl+Alt+1")
    assert a.task == "file it"
    assert a.confirm is ConfirmMode.ALWAYS
    assert a.monitor == "2"
    assert a.hotkey == "ctrl+alt+1"
    assert a.hotkey_label() == "Ctrl+Alt+1"
    assert _a(hotkey="  ").hotkey is None
    assert _a(monitor="1280X800+0+0").monitor == "1280x800+0+0"


@pytest.mark.parametrize(("name", "why"), [
    ("", "empty"),
    ("   ", "empty"),
    ("stop", "taken by `holodesk trigger stop`"),
    ("Run", "taken by `holodesk trigger run`"),
    ("SHOW", "taken"),
    ("-x", "must start with a letter or digit"),
    ("a/b", "characters a command line would trip over ('/')"),
    ("say \"hi\"", "'\"'"),
    ("x" * 65, "longer than 64"),
])
def test_unusable_names_are_refused_with_the_reason(name: str, why: str) -> None:
    with pytest.raises(AutomationError, match="name") as caught:
        _a(name=name)
    assert why in str(caught.value)


def test_names_with_spaces_and_letters_of_any_language_are_fine() -> None:
    assert _a(name=" file the Zeiterfassung-ä 2 ").name == "file the Zeiterfassung-ä 2"


@pytest.mark.parametrize(("hotkey", "why"), [
    ("ctrl+alt+nosuchkey", "unknown key 'nosuchkey'"),
    ("ctrl+alt", "only modifiers"),
    ("a", "ordinary typing"),
    ("shift+a", "ordinary typing"),
    ("ctrl+v", "ordinary typing"),
    ("ctrl+alt+shift+1", "with shift, use a letter"),
    # The press still reaches the window in front: everyday shortcuts would do both.
    ("ctrl+s", "people press all day"),
    ("Control+Shift+T", "people press all day"),
    ("alt+tab", "people press all day"),
    ("super+l", "people press all day"),
    ("up", "people press all day"),
    ("escape", "people press all day"),
    ("shift+delete", "people press all day"),
    ("capslock", "people press all day"),
    ("ctrl+alt+delete", "logs out"),
    ("ctrl+alt+backspace", "end the X session"),
    ("ctrl+alt+f2", "text console"),
    ("alt+f4", "closes the window"),
])
def test_unusable_hotkeys_are_refused_with_the_reason(hotkey: str, why: str) -> None:
    with pytest.raises(AutomationError, match="hotkey") as caught:
        _a(hotkey=hotkey)
    assert why in str(caught.value)


@pytest.mark.parametrize(("hotkey", "canonical"), [
    ("Ctrl+Alt+1", "ctrl+alt+1"),
    ("<ctrl>+<alt>+t", "ctrl+alt+t"),
    ("win+alt+m", "alt+super+m"),
    ("ctrl+super+shift+k", "ctrl+shift+super+k"),
    ("f9", "f9"),
    ("ctrl+f9", "ctrl+f9"),
    ("pause", "pause"),
])
def test_hotkeys_out_of_everyday_reach_are_kept(hotkey: str, canonical: str) -> None:
    assert _a(hotkey=hotkey).hotkey == canonical


def test_other_bad_values_name_the_field() -> None:
    with pytest.raises(AutomationError, match="task: the task is empty"):
        _a(task=" ")
    with pytest.raises(AutomationError, match="monitor = 'left' must be a monitor index"):
        _a(monitor="left")
    with pytest.raises(AutomationError, match="confirm = 'sometimes' must be one of"):
        _a(confirm="sometimes")
    with pytest.raises(AutomationError, match="'colour' is not a field"):
        _a(colour="red")


def test_a_run_gets_the_automations_confirm_and_monitor_without_saving_them() -> None:
    settings = Settings(confirm=ConfirmMode.NEVER, monitor="1")
    ran = run_settings(settings, _a(confirm="always", monitor="mouse"))
    assert ran.confirm is ConfirmMode.ALWAYS and ran.monitor == "mouse"
    assert ran.sources["confirm"] == "automation 'timesheet'"
    assert {"confirm", "monitor"} <= set(ran.origin.transient)


def test_an_automation_limited_to_named_applications_limits_its_runs() -> None:
    settings = Settings(only_in="gedit")
    assert run_settings(settings, _a()).only_in == ("gedit",)  # none of its own: the setting's
    limited = run_settings(Settings(), _a(only_in="firefox, libreoffice-calc"))
    assert limited.only_in == ("firefox", "libreoffice-calc")
    assert "only_in" in limited.origin.transient


def test_an_automation_never_widens_the_applications(tmp_path: Path) -> None:
    """An automation (an imported one too) only narrows the applications: those both allow,
    and none in common refuses the run. Its confirmation mode is its own (the person's choice
    for this task; an import never brings never)."""
    strict = Settings(only_in="Firefox, gedit", confirm=ConfirmMode.ALWAYS)
    own = _a(only_in="firefox, xterm", confirm="risky")
    store = MemoryStore()
    add_automation(own, path=tmp_path / "automations.toml", store=store)  # the person's choice
    approvals = read_record(record_path(tmp_path), store)
    ran = run_settings(strict, own, approvals=approvals)
    assert ran.only_in == ("firefox",) and ran.confirm is ConfirmMode.RISKY
    with pytest.raises(AutomationError, match=r"may act only in xterm.*allow only Firefox, gedit"):
        run_settings(strict, _a(only_in="xterm"))


# -- the list and its conflicts ----------------------------------------------------------------


def test_names_are_unique_ignoring_case() -> None:
    with pytest.raises(AutomationError, match="'Timesheet' is used twice"):
        validate_automations([_a(), _a(name="Timesheet")])


@pytest.mark.parametrize(("first", "second"), [
    ("ctrl+alt+1", "alt+ctrl+1"),  # the same chord
    ("ctrl+alt+s", "ctrl+alt+shift+s"),  # pressing the longer one fires the shorter
])
def test_hotkeys_that_fire_together_are_refused(first: str, second: str) -> None:
    with pytest.raises(AutomationError, match="conflicts with the hotkey of 'timesheet'"):
        validate_automations([_a(hotkey=first), _a(name="mail", hotkey=second)])
    validate_automations([_a(hotkey="ctrl+alt+1"), _a(name="mail", hotkey="ctrl+alt+2")])


def test_a_hotkey_that_fires_with_the_stop_hotkey_is_refused() -> None:
    clash = _a(hotkey="ctrl+alt+escape")  # a part of the stop chord
    with pytest.raises(AutomationError, match="emergency stop hotkey"):
        validate_automations([clash], stop_hotkey=STOP)
    assert stop_conflicts([clash, _a(name="ok", hotkey="ctrl+alt+1")], STOP) == [
        "the hotkey Ctrl+Alt+Esc of 'timesheet' conflicts with the emergency stop hotkey "
        "(Ctrl+Alt+Shift+Esc): pressing one would fire both; choose another hotkey"
    ]
    assert stop_conflicts([_a(hotkey="ctrl+alt+1")], "ctrl+alt+1")  # a custom stop hotkey


def test_find_is_case_insensitive_and_lists_the_known_names() -> None:
    items = [_a(), _a(name="mail"), _a(name="caf\u00e9")]
    assert find_automation(items, " MAIL ").name == "mail"
    assert find_automation(items, "CAFE\u0301").name == "caf\u00e9"  # é typed as e + accent
    with pytest.raises(AutomationError, match="used twice"):
        validate_automations([*items, _a(name="cafe\u0301")])
    with pytest.raises(AutomationError, match=r"no automation named 'post'.*'timesheet', 'mail'"):
        find_automation(items, "post")
    with pytest.raises(AutomationError, match="none yet"):
        find_automation([], "post")


# -- the file ----------------------------------------------------------------------------------


def test_save_and_load_keep_everything_in_order(path: Path) -> None:
    items = [_a(hotkey="ctrl+alt+1", confirm="always"), _a(name="mail", task="send it"),
             _a(name="report", monitor="mouse")]
    save_automations(items, path)
    assert load_automations(path) == items
    text = path.read_text()
    assert text.count("[[automation]]") == 3
    assert "hotkey" not in text.split("[[automation]]")[2]  # no hotkey: no line
    assert not list(path.parent.glob("*.tmp"))


def test_no_file_means_no_automations(path: Path) -> None:
    assert load_automations(path) == []
    assert not path.exists()


def test_add_replace_remove(path: Path) -> None:
    add_automation(_a(hotkey="ctrl+alt+1"), path=path, stop_hotkey=STOP)
    add_automation(_a(name="mail", task="send"), path=path, stop_hotkey=STOP)
    with pytest.raises(AutomationError, match="'timesheet' exists already"):
        add_automation(_a(name="TimeSheet"), path=path)
    with pytest.raises(AutomationError, match="of 'post' conflicts with the hotkey of "
                                              "'timesheet'"):
        add_automation(_a(name="post", hotkey="ctrl+alt+1"), path=path)
    with pytest.raises(AutomationError, match="emergency stop"):
        add_automation(_a(name="post", hotkey="ctrl+alt+shift+escape"), path=path,
                       stop_hotkey=STOP)
    # Renamed, keeping its hotkey: the old entry's own hotkey is no conflict.
    replace_automation("TIMESHEET", _a(name="hours", hotkey="ctrl+alt+1"), path=path,
                       stop_hotkey=STOP)
    with pytest.raises(AutomationError, match="'mail' exists already"):
        replace_automation("hours", _a(name="Mail"), path=path)
    assert [a.name for a in load_automations(path)] == ["hours", "mail"]
    remove_automation("hours", path=path)
    assert [a.name for a in load_automations(path)] == ["mail"]
    with pytest.raises(AutomationError, match="no automation named 'hours'"):
        remove_automation("hours", path=path)


def test_an_old_entry_clashing_with_a_changed_stop_hotkey_blocks_no_other_edit(
        path: Path) -> None:
    save_automations([_a(hotkey="ctrl+alt+1")], path)
    # The person has since made Ctrl+Alt+1 their stop hotkey.
    add_automation(_a(name="mail", task="send"), path=path, stop_hotkey="ctrl+alt+1")
    assert len(load_automations(path)) == 2


@pytest.mark.parametrize(("text", "expected"), [
    ("[[automation]\n", "is not valid TOML"),
    ("name = 'x'\n", "unexpected 'name'; each automation is an [[automation]] table"),
    ("automation = 3\n", "must be a list of [[automation]] tables"),
    ('[[automation]]\nname = "a"\n', "automation 1 ('a'): task is missing"),
    ('[[automation]]\nname = "a"\ntask = "t"\n[[automation]]\nname = "b"\ntask = "t"\n'
     'hotkey = "ctrl+alt+zz"\n', "automation 2 ('b'): hotkey: 'ctrl+alt+zz': unknown key"),
    ('[[automation]]\nname = "a"\ntask = "t"\n[[automation]]\nname = "A"\ntask = "t"\n',
     "the name 'A' is used twice"),
])
def test_a_broken_file_names_file_and_entry_and_is_never_overwritten(
        path: Path, text: str, expected: str) -> None:
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(AutomationError) as caught:
        load_automations(path)
    assert str(path) in str(caught.value)
    assert expected in str(caught.value)
    changes: list[Callable[[], object]] = [
        lambda: add_automation(_a(name="new"), path=path),
        lambda: remove_automation("a", path=path),
        lambda: replace_automation("a", _a(name="a"), path=path),
    ]
    for change in changes:
        with pytest.raises(AutomationError):
            change()
        assert path.read_text() == text


def test_every_bad_entry_is_reported_at_once(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_text('[[automation]]\nname = "stop"\ntask = "t"\n'
                    '[[automation]]\nname = "b"\ntask = ""\n')
    with pytest.raises(AutomationError) as caught:
        load_automations(path)
    lines = str(caught.value).splitlines()
    assert len(lines) == 2
    assert "automation 1 ('stop')" in lines[0] and "automation 2 ('b')" in lines[1]


# -- the command line --------------------------------------------------------------------------


def _ok(home: Home, *args: str) -> str:
    result = run_holodesk(home, *args)
    assert result.returncode == 0, str(result)
    return result.stdout


def _refused(home: Home, *args: str, code: int = 2) -> str:
    result = run_holodesk(home, *args)
    assert result.returncode == code, str(result)
    assert "Traceback" not in result.stderr
    return result.stderr


def test_cli_add_list_edit_remove(home: Home) -> None:
    assert "no automations yet" in _ok(home, "automation", "list")
    _ok(home, "config", "set", "monitor", "2")
    out = _ok(home, "automation", "add", "timesheet", "--task", "file today's hours",
              "--hotkey", "ctrl+alt+1")
    assert "saved on Ctrl+Alt+1" in out and "holodesk trigger timesheet" in out
    _ok(home, "automation", "add", "mail", "--task", "send the report", "--confirm", "always")
    listed = _ok(home, "automation", "list").splitlines()
    assert listed[0].split() == ["NAME", "HOTKEY", "CONFIRM", "MONITOR", "TASK"]
    # The settings' confirm mode (risky) and monitor (2) when none is given.
    assert listed[1].split()[:4] == ["timesheet", "Ctrl+Alt+1", "risky", "2"]
    assert listed[2].split()[:4] == ["mail", "-", "always", "2"]

    assert "exists already" in _refused(home, "automation", "add", "Mail", "--task", "x")
    assert "emergency stop" in _refused(home, "automation", "add", "x", "--task", "x",
                                        "--hotkey", "ctrl+alt+shift+escape")
    assert "conflicts with the hotkey of 'timesheet'" in _refused(
        home, "automation", "add", "x", "--task", "x", "--hotkey", "alt+ctrl+1")
    assert "taken by `holodesk trigger run`" in _refused(home, "automation", "add", "run",
                                                         "--task", "x")
    assert "nothing to change" in _refused(home, "automation", "edit", "mail")

    _ok(home, "automation", "edit", "MAIL", "--name", "report", "--hotkey", "ctrl+alt+2",
        "--monitor", "mouse")
    _ok(home, "automation", "edit", "timesheet", "--no-hotkey", "--confirm", "never")
    items = load_automations(home.config / "holodesk" / "automations.toml")
    assert [(a.name, a.hotkey, str(a.confirm), a.monitor) for a in items] == [
        ("timesheet", None, "never", "2"), ("report", "ctrl+alt+2", "always", "mouse")]
    assert "removed" in _ok(home, "automation", "remove", "timesheet")
    assert "no automation named 'timesheet' (known: 'report')" in _refused(
        home, "automation", "remove", "timesheet")


def test_cli_reports_a_broken_file_and_leaves_it(home: Home) -> None:
    path = home.config / "holodesk" / "automations.toml"
    path.parent.mkdir(parents=True)
    path.write_text("[[automation]]\nname = 'a'\n")
    for args in (("automation", "list"), ("automation", "add", "b", "--task", "t"),
                 ("trigger", "a")):
        err = _refused(home, *args)
        assert f"{path}: automation 1 ('a'): task is missing" in err
    assert path.read_text() == "[[automation]]\nname = 'a'\n"


def test_trigger_keeps_its_own_words_and_refuses_unknown_names(home: Home) -> None:
    assert "not running" in _refused(home, "trigger", "show", code=1)
    assert "needs a task" in _refused(home, "trigger", "run")
    assert "no automation named 'nope'" in _refused(home, "trigger", "nope")
    _ok(home, "automation", "add", "save", "--task", "press save")
    assert "takes no task" in _refused(home, "trigger", "save", "something else")


def test_trigger_runs_here_when_no_app_runs(home: Home) -> None:
    # No display here: the headless run starts (and says why it cannot go on), exactly as
    # `holodesk run` would; the X11 tests run it for real.
    with FakeVLLM(ScriptedPolicy([ANSWER])) as server:
        _ok(home, "config", "set", "endpoint", server.base_url)
        _ok(home, "automation", "add", "save", "--task", "press save")
        result = run_holodesk(home, "trigger", "save")
    assert result.returncode == 1, str(result)
    assert "no display" in result.stderr



def test_changes_at_the_same_time_lose_nothing(path: Path) -> None:
    import threading

    # Each change reads, changes and rewrites the whole file: without the lock, two at once
    # would each write a list without the other's entry.
    start = threading.Barrier(8)
    failures: list[BaseException] = []

    def add(n: int) -> None:
        start.wait()
        try:
            add_automation(_a(name=f"task {n}", task=f"do thing {n}"), path=path)
        except BaseException as e:
            failures.append(e)

    threads = [threading.Thread(target=add, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not failures
    assert sorted(a.name for a in load_automations(path)) == [f"task {n}" for n in range(8)]


@pytest.mark.parametrize(
    "combo",
    ["ctrl+alt+delete", "super+l", "ctrl+alt+f1", "ctrl+c", "ctrl+v", "alt+f4", "alt+tab",
     "ctrl+alt+t", "f1", "f12", "pause", "ctrl+f9", "escape", "shift+a", "ctrl+alt+shift+1",
     "ctrl+alt+1", STOP, "super+shift+x", "ctrl+alt+backspace"],
)
def test_automation_and_stop_hotkeys_follow_one_rule(combo: str) -> None:
    def verdict(check: Callable[[str], str]) -> str | None:
        try:
            return check(combo)
        except HotkeyError:
            return None

    assert verdict(validate_hotkey) == verdict(validate_stop_hotkey)
