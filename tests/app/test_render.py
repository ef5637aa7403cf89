"""The CLI's renderer of a problem: a structured fix names the command or option to type
(the GUI names a menu item or a field instead: tests/ui/test_problem_view.py)."""

from __future__ import annotations

from app.cli.render import COMMANDS, fix_line, render
from app.doctor import CheckResult, Status, format_result
from model.errors import AuthFailed, BadRequest, ServerUnreachable
from model.problem import Fix, HolodeskError, Problem, Remedy


def test_the_cli_names_the_command_of_a_remedy() -> None:
    said = fix_line(Fix("Start the model server.", remedy=Remedy.START_SERVER))
    assert said == "Start the model server. (`holodesk serve`)"


def test_the_cli_names_the_option_and_the_config_command_of_a_setting() -> None:
    said = fix_line(Fix("Check the server address.", setting="endpoint"))
    assert "--endpoint" in said and "`holodesk config set endpoint ...`" in said
    other = fix_line(Fix("Raise the request timeout.", setting="request_timeout"))
    assert "`holodesk config set request_timeout ...`" in other and "--" not in other


def test_every_remedy_has_a_command() -> None:
    assert set(COMMANDS) == set(Remedy)


def test_render_is_the_form_the_commands_print() -> None:
    assert render(Problem("Broke.")) == "Broke."
    assert render(Problem("Broke.", Fix("Mend it."))) == "Broke.\nFix: Mend it."
    assert render(HolodeskError("Broke.", "mend it")) == "Broke.\nFix: mend it"


def test_model_errors_name_their_commands_in_the_cli() -> None:
    down = render(ServerUnreachable("http://x/v1"))
    assert "holodesk serve" in down and "--endpoint" in down
    assert "holodesk config set api_key -" in render(AuthFailed("http://x/v1", had_key=False))
    assert "--endpoint" in render(BadRequest(400))


def test_the_doctor_prints_fixes_in_cli_terms() -> None:
    error = ServerUnreachable("http://x/v1")
    result = CheckResult("endpoint", Status.FAIL, error.message, error.fix)
    line = format_result(result, say=fix_line)
    assert "Fix: " in line and "`holodesk serve`" in line
    assert result.to_dict(fix_line)["fix"] == fix_line(error.fix)
