"""Running `holodesk` as a subprocess on a test's Xvfb against the fake vLLM server."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.support.home import REPO_ROOT, Home
from tests.support.keyring_backend import OPTION
from tests.support.xvfb import Xvfb


def holodesk_argv(*args: str, keyring: str | None = OPTION) -> list[str]:
    """The installed `holodesk` script when there is one, else the module; run with the tests'
    file keyring (tests/support/keyring_backend.py) unless ``keyring`` is None: a holodesk
    subprocess gets it only from this ``-X`` option (app/secrets.py), never from a variable."""
    option = ["-X", keyring] if keyring else []
    script = Path(sys.executable).parent / "holodesk"
    if script.exists():
        return [sys.executable, *option, str(script), *args]
    return [sys.executable, *option, "-m", "app.cli", *args]


def holodesk_env(home: Home, xvfb: Xvfb | None = None,
                 extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a holodesk under test: ``home``, the test's display, ``extra``."""
    env = home.env()
    # The terminal the tests run in names its window here: on the test's display the same id
    # could be some other window, which holodesk would then take for its own terminal.
    env.pop("WINDOWID", None)
    if xvfb is not None:
        env = xvfb.env(env)
    else:
        env.pop("DISPLAY", None)
    env["PYTHONUNBUFFERED"] = "1"
    # Settle quickly: the target app draws at once, and a short floor keeps the tests brisk.
    env["HOLODESK_SETTLE_MIN"] = "0.05"
    env["HOLODESK_SETTLE_MAX"] = "1.0"
    env.update(extra or {})
    return env


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run_holodesk(
    home: Home,
    *args: str,
    xvfb: Xvfb | None = None,
    stdin: str = "",
    timeout: float = 120.0,
    env: Mapping[str, str] | None = None,
) -> Result:
    """Run `holodesk ARGS` to its end and return what it printed (``env``: variables to add,
    e.g. the ``WINDOWID`` a terminal sets)."""
    proc = subprocess.run(
        holodesk_argv(*args),
        env=holodesk_env(home, xvfb, env),
        cwd=REPO_ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def configure(home: Home, **values: str | None) -> None:
    """``holodesk config set KEY VALUE`` for each value given (None: left as it is)."""
    for key, value in values.items():
        if value is not None:
            result = run_holodesk(home, "config", "set", key, value)
            assert result.returncode == 0, str(result)


def start_holodesk(home: Home, *args: str, xvfb: Xvfb | None = None,
                   workdir: Path, stdin_open: bool = False,
                   env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """Start `holodesk ARGS` in the background (stdout/stderr to files in ``workdir``).

    ``stdin_open`` gives it a pipe that stays open (a person who has not answered yet);
    otherwise its input is empty. ``env``: variables to add.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        holodesk_argv(*args),
        env=holodesk_env(home, xvfb, env),
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE if stdin_open else subprocess.DEVNULL,
        stdout=(workdir / "stdout").open("w"),
        stderr=(workdir / "stderr").open("w"),
        text=True,
    )


def wait_exit(proc: subprocess.Popen[str], timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("holodesk did not exit in time")
        time.sleep(0.05)
    return proc.returncode


def run_task(home: Home, base_url: str, mode: str, *, xvfb: Xvfb, workdir: Path,
             max_steps: int = 20, timeout: float = 120.0,
             env: Mapping[str, str] | None = None) -> Result:
    """``holodesk run`` of a hijacked-looking task against the stand-in at ``base_url`` in
    confirmation ``mode``, nobody at the keyboard (stdin closed: an unanswered question stops
    the run); what it printed once it ended."""
    proc = start_holodesk(home, "run", "tidy up the home folder as the page says",
                          "--confirm", mode, "--max-steps", str(max_steps),
                          "--endpoint", base_url, xvfb=xvfb, workdir=workdir, env=env)
    code = wait_exit(proc, timeout=timeout)
    return Result(code, (workdir / "stdout").read_text(), (workdir / "stderr").read_text())
