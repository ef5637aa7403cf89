"""`holodesk ... --help` for a newcomer: every command and subcommand says what it does and
shows examples that parse, the top-level help starts with the app and the demo, and `config
set --help` lists every setting of the settings model with its meaning and range."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import typing
from collections.abc import Iterator
from enum import Enum
from pathlib import Path

import annotated_types
import pytest

from app.cli.helptext import EXAMPLES
from app.cli.main import _parser, main
from app.settings import Settings
from tests.support.home import REPO_ROOT, isolate_home


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)
    monkeypatch.setenv("COLUMNS", "100")  # one layout, whatever the terminal running the tests


Command = tuple[tuple[str, ...], argparse.ArgumentParser]


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[Command]:
    """Every parser of the tree with the words that reach it (an alias once: its first name)."""
    yield path, parser
    seen: set[int] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                if id(child) not in seen:
                    seen.add(id(child))
                    yield from commands(child, (*path, name))


def example_lines(parser: argparse.ArgumentParser) -> list[list[str]]:
    """The commands of a help's "Examples:" block, as words; a line may chain several with
    ``&&``, each one an example."""
    epilog = parser.epilog or ""
    assert EXAMPLES in epilog
    found = []
    for line in epilog.split(EXAMPLES, 1)[1].splitlines():
        if not line.startswith("  ") or not line.strip():
            continue
        words = shlex.split(line, comments=True)
        while words:
            part, _, rest = (words[: words.index("&&")], None, words[words.index("&&") + 1:]) \
                if "&&" in words else (words, None, [])
            found.append(part)
            words = rest
    return found


def parses(words: list[str]) -> argparse.Namespace:
    """``words`` (a whole `holodesk ...` command) parsed by a fresh parser, or the test fails
    with argparse's own complaint."""
    assert words[0] == "holodesk", words
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return _parser().parse_args(words[1:])
    except SystemExit:
        pytest.fail(f"the example `{shlex.join(words)}` does not parse: {err.getvalue()}")


def test_every_command_says_what_it_does_and_has_examples_that_parse() -> None:
    tree = list(commands(_parser()))
    names = {" ".join(path) for path, _ in tree}
    # The walk reaches the leaves (else it would check nothing).
    assert {"run", "demo", "config set", "log show", "automation schedule", "help"} <= names
    for path, parser in tree:
        where = " ".join(("holodesk", *path))
        assert parser.description and len(parser.description) > 40, f"{where}: no description"
        lines = example_lines(parser)
        own = [words for words in lines if words[1:1 + len(path)] == list(path)]
        assert own, f"{where}: no example of {where} itself ({lines})"
        for words in lines:
            parses(words)


