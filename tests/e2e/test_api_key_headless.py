"""The API key from the keyring reaches the server and is written nowhere else, without a display.

tests/e2e/test_e2e_x11.py checks this for `holodesk run` on Xvfb; this is the same claim where no
X server is installed: `holodesk doctor` (its server checks need no screen: the display
checks fail, the endpoint, model, image and structured-output checks talk to the server) and
`holodesk bench` (generated screenshots) against a stand-in started with ``api_key=``, which
answers 401 to any /v1 request without exactly that bearer key. The key goes in as a person
stores it (``config set api_key -``, into the test keyring: a JSON file, so the test can look
that it is there); afterwards it is in no file of the config, data or state folders (the
settings, the action log, ``holodesk.log``, the bench's CSV and chart) and in nothing printed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e import Result, run_holodesk
from tests.support.fake_vllm import FakeVLLM
from tests.support.home import Home

KEY = "sk-holodesk-headless-4be21c9d07"
ANSWER = json.dumps({"note": "", "thought": "Nothing to do.",
                     "action": {"action": "answer", "text": "OK"}})
#: The doctor's checks that talk to the server (see app/doctor.py).
SERVER_CHECKS = ("endpoint", "model", "context length", "image limit", "structured output")


def _checks(result: Result) -> dict[str, str]:
    report: dict[str, Any] = json.loads(result.stdout)
    return {check["name"]: check["status"] for check in report["checks"]}


def _files_holding(text: str, *places: Path) -> list[str]:
    return [str(path) for place in places for path in place.rglob("*")
            if path.is_file() and text.encode() in path.read_bytes()]


@pytest.mark.parametrize("command", ["doctor", "bench"])
def test_the_api_key_is_sent_but_never_written_down_without_a_display(
    home: Home, command: str
) -> None:
    with FakeVLLM(lambda _request: ANSWER, api_key=KEY) as server:
        assert run_holodesk(home, "config", "set", "endpoint", server.base_url).returncode == 0
        # First without the key: the stand-in refuses, so a pass below is the key's doing.
        refused = run_holodesk(home, "doctor", "--json")
        assert _checks(refused)["endpoint"] == "FAIL", refused.stdout
        assert server.errors and {status for status, _ in server.errors} == {401}
        server.errors.clear()

        stored = run_holodesk(home, "config", "set", "api_key", "-", stdin=KEY + "\n")
        assert stored.returncode == 0, str(stored)
        if command == "doctor":
            result = run_holodesk(home, "doctor", "--json")
            checks = _checks(result)
            assert checks["display server"] == "FAIL"  # really no screen
            assert {name: checks[name] for name in SERVER_CHECKS} == dict.fromkeys(
                SERVER_CHECKS, "PASS"), result.stdout
        else:
            result = run_holodesk(home, "bench", "--levels", "1", "--steps", "1")
            assert result.returncode == 0, str(result)
        assert server.chat_requests > 0  # chat requests too, not only /v1/models
        assert not server.errors, server.errors  # every request carried the key
    shown = run_holodesk(home, "config", "show")
    assert shown.returncode == 0, str(shown)
    printed = result.stdout + result.stderr + shown.stdout + shown.stderr
    assert KEY not in printed
    assert (home.state / "holodesk" / "holodesk.log").is_file()  # the log was written...
    assert not _files_holding(KEY, home.config, home.data, home.state)  # ...without the key
    # The keyring does hold it (the test backend is a file, so it can be looked at).
    assert _files_holding(KEY, home.keyring)
