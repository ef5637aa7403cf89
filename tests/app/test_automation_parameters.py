"""Parameters of automations: placeholders, declarations, filling, the values of a run (given,
keyring, default, asked), secrets kept out of the file and the command line, the retyping a
replay uses, and the `holodesk automation` commands that declare, store and fill them."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.automations import Automation, AutomationError, add_automation, load_automations
from app.parameter_values import (
    MissingValues,
    forget_secrets,
    load_secret,
    parse_assignment,
    rename_secrets,
    resolve,
    store_secret,
)
from app.parameters import (
    Parameter,
    ParameterError,
    escape,
    fill,
    placeholders,
    replayed_text,
    secret_typed,
)
from model.run_secrets import RunSecrets
from tests.support.e2e import run_holodesk
from tests.support.home import Home
from tests.support.memory_secrets import MemoryStore

SECRET = "Tr0ub4dor&3-horse"


def _rename(**values: object) -> Automation:
    fields: dict[str, object] = {
        "name": "rename", "task": "rename {file} to {new_name}",
        "parameters": {"file": {"default": "report.pdf"}, "new_name": {}}}
    fields.update(values)
    return Automation.make("", **fields)


def _login() -> Automation:
    return Automation.make("", name="log in", task="log in as {user} with {password}",
                           parameters={"user": {"default": "ann"},
                                       "password": {"secret": True}})


# -- the grammar -------------------------------------------------------------------------------


def test_placeholders_are_found_in_order_once() -> None:
    assert placeholders("copy {a} to {b_2} then {a} again, {{not}} {{{c}}}") == ["a", "b_2", "c"]
    assert placeholders("no braces") == []


@pytest.mark.parametrize(("template", "why"), [
    ("a { b", "lone '{'"),
    ("a } b", "lone '}'"),
    ("{new name}", "'{new name}' is not a placeholder"),
    ("{1st}", "'{1st}' is not a placeholder"),
    ("{}", "'{}' is not a placeholder"),
    ("{a.b}", "'{a.b}' is not a placeholder"),
])
def test_a_bad_brace_is_an_error_saying_how_to_write_it(template: str, why: str) -> None:
    with pytest.raises(ParameterError, match="write") as caught:
        placeholders(template)
    assert why in str(caught.value)


def test_fill_replaces_placeholders_and_undoes_doubled_braces() -> None:
    assert fill("rename {file} to {{x}} {file}", {"file": "a.pdf"}) == "rename a.pdf to {x} a.pdf"
    # A value is never read as a template: its braces stay as they are.
    assert fill("say {what}", {"what": "{hi}"}) == "say {hi}"
    assert fill(escape('type {"a": 1} {{'), {}) == 'type {"a": 1} {{'
    with pytest.raises(ParameterError, match="no value for b, c"):
        fill("{a} {b} {c}", {"a": "1"})


def test_a_declaration_and_the_task_agree_when_saved() -> None:
    a = _rename()
    assert a.needs() == ["file", "new_name"]
    with pytest.raises(AutomationError, match=r"\{new_name\} is used in the task but not "
                       "declared"):
        _rename(parameters={"file": {}})
    with pytest.raises(AutomationError, match="'extra' is declared but the task never uses"):
        _rename(parameters={"file": {}, "new_name": {}, "extra": {}})
    with pytest.raises(AutomationError, match="secret parameter has no default"):
        _rename(parameters={"file": {"secret": True, "default": "x"}, "new_name": {}})


@pytest.mark.parametrize(("value", "why"), [
    ("", "is empty"),
    ("two\nlines", "line break"),
    ("a\rb", "line break"),
    ("tab\there", "control characters"),
    ("bell\x07", "control characters"),
])
def test_a_value_is_one_printable_line(value: str, why: str) -> None:
    with pytest.raises(AutomationError, match=why):
        _rename().fill({"file": "a.pdf", "new_name": value})


def test_fill_gives_the_task_the_model_gets() -> None:
    filled = _rename().fill({"file": "a.pdf", "new_name": "b.pdf"})
    assert filled.task == "rename a.pdf to b.pdf"
    assert filled.record() == {"parameters": {"file": "a.pdf", "new_name": "b.pdf"},
                               "masked_parameters": []}
    with pytest.raises(AutomationError, match="has no parameter 'colour'"):
        _rename().fill({"file": "a", "new_name": "b", "colour": "red"})


# -- the values of a run -----------------------------------------------------------------------


def test_given_values_win_then_defaults_then_asked() -> None:
    a = _rename()
    assert resolve(a, {"file": "x.pdf", "new_name": "y.pdf"}).task == "rename x.pdf to y.pdf"
    with pytest.raises(MissingValues) as caught:
        resolve(a, {})
    assert caught.value.names == ["new_name"] and caught.value.secret == []
    asked: list[str] = []

    def ask(name: str, declared: Parameter) -> str:
        asked.append(name)
        return "z.pdf"

    assert resolve(a, {}, ask=ask).task == "rename report.pdf to z.pdf"
    assert asked == ["new_name"]
    asked.clear()
    # --ask: every parameter not given is asked, the default only a suggestion.
    assert resolve(a, {"new_name": "n"}, ask=ask, ask_all=True).task == "rename z.pdf to n"
    assert asked == ["file"]
    # An empty answer is no value: never a run with an empty one.
    with pytest.raises(MissingValues):
        resolve(a, {}, ask=lambda name, declared: "")


def test_secret_values_come_from_the_keyring_never_from_the_command_line() -> None:
    store = MemoryStore()
    a = _login()
    with pytest.raises(MissingValues) as caught:
        resolve(a, {}, store=store)
    assert caught.value.secret == ["password"]
    with pytest.raises(AutomationError, match="never given on the command line"):
        resolve(a, {"password": SECRET}, store=store)
    store_secret(a, "password", SECRET + "\n", store)
    filled = resolve(a, {}, store=store)
    assert filled.task == f"log in as ann with {SECRET}"
    assert filled.secrets() == [SECRET]
    # Recorded for the run: the plain values and only the secret's name.
    assert filled.record() == {"parameters": {"user": "ann"}, "masked_parameters": ["password"]}
    assert SECRET not in repr(filled)
    with pytest.raises(AutomationError, match="has no secret parameter 'user'"):
        store_secret(a, "user", SECRET, store)
    with pytest.raises(ParameterError, match="shorter than 6"):
        store_secret(a, "password", "1234", store)


def test_secrets_follow_a_rename_and_go_with_the_automation() -> None:
    store = MemoryStore()
    a = _login()
    store_secret(a, "password", SECRET, store)
    renamed = a.changed(name="sign in")
    rename_secrets(a, renamed, store)
    assert load_secret(renamed, "password", store) == SECRET
    assert load_secret(a, "password", store) is None
    forget_secrets(renamed, store)
    assert load_secret(renamed, "password", store) is None


def test_a_secret_is_never_written_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "automations.toml"
    store = MemoryStore()
    a = _login()
    add_automation(a, path=path)
    store_secret(a, "password", SECRET, store)
    resolve(load_automations(path)[0], {}, store=store)
    assert SECRET not in path.read_text(encoding="utf-8")
    assert "secret = true" in path.read_text(encoding="utf-8")


def test_assignments_split_at_the_first_equals_sign() -> None:
    assert parse_assignment("query=a=b") == ("query", "a=b")
    with pytest.raises(ParameterError, match="NAME=VALUE"):
        parse_assignment("file")


# -- what a replay types -----------------------------------------------------------------------


def test_a_replayed_type_step_types_the_new_values() -> None:
    used = {"file": "report", "folder": "reports", "same": "keep"}
    new = {"file": "x.pdf", "folder": "docs", "same": "keep"}
    # Longer values first, each character replaced once, values not in this run kept.
    assert replayed_text("mv report reports/ keep", used, new) == "mv x.pdf docs/ keep"
    assert replayed_text("cd reports", used, {"file": "reports"}) == "cd reports"
    assert replayed_text("nothing here", used, new) == "nothing here"
    # A new value holding an old one is not replaced again.
    assert replayed_text("abc", {"file": "abc"}, {"file": "abcabc"}) == "abcabc"
    # A value next to punctuation is a whole value; short or repeated ones that stay are fine.
    assert replayed_text("(Ada), 1 1", {"name": "Ada", "n": "1"}, {"name": "Grace", "n": "1"}) \
        == "(Grace), 1 1"


@pytest.mark.parametrize(("typed", "used", "new", "why"), [
    # Inside other numbers and words: the ticket number is also part of the refund.
    ("Closed, refund 1010 EUR", {"n": "101"}, {"n": "7"}, "part of a longer"),
    ("cat catalog", {"f": "log"}, {"f": "x; rm -rf ~ #"}, "part of a longer"),
    ("ticket 1015 closed", {"n": "101"}, {"n": "7"}, "part of a longer"),
    ("x_ada", {"name": "ada"}, {"name": "bob"}, "part of a longer"),
    # Too short to tell a value from the same letters typed for another reason.
    ("Closed, refund to ticket 1", {"n": "1"}, {"n": "7"}, "shorter than 3"),
    ("go g", {"b": "g"}, {"b": "main"}, "shorter than 3"),
    # More than once: each may or may not have been the value.
    ("cp ann ann.bak", {"user": "ann"}, {"user": "bob"}, "2 times"),
    # Two parameters had the same value and now differ: which one was typed is unknown.
    ("hello ann", {"user": "ann", "owner": "ann"}, {"user": "bob", "owner": "ann"},
     "same value"),
])
def test_a_value_that_cannot_be_told_from_other_text_is_not_replaced(
        typed: str, used: dict[str, str], new: dict[str, str], why: str) -> None:
    # The replay hands over to the model (ValueError in app/replay.py's _retyped).
    with pytest.raises(ParameterError, match=why) as raised:
        replayed_text(typed, used, new)
    assert isinstance(raised.value, ValueError)
    for value in {*used.values(), *new.values()}:  # names the parameter, not the values
        assert value not in str(raised.value)


def test_a_masked_step_replays_only_from_a_secret_parameter() -> None:
    assert secret_typed(SECRET, {"password": SECRET}) == "password"
    # Typed more than the secret (or another secret): not replayable, the model takes over.
    assert secret_typed(SECRET + "\t", {"password": SECRET}) is None
    assert secret_typed("hunter2-other", {"password": SECRET}) is None
    assert secret_typed(SECRET, {}) is None


# -- the command line --------------------------------------------------------------------------


def _ok(home: Home, *args: str, stdin: str = "") -> str:
    result = run_holodesk(home, *args, stdin=stdin)
    assert result.returncode == 0, str(result)
    return result.stdout


def _refused(home: Home, *args: str, stdin: str = "") -> str:
    result = run_holodesk(home, *args, stdin=stdin)
    assert result.returncode == 2, str(result)
    assert "Traceback" not in result.stderr
    return result.stderr


def _file(home: Home) -> Path:
    return home.config / "holodesk" / "automations.toml"


def test_cli_declares_stores_and_refuses(home: Home) -> None:
    out = _ok(home, "automation", "add", "log in", "--task", "log in as {user} with {password}",
              "--param", "user=ann", "--secret-param", "password")
    assert "set-secret \"log in\" password" in out
    a = load_automations(_file(home))[0]
    assert a.parameters == {"user": Parameter(default="ann"),
                            "password": Parameter(secret=True)}
    assert "{pw} is used in the task but not declared" in _refused(
        home, "automation", "add", "x", "--task", "type {pw}")
    assert "takes no value" in _refused(
        home, "automation", "add", "x", "--task", "type {pw}", "--secret-param", "pw=abc")

    # The secret from stdin (no terminal), never an argument; not in the file.
    stored = _ok(home, "automation", "set-secret", "LOG IN", "password", stdin=SECRET + "\n")
    assert "stored in the keyring" in stored and SECRET not in stored
    assert SECRET not in _file(home).read_text(encoding="utf-8")
    assert "no value read" in _refused(home, "automation", "set-secret", "log in", "password")
    assert "no secret parameter 'user'" in _refused(
        home, "automation", "set-secret", "log in", "user", stdin="abcdefgh\n")
    assert "never given on the command line" in _refused(
        home, "automation", "run", "log in", "--set", f"password={SECRET}")

    # Edit: a new task drops the placeholders it no longer has; declarations change.
    edited = _ok(home, "automation", "edit", "log in", "--task", "log in with {password} {n}",
                 "--param", "n")
    assert "parameter user removed" in edited
    a = load_automations(_file(home))[0]
    assert list(a.parameters) == ["password", "n"]
    assert "has no parameter 'nope'" in _refused(home, "automation", "edit", "log in",
                                                 "--drop-param", "nope")


def test_cli_run_without_a_terminal_lists_what_is_missing(home: Home) -> None:
    _ok(home, "automation", "add", "rename", "--task", "rename {file} to {new_name}",
        "--param", "file=report.pdf", "--param", "new_name")
    err = _refused(home, "automation", "run", "rename")
    assert "needs a value for new_name" in err and "stdin is not a terminal" in err
    assert "--set new_name=VALUE" in err
    assert "is not NAME=VALUE" in _refused(home, "automation", "run", "rename", "--set", "x")
    assert "line break" not in _refused(home, "automation", "run", "rename", "--set",
                                        "colour=red")
    # A trigger asks nothing: it says how to give the value instead of running without it.
    err = _refused(home, "trigger", "rename")
    assert "a trigger uses only saved defaults and the keyring" in err
    assert "--param new_name=VALUE" in err


def test_typing_a_secret_parameter_is_typing_a_secret() -> None:
    from control.policy import ConfirmMode, SafetyPolicy
    from model.schema import Type

    plain = "blue elephant"  # looks like nothing the secret rules know
    action = Type(action="type", text=f"{plain} again")
    assert not SafetyPolicy(ConfirmMode.NEVER).assess(action).secret
    verdict = SafetyPolicy(ConfirmMode.NEVER, secrets=RunSecrets(parameters=[plain])).assess(action)
    assert verdict.secret and "types the value of a secret parameter" in verdict.reasons
