"""The prompt builder: message layout, history window, cache-friendly stability, descriptions."""

from __future__ import annotations

import base64
import dataclasses
import datetime
import json
from typing import Any

import pytest

from model.coords import Convention, Point
from model.prompt import (
    OUTCOME_DONE,
    OUTCOME_SKIPPED,
    PromptConfig,
    Turn,
    build_messages,
    describe_action,
    failed_outcome,
    system_prompt,
)
from model.schema import ACTION_ADAPTER, Action, Step
from model.structured import step_json, step_output_schema_json

TODAY = datetime.date(2026, 3, 14)
CONFIG = PromptConfig(Convention.NORM1000, 2048, 1152, TODAY)
TASK = "Save the invoice as PDF"


def _action(**fields: Any) -> Action:
    return ACTION_ADAPTER.validate_python(fields)


def _step_for(n: int) -> Step:
    """A varied, deterministic step for step number ``n``."""
    actions: list[dict[str, Any]] = [
        {"action": "click", "element": f"Button {n}", "x": 10 * n, "y": 20 * n},
        {"action": "type", "text": f"text {n}", "press_enter": n % 2 == 0},
        {"action": "hotkey", "keys": ["ctrl", "s"]},
        {"action": "scroll", "element": "Page", "x": 500, "y": 500, "direction": "down"},
        {"action": "wait", "seconds": 2},
    ]
    note = f"fact from step {n}" if n % 3 == 0 else ""
    return Step.model_validate(
        {"note": note, "thought": f"thinking {n}", "action": actions[n % len(actions)]}
    )


def _image(n: int) -> bytes:
    # Distinct, deterministic "JPEG" bytes; the builder must not care what is inside.
    return b"\xff\xd8\xff" + f"frame {n}".encode() * 50 + bytes([n % 256])


def _outcome(n: int) -> str:
    return [OUTCOME_DONE, OUTCOME_SKIPPED, failed_outcome("window not found")][n % 3]


def _turns(current: int) -> list[Turn]:
    """Steps 1..current-1 answered and executed, then the current screenshot."""
    past = [Turn(n, _image(n), "image/jpeg", _step_for(n), _outcome(n)) for n in range(1, current)]
    return [*past, Turn(current, _image(current), "image/jpeg")]


