"""`holodesk doctor` without a display: the pure judgements, the runner, and the model-server
checks against the fake vLLM server (a real HTTP server on 127.0.0.1)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from keyring.backends import fail

from app.cli.render import fix_line
from app.doctor import (
    CHECK_NAMES,
    CONTEXT,
    DISPLAY,
    ENDPOINT,
    IMAGES,
    KEYRING,
    MODEL,
    REASONING,
    STRUCTURED,
    CheckResult,
    Doctor,
    DoctorConfig,
    Status,
    all_passed,
    context_result,
    display_result,
    fix_label,
    format_result,
    frame_is_black,
    keyring_result,
    run_with_timeout,
    session_kind,
    summary_text,
    tray_result,
)
from app.secrets import ENV_API_KEY, KeyringStore, lookup_api_key, vouch_for
from app.settings import Settings
from tests.support.fake_vllm import (
    FakeHTTPError,
    FakeVLLM,
    GarbagePolicy,
    ScriptedPolicy,
    StructuredOutputs,
)
from tests.support.home import isolate_home
from tests.support.keyring_backend import LockedBackend

WAIT = {"thought": "nothing to do", "action": {"action": "wait", "seconds": 0}}
ENDPOINT_URL = "http://127.0.0.1:8000/v1"

vouch_for(LockedBackend)  # it stands for a Secret Service that stays locked


def _never_connect(name: str) -> str:
    raise AssertionError(f"must not open a display ({name})")


# --------------------------------------------------------------------------- the display


@pytest.mark.parametrize(
    ("env", "kind"),
    [
        ({"DISPLAY": ":0"}, "x11"),
        ({"DISPLAY": ":0", "XDG_SESSION_TYPE": "x11"}, "x11"),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "xwayland"),
        ({"DISPLAY": ":1", "XDG_SESSION_TYPE": "Wayland"}, "xwayland"),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "wayland"),
        ({"XDG_SESSION_TYPE": "wayland"}, "wayland"),
        ({}, "none"),
        ({"DISPLAY": "", "XDG_SESSION_TYPE": "tty"}, "none"),
    ],
)
def test_session_kind_from_the_environment(env: dict[str, str], kind: str) -> None:
    assert session_kind(env) == kind


def test_no_display_fails_with_the_display_module_message() -> None:
    result = display_result({}, "linux", _never_connect)
    assert result.status is Status.FAIL
    assert "DISPLAY is not set" in result.detail
    assert "desktop session" in fix_line(result.fix)


@pytest.mark.parametrize(
    "env", [{"WAYLAND_DISPLAY": "wayland-0"}, {"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}]
)
def test_wayland_fails_explaining_what_does_not_work_and_why(env: dict[str, str]) -> None:
    result = display_result(env, "linux", _never_connect)
    assert result.status is Status.FAIL
    text = result.detail.lower()
    for words in ("wayland", "xwayland windows", "portal", "input injection", "hotkeys",
                  "compositor"):
        assert words in text, words
    assert "Ubuntu on Xorg" in fix_line(result.fix)


def test_x11_passes_when_the_display_opens_and_fails_when_it_does_not() -> None:
    ok = display_result({"DISPLAY": ":5"}, "linux", lambda name: f"screen of {name}")
    assert ok.status is Status.PASS
    assert "screen of :5" in ok.detail

    def refuse(name: str) -> str:
        raise ConnectionRefusedError("no such display")

    bad = display_result({"DISPLAY": ":5"}, "linux", refuse)
    assert bad.status is Status.FAIL
    assert "no such display" in bad.detail
    assert "XAUTHORITY" in fix_line(bad.fix)


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_windows_and_macos_have_their_desktop(platform: str) -> None:
    assert display_result({}, platform, _never_connect).status is Status.PASS


def test_black_frames() -> None:
    assert frame_is_black(np.zeros((90, 160), np.uint8))
    assert frame_is_black(np.full((90, 160), 6, np.uint8))  # JPEG noise on black
    desktop = np.zeros((90, 160), np.uint8)
    desktop[40:50, 70:90] = 200  # one window
    assert not frame_is_black(desktop)
    assert frame_is_black(np.zeros((0, 0), np.uint8))


def test_no_tray_is_a_pass_with_a_note() -> None:
    assert tray_result(True, False).status is Status.PASS
    assert "StatusNotifier" in tray_result(False, True).detail
    missing = tray_result(False, False)
    assert missing.status is Status.PASS
    assert "always-on-top window" in missing.detail
    assert missing.fix


@pytest.mark.parametrize(
    ("length", "status"),
    [(None, Status.PASS), (4096, Status.FAIL), (16383, Status.FAIL), (16384, Status.PASS),
     (32768, Status.PASS)],
)
def test_context_length_against_a_three_screenshot_step(length: int | None,
                                                        status: Status) -> None:
    result = context_result(length)
    assert result.status is status
    if status is Status.FAIL:
        assert "--max-model-len 32768" in fix_line(result.fix)
        assert "3 screenshots" in result.detail


def test_keyring_judgement() -> None:
    good = keyring_result("keyring.backends.SecretService.Keyring", problem=None,
                          key_source="keyring")
    assert good.status is Status.PASS
    assert "SecretService" in good.detail
    # A backend app.secrets refuses (keyrings.alt's file) shows as "unavailable" with why.
    refused = ("unavailable (keyrings.alt.file.PlaintextKeyring: not a secure keyring, "
               "refused)")
    for backend, problem in (
        (refused, "No secure system keyring was found"),
        ("unavailable (keyring.backends.fail.Keyring: no keyring found)",
         "No secure system keyring was found"),
    ):
        broken = keyring_result(backend, problem=problem, key_source="keyring")
        assert broken.status is Status.FAIL
        fix = fix_line(broken.fix)
        assert "gnome-keyring" in fix and "HOLODESK_API_KEY" in fix
        assert "plain file" in fix and "keyrings.alt" not in fix
        # No key stored: holodesk works (a loopback server needs none), with a warning.
        unneeded = keyring_result(backend, problem=problem, key_source="none")
        assert unneeded.status is Status.WARN and unneeded.passed
        assert backend.removeprefix("unavailable (").rstrip(")") in unneeded.detail
        assert "gnome-keyring" in unneeded.fix.text and "needs no key" in unneeded.fix.text
    # A key in the environment makes the keyring unnecessary for the key; still a warning.
    env = keyring_result("unavailable (keyring.backends.fail.Keyring)",
                         problem="No secure system keyring", key_source="env")
    assert env.status is Status.WARN
    assert "HOLODESK_API_KEY" in env.detail and "safety setting" in env.detail


def _said_once(result: CheckResult) -> None:
    """Each sentence of the printed result appears once (the detail does not repeat the
    fix's advice, as it did with app.secrets' help in it)."""
    text = format_result(result, say=fix_line)
    sentences = [s.strip() for s in re.split(r"[.;:]\s", " ".join(text.split())) if s.strip()]
    repeated = {s for s in sentences if sentences.count(s) > 1}
    assert not repeated, text
    for advice in ("apt-get install gnome-keyring", "in the environment of each run",
                   "your desktop's keyring or password manager"):
        assert text.count(advice) <= 1, (advice, text)


def test_no_secure_keyring_is_a_warning_said_once() -> None:
    """What the doctor's keyring check is handed on a machine without a keyring: app.secrets'
    own backend name and problem (which holds its advice)."""
    store = KeyringStore(fail.Keyring())
    found = lookup_api_key(ENDPOINT_URL, store, {})
    result = keyring_result(store.backend_name(), problem=found.problem, key_source=found.source)
    assert result.status is Status.WARN
    assert result.detail.startswith("no secure keyring (keyring.backends.fail.Keyring")
    assert "can store no API key" in result.detail
    fix = fix_line(result.fix)
    assert "Secret Service" in fix and ENV_API_KEY in fix and "needs no key" in fix
    assert fix_label(result) == "Fix"
    _said_once(result)


def test_a_locked_keyring_is_a_warning_that_says_to_unlock_it_once() -> None:
    store = KeyringStore(LockedBackend())
    found = lookup_api_key(ENDPOINT_URL, store, {})
    assert found.problem is not None
    result = keyring_result(store.backend_name(), problem=found.problem,
                            key_source=found.source)
    assert result.status is Status.WARN
    assert "the keyring cannot be used" in result.detail
    assert "KeyringLocked: Failed to unlock the collection!" in result.detail
    assert "Unlock the keyring" in fix_line(result.fix)
    _said_once(result)


def test_format_and_all_passed() -> None:
    fail = CheckResult(ENDPOINT, Status.FAIL, "nothing answers", "start it")
    note = CheckResult(DISPLAY, Status.PASS, "fine", "a note")
    warn = CheckResult(KEYRING, Status.WARN, "no keyring", "install one")
    assert format_result(fail, say=fix_line).startswith("FAIL  endpoint")
    assert "Fix: start it" in format_result(fail, say=fix_line)
    assert "Note: a note" in format_result(note, say=fix_line)
    assert format_result(warn, say=fix_line).startswith("WARN  keyring")
    assert "Fix: install one" in format_result(warn, say=fix_line)
    assert all_passed([note])
    assert not all_passed([note, fail])
    assert not all_passed([note, CheckResult(MODEL, Status.SKIP, "skipped")])
    assert not all_passed([])
    # A warning passes: the exit code and the summary are those of a set-up that works.
    assert all_passed([note, warn])
    assert summary_text([note, note]) == "All 2 checks passed."
    assert summary_text([note, warn]) == "All 2 checks passed, 1 with a warning."
    assert summary_text([warn, fail, warn]) == "2 of 3 checks passed (2 with warnings)."
    assert summary_text([note, fail]) == "1 of 2 checks passed."


# --------------------------------------------------------------------------- the runner


def test_a_check_that_raises_or_hangs_fails_instead_of_crashing() -> None:
    def boom() -> CheckResult:
        raise RuntimeError("the widget exploded")

    raised = run_with_timeout("x", boom, 5.0)
    assert raised.status is Status.FAIL
    assert "RuntimeError: the widget exploded" in raised.detail

    release = threading.Event()

    def hang() -> CheckResult:
        release.wait(10)
        return CheckResult("y", Status.PASS, "late")

    try:
        hung = run_with_timeout("y", hang, 0.2)
    finally:
        release.set()
    assert hung.status is Status.FAIL
    assert "did not finish within 0.2 seconds" in hung.detail


def _stubbed(settings: Settings, results: dict[str, CheckResult | Exception]) -> Doctor:
    """A doctor whose checks return (or raise) what ``results`` says; others pass."""
    doctor = Doctor(DoctorConfig(settings=settings, environ={}, platform="linux"))
    for name in CHECK_NAMES:
        method = next(m for n, m, _, _ in doctor._plan() if n == name).__name__
        outcome = results.get(name, CheckResult(name, Status.PASS, "fine"))

        def check(outcome: CheckResult | Exception = outcome) -> CheckResult:
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

        setattr(doctor, method, check)
    return doctor


def test_runner_order_skips_dependents_and_survives_a_raising_check() -> None:
    doctor = _stubbed(Settings(), {
        DISPLAY: CheckResult(DISPLAY, Status.FAIL, "no display", "set DISPLAY"),
        ENDPOINT: ValueError("odd URL"),
    })
    seen: list[str] = []
    results = doctor.run(lambda r: seen.append(r.name))
    assert [r.name for r in results] == list(CHECK_NAMES) == seen
    status = {r.name: r.status for r in results}
    assert status["screen capture"] is Status.SKIP
    assert status["input injection"] is Status.SKIP
    assert status["global hotkeys"] is Status.SKIP
    assert status["system tray"] is Status.SKIP
    assert status["keyring"] is Status.PASS
    assert status[ENDPOINT] is Status.FAIL
    assert "ValueError: odd URL" in results[CHECK_NAMES.index(ENDPOINT)].detail
    for later in (MODEL, CONTEXT, IMAGES, STRUCTURED, "one-step dry run"):
        assert status[later] is Status.SKIP, later
    assert not all_passed(results)


def test_the_api_key_is_redacted_from_every_result() -> None:
    key = "sk-very-secret-key-123"
    doctor = _stubbed(Settings(), {
        ENDPOINT: CheckResult(ENDPOINT, Status.FAIL, f"server said: bad key {key}", f"not {key}"),
    })
    doctor._key = key
    results = doctor.run()
    text = "\n".join(format_result(r, say=fix_line) for r in results)
    assert key not in text
    assert "***" in text


# --------------------------------------------------------------------------- the model server


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)


def _server_checks(endpoint: str, *, model: str | None = None,
                   environ: dict[str, str] | None = None) -> dict[str, CheckResult]:
    """Run the model-server checks in order, as the doctor does, without the desktop ones."""
    settings = Settings().with_overrides(
        {"endpoint": endpoint, **({"model": model} if model else {})})
    doctor = Doctor(DoctorConfig(settings=settings, environ=environ or {}, platform="linux",
                                 request_timeout=20.0))
    results: dict[str, CheckResult] = {}
    try:
        for name, check in ((ENDPOINT, doctor.check_endpoint), (MODEL, doctor.check_model),
                            (CONTEXT, doctor.check_context), (IMAGES, doctor.check_images),
                            (STRUCTURED, doctor.check_structured)):
            results[name] = check()
            if name in (ENDPOINT, MODEL) and not results[name].passed:
                break
    finally:
        doctor.close()
    return results


@pytest.fixture
def scripted() -> Iterator[FakeVLLM]:
    with FakeVLLM(ScriptedPolicy([WAIT], repeat_last=True)) as server:
        yield server


def test_a_good_server_passes_every_server_check(scripted: FakeVLLM) -> None:
    results = _server_checks(scripted.base_url)
    assert all(r.passed for r in results.values()), results
    assert "'holotron'" in results[MODEL].detail
    assert "32768" in results[CONTEXT].detail
    # The structured-output probe carried the step schema.
    assert any(r.schema is not None for r in scripted.requests)


def test_server_down_names_holodesk_serve() -> None:
    with FakeVLLM(GarbagePolicy()) as server:
        url = server.base_url
    results = _server_checks(url)
    assert results[ENDPOINT].status is Status.FAIL
    assert "No model server answers" in results[ENDPOINT].detail
    assert "holodesk serve" in fix_line(results[ENDPOINT].fix)
    assert MODEL not in results


def test_wrong_path_says_where_vllm_answers(scripted: FakeVLLM) -> None:
    results = _server_checks(f"{scripted.root_url}/api")
    assert results[ENDPOINT].status is Status.FAIL
    assert "/v1" in fix_line(results[ENDPOINT].fix)


def test_missing_or_wrong_api_key() -> None:
    with FakeVLLM(ScriptedPolicy([WAIT], repeat_last=True), api_key="sk-right-key-42") as server:
        none = _server_checks(server.base_url)
        wrong = _server_checks(server.base_url, environ={"HOLODESK_API_KEY": "sk-wrong-key-9"})
        right = _server_checks(server.base_url, environ={"HOLODESK_API_KEY": "sk-right-key-42"})
    assert none[ENDPOINT].status is Status.FAIL
    assert "requires an API key" in none[ENDPOINT].detail
    assert "holodesk config set api_key" in fix_line(none[ENDPOINT].fix)
    assert "refused the API key" in wrong[ENDPOINT].detail
    assert all(r.passed for r in right.values()), right


def test_loading_server_says_wait() -> None:
    with FakeVLLM(GarbagePolicy(), loading=True) as server:
        results = _server_checks(server.base_url)
    assert results[ENDPOINT].status is Status.FAIL
    assert "loading" in results[ENDPOINT].detail


def test_wrong_model_name_lists_the_served_ones(scripted: FakeVLLM) -> None:
    results = _server_checks(scripted.base_url, model="holo-wrong")
    assert results[ENDPOINT].passed
    assert results[MODEL].status is Status.FAIL
    assert "'holo-wrong'" in results[MODEL].detail
    assert "'holotron'" in results[MODEL].detail
    assert "--served-model-name" in fix_line(results[MODEL].fix)


def test_image_limit_one_names_the_vllm_flag() -> None:
    with FakeVLLM(ScriptedPolicy([WAIT], repeat_last=True), image_limit=1) as server:
        results = _server_checks(server.base_url)
    assert results[IMAGES].status is Status.FAIL
    assert "at most 1 image" in results[IMAGES].detail
    assert "--limit-mm-per-prompt" in fix_line(results[IMAGES].fix)
    assert results[CONTEXT].passed


def test_small_context_names_the_vllm_flag() -> None:
    with FakeVLLM(ScriptedPolicy([WAIT], repeat_last=True), max_model_len=8192) as server:
        results = _server_checks(server.base_url)
    assert results[CONTEXT].status is Status.FAIL
    assert "8192" in results[CONTEXT].detail
    assert "--max-model-len" in fix_line(results[CONTEXT].fix)


def test_a_server_ignoring_the_schema_fails_structured_output() -> None:
    with FakeVLLM(GarbagePolicy("OK"), structured_outputs=StructuredOutputs.IGNORED) as server:
        results = _server_checks(server.base_url)
    assert results[STRUCTURED].status is Status.FAIL
    assert "ignored the step schema" in results[STRUCTURED].detail
    assert "'OK'" in results[STRUCTURED].detail
    assert "vLLM 0.12" in fix_line(results[STRUCTURED].fix)
    assert "guided_json" in fix_line(results[STRUCTURED].fix)


def test_a_server_ignoring_the_schema_with_prose_says_why_it_is_not_a_step() -> None:
    with FakeVLLM(GarbagePolicy(), structured_outputs=StructuredOutputs.IGNORED) as server:
        results = _server_checks(server.base_url)
    assert results[STRUCTURED].status is Status.FAIL
    assert "not a step (not valid JSON" in results[STRUCTURED].detail
    assert "vLLM 0.12" in fix_line(results[STRUCTURED].fix)


def test_a_server_rejecting_the_schema_fails_structured_output() -> None:
    refuse = FakeHTTPError(400, "Unknown field: structured_outputs")
    with FakeVLLM(ScriptedPolicy(["", refuse], repeat_last=True)) as server:
        results = _server_checks(server.base_url)
    assert results[IMAGES].passed  # the image probe took the first reply
    assert results[STRUCTURED].status is Status.FAIL
    assert "refused" in results[STRUCTURED].detail
    assert "structured_outputs" in results[STRUCTURED].detail
    assert "vLLM 0.12" in fix_line(results[STRUCTURED].fix)


# --------------------------------------------------------------------------- reasoning apart


def _reasoning_checks(server: FakeVLLM) -> dict[str, CheckResult]:
    settings = Settings().with_overrides({"endpoint": server.base_url})
    doctor = Doctor(DoctorConfig(settings=settings, environ={}, platform="linux",
                                 request_timeout=20.0))
    try:
        return {name: check() for name, check in ((ENDPOINT, doctor.check_endpoint),
                                                  (MODEL, doctor.check_model),
                                                  (REASONING, doctor.check_reasoning))}
    finally:
        doctor.close()


def _holo(policy: ScriptedPolicy, *, reasoning_parser: bool) -> FakeVLLM:
    return FakeVLLM(policy, served_model_name="holo3.1-9b", root="Hcompany/Holo-3.1-9B",
                    vllm_version="0.20.0", reasoning_parser=reasoning_parser)


def test_a_thinking_model_with_its_reasoning_parser_passes() -> None:
    policy = ScriptedPolicy(["42"], think="17 and 25 make 42.", repeat_last=True)
    with _holo(policy, reasoning_parser=True) as server:
        results = _reasoning_checks(server)
        probe = server.requests[-1]
    assert results[MODEL].passed and "profile holo3.1-9b" in results[MODEL].detail
    assert results[REASONING].status is Status.PASS, results[REASONING]
    assert "apart from the answer" in results[REASONING].detail
    # One small request with the profile's switch and effort on, not a step.
    assert probe.body["chat_template_kwargs"] == {"enable_thinking": True}
    assert probe.body["reasoning_effort"] == "medium"
    assert probe.max_tokens is not None and probe.max_tokens <= 512
    assert "structured_outputs" not in probe.body and not probe.stream


def test_a_server_without_the_reasoning_parser_fails_with_the_serve_flag() -> None:
    policy = ScriptedPolicy(["42"], think="17 and 25 make 42.", repeat_last=True)
    with _holo(policy, reasoning_parser=False) as server:
        results = _reasoning_checks(server)
    result = results[REASONING]
    assert result.status is Status.FAIL
    assert "inside the answer's content" in result.detail
    fix = fix_line(result.fix)
    assert "--reasoning-parser qwen3" in fix and "holodesk serve" in fix


def test_a_model_that_does_not_think_at_each_step_has_nothing_to_check() -> None:
    # Holotron-12B keeps thinking off in agent steps: no request is made.
    with FakeVLLM(ScriptedPolicy([WAIT], repeat_last=True)) as server:
        results = _reasoning_checks(server)
        asked = len(server.requests)
    assert results[REASONING].passed and "nothing to check" in results[REASONING].detail
    assert asked == 0


def test_a_thinking_model_that_did_not_reason_is_a_pass_with_a_note() -> None:
    with _holo(ScriptedPolicy(["42"], repeat_last=True), reasoning_parser=True) as server:
        results = _reasoning_checks(server)
    assert results[REASONING].passed
    assert "cannot tell" in results[REASONING].detail
    assert "--reasoning-parser qwen3" in fix_line(results[REASONING].fix)