def test_a_command_without_description_or_examples_is_found(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk above fails for a command added without them (not only for those it knows)."""
    from app.cli import trigger

    def bare(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        sub.add_parser("trigger", help="something new")

    monkeypatch.setattr(trigger, "register", bare)
    with pytest.raises(AssertionError, match="holodesk trigger: no description"):
        test_every_command_says_what_it_does_and_has_examples_that_parse()


def test_an_example_that_does_not_parse_fails() -> None:
    with pytest.raises(pytest.fail.Exception, match="does not parse"):
        parses(["holodesk", "run", "--confirm", "sometimes", "x"])


def help_of(*words: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        _parser().parse_args([*words, "--help"])
    assert done.value.code == 0
    return out.getvalue()


def test_the_top_level_help_starts_with_the_app_and_the_demo() -> None:
    text = help_of()
    start = text.split("Start here:\n", 1)[1]
    first, second = (line.split()[:2] for line in start.splitlines()[:4]
                     if line.startswith("  holodesk"))
    assert first[0] == "holodesk" and first[1] != "demo"
    assert "desktop app" in start.split("holodesk demo")[0]
    assert second == ["holodesk", "demo"] and "no GPU" in start.split("\n\n")[0]
    # Then every command, in groups, before the options.
    listing = text.split("Start here:", 1)[1].split("options:", 1)[0]
    registered = {path[0] for path, _ in commands(_parser()) if len(path) == 1} - {"help"}
    for name in registered:
        assert re.search(rf"^  (holodesk )?{name}  ", listing, re.M), f"{name} is not listed"
    headings = re.findall(r"^(\S[^\n]*):$", listing, re.M)
    assert len(headings) >= 3, headings
    # It ends with where to read more: README sections that exist, and the doctor.
    end = " ".join(text.rsplit("Examples:", 1)[1].split())
    readme = (REPO_ROOT / "README.md").read_text()
    sections = re.findall(r'"([^"]+)"', end.split("README.md", 1)[1])
    assert len(sections) >= 4, end
    for section in sections:
        assert re.search(rf"^#+ {re.escape(section).replace('holodesk', '`?holodesk')}`?$",
                         readme, re.M), f"README.md has no section {section!r}"
    assert "holodesk doctor" in end.split("README.md", 1)[1]


def test_run_help_says_what_a_run_does_how_to_stop_it_and_what_it_needs() -> None:
    from control.hotkeys import DEFAULT_STOP_HOTKEY, parse_combo

    text = " ".join(help_of("run").split())
    assert "Carry out TASK" in text
    assert "asks first" in text and "--confirm always" in text
    for stop in (parse_combo(DEFAULT_STOP_HOTKEY).label(), "stop_hotkey setting", "Ctrl+C",
                 "corner of the screen", "the Stop of the run bar"):
        assert stop in text, stop
    for need in ("model server", "holodesk serve", "endpoint", "holodesk doctor",
                 "holodesk demo"):
        assert need in text, need


def setting_rows(text: str) -> dict[str, str]:
    """The settings list of a help: name -> its text, on one line."""
    block = text.split("Settings (", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, str] = {}
    name = ""
    for line in block.splitlines()[1:]:
        match = re.match(r"^  (\w+)\s+(.*)$", line)
        if match and not line.startswith("   "):
            name = match.group(1)
            rows[name] = match.group(2)
        else:
            rows[name] += " " + line.strip()
    return rows


def _choices(annotation: object) -> list[str]:
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return [str(m.value) for m in annotation]
    if typing.get_origin(annotation) is typing.Literal:
        return [str(a) for a in typing.get_args(annotation)]
    return []


@pytest.mark.parametrize("command", [("config", "set"), ("config",)])
def test_config_help_lists_every_setting_with_its_meaning_and_range(
        command: tuple[str, ...]) -> None:
    rows = setting_rows(help_of(*command))
    assert list(rows) == list(Settings.model_fields)
    for name, field in Settings.model_fields.items():
        row = rows[name]
        assert field.description, f"setting {name} has no description"
        assert " ".join(field.description.split()) in row, (name, row)
        for rule in field.metadata:
            for bound in ("ge", "gt", "le", "lt"):
                if isinstance(rule, getattr(annotated_types, bound.capitalize())):
                    assert f"{getattr(rule, bound):g}" in row, (name, bound, row)
        for choice in _choices(field.annotation):
            assert re.search(rf"\b{re.escape(choice)}\b", row), (name, choice, row)
        if field.annotation is bool:
            assert "true or false" in row, row
    assert "1 to 500" in rows["max_steps"] and "default: 30" in rows["max_steps"]
    assert "one of jpeg, png" in rows["image_format"]
    assert "a safety setting" in rows["confirm"] and "a safety setting" not in rows["max_steps"]


def test_help_names_a_command_or_its_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "config", "set"]) == 0
    assert capsys.readouterr().out == help_of("config", "set")
    assert main(["help"]) == 0
    assert capsys.readouterr().out == help_of()
    assert main(["help", "config", "sett"]) == 2
    assert "holodesk --help" in capsys.readouterr().err