def _images(messages: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(message index, part index) of every image part."""
    found = []
    for i, message in enumerate(messages):
        content = message["content"]
        if isinstance(content, list):
            found += [(i, j) for j, part in enumerate(content) if part["type"] == "image_url"]
    return found


def _user_texts(message: dict[str, Any]) -> str:
    return "".join(part["text"] for part in message["content"] if part["type"] == "text")


def _check_well_formed(messages: list[dict[str, Any]], config: PromptConfig) -> None:
    assert messages[0]["role"] == "system"
    assert isinstance(messages[0]["content"], str)
    assert messages[1]["role"] == "user"
    for message in messages[1:]:
        assert message["role"] in ("user", "assistant")
        if message["role"] == "assistant":
            assert isinstance(message["content"], str)
            continue
        content = message["content"]
        kinds = [part["type"] for part in content]
        assert kinds.count("image_url") <= 1
        if "image_url" in kinds:
            assert kinds[0] == "image_url"
        for part in content:
            if part["type"] == "text":
                assert part["text"].endswith("\n")
    # Roles alternate after the system prompt and the task: user (step), assistant, user...
    roles = [m["role"] for m in messages[2:]]
    assert roles[::2] == ["user"] * len(roles[::2])
    assert roles[1::2] == ["assistant"] * len(roles[1::2])
    assert roles[-1] == "user"
    assert len(_images(messages)) <= config.max_images


def test_first_step_has_system_task_and_screenshot() -> None:
    messages = build_messages(TASK, _turns(1), CONFIG)
    _check_well_formed(messages, CONFIG)
    assert len(messages) == 3
    assert _user_texts(messages[1]) == f"Task: {TASK}\n"
    last = messages[2]["content"]
    assert last[0]["image_url"]["url"] == "data:image/jpeg;base64," + base64.b64encode(
        _image(1)
    ).decode("ascii")
    assert "Step 1: screenshot" in last[1]["text"]
    assert "Notes so far:\n(none)" in last[2]["text"]
    assert "Actions so far:\n(none)" in last[2]["text"]


@pytest.mark.parametrize("current", range(1, 21))
def test_history_is_well_formed_at_every_step_of_a_20_step_run(current: int) -> None:
    messages = build_messages(TASK, _turns(current), CONFIG)
    _check_well_formed(messages, CONFIG)
    assert len(messages) == 2 + 2 * (current - 1) + 1
    images = _images(messages)
    assert len(images) == min(3, current)
    # The images are the newest ones, in order, each with its own step number.
    shown = list(range(max(1, current - 2), current + 1))
    for (index, _), step_no in zip(images, shown, strict=True):
        url = messages[index]["content"][0]["image_url"]["url"]
        assert base64.b64decode(url.split(",", 1)[1]) == _image(step_no)
        assert f"Step {step_no}: screenshot" in _user_texts(messages[index])


def test_older_screenshots_become_placeholders() -> None:
    messages = build_messages(TASK, _turns(8), CONFIG)
    user_steps = [m for m in messages[2:] if m["role"] == "user"]
    for n, message in enumerate(user_steps, start=1):
        if n <= 5:
            assert len(message["content"]) == 1
            assert message["content"][0]["text"].startswith(f"Step {n}: screenshot no longer shown")
        else:
            assert message["content"][0]["type"] == "image_url"


def test_step_header_carries_the_previous_outcome() -> None:
    messages = build_messages(TASK, _turns(4), CONFIG)
    user_steps = [m for m in messages[2:] if m["role"] == "user"]
    assert "(after" not in _user_texts(user_steps[0])
    assert f"(after step 1: {OUTCOME_SKIPPED})" in _user_texts(user_steps[1])
    assert "(after step 2: failed: window not found)" in _user_texts(user_steps[2])
    assert f"(after step 3: {OUTCOME_DONE})" in _user_texts(user_steps[3])


def test_unknown_outcome_is_said_plainly() -> None:
    turns = [Turn(1, _image(1), "image/png", _step_for(1)), Turn(2, _image(2), "image/png")]
    messages = build_messages(TASK, turns, CONFIG)
    assert "(after step 1: outcome unknown)" in _user_texts(messages[-1])
    assert messages[-1]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_max_images_is_configurable() -> None:
    config = PromptConfig(Convention.NORM1000, 2048, 1152, TODAY, max_images=1)
    messages = build_messages(TASK, _turns(5), config)
    _check_well_formed(messages, config)
    assert [i for i, _ in _images(messages)] == [len(messages) - 1]


def test_assistant_turns_are_exactly_the_parsed_json() -> None:
    turns = _turns(12)
    messages = build_messages(TASK, turns, CONFIG)
    answers = [m["content"] for m in messages if m["role"] == "assistant"]
    assert len(answers) == 11
    for turn, content in zip(turns, answers, strict=False):
        assert turn.step is not None
        assert content == step_json(turn.step)
        assert json.loads(content) == turn.step.dump()
        assert content == json.dumps(json.loads(content), separators=(",", ":"))
        assert "<think>" not in content


def test_notes_and_past_actions_are_carried_to_the_current_message() -> None:
    messages = build_messages(TASK, _turns(20), CONFIG)
    history = messages[-1]["content"][-1]["text"]
    notes, actions = history.split("Actions so far:\n")
    for n in range(3, 20, 3):
        assert f"- step {n}: fact from step {n}\n" in notes
    assert "- step 1: " not in notes
    for n in range(1, 20):
        step = _step_for(n)
        assert f"- step {n}: {describe_action(step.action)} ({_outcome(n)})\n" in actions
    assert "This is step 20." in actions
    # Screen points are for people: the model's history has none.
    assert " at (" not in actions


def test_repeated_notes_are_listed_once() -> None:
    same = Step.model_validate(
        {"note": "PIN is on the card", "thought": "t", "action": {"action": "wait"}}
    )
    turns = [Turn(n, _image(n), "image/jpeg", same, OUTCOME_DONE) for n in range(1, 4)]
    messages = build_messages(TASK, [*turns, Turn(4, _image(4), "image/jpeg")], CONFIG)
    assert messages[-1]["content"][-1]["text"].count("PIN is on the card") == 1


def test_system_prompt_is_identical_at_every_step() -> None:
    prompts = {build_messages(TASK, _turns(n), CONFIG)[0]["content"] for n in range(1, 21)}
    assert len(prompts) == 1
    # And equal for an equal config built separately (a new run of the same person).
    again = PromptConfig(Convention.NORM1000, 2048, 1152, datetime.date(2026, 3, 14))
    assert system_prompt(again) == prompts.pop()


def test_system_prompt_contents() -> None:
    text = system_prompt(CONFIG)
    assert "2048x1152" in text
    assert "2026-03-14" in text and "Saturday" in text
    assert step_output_schema_json() in text
    assert text.rstrip().endswith("/no_think")
    assert "/think" not in text.replace("/no_think", "")
    for word in ('"answer"', '"ask_user"', "credentials", "One action per step", "element"):
        assert word in text
    assert "0 to 1000" in text and "top-left" in text


def test_thinking_flag() -> None:
    thinking = PromptConfig(Convention.NORM1000, 2048, 1152, TODAY, thinking=True)
    text = system_prompt(thinking)
    assert text.rstrip().endswith("/think")
    assert "/no_think" not in text


@pytest.mark.parametrize(
    ("convention", "phrase"),
    [
        (Convention.NORM1000, "integers from 0 to 1000"),
        (Convention.NORM1, "decimal numbers from 0 to 1"),
        (Convention.PIXELS, "pixel positions in the screenshot, which is 1920x1200 pixels"),
    ],
)
def test_convention_is_explained_and_the_example_fits_it(
    convention: Convention, phrase: str
) -> None:
    config = PromptConfig(convention, 1920, 1200, TODAY)
    text = system_prompt(config)
    assert phrase in text
    example = json.loads(text.split("Example:\n", 1)[1].splitlines()[0])
    step = Step.model_validate(example)
    assert step.action.action == "click"
    x, y = example["action"]["x"], example["action"]["y"]
    if convention is Convention.NORM1000:
        assert isinstance(x, int) and 0 <= x <= 1000 and 0 <= y <= 1000
    elif convention is Convention.NORM1:
        assert isinstance(x, float) and 0 <= x <= 1 and 0 <= y <= 1
    else:
        assert isinstance(x, int) and 0 <= x < 1920 and 0 <= y < 1200


def test_earlier_messages_stay_byte_identical_as_the_run_grows() -> None:
    # Prefix caching: from one step to the next only two messages may change: the one whose
    # screenshot aged out of the window, and the previous "current" message that loses its
    # history block. Everything else is the same, then new messages are appended.
    previous = build_messages(TASK, _turns(1), CONFIG)
    for current in range(2, 21):
        messages = build_messages(TASK, _turns(current), CONFIG)
        changed = [i for i, (a, b) in enumerate(zip(previous, messages, strict=False)) if a != b]
        aged_out = 2 + 2 * (current - 4) if current >= 4 else None
        assert set(changed) <= {aged_out, len(previous) - 1}
        # The last message of the previous request is a prefix of its new form (image first).
        old_last, new_same = previous[-1]["content"], messages[len(previous) - 1]["content"]
        assert new_same == old_last[:2]
        previous = messages


def test_screenshot_bytes_are_sent_as_given() -> None:
    odd = bytes(range(256)) * 3
    turns = [Turn(7, odd, "image/jpeg")]
    url = build_messages(TASK, turns, CONFIG)[-1]["content"][0]["image_url"]["url"]
    assert base64.b64decode(url.removeprefix("data:image/jpeg;base64,")) == odd


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ([], "at least the current turn"),
        ([Turn(1, b"x", "image/jpeg", _step_for(1))], "must be the current one"),
        ([Turn(1, b"x", "image/jpeg"), Turn(2, b"y", "image/jpeg")], "has no step"),
        (
            [Turn(2, b"x", "image/jpeg", _step_for(2)), Turn(2, b"y", "image/jpeg")],
            "must increase",
        ),
    ],
)
def test_malformed_turns_are_refused(turns: list[Turn], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_messages(TASK, turns, CONFIG)


def test_old_screenshots_may_be_dropped_but_not_one_still_sent() -> None:
    full = _turns(6)
    # The first three are past the window of CONFIG.max_images: dropping them changes nothing.
    dropped = [dataclasses.replace(t, image=b"") if i < 3 else t for i, t in enumerate(full)]
    assert build_messages(TASK, dropped, CONFIG) == build_messages(TASK, full, CONFIG)
    dropped[3] = dataclasses.replace(dropped[3], image=b"")
    with pytest.raises(ValueError, match="turn 4 has no image"):
        build_messages(TASK, dropped, CONFIG)


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="max_images"):
        PromptConfig(Convention.NORM1000, 2048, 1152, TODAY, max_images=0)
    with pytest.raises(ValueError, match="sent size"):
        PromptConfig(Convention.NORM1000, 0, 1152, TODAY)


# -- describe_action ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "point", "expected"),
    [
        (
            {"action": "click", "element": "Save button", "x": 1, "y": 2},
            Point(932, 880),
            'click "Save button" at (932, 880)',
        ),
        (
            {"action": "click", "element": "Save button", "x": 1, "y": 2},
            None,
            'click "Save button"',
        ),
        (
            {"action": "click", "element": "File", "x": 1, "y": 2, "button": "right"},
            Point(-5, 3),
            'click "File" at (-5, 3) with the right button',
        ),
        (
            {"action": "click", "element": "Word", "x": 1, "y": 2, "clicks": 3},
            Point(1, 2),
            'triple-click "Word" at (1, 2)',
        ),
        (
            {"action": "double_click", "element": "Report.pdf", "x": 1, "y": 2},
            Point(10, 20),
            'double-click "Report.pdf" at (10, 20)',
        ),
        (
            {"action": "move", "element": "Help menu", "x": 1, "y": 2},
            Point(3, 4),
            'move the pointer to "Help menu" at (3, 4)',
        ),
        (
            {"action": "scroll", "element": "Results", "x": 1, "y": 2, "direction": "down"},
            Point(500, 400),
            'scroll down 5 over "Results" at (500, 400)',
        ),
        ({"action": "type", "text": "hello", "press_enter": True}, None, 'type "hello" then Enter'),
        ({"action": "type", "text": "hello"}, None, 'type "hello"'),
        (
            {"action": "type", "text": "new name", "clear_first": True},
            None,
            'clear the field and type "new name"',
        ),
        ({"action": "type", "text": 'say "hi"\n'}, None, 'type "say \\"hi\\"\\n"'),
        ({"action": "hotkey", "keys": ["ctrl", "s"]}, None, "press ctrl+s"),
        ({"action": "hotkey", "keys": ["enter"]}, None, "press enter"),
        ({"action": "wait", "seconds": 2}, None, "wait 2 s"),
        ({"action": "wait", "seconds": 1.5}, None, "wait 1.5 s"),
        ({"action": "ask_user", "question": "Which account?"}, None, "ask: Which account?"),
        (
            {"action": "answer", "text": "Saved as invoice.pdf"},
            None,
            "answer: Saved as invoice.pdf",
        ),
    ],
)
def test_describe_action(fields: dict[str, Any], point: Point | None, expected: str) -> None:
    assert describe_action(_action(**fields), point) == expected


def test_describe_drag_with_both_ends() -> None:
    drag = _action(action="drag", element="Slider knob", x=1, y=2, to_x=3, to_y=4)
    assert describe_action(drag, Point(10, 20), end=Point(30, 40)) == (
        'drag "Slider knob" from (10, 20) to (30, 40)'
    )
    assert describe_action(drag) == 'drag "Slider knob"'


def test_describe_hides_secret_text_and_shortens_long_text() -> None:
    secret = _action(action="type", text="Tr0ub4dor&3", press_enter=True)
    described = describe_action(secret, secret=True)
    assert "Tr0ub4dor" not in described
    assert described == "type [hidden text, 11 characters] then Enter"
    long = describe_action(_action(action="type", text="x" * 500))
    assert len(long) < 100 and long.endswith('..."')
