"""The automations file's format version: old files load unchanged, newer ones are refused and
never overwritten, unknown fields are refused in every version this holodesk knows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.automations import (
    FORMAT_VERSION,
    Automation,
    AutomationError,
    NewerFileError,
    add_automation,
    load_automations,
    remove_automation,
    replace_automation,
    save_automations,
)
from tests.support.e2e import run_holodesk
from tests.support.home import Home

#: Written by `save_automations` of the holodesk before format versions (commit 533d423), as is.
V1_FIXTURE = Path(__file__).parent / "data" / "automations_v1.toml"


@pytest.fixture
def v1(tmp_path: Path) -> Path:
    path = tmp_path / "automations.toml"
    shutil.copyfile(V1_FIXTURE, path)
    return path


def test_a_file_from_before_versions_loads_unchanged(v1: Path) -> None:
    before = v1.read_bytes()
    assert b"version" not in before
    items = load_automations(v1)
    assert [(a.name, str(a.confirm), a.monitor, a.hotkey, a.only_in) for a in items] == [
        ("timesheet", "risky", "1", "ctrl+alt+1", ("firefox",)),
        ("tidy downloads", "always", "mouse", None, ()),
        ("café", "never", "1280x800+0+0", "f9", ()),
    ]
    # Braces were plain text then: the model gets the task word for word, and nothing is
    # taken for a parameter.
    assert [a.fill({}).task for a in items] == [
        "open the timesheet page and file today's hours",
        'rename {file} in Downloads and type {"done": true} in notes.txt',
        "open the menu",
    ]
    assert all(a.needs() == [] for a in items)
    assert v1.read_bytes() == before  # reading never rewrites


def test_a_change_writes_the_current_version_and_keeps_the_old_meaning(v1: Path) -> None:
    old = load_automations(v1)
    replace_automation("café", old[2].changed(monitor="2"), path=v1)
    text = v1.read_text(encoding="utf-8")
    assert f"version = {FORMAT_VERSION}\n" in text
    again = load_automations(v1)
    assert again[1] == old[1]
    assert again[1].fill({}).task == 'rename {file} in Downloads and type {"done": true} in ' \
        "notes.txt"
    assert again[2].monitor == "2"


def test_a_version_2_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "automations.toml"
    items = [
        Automation.make("", name="rename", task="rename {file} to {new_name} ({{draft}})",
                        hotkey="ctrl+alt+3",
                        parameters={"file": {"default": "report.pdf",
                                             "description": "the file to rename"},
                                    "new_name": {}}),
        Automation.make("", name="login", task="log in with {password}",
                        parameters={"password": {"secret": True}}),
    ]
    save_automations(items, path)
    text = path.read_text(encoding="utf-8")
    assert text.count("version = 2") == 1
    assert "[automation.parameters.file]" in text and 'default = "report.pdf"' in text
    assert "secret = true" in text
    assert load_automations(path) == items
    save_automations(load_automations(path), path)
    assert path.read_text(encoding="utf-8") == text


def test_a_newer_file_is_refused_and_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "automations.toml"
    newer = (f"version = {FORMAT_VERSION + 1}\n\n[[automation]]\nname = \"x\"\ntask = \"y\"\n"
             "colour = \"blue\"\n")
    path.write_text(newer, encoding="utf-8")
    with pytest.raises(NewerFileError) as caught:
        load_automations(path)
    message = str(caught.value)
    assert "written by a newer holodesk" in message and "Update holodesk" in message
    assert f"format version {FORMAT_VERSION + 1}" in message
    new = Automation.make("", name="z", task="zz")
    for change in (lambda: add_automation(new, path=path),
                   lambda: replace_automation("x", new, path=path),
                   lambda: remove_automation("x", path=path),
                   lambda: save_automations([new], path)):
        with pytest.raises(NewerFileError):
            change()
        assert path.read_text(encoding="utf-8") == newer


@pytest.mark.parametrize(("text", "expected"), [
    # The current version: an unknown field is named, as before versions.
    (f'version = {FORMAT_VERSION}\n[[automation]]\nname = "a"\ntask = "b"\ncolour = "x"\n',
     "'colour' is not a field of an automation"),
    (f'version = {FORMAT_VERSION}\n[[automation]]\nname = "a"\ntask = "b {{x}}"\n'
     '[automation.parameters.x]\ncolour = "x"\n',
     "parameters.x.colour is not a field of a parameter"),
    # Version 1 (no version line): what version 1 did not have is refused, with the way out.
    ('[[automation]]\nname = "a"\ntask = "b {x}"\n[automation.parameters.x]\n',
     "'parameters' is not a field of a version 1 file"),
    ('[[automation]]\nname = "a"\ntask = "b"\ncolour = "x"\n',
     "'colour' is not a field of a version 1 file"),
    ('version = "2"\n', "version = '2' is not a format version"),
    ("version = 0\n", "version = 0 is not a format version"),
    ('version = 2\ncolour = "x"\n', "unexpected 'colour'"),
])
def test_unknown_fields_and_versions_are_refused_by_name(tmp_path: Path, text: str,
                                                         expected: str) -> None:
    path = tmp_path / "automations.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AutomationError) as caught:
        load_automations(path)
    assert expected in str(caught.value)
    assert not isinstance(caught.value, NewerFileError)


def test_the_command_line_refuses_a_newer_file_and_leaves_it(home: Home) -> None:
    path = home.config / "holodesk" / "automations.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    newer = f'version = {FORMAT_VERSION + 1}\n[[automation]]\nname = "x"\ntask = "y"\n'
    path.write_text(newer, encoding="utf-8")
    for args in (("automation", "list"), ("automation", "add", "z", "--task", "zz")):
        result = run_holodesk(home, *args)
        assert result.returncode == 2, str(result)
        assert "written by a newer holodesk" in result.stderr
        assert "Traceback" not in result.stderr
    assert path.read_text(encoding="utf-8") == newer
