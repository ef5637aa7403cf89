"""The GUI's renderer of a problem: a structured fix is said in the windows' terms, never as a
command-line option or a `holodesk` command (those are the CLI's: tests/app/test_render.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.doctor import CheckResult, Status
from app.events import StepFailed
from app.settings import Settings
from app.status import ServerStatus
from model.errors import (
    AuthFailed,
    BadRequest,
    Cancelled,
    ContextFull,
    ContextTooLong,
    HolotronError,
    InvalidOutput,
    ModelLoading,
    ModelNotFound,
    RequestTimeout,
    ServerError,
    ServerUnreachable,
    TooManyImages,
)
from model.problem import Fix, Problem, Remedy
from ui.problem_view import REMEDY_PLACES, SETTING_PLACES, fix_text, reason_text, view
from ui.task_window import TaskWindow

# holodesk's own options and commands; vLLM's flags (--max-model-len, ...) are the server's,
# the same whichever front end started it, so a fix's words may name them.
CLI_TERMS = re.compile(r"--endpoint\b|--model\b|--monitor\b|`holodesk |holodesk config")

ERRORS: list[HolotronError] = [
    ServerUnreachable("http://x/v1"),
    ServerUnreachable("http://x/v1", broke=True),
    ModelLoading("http://x/v1"),
    ModelNotFound("holotron", ["other"]),
    TooManyImages(3, 4),
    ContextTooLong(32768, 40000),
    ContextFull(32768, 32000, 10),
    ServerError(500),
    RequestTimeout(120, "http://x/v1"),
    InvalidOutput("raw", "not valid JSON"),
    AuthFailed("http://x/v1", had_key=True),
    Cancelled(),
    BadRequest(400, detail="nope"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_the_gui_never_shows_a_command_line_option_for_a_model_error(
    error: HolotronError,
) -> None:
    shown = view(error).text()
    assert error.message.replace("`", "") in shown
    assert not CLI_TERMS.search(shown), shown
    # Plain words: no README to go and read, no Markdown quoting.
    assert "README" not in shown and "`" not in shown, shown


def test_no_serving_problem_shows_the_terminal_in_a_window(tmp_path: Path) -> None:
    """What a failed set-up from the window says (the guide, the tray): the checks' problems
    name the endpoint's field, not a command to type (vLLM not installed aside: installing
    it is done in a terminal)."""
    from model.serving.launcher import check_gpu, check_platform

    no_gpu = tmp_path / "nvidia-smi"
    no_gpu.write_text("#!/bin/sh\nexit 0\n")
    no_gpu.chmod(0o755)
    problems = [*check_gpu(str(no_gpu))[1], *check_gpu(str(tmp_path / "none"))[1]]
    platform = check_platform("win32")
    assert platform is not None
    for problem in [*problems, platform]:
        shown = view(problem).text()
        assert not CLI_TERMS.search(shown) and "`" not in shown, shown
        assert "Settings > Model server > Endpoint URL" in shown


def test_a_setting_is_named_by_its_field_in_settings() -> None:
    said = fix_text(Fix("Check the server address.", setting="endpoint"))
    assert said == "Check the server address. Change Settings > Model server > Endpoint URL."
    assert "--endpoint" not in said


def test_a_remedy_is_named_by_its_menu_item() -> None:
    said = fix_text(Fix("Start the model server.", remedy=Remedy.START_SERVER))
    assert "Start model server" in said and "holodesk serve" not in said
    shown = view(ServerUnreachable("http://x/v1"))
    assert shown.remedy is Remedy.START_SERVER and shown.setting == "endpoint"
    assert "Start model server" in shown.fix and "Endpoint URL" in shown.fix


def test_where_to_do_a_fix_reads_as_a_sentence() -> None:
    """Not "(the tray menu's Start model server; Settings > Model server > Endpoint URL)" after
    the fix's last sentence (issue 24): the places are a sentence of their own."""
    shown = view(ServerUnreachable("http://x/v1")).fix
    assert shown.endswith("(minutes). Use the tray menu's Start model server, or change "
                          "Settings > Model server > Endpoint URL."), shown
    # Words without a full stop get one before the places; a remedy and its own setting are
    # named once; a place ending in an ellipsis takes no full stop after it.
    assert fix_text(Fix("store one", setting="api_key", remedy=Remedy.SET_API_KEY)) == (
        "store one. Use Settings > Model server > API key.")
    assert fix_text(Fix("Check the set-up", remedy=Remedy.RUN_DOCTOR)) == (
        "Check the set-up. Use the tray menu's Check set-up…")
    assert reason_text("The server stopped", Fix("x", remedy=Remedy.SHOW_LOG)) == (
        "The server stopped. Use the tray menu's Action log.")


def test_every_remedy_has_a_gui_place() -> None:
    assert set(REMEDY_PLACES) == set(Remedy)


def test_every_settings_place_is_a_setting() -> None:
    assert set(SETTING_PLACES) <= set(Settings.model_fields) | {"api_key"}


def test_plain_words_show_as_they_are() -> None:
    assert fix_text(None) == ""
    assert fix_text(Fix("Nothing to do.")) == "Nothing to do."
    assert view(Problem("Broke.", None)).text("Fix") == "Broke."
    assert view(Problem("Broke.", Fix("Mend it."))).text("Fix") == "Broke.\nFix: Mend it."
    assert view(Problem("Broke.", Fix("Mend it."))).line() == "Broke. Mend it."


def test_statuses_and_results_render_like_errors() -> None:
    error = ServerUnreachable("http://x/v1")
    status = ServerStatus("down", error.message, error.fix)
    result = CheckResult("endpoint", Status.FAIL, error.message, error.fix)
    failed = StepFailed("r1", 2, error.message, error.fix)
    expected = view(error)
    assert view(status.problem) == view(result.problem) == view(failed.problem) == expected


def test_the_task_window_shows_a_failed_step_in_gui_terms(qtbot: QtBot) -> None:
    window = TaskWindow()
    qtbot.addWidget(window)
    error = ServerUnreachable("http://127.0.0.1:8000/v1")
    window.on_event(StepFailed("r1", 2, error.message, error.fix))
    text = window.error_label.text()
    assert "No model server answers" in text and "Start model server" in text
    assert not CLI_TERMS.search(text), text
